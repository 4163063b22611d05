/* tty.c - terminals (TTY records, FILE_TTY descriptions).
 *
 * A pty pair whose master is held in the tree (TTY_PTY) is made anew at
 * restart by ckpt itself (/dev/ptmx), with the saved termios, window
 * size, packet mode and lock state; each process takes its master or a
 * slave description from ckpt with pidfd_getfd(), and the session leader
 * that had the slave as its controlling terminal gets it back
 * (TIOCSCTTY), with the foreground group (TIOCSPGRP).  Its index
 * (/dev/pts/N) is another one then: no path is trusted.  The bytes queued
 * in the pty, the slave's output for the master and input for the
 * slave, are read out and put back at once (ptyq.c), and saved in
 * TTY_DATA records (not in packet mode: refused).
 *
 * A pty slave whose master was closed (hung up, its /dev/pts/N gone) is
 * a TTY_HUNGUP: a new pair whose master ckpt closes once all is built.
 * The slave's owner and mode come back with it (TTY_OWNER).
 *
 * Any other terminal is outside the tree.  At fds 0-2 it is stdio that
 * restart's own replaces (inherit.c), unless the tree is a shell job
 * (CKPT_SHELL_JOB): then every fd of the job's controlling terminal, at
 * any number, is the TTY_JOB, and at restart opens restart's terminal
 * (/dev/tty), which gets the job's termios and hands the foreground to
 * the job's group.  A console or virtual terminal opened by its path is
 * reopened by it (chr.c); if it is its holder's controlling terminal, it
 * is a TTY_CTTY_PATH, which its session's leader, in the tree, takes
 * again (as a pty's), with its foreground group.  An outside terminal at
 * fd > 2 is refused otherwise.
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

#define SPEED_BITS	0x100fu		/* CBAUD | CBAUDEX */
#define CIBAUD_BITS	0x100f0000u

static bool is_master(dev_t rdev)
{
	return major(rdev) == 5 && minor(rdev) == 2;
}

static bool is_pts(dev_t rdev)
{
	return major(rdev) >= 136 && major(rdev) <= 143;
}

static uint32_t pts_index(dev_t rdev)
{
	return ((major(rdev) - 136) << 20) | minor(rdev);
}

static bool is_terminal(dev_t rdev)
{
	unsigned int ma = major(rdev);

	return ma == 4 || ma == 5 || is_pts(rdev);
}

/* ---- checkpoint ---- */

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

struct cpt_pty {
	uint32_t index;		/* /dev/pts/N */
	pid_t pid;		/* a process of the tree with the master */
	int fd;
	uint32_t id;		/* its TTY record, once written */
};

/* The checkpoint's: every pty master the tree holds, once scanned, and
 * the job's terminal. */
struct tty_cpt {
	struct cpt_pty *ptys;
	int nr_ptys;
	size_t cap_ptys;
	bool scanned;
	uint32_t job_tty;	/* the job's terminal's TTY record, once written */
	struct cpt_ctty { dev_t dev; uint32_t id; } *cttys;	/* TTY_CTTY_PATH */
	int nr_cttys;
	size_t cap_cttys;
};

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

static bool tty_match(struct cpt_ctx *c, const struct fd_probe *p)
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

static int tty_dump(struct cpt_ctx *c, const struct fd_probe *p,
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

static void tty_dump_free(struct cpt_ctx *c, void *state)
{
	struct tty_cpt *tc = state;

	free(tc->ptys);
	free(tc->cttys);
}

/* ---- restart ---- */

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

static int ttyk_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
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
static int ttyk_check(struct rst_ctx *c, struct rst_task *t)
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

static int tty_file_load(struct rst_ctx *c, struct rst_file *f)
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

static int tty_file_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
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
	rcall(&t->rm, &res, SYS_close, fd);
	return ret;
}

/* A controlling terminal is inherited over fork, never given to a
 * process that exists: the leader takes it as soon as it has made its
 * session, before any member is forked.  ckpt keeps a slave description
 * open meanwhile (the session would lose its terminal when the last
 * slave description closes). */
