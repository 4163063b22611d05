/* tty_dump.c - the tty kind's checkpoint side (tty.c says what it
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

/* The controlling terminal of @pid (0: none), from /proc stat's tty_nr. */
static dev_t ctty_of(pid_t pid)
{
	unsigned long long f[PROC_STAT_FIELDS];
	unsigned int nr;

	if (proc_stat(pid, NULL, f))
		return 0;
	nr = f[7];
	return nr ? makedev((nr >> 8) & 0xfff, (nr & 0xff) | ((nr >> 12) & 0xfff00)) : 0;
}

static struct cpt_pty *pty_find(struct cpt_ctx *c, uint32_t index, bool add)
{
	struct tty_cpt *tc = kind_dump_state(c, &kind_tty);
	struct cpt_pty *p;

	for (int i = 0; i < tc->nr_ptys; i++)
		if (tc->ptys[i].index == index)
			return &tc->ptys[i];
	if (!add)
		return NULL;
	p = VEC_PUSH(tc->ptys, tc->nr_ptys, tc->cap_ptys);
	if (p)
		p->index = index;
	return p;
}

static int master_index(pid_t pid, int fd, uint32_t *index)
{
	char name[32], *info, *q;
	int ret;

	snprintf(name, sizeof(name), "fdinfo/%d", fd);
	ret = proc_read(pid, name, &info, NULL);
	if (ret)
		return ret;
	q = strstr(info, "tty-index:");
	if (q)
		*index = strtoul(q + 10, NULL, 10);
	free(info);
	return q ? 0 : -EINVAL;
}

static int note_fd(struct cpt_ctx *c, pid_t pid, int fd, void *arg)
{
	struct cpt_pty *p;
	char path[64];
	struct stat st;
	uint32_t index;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (stat(path, &st) || !S_ISCHR(st.st_mode) || !is_master(st.st_rdev))
		return 0;
	if (master_index(pid, fd, &index))
		return log_err(c->log, EINVAL, "pid %d fd %d: a pty master without its index",
			       pid, fd);
	p = pty_find(c, index, true);
	if (p && !p->pid) {
		p->pid = pid;
		p->fd = fd;
	}
	return p ? 0 : log_err(c->log, ENOMEM, "pty table:");
}

/* Every pty master the tree holds: a pty is inside the tree when its
 * master is (its slave is opened by ckpt itself, TIOCGPTPEER). */
static int scan_ptys(struct cpt_ctx *c)
{
	struct tty_cpt *tc = kind_dump_state(c, &kind_tty);

	tc->scanned = true;
	return files_each_fd(c, note_fd, NULL);
}

enum tty_class { CL_NONE, CL_MASTER, CL_SLAVE, CL_JOB, CL_HUNGUP, CL_CTTY_PATH, CL_ORPHAN,
		 CL_REFUSE };

/* A console or a virtual terminal (or serial line) opened by a path that
 * still names it: reopened by that path (chr.c's, unless it is its
 * holder's controlling terminal: a TTY_CTTY_PATH). */
static bool by_path(const struct fd_probe *p)
{
	dev_t dev = p->st.st_rdev;
	struct stat st;

	return (major(dev) == 4 || dev == makedev(5, 1)) && p->link[0] == '/' &&
	       !strstr(p->link, " (deleted)") && !stat(p->link, &st) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == dev;
}

/* The leader, in the tree, of the session whose controlling terminal is
 * pty slave @dev (a container's console, its master the runtime's: not
 * stdio that restart's may stand in for), or 0. */
static pid_t ctty_of_tree(struct cpt_ctx *c, dev_t dev)
{
	unsigned long long f[PROC_STAT_FIELDS];

	for (int i = 0; i < c->nr_tasks; i++) {
		pid_t pid = c->tasks[i]->pid;

		if (!c->tasks[i]->zombie && !proc_stat(pid, NULL, f) && (pid_t)f[6] == pid &&
		    ctty_of(pid) == dev)
			return pid;
	}
	return 0;
}

