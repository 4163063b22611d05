/* tty_restore.c - the tty kind's restart side (tty.c says what it
 * saves).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../files.h"
#include "../kinds/ns.h"
#include "console.h"
#include "ptyq.h"
#include "tty.h"

struct rst_tty {
	struct rec_tty t;
	int fd;			/* ckpt's master of a TTY_PTY, -1 until made */
	int slave;		/* ckpt's slave, for its session leader, or -1 */
	int masters;		/* descriptions of its master: one at most */
	struct rec_tty_data *q[2];	/* TTY_DATA to the master, to the slave */
	char *path;		/* TTY_CTTY_PATH: a FILE's path of it */
};

struct tty_table {
	struct rst_tty *e;
	int n;
	size_t cap;
	struct id_table ids;	/* index in e, by id */
	bool job;		/* a TTY_JOB is loaded (there is one at most) */
};

static bool tty_valid(const struct rec_tty *t)
{
	return t->id && t->kind >= TTY_PTY && t->kind <= TTY_ORPHAN &&
	       !(t->slave_mode & ~07777u) && !t->reserved2 &&
	       ((t->flags & TTY_OWNER) || (!t->slave_uid && !t->slave_gid && !t->slave_mode)) &&
	       !(t->flags & ~TTY_FLAGS) && !t->reserved && !t->pad[0] &&
	       !t->pad[1] && !t->pad[2] && !t->line && t->iflag <= 0x7fff &&
	       t->oflag <= 0xffff && t->lflag <= 0x1ffff &&
	       !(t->ispeed & ~SPEED_BITS) && !(t->ospeed & ~SPEED_BITS) &&
	       (t->kind == TTY_PTY ||
		(t->kind == TTY_ORPHAN ? !(t->flags & ~TTY_OWNER) && t->sid :
		 !t->flags && (t->kind == TTY_CTTY_PATH ? !!t->sid : !t->sid && !t->fg_pgrp))) &&
	       (t->sid || !t->fg_pgrp);
}

static struct rst_tty *tty_by_id(struct rst_ctx *c, uint32_t id)
{
	struct tty_table *tt = KCSTATE(c, kind_tty);
	long i = tt ? id_find(&tt->ids, id) : -1;

	return i < 0 ? NULL : &tt->e[i];
}

/* Input as ptyq_take_input() makes it for the TTY's termios. */
static bool input_ok(const struct rec_tty *t, const struct rec_tty_data *d)
{
	struct termios tio = { .c_lflag = t->lflag };
	uint32_t lines, typed;

	memcpy(tio.c_cc, t->cc, sizeof(tio.c_cc) < sizeof(t->cc) ? sizeof(tio.c_cc) : sizeof(t->cc));
	return !ptyq_check_input(&tio, (const char *)(d + 1), d->len, d->partial, &lines,
				 &typed);
}

/* The bytes queued one way in the pty of the TTY record just before. */
static int data_load(struct rst_ctx *c, struct tty_table *tt, struct rec *r)
{
	const struct rec_tty_data *d = r->data;
	struct rst_tty *e = tt->n ? &tt->e[tt->n - 1] : NULL;
	int ret = rec_want(c->log, r, sizeof(*d), "TTY_DATA");

	if (ret)
		return ret;
	if (!e || e->t.id != d->tty_id || e->t.kind != TTY_PTY ||
	    (d->dir != TTY_TO_MASTER && d->dir != TTY_TO_SLAVE) || !d->len ||
	    d->len > (d->dir == TTY_TO_SLAVE ? TTY_MAX_INPUT : TTY_MAX_QUEUE) ||
	    r->data_len != sizeof(*d) + d->len || e->q[d->dir - 1] ||
	    (e->t.flags & TTY_PKT) || d->partial > d->len ||
	    (d->partial && (d->dir != TTY_TO_SLAVE || !(e->t.lflag & ICANON))) ||
	    (d->dir == TTY_TO_SLAVE && !input_ok(&e->t, d)))
		return log_err(c->log, EBADMSG, "bad TTY_DATA record %llu",
			       (unsigned long long)r->index);
	e->q[d->dir - 1] = r->data;
	r->data = NULL;
	return 0;
}

