/* epoll.c - epoll instances (FILE_EPOLL): every registration with its
 * event mask (EPOLLET, EPOLLONESHOT, EPOLLEXCLUSIVE, EPOLLWAKEUP kept)
 * and data, each naming the watched description by objref.
 *
 * Checkpoint: fdinfo lists "tfd: N events: X data: Y"; the fd number N
 * is only the key the program registered under, the description may
 * have moved (dup'ed, then N closed or reused).  kcmp(KCMP_EPOLL_TFD)
 * tells which fd of the tree holds that very description; files_ref()
 * writes its FILE first, so targets always have lower objrefs than their
 * epoll.  A description no fd of the tree holds any more (kept alive only
 * elsewhere) cannot be reached from userspace: refused.
 *
 * Restart (pass 1, after every plain description; an epoll watching an
 * epoll comes after it because objrefs install in increasing order): a
 * new epoll in the process, and each registration added under its own fd
 * number N, so EPOLL_CTL_MOD/DEL by N keep working: the target is put at
 * N for the call if it is not there (whatever sits at N is set aside and
 * put back).  Readiness is not copied: it re-arises from the targets'
 * own state, which is exact for level-triggered items.  An EPOLLET item
 * whose target is ready reports one edge after restart (the kernel does
 * not tell whether the original edge was consumed), and a disarmed
 * EPOLLONESHOT item (events show no poll bits) is armed again for
 * EPOLLERR/EPOLLHUP, which epoll_ctl always adds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../files.h"

#define EP_LINK "anon_inode:[eventpoll]"
#define EP_KNOWN_EVENTS (EPOLLIN | EPOLLPRI | EPOLLOUT | EPOLLERR | EPOLLHUP | \
			 EPOLLRDNORM | EPOLLRDBAND | EPOLLWRNORM | EPOLLWRBAND | \
			 EPOLLMSG | EPOLLRDHUP | EPOLLEXCLUSIVE | EPOLLWAKEUP | \
			 EPOLLONESHOT | EPOLLET)
#define EP_MAX_REGS ((MAX_FILE_EXTRA - sizeof(struct rec_epoll)) / \
		     sizeof(struct rec_epoll_tfd))

/* ---- checkpoint ---- */

static bool ep_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return !strcmp(p->link, EP_LINK);
}

static bool is_target(pid_t pid, int fd, pid_t ep_pid, int efd, int tfd, int toff)
{
	struct kcmp_epoll_slot slot = { .efd = efd, .tfd = tfd, .toff = toff };

	return syscall(SYS_kcmp, pid, ep_pid, KCMP_EPOLL_TFD, fd,
		       (unsigned long)&slot) == 0;
}

/* An fd of @t holding the toff'th description registered as @tfd. */
static int search_task(struct cpt_task *t, const struct fd_probe *p, int tfd,
		       int toff)
{
	char path[64];
	struct dirent *de;
	int found = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", t->pid);
	d = opendir(path);
	while (d && found < 0 && (de = readdir(d)))
		if (de->d_name[0] != '.' &&
		    is_target(t->pid, atoi(de->d_name), p->pid, p->fd, tfd, toff))
			found = atoi(de->d_name);
	if (d)
		closedir(d);
	return found;
}

/* The fd of the tree holding the target: the key fd itself, or any fd
 * of the epoll's own process, or of another process of the tree. */
static int find_target(struct cpt_ctx *c, const struct fd_probe *p, int tfd,
		       int toff, struct cpt_task **tt, int *fd)
{
	*tt = p->task;
	*fd = tfd;
	/* (an epoll in flight is ckpt's own fd: its numbers are not @t's) */
	if (!p->via_pid && is_target(p->pid, tfd, p->pid, p->fd, tfd, toff))
		return 0;
	if ((*fd = search_task(p->task, p, tfd, toff)) >= 0)
		return 0;
	for (int i = 0, later = 0; i < c->nr_tasks; i++) {
		*tt = c->tasks[i];
		later |= *tt == p->task;
		if ((*tt)->zombie || *tt == p->task ||
		    (*fd = search_task(*tt, p, tfd, toff)) < 0)
			continue;
		/* processes are restored in this order: the target must be
		 * in place before the epoll is made */
		if (!later)
			return 0;
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: epoll watches fd %d, whose file only a later process (pid %d) holds: not supported",
			       p->pid, p->fd, tfd, (*tt)->pid);
	}
	return log_err(c->log, EOPNOTSUPP,
		       "pid %d fd %d: epoll watches fd %d, which is closed while its file lives on outside the tree's fds: not supported",
		       p->pid, p->fd, tfd);
}

/* The how-many'th earlier registration under the same fd number this is
 * (KCMP_EPOLL_TFD's toff counts them in fdinfo's order). */