static int ttyk_session_made(struct rst_ctx *c, struct rst_task *t)
{
	struct tty_table *tt = KCSTATE(c, kind_tty);
	int ret = 0;

	for (int i = 0; tt && i < tt->n && !ret; i++)
		if (has_session(&tt->e[i].t) && tt->e[i].t.sid == (uint32_t)t->pid)
			ret = slave_ioctl(c, t, &tt->e[i], TIOCSCTTY, 0);
	return ret;
}

/* The foreground group, once every group exists. */
static int ttyk_restore(struct rst_ctx *c, struct rst_task *t)
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
static int ttyk_built(struct rst_ctx *c)
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

static void ttyk_free_ctx(void *state)
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

static void ttyk_show(struct info_out *o, const struct rec *r)
{
	const struct rec_tty *t = r->data;
	const struct rec_tty_data *d = r->data;

	if (r->type == REC_TTY_DATA) {
		info_u64(o, "tty", d->tty_id);
		info_str(o, "to", d->dir == TTY_TO_MASTER ? "master" :
				  d->dir == TTY_TO_SLAVE ? "slave" : "?");
		info_u64(o, "bytes", d->len);
		if (d->partial)
			info_u64(o, "partial", d->partial);
		return;
	}

	info_u64(o, "id", t->id);
	info_str(o, "kind", t->kind == TTY_PTY ? "pty" : t->kind == TTY_JOB ? "job" :
			    t->kind == TTY_HUNGUP ? "hungup" :
			    t->kind == TTY_CTTY_PATH ? "ctty_path" :
			    t->kind == TTY_ORPHAN ? "orphan" : "?");
	info_u64(o, "index", t->index);
	info_hex(o, "flags", t->flags);
	info_u64(o, "sid", t->sid);
	info_u64(o, "fg_pgrp", t->fg_pgrp);
	info_hex(o, "lflag", t->lflag);
	info_u64(o, "rows", t->ws_row);
	info_u64(o, "cols", t->ws_col);
	if (r->data_len >= sizeof(*t) && (t->flags & TTY_OWNER)) {
		info_u64(o, "slave_uid", t->slave_uid);
		info_u64(o, "slave_gid", t->slave_gid);
		info_hex(o, "slave_mode", t->slave_mode);
	}
}

static void tty_file_show(struct info_out *o, const struct rec_file *f,
			  const void *extra, uint32_t extra_len)
{
	struct rec_tty_file x;

	if (extra_len != sizeof(x))
		return;
	memcpy(&x, extra, sizeof(x));
	info_u64(o, "tty", x.tty_id);
	info_str(o, "role", x.role == TTY_MASTER ? "master" : x.role == TTY_SLAVE ? "slave"
			    : x.role == TTY_TERM ? "terminal" : "?");
}

static const struct rec_desc tty_recs[] = {
	{ REC_TTY, "TTY", sizeof(struct rec_tty) },
	{ REC_TTY_DATA, "TTY_DATA", sizeof(struct rec_tty_data) },
	{ 0 }
};

const struct kind_ops kind_tty = {
	.name = "tty",
	.recs = tty_recs,
	.phase = PHASE_STATE,	/* controlling terminals, once groups exist */
	.dump_size = sizeof(struct tty_cpt),
	.dump_free = tty_dump_free,
	.load = ttyk_load,
	.check = ttyk_check,
	.restore = ttyk_restore,
	.session_made = ttyk_session_made,
	.restore_built = ttyk_built,
	.free_ctx = ttyk_free_ctx,
	.show = ttyk_show,
};

/* A terminal reopened by its path: still that device. */
static int tty_file_check(struct rst_ctx *c, const struct rst_file *f)
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

const struct file_ops file_tty = {
	.kind = FILE_TTY,
	.name = "tty",
	.match = tty_match,
	.dump = tty_dump,
	.load = tty_file_load,
	.check = tty_file_check,
	.open = tty_file_open,
	.show = tty_file_show,
};