int ttyk_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct tty_table *tt = kind_ctx_state(c, &kind_tty, sizeof(*tt));
	struct rec_tty rt_, *rt = &rt_;
	struct rst_tty *n;
	int ret;

	(void)t;
	if (!tt)
		return log_err(c->log, ENOMEM, "tty table:");
	if (r->type == REC_TTY_DATA)
		return data_load(c, tt, r);
	ret = rec_want(c->log, r, TTY_V1_LEN, "TTY");
	if (ret)
		return ret;
	/* an older image's has no slave owner (nor TTY_OWNER) */
	memset(rt, 0, sizeof(*rt));
	memcpy(rt, r->data, r->data_len < sizeof(*rt) ? r->data_len : sizeof(*rt));
	if ((r->data_len != sizeof(*rt) && r->data_len != TTY_V1_LEN) || !tty_valid(rt) ||
	    (r->data_len == TTY_V1_LEN && (rt->flags & TTY_OWNER)))
		return log_err(c->log, EBADMSG, "bad TTY record %llu",
			       (unsigned long long)r->index);
	if (id_find(&tt->ids, rt->id) >= 0 || (rt->kind == TTY_JOB && tt->job))
		return log_err(c->log, EBADMSG, "TTY %u: twice", rt->id);
	if (VEC_ROOM(tt->e, tt->n, tt->cap) || id_add(&tt->ids, rt->id, tt->n))
		return log_err(c->log, ENOMEM, "tty table:");
	n = &tt->e[tt->n++];
	memset(n, 0, sizeof(*n));
	n->t = *rt;
	n->fd = n->slave = -1;
	tt->job |= rt->kind == TTY_JOB;
	return 0;
}

static struct rst_task *alive_task(struct rst_ctx *c, uint32_t pid)
{
	for (int i = 0; i < c->nr_tasks; i++)
		if (c->tasks[i]->pid == (pid_t)pid && !(c->tasks[i]->t.flags & TASK_ZOMBIE))
			return c->tasks[i];
	return NULL;
}

/* A pty's session must be one restart makes: led by a process of the
 * tree (the root too: then not as a shell job, which restart refuses);
 * its foreground group one of its groups. */
static int session_check(struct rst_ctx *c, const struct rec_tty *t)
{
	struct rst_task *leader = t->sid ? alive_task(c, t->sid) : NULL;
	bool fg = !t->fg_pgrp;

	if (t->sid && (!leader || leader->t.sid != t->sid))
		return log_err(c->log, EBADMSG, "TTY %u: session %u has no leader in the image",
			       t->id, t->sid);
	for (int i = 0; i < c->nr_tasks && !fg; i++)
		fg = !(c->tasks[i]->t.flags & TASK_ZOMBIE) &&
		     c->tasks[i]->t.pgid == t->fg_pgrp && c->tasks[i]->t.sid == t->sid;
	if (!fg)
		return log_err(c->log, EBADMSG, "TTY %u: no group %u in session %u",
			       t->id, t->fg_pgrp, t->sid);
	return 0;
}

static int job_check(struct rst_ctx *c, bool in_image)
{
	int fd;

	if (!c->here)
		return 0;
	if (in_image && !(c->flags & CKPT_SHELL_JOB))
		return log_err(c->log, EINVAL,
			       "the image is of a shell job using its terminal: restart it with --shell-job");
	if (!(c->flags & CKPT_SHELL_JOB))
		return 0;
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return log_err(c->log, errno, "--shell-job: ckpt restart has no terminal (/dev/tty):");
	close(fd);
	return 0;
}