static enum tty_class tty_class_of(struct cpt_ctx *c, const struct fd_probe *p,
				   struct cpt_pty **pty)
{
	const struct tty_cpt *tc = kind_dump_state(c, &kind_tty);
	dev_t dev = p->st.st_rdev;
	uint32_t index;

	*pty = NULL;
	if (!S_ISCHR(p->st.st_mode) || !is_terminal(dev) ||
	    (!tc->scanned && scan_ptys(c)))
		return CL_NONE;
	if (is_master(dev))
		return master_index(p->pid, p->fd, &index) ||
		       !(*pty = pty_find(c, index, false)) ? CL_NONE : CL_MASTER;
	if (dev == makedev(5, 0))	/* /dev/tty: the holder's terminal */
		dev = ctty_of(p->pid);
	if (dev && is_pts(dev) && (*pty = pty_find(c, pts_index(dev), false)) &&
	    (*pty)->pid)
		return CL_SLAVE;
	*pty = NULL;
	/* its /dev/pts/N went with its master: hung up */
	if (is_pts(p->st.st_rdev) && strstr(p->link, " (deleted)") &&
	    !((*pty = pty_find(c, pts_index(p->st.st_rdev), false)) && (*pty)->pid))
		return CL_HUNGUP;
	*pty = NULL;
	if ((c->flags & CKPT_SHELL_JOB) && dev && dev == ctty_of(c->tasks[0]->pid))
		return CL_JOB;
	if (dev && is_pts(dev) && ctty_of_tree(c, dev))
		return CL_ORPHAN;
	if (p->fd <= 2 || (c->flags & CKPT_SKIP_UNSUPPORTED))
		return CL_NONE;	/* stdio (inherit.c), or skipped */
	if (by_path(p))
		return p->st.st_rdev == ctty_of(p->pid) ? CL_CTTY_PATH : CL_NONE;
	return CL_REFUSE;
}

bool tty_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	struct cpt_pty *pty;

	return tty_class_of(c, p, &pty) != CL_NONE;
}

/* A copy of @pid's @fd in ckpt, to ask it things: >= 0, or -errno. */
static int grab(struct cpt_ctx *c, pid_t pid, int fd)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0), got = -1, err;

	if (pidfd >= 0)
		got = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = errno;
	if (pidfd >= 0)
		close(pidfd);
	if (got < 0)
		return log_err(c->log, err, "pid %d fd %d: taking a look at its terminal:",
			       pid, fd);
	return got;
}

static int read_termios(int fd, struct rec_tty *rt)
{
	struct termios tio;
	struct winsize ws;

	if (tcgetattr(fd, &tio) || ioctl(fd, TIOCGWINSZ, &ws))
		return -errno;
	rt->iflag = tio.c_iflag;
	rt->oflag = tio.c_oflag;
	rt->cflag = tio.c_cflag;
	rt->lflag = tio.c_lflag;
	rt->ispeed = cfgetispeed(&tio);
	rt->ospeed = cfgetospeed(&tio);
	memcpy(rt->cc, tio.c_cc, sizeof(rt->cc));
	rt->line = tio.c_line;
	rt->ws_row = ws.ws_row;
	rt->ws_col = ws.ws_col;
	rt->ws_xpixel = ws.ws_xpixel;
	rt->ws_ypixel = ws.ws_ypixel;
	return 0;
}

static int queued(struct cpt_ctx *c, const struct cpt_pty *p, int n,
		  const char *where)
{
	return log_err(c->log, EBUSY,
		       "pid %d fd %d: %d bytes queued %s in pty %u (they could not be put back as they were)",
		       p->pid, p->fd, n, where, p->index);
}

/* The bytes queued in a pty, one way: [0] for the master, [1] for the
 * slave. */
struct pty_queues {
	char *buf[2];
	uint32_t len[2];
	uint32_t partial;	/* of the input: the line being typed */
};

static void queues_free(struct pty_queues *q)
{
	free(q->buf[0]);
	free(q->buf[1]);
}

/* Input the slave has not read, through @s, ckpt's own slave
 * description, and put back; the master's queue is empty meanwhile (the
 * line being typed is put back with its echo on, which is read off the
 * master).  What was read goes back on every path. */
