/* pidfd.c - pidfds (FILE_PIDFD).
 *
 * Checkpoint: fdinfo's "Pid:" names the process, as our /proc sees it.
 * One of the tree is kept by its pid (a thread other than a leader,
 * with PIDFD_THREAD, is refused: threads are made after fds at
 * restart); one outside the tree is refused.  "Pid: -1" is a process
 * that has died and been reaped: all the pidfds on one such process
 * (one pidfs inode) are a group, each description naming the first
 * written of its group.  (Before pidfs, Linux 6.9, every pidfd is on
 * one anon inode: all the dead ones become one group, which nothing on
 * such a kernel can tell from several.)
 *
 * Restart: a live one is pidfd_open()ed by the restored process itself,
 * with its flags (O_NONBLOCK, PIDFD_THREAD).  For a dead group ckpt
 * forks a child that exits at once, pidfd_open()s it once per
 * description of the group while it is a zombie, then reaps it: every
 * one reads "Pid: -1", and they share one inode as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../files.h"
#include "../kinds/ns_pid.h"

#define PIDFD_LINK	"anon_inode:[pidfd]"
#define PIDFD_THREAD_	O_EXCL
#define PIDFD_FLAGS	(O_RDWR | O_NONBLOCK | PIDFD_THREAD_)
#define PIDFD_PID_MAX	(1 << 22)	/* PID_MAX_LIMIT */

/* ---- checkpoint ---- */

static bool pidfd_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return !strcmp(p->link, PIDFD_LINK);
}

struct dead_probe {
	const struct stat *st;
	uint32_t first;
};

/* files_each_fd(): an fd already written on the same dead process? */
static int dead_peer(struct cpt_ctx *c, pid_t pid, int fd, void *arg)
{
	struct dead_probe *d = arg;
	char path[64];
	struct stat st;
	uint32_t id;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (stat(path, &st) || st.st_dev != d->st->st_dev || st.st_ino != d->st->st_ino)
		return 0;
	id = files_known(c, pid, fd);
	if (id && (!d->first || id < d->first))
		d->first = id;
	return 0;
}

static bool tree_thread(struct cpt_ctx *c, pid_t tid)
{
	for (int i = 0; i < c->nr_tasks; i++)
		if (id_find(&c->tasks[i]->tids, tid) >= 0)
			return true;
	return false;
}

static int pidfd_dump(struct cpt_ctx *c, const struct fd_probe *p,
		      struct rec_file *f, void **extra, uint32_t *extra_len)
{
	const char *v = fdinfo_field(p->fdinfo, "Pid:");
	struct dead_probe d = { .st = &p->st };
	struct rec_pidfd *r;
	long pid = v ? strtol(v, NULL, 10) : 0;
	int ret;

	if (!v)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: pidfd: no Pid in its fdinfo",
			       p->pid, p->fd);
	if ((f->flags & ~PIDFD_FLAGS) || (f->flags & O_ACCMODE) != O_RDWR)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: pidfd with file flags 0%o",
			       p->pid, p->fd, f->flags);
	if (pid == 0 || pid < -1)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: pidfd on a process outside ckpt's pid namespace (not in the tree)",
			       p->pid, p->fd);
	if (pid > 0 && id_find(&c->pids, pid) < 0)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: pidfd on pid %ld, %s",
			       p->pid, p->fd, pid, tree_thread(c, pid) ?
			       "a thread of the tree other than its leader (not supported)" :
			       "a process outside the tree (only the tree's processes can be restored)");
	if (pid < 0) {
		ret = files_each_fd(c, dead_peer, &d);
		if (ret)
			return ret;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return log_err(c->log, ENOMEM, "pidfd:");
	r->pid = pid;
	r->dead_with = d.first;
	*extra = r;
	*extra_len = sizeof(*r);
	return 0;
}

/* ---- restart ---- */

/* A description's priv.  The first of a dead group also holds, for
 * every member, its flags and (once made) ckpt's fd on it. */
struct pidfd_rst {
	struct rec_pidfd r;
	uint32_t index;		/* in its dead group */
	uint32_t nr;		/* the first of a group: members so far */
	uint32_t *flags;
	int *fds;
	bool made;
};

static int join_group(struct rst_ctx *c, struct rst_file *f, struct pidfd_rst *me)
{
	struct rst_file *first = me->r.dead_with ? files_by_id(c, me->r.dead_with) : f;
	struct pidfd_rst *g = first ? first->priv : NULL;
	uint32_t *fl;
	int *fds;

	if (!g || first->f.kind != FILE_PIDFD || g->r.pid != -1 || g->r.dead_with)
		return log_err(c->log, EBADMSG, "FILE %u: pidfd: bad dead group %u",
			       f->f.id, me->r.dead_with);
	fl = realloc(g->flags, (g->nr + 1) * sizeof(*fl));
	if (fl)
		g->flags = fl;
	fds = fl ? realloc(g->fds, (g->nr + 1) * sizeof(*fds)) : NULL;
	if (fds)
		g->fds = fds;
	if (!fl || !fds)
		return log_err(c->log, ENOMEM, "pidfd:");
	me->index = g->nr++;
	g->flags[me->index] = f->f.flags & ~O_ACCMODE;
	g->fds[me->index] = -1;
	return 0;
}