/* Is it a session's terminal, which restart gives it again? */
static bool has_session(const struct rec_tty *t)
{
	return t->kind == TTY_PTY || t->kind == TTY_CTTY_PATH || t->kind == TTY_ORPHAN;
}

/* Once for the whole image (at its root). */
int ttyk_check(struct rst_ctx *c, struct rst_task *t)
{
	struct tty_table *tt = KCSTATE(c, kind_tty);
	bool job = false;
	int ret = 0;

	if (t != c->tasks[0])
		return 0;
	for (int i = 0; tt && i < tt->n && !ret; i++) {
		job |= tt->e[i].t.kind == TTY_JOB;
		if (has_session(&tt->e[i].t))
			ret = session_check(c, &tt->e[i].t);
		/* its path is its FILEs' */
		if (!ret && tt->e[i].t.kind == TTY_CTTY_PATH && !tt->e[i].path)
			ret = log_err(c->log, EBADMSG, "TTY %u: no FILE names it", tt->e[i].t.id);
		if (!ret && tt->e[i].t.kind == TTY_ORPHAN && c->here &&
		    !(c->opts && (c->opts->console || c->opts->console_socket)))
			ret = log_err(c->log, EINVAL,
				      "the image's session %u had a terminal whose master was outside the tree (a container's console): restart it with --console-socket PATH, where the new master is sent",
				      tt->e[i].t.sid);
	}
	return ret ? ret : job_check(c, job);
}

static int set_termios(int fd, const struct rec_tty *t, bool keep_speed)
{
	struct termios tio;
	tcflag_t speed;

	if (tcgetattr(fd, &tio))
		return -1;
	speed = tio.c_cflag & (SPEED_BITS | CIBAUD_BITS);
	tio.c_iflag = t->iflag;
	tio.c_oflag = t->oflag;
	tio.c_cflag = t->cflag;
	tio.c_lflag = t->lflag;
	memcpy(tio.c_cc, t->cc, sizeof(t->cc));
	if (keep_speed)
		tio.c_cflag = (t->cflag & ~(SPEED_BITS | CIBAUD_BITS)) | speed;
	else if (cfsetospeed(&tio, t->ospeed) || (t->ispeed && cfsetispeed(&tio, t->ispeed)))
		return -1;
	return tcsetattr(fd, TCSANOW, &tio);
}

static int slave_open(struct rst_ctx *c, struct rst_tty *e, int acc);

/* What was queued in the pty, put back before anybody can read it. */
static int pty_refill(struct rst_ctx *c, struct rst_tty *e)
{
	const struct rec_tty_data *out = e->q[0], *in = e->q[1];
	struct termios tio;
	int ret = 0;

	if (!out && !in)
		return 0;
	/* not locked yet: that comes at the end of pty_make() */
	if (e->slave < 0 && (e->slave = ptyq_peer(e->fd, O_RDWR, false)) < 0)
		return log_err(c->log, errno, "opening the slave of pty %u:", e->t.id);
	if (in && tcgetattr(e->slave, &tio))
		ret = -errno;
	if (!ret && in)
		ret = ptyq_put_input(e->fd, e->slave, &tio, (const char *)(in + 1), in->len,
				     in->partial);
	/* after the input: its put-back needs the master's queue empty */
	if (!ret && out)
		ret = ptyq_put_output(e->slave, (const char *)(out + 1), out->len);
	return ret ? log_err(c->log, -ret, "pty %u: putting back what was queued in it:",
			     e->t.id) : 0;
}