static int save_input(struct cpt_ctx *c, const struct cpt_pty *p, int m, int s,
		      struct pty_queues *q)
{
	struct termios tio;
	int ret, put;

	if (tcgetattr(s, &tio))
		return log_err(c->log, errno, "pty %u: its termios:", p->index);
	ret = ptyq_take_input(s, &tio, &q->buf[1], &q->len[1], &q->partial);
	put = q->len[1] ? ptyq_put_input(m, s, &tio, q->buf[1], q->len[1], q->partial) : 0;
	if (ret == -EOVERFLOW)
		return log_err(c->log, EBUSY, "pid %d fd %d: pty %u: its input buffer is full (what waits past it cannot be saved)",
			       p->pid, p->fd, p->index);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: reading the input queued in pty %u:",
			       p->pid, p->fd, p->index);
	if (put)
		return log_err(c->log, -put, "pid %d fd %d: pty %u: putting back the %u bytes of input read from it:",
			       p->pid, p->fd, p->index, q->len[1]);
	return 0;
}

/* The slave's output the master has not read, read before the input
 * (whose put-back needs the master's queue empty), put back after
 * through @s.  A slave that takes no output now (stopped by ^S, or its
 * master's buffer full) could not have it back: refused before anything
 * is read, and its input is left alone (in canonical mode FIONREAD does
 * not show a line being typed, which is then not saved). */
static int save_queues(struct cpt_ctx *c, const struct cpt_pty *p, int m, int s,
		       int out, struct pty_queues *q)
{
	struct pollfd pf = { s, POLLOUT, 0 };
	int in = 0, ret, put;

	if (ioctl(s, FIONREAD, &in))
		return log_err(c->log, errno, "pty %u: FIONREAD:", p->index);
	if (poll(&pf, 1, 0) != 1 || !(pf.revents & POLLOUT)) {
		if (out || in)
			return queued(c, p, out ? out : in,
				      out ? "for the master, its slave stopped (^S) or full,"
					  : "for the slave, its output stopped (^S) or full,");
		return 0;
	}
	ret = out ? ptyq_drain(m, false, &q->buf[0], &q->len[0]) : 0;
	if (!ret)
		ret = save_input(c, p, m, s, q);
	else
		ret = log_err(c->log, -ret, "pid %d fd %d: reading the output queued in pty %u:",
			      p->pid, p->fd, p->index);
	put = q->len[0] ? ptyq_put_output(s, q->buf[0], q->len[0]) : 0;
	if (put)
		return log_err(c->log, -put, "pid %d fd %d: pty %u: putting back the %u bytes of output read from it:",
			       p->pid, p->fd, p->index, q->len[0]);
	return ret;
}

/* In packet mode a read of the master may return a status instead of
 * bytes, and the echo that shows input landed would come with status
 * bytes: nothing may be queued. */
static int pkt_queues(struct cpt_ctx *c, const struct cpt_pty *p, int s, int out)
{
	int in = 0;

	if (out)
		return queued(c, p, out, "for the master, in packet mode,");
	if (!ioctl(s, FIONREAD, &in) && in)
		return queued(c, p, in, "for the slave of a pty in packet mode,");
	return 0;
}

/* Termios, window size, modes, session and foreground, all asked of the
 * master (a pty master answers for its slave), and what is queued. */
static int pty_state(struct cpt_ctx *c, const struct cpt_pty *p, int m,
		     struct rec_tty *rt, struct pty_queues *q)
{
	int n = 0, pkt = 0, lck = 0, s, ret;
	pid_t sid = 0, pg = 0;
	struct stat st;

