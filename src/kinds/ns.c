/* ns.c - namespaces.  A uts namespace of the root's own (a container's
 * hostname) is saved (NS_UTS) and made again at restart, every process
 * of the tree in it.  The others are not saved yet (issue 15): a
 * process restored into restart's own namespaces would find another
 * network, mounts or pids without a word.  So a tree with a thread in
 * a pid, mount, net, ipc, user or time namespace other than ckpt's own,
 * or in a uts namespace other than its root's, is refused, naming the
 * thread and the namespace; run ckpt inside the container's namespaces
 * (nsenter) and they are its own.  A cgroup namespace is the cgroup
 * kind's, which saves it (cgroup_dump.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kinds.h"
#include "../model.h"

/* pid_for_children and time_for_children: a process that unshared one
 * forks its children into it. */
static const char *const ns_types[] = {
	"pid", "pid_for_children", "mnt", "net", "ipc", "uts", "user",
	"time", "time_for_children",
};
#define NR_NS	(sizeof(ns_types) / sizeof(ns_types[0]))
#define NS_UTS	5

struct ns_cpt {
	struct stat own[NR_NS];		/* ckpt's; st_ino 0: none here */
	struct stat root_uts;		/* the root's, if its own */
	bool read, root_uts_own;
};

static int ns_own(struct cpt_ctx *c, struct ns_cpt *st)
{
	char path[64];

	for (size_t i = 0; i < NR_NS; i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_types[i]);
		if (stat(path, &st->own[i])) {
			if (errno != ENOENT)	/* a kernel without it */
				return log_err(c->log, errno, "%s:", path);
			st->own[i].st_ino = 0;
		}
	}
	st->read = true;
	return 0;
}

static bool same(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

/* @root: the tree's root, whose uts namespace may be its own. */
static int ns_check_thread(struct cpt_ctx *c, struct ns_cpt *st, pid_t pid,
			   pid_t tid, bool root)
{
	char path[96];
	struct stat sb;

	for (size_t i = 0; i < NR_NS; i++) {
		if (!st->own[i].st_ino)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", pid, tid, ns_types[i]);
		if (stat(path, &sb))
			return log_err(c->log, errno, "pid %d: %s:", pid, path);
		if (same(&sb, &st->own[i]))
			continue;
		if (i == NS_UTS && root && tid == pid) {
			st->root_uts = sb;
			st->root_uts_own = true;
			continue;
		}
		if (i == NS_UTS && st->root_uts_own && same(&sb, &st->root_uts))
			continue;
		if (tid == pid)
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d is in its own %s namespace (%s:[%lu]), which ckpt does not save yet: checkpoint it from inside its namespaces",
				       pid, ns_types[i], ns_types[i], (unsigned long)sb.st_ino);
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: its thread %d is in its own %s namespace (%s:[%lu]), which ckpt does not save yet",
			       pid, tid, ns_types[i], ns_types[i], (unsigned long)sb.st_ino);
	}
	return 0;
}

/* Held, nothing of it changed yet: refused now, it runs on as before.
 * The root is held first: the others' uts namespace is checked against
 * its own. */
static int ns_hold(struct cpt_ctx *c, struct cpt_task *t)
{
	struct ns_cpt *st = kind_dump_state(c, &kind_ns);
	bool root = t == c->tasks[0];
	int ret = st->read ? 0 : ns_own(c, st);

	for (int i = 0; i < t->nr_threads && !ret; i++)
		ret = ns_check_thread(c, st, t->pid, t->threads[i].tid, root);
	return ret;
}

/* The names of @pid's uts namespace, read by a child of ours that
 * joins it (the target is not asked). */
static int uts_names(struct cpt_ctx *c, pid_t pid, struct rec_ns_uts *u)
{
	struct utsname un;
	char path[64];
	int p[2], st = 0;
	ssize_t n;
	pid_t k;

	snprintf(path, sizeof(path), "/proc/%d/ns/uts", pid);
	if (pipe2(p, O_CLOEXEC))
		return log_err(c->log, errno, "pipe:");
	k = fork();
	if (k == 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || setns(fd, CLONE_NEWUTS) || uname(&un) ||
		    write(p[1], &un, sizeof(un)) != (ssize_t)sizeof(un))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	n = k < 0 ? -1 : read(p[0], &un, sizeof(un));
	close(p[0]);
	if (k > 0)
		while (waitpid(k, &st, 0) < 0 && errno == EINTR)
			;
	if (n != (ssize_t)sizeof(un))
		return log_err(c->log, k < 0 ? errno : EIO, "pid %d: reading the names of its uts namespace:",
			       pid);
	memset(u, 0, sizeof(*u));
	snprintf(u->nodename, sizeof(u->nodename), "%s", un.nodename);
	snprintf(u->domainname, sizeof(u->domainname), "%s", un.domainname);
	return 0;
}