/* /dev/pts/N's owner and mode (ckpt's and devpts' own otherwise). */
static int pty_owner(struct rst_ctx *c, struct rst_tty *e)
{
	int s = ptyq_peer(e->fd, O_RDWR | O_NOCTTY, false), err = 0;
	struct stat st;

	/* only what differs: an unprivileged restart may keep its own */
	if (s < 0 || fstat(s, &st) ||
	    ((st.st_uid != e->t.slave_uid || st.st_gid != e->t.slave_gid) &&
	     fchown(s, e->t.slave_uid, e->t.slave_gid)) ||
	    ((st.st_mode & 07777) != e->t.slave_mode && fchmod(s, e->t.slave_mode)))
		err = errno;
	if (s >= 0)
		close(s);
	return err ? log_err(c->log, err, "pty %u: its slave's owner %u:%u and mode %o:",
			     e->t.id, e->t.slave_uid, e->t.slave_gid, e->t.slave_mode) : 0;
}

/* A container's console may be bound at /dev/console too (runc's, from
 * its /dev/pts/N): its slave, for the mounts (mntns_restore.c). */
static int console_keep(struct rst_ctx *c, const struct rst_tty *e)
{
	int n = c->nr_early_pty, s;

	if (n == MAX_CONSOLES)
		return log_err(c->log, EOPNOTSUPP, "pty %u: more than %d consoles in one tree",
			       e->t.id, MAX_CONSOLES);
	s = ptyq_peer(e->fd, O_RDWR | O_NOCTTY, false);
	if (s < 0)
		return log_err(c->log, errno, "opening the slave of pty %u:", e->t.id);
	c->early_pty[c->nr_early_pty++] = (struct early_pty){ e->t.index, s };
	return 0;
}

/* The pty, made in ckpt: its master is ckpt's until a process takes it
 * (a TTY_HUNGUP's is closed once all is built). */
static int pty_make(struct rst_ctx *c, struct rst_tty *e)
{
	struct winsize ws = { e->t.ws_row, e->t.ws_col, e->t.ws_xpixel, e->t.ws_ypixel };
	int zero = 0, one = 1, ret;

	if (e->fd >= 0)
		return 0;
	e->fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (e->fd < 0 || ioctl(e->fd, TIOCSPTLCK, &zero) ||
	    ((e->t.kind == TTY_PTY || e->t.kind == TTY_ORPHAN) &&
	     (set_termios(e->fd, &e->t, false) || ioctl(e->fd, TIOCSWINSZ, &ws))))
		return log_err(c->log, errno, "making pty %u:", e->t.id);
	ret = pty_refill(c, e);
	if (!ret && (e->t.flags & TTY_OWNER))
		ret = pty_owner(c, e);
	if (ret)
		return ret;
	if (((e->t.flags & TTY_PKT) && ioctl(e->fd, TIOCPKT, &one)) ||
	    ((e->t.flags & TTY_LOCKED) && ioctl(e->fd, TIOCSPTLCK, &one)))
		return log_err(c->log, errno, "making pty %u:", e->t.id);
	return e->t.kind == TTY_ORPHAN ? console_keep(c, e) : 0;
}

/* A new description of the slave (a locked one is unlocked meanwhile):
 * >= 0, or -errno. */
static int slave_open(struct rst_ctx *c, struct rst_tty *e, int acc)
{
	int ret, fd;

	if (e->t.kind == TTY_CTTY_PATH) {
		fd = open(e->path, acc | O_NOCTTY | O_CLOEXEC);
		return fd >= 0 ? fd : log_err(c->log, errno, "reopening terminal %s:", e->path);
	}
	ret = pty_make(c, e);
	if (ret)
		return ret;
	fd = ptyq_peer(e->fd, acc, e->t.flags & TTY_LOCKED);
	return fd >= 0 ? fd : log_err(c->log, errno, "opening the slave of pty %u:", e->t.id);
}