	if (read_termios(m, rt) < 0 || ioctl(m, TIOCGPKT, &pkt) ||
	    ioctl(m, TIOCGPTLCK, &lck) || ioctl(m, FIONREAD, &n))
		return log_err(c->log, errno, "pid %d fd %d: pty %u:", p->pid, p->fd,
			       p->index);
	if (rt->line)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: pty %u has line discipline %u (only N_TTY is supported)",
			       p->pid, p->fd, p->index, rt->line);
	s = ptyq_peer(m, O_RDWR | O_NONBLOCK, lck);
	if (s < 0)
		return log_err(c->log, errno, "pty %u: opening its slave:", p->index);
	ret = pkt ? pkt_queues(c, p, s, n) : save_queues(c, p, m, s, n, q);
	if (!ret && fstat(s, &st))
		ret = log_err(c->log, errno, "pty %u: its slave's owner:", p->index);
	close(s);
	if (ret)
		return ret;
	if (ioctl(m, TIOCGSID, &sid))
		sid = 0;	/* nobody's controlling terminal */
	if (ioctl(m, TIOCGPGRP, &pg))
		pg = 0;
	rt->flags = (pkt ? TTY_PKT : 0) | (lck ? TTY_LOCKED : 0) | TTY_OWNER;
	rt->slave_uid = st.st_uid;
	rt->slave_gid = st.st_gid;
	rt->slave_mode = st.st_mode & 07777;
	rt->sid = sid;
	rt->fg_pgrp = pg;
	return 0;
}

static struct cpt_task *tree_task(struct cpt_ctx *c, pid_t pid)
{
	for (int i = 0; i < c->nr_tasks; i++)
		if (c->tasks[i]->pid == pid && !c->tasks[i]->zombie)
			return c->tasks[i];
	return NULL;
}

static bool group_in_session(struct cpt_ctx *c, pid_t pgid, pid_t sid)
{
	unsigned long long f[PROC_STAT_FIELDS];

	for (int i = 0; i < c->nr_tasks; i++)
		if (!c->tasks[i]->zombie && !proc_stat(c->tasks[i]->pid, NULL, f) &&
		    (pid_t)f[5] == pgid && (pid_t)f[6] == sid)
			return true;
	return false;
}

/* Restart makes the session of a leader in the tree, the root's too:
 * only such a session can have it back. */
static int pty_session(struct cpt_ctx *c, const struct cpt_pty *p,
		       struct rec_tty *rt)
{
	struct cpt_task *leader = rt->sid ? tree_task(c, rt->sid) : NULL;

	if (rt->sid && !leader)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: pty %u is the controlling terminal of session %u, led by a process outside the tree (restart cannot rebuild that)",
			       p->pid, p->fd, p->index, rt->sid);
	if (rt->fg_pgrp && !group_in_session(c, rt->fg_pgrp, rt->sid)) {
		log_info(c->log, "pty %u: foreground group %u has no process of the tree",
			 p->index, rt->fg_pgrp);
		rt->fg_pgrp = 0;
	}
	return 0;
}

static int data_dump(struct cpt_ctx *c, uint32_t id, uint32_t dir,
		     const char *buf, uint32_t len, uint32_t partial)
{
	struct rec_tty_data d = { .tty_id = id, .dir = dir, .len = len, .partial = partial };
	int ret = iw_begin(&c->w, REC_TTY_DATA, sizeof(d) + len);

	if (!ret)
		ret = iw_write(&c->w, &d, sizeof(d));
	if (!ret)
		ret = iw_write(&c->w, buf, len);
	return ret ? ret : iw_end(&c->w);
}

static int pty_dump(struct cpt_ctx *c, struct cpt_pty *p, uint32_t *id)
{
	struct rec_tty rt = { .kind = TTY_PTY, .index = p->index };
	struct pty_queues q = { { NULL, NULL }, { 0, 0 }, 0 };
	int m, ret;

	if (p->id) {
		*id = p->id;
		return 0;
	}
	m = grab(c, p->pid, p->fd);
	if (m < 0)
		return m;
	ret = pty_state(c, p, m, &rt, &q);
	close(m);
	if (!ret)
		ret = pty_session(c, p, &rt);
	if (!ret) {
		rt.id = p->id = ++c->next_objref;
		*id = rt.id;
		ret = iw_record(&c->w, REC_TTY, &rt, sizeof(rt));
	}
	for (int d = 0; d < 2 && !ret; d++)
		if (q.len[d])
			ret = data_dump(c, rt.id, d ? TTY_TO_SLAVE : TTY_TO_MASTER,
					q.buf[d], q.len[d], d ? q.partial : 0);
	queues_free(&q);
	return ret;
}

