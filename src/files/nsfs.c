/* nsfs.c - fds on namespaces (FILE_NSFS), such as one opened on
 * /proc/self/ns/net.
 *
 * ckpt does not restore namespaces: the restored tree lives in
 * restart's.  So a namespace fd is kept only as "the NAME namespace of
 * the tree's process PID" (its holder if it is its own, else the first
 * of the tree found in it), or "restart's own" when it was ckpt's own
 * namespace at checkpoint and no process of the tree's: at restart it
 * is opened again from /proc/PID/ns/NAME, by the restored process
 * itself (its /proc and its pids are the tree's), or from ckpt's own.
 * Any other namespace is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../files.h"

#define NSFS_MAGIC_	0x6e736673
#define NSFS_FLAGS	(ARCH_O_LARGEFILE | O_NONBLOCK | O_PATH)	/* read-only */
#define NSFS_PID_MAX	(1 << 22)

/* What /proc/PID/ns holds; the link of a *_for_children reads as its
 * kind's. */
static const char *const ns_names[] = {
	"cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time",
	"time_for_children", "user", "uts",
};
#define NR_NS_NAMES (int)(sizeof(ns_names) / sizeof(ns_names[0]))

static bool known_name(const char *name)
{
	for (int i = 0; i < NR_NS_NAMES; i++)
		if (!strcmp(name, ns_names[i]))
			return true;
	return false;
}

/* ---- checkpoint ---- */

static bool nsfs_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	char path[64];
	struct statfs sf;
	unsigned long long ino;
	int n = 0;

	if (sscanf(p->link, "%*[a-z_]:[%llu]%n", &ino, &n) != 1 || p->link[n])
		return false;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, p->fd);
	return !statfs(path, &sf) && sf.f_type == NSFS_MAGIC_;
}

static bool same_ns(const char *path, const struct stat *st)
{
	struct stat s;

	return !stat(path, &s) && s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

/* Which of the names of kind @kind (the link's "net") is it in @pid?
 * (pid 0: ckpt's own) */
static const char *name_in(pid_t pid, const char *kind, const struct stat *st)
{
	char path[96];

	for (int i = 0; i < NR_NS_NAMES; i++) {
		if (strncmp(ns_names[i], kind, strlen(kind)) ||
		    (ns_names[i][strlen(kind)] && strcmp(ns_names[i] + strlen(kind), "_for_children")))
			continue;
		if (pid)
			snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns_names[i]);
		else
			snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_names[i]);
		if (same_ns(path, st))
			return ns_names[i];
	}
	return NULL;
}

static int nsfs_dump(struct cpt_ctx *c, const struct fd_probe *p,
		     struct rec_file *f, void **extra, uint32_t *extra_len)
{
	char kind[24] = "";
	const char *name = NULL;
	struct rec_nsfs *r;
	pid_t pid = p->pid;

	sscanf(p->link, "%23[a-z_]", kind);
	if ((f->flags & ~NSFS_FLAGS) || (f->flags & O_ACCMODE) != O_RDONLY)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: namespace fd %s with file flags 0%o",
			       p->pid, p->fd, p->link, f->flags);
	name = name_in(pid, kind, &p->st);
	for (int i = 0; !name && i < c->nr_tasks; i++)
		if (!c->tasks[i]->zombie)
			name = name_in(pid = c->tasks[i]->pid, kind, &p->st);
	if (!name)
		name = name_in(pid = 0, kind, &p->st);
	if (!name)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: an fd on namespace %s, which no process of the tree is in (namespaces are not restored)",
			       p->pid, p->fd, p->link);
	r = calloc(1, sizeof(*r));
	if (!r)
		return log_err(c->log, ENOMEM, "nsfs:");
	r->pid = pid;
	snprintf(r->name, sizeof(r->name), "%s", name);
	*extra = r;
	*extra_len = sizeof(*r);
	return 0;
}

/* ---- restart ---- */

static bool nsfs_get(const struct rst_file *f, struct rec_nsfs *r)
{
	return anonfd_get(f->extra, f->f.extra_len, r, sizeof(*r));
}

static int nsfs_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_nsfs r;

	if (!nsfs_get(f, &r) || r.reserved || r.pid < 0 || r.pid > NSFS_PID_MAX ||
	    !memchr(r.name, 0, sizeof(r.name)) || !known_name(r.name) ||
	    (f->f.flags & ~NSFS_FLAGS) || (f->f.flags & O_ACCMODE) != O_RDONLY)
		return log_err(c->log, EBADMSG, "FILE %u: bad namespace fd", f->f.id);
	return 0;
}

static bool in_image(struct rst_ctx *c, pid_t pid)
{
	for (int i = 0; i < c->nr_tasks; i++)
		if (c->tasks[i]->pid == pid && !(c->tasks[i]->t.flags & TASK_ZOMBIE))
			return true;
	return false;
}

static int nsfs_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		     long *fd)
{
	int flags = f->f.flags & ~ARCH_O_LARGEFILE, ours, ret;
	struct rec_nsfs r;
	char path[96];

	nsfs_get(f, &r);
	if (r.pid && !in_image(c, r.pid))
		return log_err(c->log, EBADMSG, "FILE %u: namespace of pid %d, no live process of the image",
			       f->f.id, r.pid);
	if (r.pid) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", r.pid, r.name);
		return files_open_path(t, path, flags, fd);
	}
	snprintf(path, sizeof(path), "/proc/self/ns/%s", r.name);
	ours = open(path, flags | O_CLOEXEC);
	if (ours < 0)
		return log_err(c->log, errno, "opening %s:", path);
	ret = files_give(t, ours, fd);
	close(ours);
	return ret;
}

static void nsfs_show(struct info_out *o, const struct rec_file *f,
		      const void *extra, uint32_t extra_len)
{
	struct rec_nsfs r;

	if (!anonfd_get(extra, extra_len, &r, sizeof(r)) || !memchr(r.name, 0, sizeof(r.name)))
		return;
	info_i64(o, "pid", r.pid);
	info_str(o, "ns", r.name);
}

const struct file_ops file_nsfs = {
	.kind = FILE_NSFS,
	.name = "nsfs",
	.match = nsfs_match,
	.dump = nsfs_dump,
	.load = nsfs_load,
	.open = nsfs_open,
	.show = nsfs_show,
};