int tty_file_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_tty_file x;
	struct rst_tty *e;

	if (f->f.extra_len != sizeof(x))
		return log_err(c->log, EBADMSG, "FILE %u: bad tty", f->f.id);
	memcpy(&x, f->extra, sizeof(x));	/* after the path: unaligned */
	e = tty_by_id(c, x.tty_id);
	if (!e || (f->f.flags & O_ACCMODE) == O_ACCMODE ||
	    (e->t.kind == TTY_PTY ? x.role != TTY_MASTER && x.role != TTY_SLAVE
	     : e->t.kind == TTY_HUNGUP || e->t.kind == TTY_ORPHAN ? x.role != TTY_SLAVE
	     : x.role != TTY_TERM) ||
	    (e->t.kind == TTY_CTTY_PATH && (f->path[0] != '/' || !S_ISCHR(f->f.mode))))
		return log_err(c->log, EBADMSG, "FILE %u: bad tty %u or role %u", f->f.id,
			       x.tty_id, x.role);
	if (e->t.kind == TTY_CTTY_PATH && !e->path && !(e->path = strdup(f->path)))
		return log_err(c->log, ENOMEM, "FILE %u:", f->f.id);
	if (x.role == TTY_MASTER && e->masters++)
		return log_err(c->log, EBADMSG, "TTY %u: two descriptions of its master",
			       e->t.id);
	return 0;
}

int tty_file_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
			 long *fd)
{
	int acc = f->f.flags & O_ACCMODE, ours, ret;
	struct rec_tty_file x;
	struct rst_tty *e;
	const char *term;

	memcpy(&x, f->extra, sizeof(x));
	e = tty_by_id(c, x.tty_id);
	/* the job's terminal is restart's, a console's or vt's its own */
	term = e->t.kind == TTY_CTTY_PATH ? f->path : "/dev/tty";

	if (x.role == TTY_MASTER)
		ours = pty_make(c, e) ?: e->fd;
	else if (x.role == TTY_SLAVE)
		ours = slave_open(c, e, acc);
	else if ((ours = open(term, acc | O_NOCTTY | O_CLOEXEC)) < 0)
		ours = log_err(c->log, errno, "pid %d: opening the terminal %s:", t->pid, term);
	if (ours < 0)
		return ours;
	ret = files_give(t, ours, fd);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	if (ours != e->fd)
		close(ours);
	return ret;
}

/* Give @t ckpt's own slave description of @e for one call: TIOCSCTTY
 * (no argument) or TIOCSPGRP (@pg). */
static int slave_ioctl(struct rst_ctx *c, struct rst_task *t, struct rst_tty *e,
		       unsigned long req, pid_t pg)
{
	uint64_t at = 0;
	long fd, res;
	int ret;

	if (e->slave < 0) {
		e->slave = slave_open(c, e, O_RDWR);
		if (e->slave < 0)
			return e->slave;
	}
	ret = files_give(t, e->slave, &fd);
	if (ret)
		return ret;
	if (req == TIOCSPGRP)
		ret = rst_scratch_put(t, 0, &pg, sizeof(pg), &at);
	if (!ret)
		ret = rcheck(&t->rm, NULL, req == TIOCSPGRP ? "ioctl(TIOCSPGRP)" : "ioctl(TIOCSCTTY)",
			     SYS_ioctl, fd, req, at);
	/* (queued with it where calls are: its failure is the restart's) */
	if (!ret)
		ret = rcheck(&t->rm, NULL, "close", SYS_close, fd);
	else
		rcall(&t->rm, &res, SYS_close, fd);
	return ret;
}

/* A controlling terminal is inherited over fork, never given to a
 * process that exists: the leader takes it as soon as it has made its
 * session, before any member is forked.  ckpt keeps a slave description
 * open meanwhile (the session would lose its terminal when the last
 * slave description closes). */
int ttyk_session_made(struct rst_ctx *c, struct rst_task *t)
{
	struct tty_table *tt = KCSTATE(c, kind_tty);
	int ret = 0;

	for (int i = 0; tt && i < tt->n && !ret; i++)
		if (has_session(&tt->e[i].t) && tt->e[i].t.sid == (uint32_t)t->pid)
			ret = slave_ioctl(c, t, &tt->e[i], TIOCSCTTY, 0);
	return ret;
}