static int tfd_offset(const struct rec_epoll_tfd *r, uint32_t n, int tfd)
{
	int toff = 0;

	for (uint32_t i = 0; i < n; i++)
		toff += (int)r[i].tfd == tfd;
	return toff;
}

static int add_reg(struct cpt_ctx *c, const struct fd_probe *p, char **buf,
		   uint32_t *nr, const char *line)
{
	struct rec_epoll_tfd *regs = (struct rec_epoll_tfd *)(*buf + sizeof(struct rec_epoll));
	unsigned int events;
	unsigned long long data;
	struct cpt_task *tt;
	int tfd, fd, ret;
	uint32_t id = 0;
	char *n;

	if (sscanf(line, "tfd: %d events: %x data: %llx", &tfd, &events, &data) != 3 ||
	    tfd < 0)
		return log_err(c->log, EINVAL, "pid %d fd %d: epoll fdinfo: %.60s",
			       p->pid, p->fd, line);
	ret = find_target(c, p, tfd, tfd_offset(regs, *nr, tfd), &tt, &fd);
	if (!ret)
		ret = files_ref(c, tt, fd, &id);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: epoll target fd %d:",
			       p->pid, p->fd, tfd);
	if (!id) {
		log_warn(c->log, "pid %d fd %d: epoll loses its watch of skipped fd %d",
			 p->pid, p->fd, tfd);
		return 0;
	}
	if (*nr >= EP_MAX_REGS)
		return log_err(c->log, E2BIG, "pid %d fd %d: too many epoll registrations",
			       p->pid, p->fd);
	n = realloc(*buf, sizeof(struct rec_epoll) + (*nr + 1) * sizeof(*regs));
	if (!n)
		return log_err(c->log, ENOMEM, "epoll:");
	*buf = n;
	regs = (struct rec_epoll_tfd *)(n + sizeof(struct rec_epoll));
	regs[(*nr)++] = (struct rec_epoll_tfd){ .file_id = id, .tfd = tfd,
		.events = events, .data = data };
	return 0;
}

static int ep_dump(struct cpt_ctx *c, const struct fd_probe *p,
		   struct rec_file *f, void **extra, uint32_t *extra_len)
{
	char *buf = calloc(1, sizeof(struct rec_epoll));
	const char *line = p->fdinfo;
	uint32_t nr = 0;
	int ret = buf ? 0 : log_err(c->log, ENOMEM, "epoll:");

	while (!ret && (line = strstr(line, "\ntfd:"))) {
		line++;
		ret = add_reg(c, p, &buf, &nr, line);
	}
	if (ret) {
		free(buf);
		return ret;
	}
	((struct rec_epoll *)buf)->nr = nr;
	*extra = buf;
	*extra_len = sizeof(struct rec_epoll) + nr * sizeof(struct rec_epoll_tfd);
	return 0;
}

/* ---- restart ---- */

static const struct rec_epoll_tfd *regs_of(const struct rst_file *f, uint32_t *nr)
{
	struct rec_epoll h;

	memcpy(&h, f->extra, sizeof(h));
	*nr = h.nr;
	return (const struct rec_epoll_tfd *)((const char *)f->extra + sizeof(h));
}

static int ep_load(struct rst_ctx *c, struct rst_file *f)
{
	const struct rec_epoll_tfd *r;
	struct rec_epoll h;
	uint32_t nr;

	if (f->f.extra_len < sizeof(h))
		return log_err(c->log, EBADMSG, "FILE %u: epoll state missing", f->f.id);
	memcpy(&h, f->extra, sizeof(h));
	if (h.reserved || h.nr > EP_MAX_REGS ||
	    f->f.extra_len != sizeof(h) + h.nr * sizeof(*r))
		return log_err(c->log, EBADMSG, "FILE %u: bad epoll registration count %u",
			       f->f.id, h.nr);
	r = regs_of(f, &nr);
	for (uint32_t i = 0; i < nr; i++) {
		struct rec_epoll_tfd e;

		memcpy(&e, &r[i], sizeof(e));
		/* a target comes before its epoll: no loop can be made */
		if (e.reserved || e.tfd >= (1U << 20) || (e.events & ~EP_KNOWN_EVENTS) ||
		    e.file_id >= f->f.id || !files_by_id(c, e.file_id))
			return log_err(c->log, EBADMSG,
				       "FILE %u: bad epoll registration %u (file %u, fd %u, events %#x)",
				       f->f.id, i, e.file_id, e.tfd, e.events);
	}
	return 0;
}

