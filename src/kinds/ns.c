/* ns.c - namespaces, at checkpoint.  ckpt does not save a namespace yet
 * (issue 15): a process restored into restart's own namespaces would
 * find another hostname, network, mounts or pids without a word.  So a
 * tree with a thread in a namespace other than ckpt's own is refused,
 * naming the thread and the namespace; run ckpt inside the container's
 * namespaces (nsenter) and they are its own.  A cgroup namespace is the
 * cgroup kind's, which saves it (cgroup_dump.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "../kinds.h"

/* pid_for_children and time_for_children: a process that unshared one
 * forks its children into it. */
static const char *const ns_types[] = {
	"pid", "pid_for_children", "mnt", "net", "ipc", "uts", "user",
	"time", "time_for_children",
};
#define NR_NS	(sizeof(ns_types) / sizeof(ns_types[0]))

struct ns_cpt {
	struct stat own[NR_NS];		/* ckpt's; st_ino 0: none here */
	bool read;
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

static int ns_check_thread(struct cpt_ctx *c, const struct ns_cpt *st,
			   pid_t pid, pid_t tid)
{
	char path[96];
	struct stat sb;

	for (size_t i = 0; i < NR_NS; i++) {
		if (!st->own[i].st_ino)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", pid, tid, ns_types[i]);
		if (stat(path, &sb))
			return log_err(c->log, errno, "pid %d: %s:", pid, path);
		if (sb.st_ino == st->own[i].st_ino && sb.st_dev == st->own[i].st_dev)
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

/* Held, nothing of it changed yet: refused now, it runs on as before. */
static int ns_hold(struct cpt_ctx *c, struct cpt_task *t)
{
	struct ns_cpt *st = kind_dump_state(c, &kind_ns);
	int ret = st->read ? 0 : ns_own(c, st);

	for (int i = 0; i < t->nr_threads && !ret; i++)
		ret = ns_check_thread(c, st, t->pid, t->threads[i].tid);
	return ret;
}

const struct kind_ops kind_ns = {
	.name = "ns",
	.hold = ns_hold,
	.dump_size = sizeof(struct ns_cpt),
};