static int pidfd_load(struct rst_ctx *c, struct rst_file *f)
{
	struct pidfd_rst *me;

	if (f->f.extra_len != sizeof(me->r) || (f->f.flags & ~PIDFD_FLAGS) ||
	    (f->f.flags & O_ACCMODE) != O_RDWR)
		return log_err(c->log, EBADMSG, "FILE %u: bad pidfd", f->f.id);
	me = calloc(1, sizeof(*me));
	if (!me)
		return log_err(c->log, ENOMEM, "pidfd:");
	f->priv = me;
	memcpy(&me->r, f->extra, sizeof(me->r));
	if ((me->r.pid != -1 && (me->r.pid < 1 || me->r.pid > PIDFD_PID_MAX)) ||
	    (me->r.pid != -1 && me->r.dead_with) || me->r.dead_with >= f->f.id)
		return log_err(c->log, EBADMSG, "FILE %u: bad pidfd (pid %d, dead with %u)",
			       f->f.id, me->r.pid, me->r.dead_with);
	return me->r.pid == -1 ? join_group(c, f, me) : 0;
}

/* The dead process of group @g: a child of ours that exits at once,
 * opened while it is a zombie, then reaped. */
static int make_dead(struct rst_ctx *c, struct pidfd_rst *g)
{
	pid_t pid = fork();
	int ret = 0, status;

	if (pid < 0)
		return log_err(c->log, errno, "pidfd: a process to be dead:");
	if (!pid)
		_exit(0);
	for (uint32_t i = 0; i < g->nr && !ret; i++) {
		g->fds[i] = syscall(SYS_pidfd_open, pid, g->flags[i]);
		if (g->fds[i] < 0)
			ret = log_err(c->log, errno, "pidfd: pidfd_open(%d, %#x):", pid,
				      g->flags[i]);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	g->made = true;
	return ret;
}

static bool in_image(struct rst_ctx *c, pid_t pid)
{
	for (int i = 0; i < c->nr_tasks; i++)
		if (c->tasks[i]->pid == pid)
			return true;
	return false;
}

static int pidfd_open_dead(struct rst_ctx *c, struct rst_task *t,
			   struct rst_file *f, long *fd)
{
	struct pidfd_rst *me = f->priv;
	struct pidfd_rst *g = me->r.dead_with ? files_by_id(c, me->r.dead_with)->priv : me;
	int ret = g->made ? 0 : make_dead(c, g);
	int ours = g->fds[me->index];

	if (ret)
		return ret;
	if (ours < 0)
		return log_err(c->log, EBADF, "FILE %u: pidfd opened twice", f->f.id);
	g->fds[me->index] = -1;
	ret = files_give(t, ours, fd);
	close(ours);
	return ret;
}

static int pidfd_open_(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		       long *fd)
{
	struct pidfd_rst *me = f->priv;

	if (me->r.pid == -1)
		return pidfd_open_dead(c, t, f, fd);
	if (!in_image(c, me->r.pid))
		return log_err(c->log, EBADMSG, "FILE %u: pidfd on pid %d, no process of the image",
			       f->f.id, me->r.pid);
	return ns_pidfd_give(c, t, me->r.pid, f->f.flags & ~O_ACCMODE, fd);
}

static void pidfd_free(struct rst_file *f)
{
	struct pidfd_rst *me = f->priv;

	if (!me)
		return;
	for (uint32_t i = 0; me->fds && i < me->nr; i++)
		if (me->fds[i] >= 0)
			close(me->fds[i]);
	free(me->fds);
	free(me->flags);
	free(me);
	f->priv = NULL;
}

static void pidfd_show(struct info_out *o, const struct rec_file *f,
		       const void *extra, uint32_t extra_len)
{
	struct rec_pidfd r;

	if (!anonfd_get(extra, extra_len, &r, sizeof(r)))
		return;
	info_i64(o, "pid", r.pid);
	if (r.pid == -1)
		info_u64(o, "dead_with", r.dead_with);
}

const struct file_ops file_pidfd = {
	.kind = FILE_PIDFD,
	.name = "pidfd",
	.match = pidfd_match,
	.dump = pidfd_dump,
	.load = pidfd_load,
	.open = pidfd_open_,
	.free = pidfd_free,
	.show = pidfd_show,
};