/* Our own copy of description @id, from the process that installed it. */
static int fetch(struct rst_ctx *c, uint32_t id, int *ours)
{
	const struct rst_file *tf = files_by_id(c, id);
	int pidfd = tf->holder ? syscall(SYS_pidfd_open, tf->holder, 0) : -1;

	if (!tf->holder)
		return log_err(c->log, EOPNOTSUPP,
			       "FILE %u: an epoll watches it, but no process restored so far has it",
			       id);
	*ours = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, tf->holder_fd, 0);
	if (pidfd >= 0)
		close(pidfd);
	if (*ours < 0)
		return log_err(c->log, errno, "taking FILE %u from pid %d:", id, tf->holder);
	return 0;
}

/* An fd of @t holding the target (*tmp: one made for the purpose). */
static int target_fd(struct rst_ctx *c, struct rst_task *t, uint32_t id, long *fd,
		     long *tmp)
{
	int ours = -1, ret;

	*tmp = -1;
	*fd = files_fd_of(c, t, id);
	if (*fd >= 0)
		return 0;
	ret = fetch(c, id, &ours);
	if (!ret)
		ret = files_give(t, ours, tmp);
	if (ours >= 0)
		close(ours);
	*fd = *tmp;
	return ret;
}

static int ctl_add(struct rst_task *t, long ep, const struct rec_epoll_tfd *e,
		   uint32_t id)
{
	struct epoll_event ev = { .events = e->events, .data.u64 = e->data };
	uint64_t addr;
	long res;
	int ret = rst_scratch_put(t, 0, &ev, sizeof(ev), &addr);

	if (!ret)
		ret = rcall(&t->rm, &res, SYS_epoll_ctl, ep, EPOLL_CTL_ADD, e->tfd, addr);
	if (!ret && res < 0)
		ret = log_err(t->rm.log, (int)-res,
			      "pid %d: epoll FILE %u: watching fd %u (events %#x):",
			      t->pid, id, e->tfd, e->events);
	return ret;
}

/* Add @e under its own fd number: the target is put there for the call
 * if it is not, and whatever was there (maybe the epoll itself) is put
 * aside and back. */
static int add_one(struct rst_ctx *c, struct rst_task *t, const struct rst_file *f,
		   long *ep, const struct rec_epoll_tfd *e)
{
	long have, tmp, fdflags, saved = -1, dummy;
	int ret = target_fd(c, t, e->file_id, &have, &tmp);

	if (!ret && have != e->tfd &&
	    syscall(SYS_kcmp, t->pid, t->pid, KCMP_FILE, have, e->tfd) != 0) {
		ret = rcall(&t->rm, &fdflags, SYS_fcntl, e->tfd, F_GETFD);
		if (!ret && fdflags >= 0)
			ret = rcheck(&t->rm, &saved, "fcntl(F_DUPFD)", SYS_fcntl, e->tfd,
				     F_DUPFD_CLOEXEC, 0);
		if (!ret && saved >= 0 && *ep == e->tfd)
			*ep = saved;
		if (!ret)
			ret = rcheck(&t->rm, NULL, "dup3", SYS_dup3, have, e->tfd, 0);
		if (!ret)
			ret = ctl_add(t, *ep, e, f->f.id);
		if (!ret && saved >= 0 && *ep != saved)
			ret = rcheck(&t->rm, NULL, "dup3", SYS_dup3, saved, e->tfd,
				     (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0);
		else if (!ret)
			rcall(&t->rm, &dummy, SYS_close, e->tfd);
		if (saved >= 0 && *ep != saved)
			rcall(&t->rm, &dummy, SYS_close, saved);
	} else if (!ret) {
		ret = ctl_add(t, *ep, e, f->f.id);
	}
	if (tmp >= 0)	/* the registration outlives it: the holder has the file */
		rcall(&t->rm, &dummy, SYS_close, tmp);
	return ret;
}

static int ep_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		   long *fd)
{
	const struct rec_epoll_tfd *r;
	uint32_t nr;
	int ret = rcheck(&t->rm, fd, "epoll_create1", SYS_epoll_create1, EPOLL_CLOEXEC);

	r = regs_of(f, &nr);
	for (uint32_t i = 0; i < nr && !ret; i++) {
		struct rec_epoll_tfd e;

		memcpy(&e, &r[i], sizeof(e));
		ret = add_one(c, t, f, fd, &e);
	}
	if (!ret && (f->f.flags & ~O_ACCMODE))
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	return ret;
}

static void ep_show(struct info_out *o, const struct rec_file *f,
		    const void *extra, uint32_t extra_len)
{
	struct rec_epoll h;

	if (extra_len < sizeof(h))
		return;
	memcpy(&h, extra, sizeof(h));
	info_u64(o, "registrations", h.nr);
}

const struct file_ops file_epoll = {
	.kind = FILE_EPOLL,
	.name = "epoll",
	.pass = 1,	/* its targets first */
	.match = ep_match,
	.dump = ep_dump,
	.load = ep_load,
	.open = ep_open,
	.show = ep_show,
};