/* The job's terminal: only its termios matters (restart's terminal is
 * used in its place, with its own size and line). */
static int job_dump(struct cpt_ctx *c, const struct fd_probe *p, uint32_t *id)
{
	struct tty_cpt *tc = kind_dump_state(c, &kind_tty);
	struct rec_tty rt = { .kind = TTY_JOB };
	int fd, ret;

	if (tc->job_tty) {
		*id = tc->job_tty;
		return 0;
	}
	fd = grab(c, p->pid, p->fd);
	if (fd < 0)
		return fd;
	ret = read_termios(fd, &rt);
	close(fd);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: its terminal:", p->pid, p->fd);
	rt.line = 0;
	if (is_pts(p->st.st_rdev))
		rt.index = pts_index(p->st.st_rdev);
	rt.id = tc->job_tty = ++c->next_objref;
	*id = rt.id;
	return iw_record(&c->w, REC_TTY, &rt, sizeof(rt));
}

/* A hung-up slave: its TTY says only that (its termios cannot be read),
 * once for all the descriptions of it. */
static int hungup_dump(struct cpt_ctx *c, const struct fd_probe *p, uint32_t *id)
{
	struct rec_tty rt = { .kind = TTY_HUNGUP, .index = pts_index(p->st.st_rdev) };
	struct cpt_pty *pty = pty_find(c, rt.index, true);

	if (!pty)
		return log_err(c->log, ENOMEM, "pty table:");
	if (pty->id) {
		*id = pty->id;
		return 0;
	}
	rt.id = pty->id = ++c->next_objref;
	*id = rt.id;
	return iw_record(&c->w, REC_TTY, &rt, sizeof(rt));
}

/* A console or vt that is its holder's controlling terminal: its
 * session (led in the tree) takes it again, and its foreground group
 * (the holder's tpgid). */
static int ctty_dump(struct cpt_ctx *c, const struct fd_probe *p, uint32_t *id)
{
	struct tty_cpt *tc = kind_dump_state(c, &kind_tty);
	struct rec_tty rt = { .kind = TTY_CTTY_PATH };
	unsigned long long f[PROC_STAT_FIELDS];
	struct cpt_ctty *e;

	for (int i = 0; i < tc->nr_cttys; i++)
		if (tc->cttys[i].dev == p->st.st_rdev) {
			*id = tc->cttys[i].id;
			return 0;
		}
	if (proc_stat(p->pid, NULL, f))
		return log_err(c->log, ESRCH, "pid %d: its stat:", p->pid);
	rt.sid = f[6];
	rt.fg_pgrp = (pid_t)f[8] > 0 ? f[8] : 0;
	rt.index = (major(p->st.st_rdev) << 20) | minor(p->st.st_rdev);
	if (!tree_task(c, rt.sid))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: %s is the controlling terminal of session %u, led by a process outside the tree (restart cannot rebuild that)",
			       p->pid, p->fd, p->link, rt.sid);
	if (rt.fg_pgrp && !group_in_session(c, rt.fg_pgrp, rt.sid))
		rt.fg_pgrp = 0;
	e = VEC_PUSH(tc->cttys, tc->nr_cttys, tc->cap_cttys);
	if (!e)
		return log_err(c->log, ENOMEM, "tty:");
	e->dev = p->st.st_rdev;
	rt.id = e->id = ++c->next_objref;
	*id = rt.id;
	return iw_record(&c->w, REC_TTY, &rt, sizeof(rt));
}

/* Bytes queued in @s, a slave whose master is outside: its input the
 * session has not read, its output the master's holder has not (it
 * reads as it goes: a moment for that). */
static int orphan_queued(struct cpt_ctx *c, const struct fd_probe *p, int s)
{
	int in = 0, out = 0;

	for (int i = 0; i < 20; i++) {
		if (ioctl(s, FIONREAD, &in) || ioctl(s, TIOCOUTQ, &out))
			return log_err(c->log, errno, "pid %d fd %d: its terminal's queues:", p->pid,
				       p->fd);
		if (!in && !out)
			return 0;
		usleep(10000);
	}
	return log_err(c->log, EBUSY,
		       "pid %d fd %d: %s has %d bytes of input and %d of output queued, which its master outside the tree holds (they could not be put back)",
		       p->pid, p->fd, p->link, in, out);
}