static int ns_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct ns_cpt *st = kind_dump_state(c, &kind_ns);
	struct rec_ns_uts u;
	int ret;

	if (t != c->tasks[0] || !st->root_uts_own)
		return 0;
	ret = uts_names(c, t->pid, &u);
	return ret ? ret : iw_record(&c->w, REC_NS_UTS, &u, sizeof(u));
}

/* ---- restart ---- */

static int ns_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct rec_ns_uts *u = r->data;
	int ret = rec_want(c->log, r, sizeof(*u), "NS_UTS");

	if (ret)
		return ret;
	if (r->data_len != sizeof(*u) || t != c->tasks[0] || KSTATE(t, kind_ns) ||
	    !memchr(u->nodename, 0, sizeof(u->nodename)) ||
	    !memchr(u->domainname, 0, sizeof(u->domainname)) ||
	    memcmp(u->reserved, (uint8_t[6]){ 0 }, sizeof(u->reserved)))
		return log_err(c->log, EBADMSG, "bad NS_UTS record %llu (the root's, once)",
			       (unsigned long long)r->index);
	t->kind_state[kind_index(&kind_ns)] = r->data;
	r->data = NULL;
	return 0;
}

/* A string into the puppet's scratch space: its address. */
static int put_str(struct rst_task *t, size_t off, const char *s, uint64_t *at)
{
	return rst_scratch_put(t, off, s, strlen(s) + 1, at);
}

/* The root makes the namespace with the saved names; every other process
 * (forked before it was made) joins the root's.  Before the threads are
 * made: they are cloned in it. */
static int ns_restore(struct rst_ctx *c, struct rst_task *t)
{
	const struct rec_ns_uts *u = KSTATE(c->tasks[0], kind_ns);
	char path[64];
	uint64_t a, b;
	long fd;
	int ret;

	if (!u)
		return 0;
	if (t == c->tasks[0]) {
		ret = rcheck(&t->rm, NULL, "unshare(CLONE_NEWUTS)", SYS_unshare, CLONE_NEWUTS);
		if (!ret)
			ret = put_str(t, 0, u->nodename, &a);
		if (!ret)
			ret = put_str(t, 128, u->domainname, &b);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "sethostname", SYS_sethostname, a,
				     strlen(u->nodename));
		if (!ret)
			ret = rcheck(&t->rm, NULL, "setdomainname", SYS_setdomainname, b,
				     strlen(u->domainname));
		return ret;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/uts", c->tasks[0]->pid);
	ret = put_str(t, 0, path, &a);
	if (!ret)
		ret = rcheck(&t->rm, &fd, "open the root's uts namespace", SYS_openat,
			     AT_FDCWD, a, O_RDONLY | O_CLOEXEC);
	if (ret)
		return ret;
	ret = rcheck(&t->rm, NULL, "setns(CLONE_NEWUTS)", SYS_setns, fd, CLONE_NEWUTS);
	rcheck(&t->rm, NULL, "close", SYS_close, fd);
	return ret;
}

static void ns_show(struct info_out *o, const struct rec *r)
{
	const struct rec_ns_uts *u = r->data;

	info_str(o, "nodename", u->nodename);
	info_str(o, "domainname", u->domainname);
}

static const struct rec_desc ns_recs[] = {
	{ REC_NS_UTS, "NS_UTS", sizeof(struct rec_ns_uts) },
	{ 0 },
};

const struct kind_ops kind_ns = {
	.name = "ns",
	.recs = ns_recs,
	.phase = PHASE_IMAGE,
	.hold = ns_hold,
	.dump = ns_dump,
	.load = ns_load,
	.restore = ns_restore,
	.show = ns_show,
	.dump_size = sizeof(struct ns_cpt),
};