/* The foreground group, once every group exists. */
int ttyk_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct tty_table *tt = KCSTATE(c, kind_tty);
	int ret = 0;

	for (int i = 0; tt && i < tt->n && !ret; i++)
		if (has_session(&tt->e[i].t) && tt->e[i].t.sid == (uint32_t)t->pid &&
		    tt->e[i].t.fg_pgrp)
			ret = slave_ioctl(c, t, &tt->e[i], TIOCSPGRP, tt->e[i].t.fg_pgrp);
	return ret;
}

/* With --shell-job, the terminal goes to the restored job (its termios,
 * the foreground) just before it is let go. */
static int ttyk_job_start(struct rst_ctx *c)
{
	struct tty_table *tt = KCSTATE(c, kind_tty);
	pid_t pg;
	int fd, ret = 0;

	if (!(c->flags & CKPT_SHELL_JOB))
		return 0;
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return log_err(c->log, errno, "--shell-job: opening the terminal:");
	/* a restart in the background leaves the terminal alone, as a
	 * background job must */
	if (tcgetpgrp(fd) == getpgrp()) {
		for (int i = 0; tt && i < tt->n && !ret; i++)
			if (tt->e[i].t.kind == TTY_JOB && set_termios(fd, &tt->e[i].t, true))
				ret = log_err(c->log, errno, "--shell-job: the job's termios:");
		pg = getpgid(c->tasks[0]->pid);
		if (!ret && pg > 0 && pg != getpgrp() && tcsetpgrp(fd, pg))
			ret = log_err(c->log, errno, "--shell-job: giving the terminal to group %d:",
				      pg);
	}
	close(fd);
	return ret;
}

/* Every slave of a hung-up pty is open: its master goes, which hangs
 * them up (nobody's controlling terminal: no SIGHUP).  A console's
 * master goes to restart's caller. */
int ttyk_built(struct rst_ctx *c)
{
	struct tty_table *tt = KCSTATE(c, kind_tty);

	int ret = 0;

	/* (the mounts are made: the consoles' slaves were theirs) */
	for (int i = 0; i < c->nr_early_pty; i++)
		if (c->early_pty[i].fd >= 0) {
			close(c->early_pty[i].fd);
			c->early_pty[i].fd = -1;
		}
	for (int i = 0; tt && i < tt->n; i++) {
		struct rst_tty *e = &tt->e[i];

		if (e->t.kind == TTY_ORPHAN && e->fd >= 0 && !ret)
			ret = console_give(c, e->fd);
		if ((e->t.kind == TTY_HUNGUP || e->t.kind == TTY_ORPHAN) && e->fd >= 0) {
			close(e->fd);
			e->fd = -1;
		}
	}
	return ret ? ret : ttyk_job_start(c);
}

void ttyk_free_ctx(void *state)
{
	struct tty_table *tt = state;

	for (int i = 0; i < tt->n; i++) {
		if (tt->e[i].fd >= 0)
			close(tt->e[i].fd);
		if (tt->e[i].slave >= 0)
			close(tt->e[i].slave);
		free(tt->e[i].q[0]);
		free(tt->e[i].q[1]);
		free(tt->e[i].path);
	}
	free(tt->e);
	id_table_free(&tt->ids);
	free(tt);
}

/* A terminal reopened by its path: still that device. */
int tty_file_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct rec_tty_file x;
	struct rst_tty *e;
	struct stat st;

	memcpy(&x, f->extra, sizeof(x));
	e = tty_by_id(c, x.tty_id);
	if (e->t.kind != TTY_CTTY_PATH)
		return 0;
	if (stat(f->path, &st))
		return log_err(c->log, errno, "open terminal %s:", f->path);
	if (!S_ISCHR(st.st_mode) || st.st_rdev != f->f.rdev)
		return log_err(c->log, ESTALE, "open terminal %s is no longer the same device",
			       f->path);
	return 0;
}