/* A session's terminal whose master is outside the tree (TTY_ORPHAN):
 * its termios, size, owner, session and foreground, asked of the slave
 * and of /proc; once for all the descriptions of it. */
static int orphan_dump(struct cpt_ctx *c, const struct fd_probe *p, uint32_t *id)
{
	dev_t dev = p->st.st_rdev == makedev(5, 0) ? ctty_of(p->pid) : p->st.st_rdev;
	struct rec_tty rt = { .kind = TTY_ORPHAN, .index = pts_index(dev), .flags = TTY_OWNER };
	struct cpt_pty *pty = pty_find(c, rt.index, true);
	unsigned long long f[PROC_STAT_FIELDS];
	struct stat st;
	int s, ret;

	if (!pty)
		return log_err(c->log, ENOMEM, "pty table:");
	if (pty->id) {
		*id = pty->id;
		return 0;
	}
	rt.sid = ctty_of_tree(c, dev);
	if (!rt.sid || proc_stat(rt.sid, NULL, f))
		return log_err(c->log, ESRCH, "pid %d fd %d: the session of %s:", p->pid, p->fd,
			       p->link);
	rt.fg_pgrp = (pid_t)f[8] > 0 && group_in_session(c, f[8], rt.sid) ? f[8] : 0;
	s = grab(c, p->pid, p->fd);
	if (s < 0)
		return s;
	ret = read_termios(s, &rt) ? log_err(c->log, errno, "pid %d fd %d: %s:", p->pid, p->fd,
					     p->link) : orphan_queued(c, p, s);
	if (!ret && fstat(s, &st))
		ret = log_err(c->log, errno, "pid %d fd %d: its terminal's owner:", p->pid, p->fd);
	close(s);
	if (!ret && rt.line)
		ret = log_err(c->log, EOPNOTSUPP, "pid %d fd %d: %s has line discipline %u (only N_TTY is supported)",
			      p->pid, p->fd, p->link, rt.line);
	if (ret)
		return ret;
	rt.slave_uid = st.st_uid;
	rt.slave_gid = st.st_gid;
	rt.slave_mode = st.st_mode & 07777;
	rt.id = pty->id = ++c->next_objref;
	*id = rt.id;
	return iw_record(&c->w, REC_TTY, &rt, sizeof(rt));
}

int tty_dump(struct cpt_ctx *c, const struct fd_probe *p,
		    struct rec_file *f, void **extra, uint32_t *extra_len)
{
	static const uint32_t roles[] = { [CL_MASTER] = TTY_MASTER,
		[CL_SLAVE] = TTY_SLAVE, [CL_JOB] = TTY_TERM, [CL_HUNGUP] = TTY_SLAVE,
		[CL_CTTY_PATH] = TTY_TERM, [CL_ORPHAN] = TTY_SLAVE };
	enum tty_class cl;
	struct rec_tty_file *e;
	struct cpt_pty *pty;
	uint32_t id = 0;
	int ret;

	cl = tty_class_of(c, p, &pty);
	if (cl == CL_REFUSE || cl == CL_NONE)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: %s is a terminal outside the tree (if it is the shell job's terminal, use --shell-job)",
			       p->pid, p->fd, p->link);
	ret = cl == CL_JOB ? job_dump(c, p, &id) : cl == CL_HUNGUP ? hungup_dump(c, p, &id) :
	      cl == CL_CTTY_PATH ? ctty_dump(c, p, &id) :
	      cl == CL_ORPHAN ? orphan_dump(c, p, &id) : pty_dump(c, pty, &id);
	if (ret)
		return ret;
	e = malloc(sizeof(*e));
	if (!e)
		return log_err(c->log, ENOMEM, "tty:");
	e->tty_id = id;
	e->role = roles[cl];
	*extra = e;
	*extra_len = sizeof(*e);
	return 0;
}

void tty_dump_free(struct cpt_ctx *c, void *state)
{
	struct tty_cpt *tc = state;

	free(tc->ptys);
	free(tc->cttys);
}
