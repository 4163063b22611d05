/* ns.c - namespaces.
 *
 * A container (a tree whose root is the init of its own pid namespace,
 * checkpointed by an engine inside it: container.c) has each of its
 * init's namespaces either its own or shared with ckpt's caller, the
 * host (NS: both sets).  Its own are made again at restart, the root
 * unsharing them before anything else of it is built and the others
 * joining the root's; their content is other kinds' (the uts names are
 * NS_UTS, here; a user namespace's maps NS_USER, ns_user.c).  A namespace
 * whose content no kind saves yet is refused, naming it, and so is a
 * process of the tree in namespaces other than its init's (nested), but
 * pid namespaces nested inside the tree (ns_pid.c).
 *
 * Any other tree must be in ckpt's own namespaces but for a uts
 * namespace of the root's own (a hostname), saved as NS_UTS: a process
 * restored into restart's namespaces would find another network, mounts
 * or pids without a word.  A cgroup namespace is the cgroup kind's
 * either way (cgroup_dump.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kinds.h"
#include "../model.h"
#include "ns.h"
#include "ns_pid.h"
#include "ns_time.h"
#include "ns_user.h"

static const char *const ns_names[NR_NS_TYPES] = {
	[NS_PID] = "pid", [NS_MNT] = "mnt", [NS_NET] = "net", [NS_IPC] = "ipc",
	[NS_UTS] = "uts", [NS_USER] = "user", [NS_TIME] = "time",
	[NS_CGROUP] = "cgroup",
};

static const int ns_clone[NR_NS_TYPES] = {
	[NS_PID] = CLONE_NEWPID, [NS_MNT] = CLONE_NEWNS, [NS_NET] = CLONE_NEWNET,
	[NS_IPC] = CLONE_NEWIPC, [NS_UTS] = CLONE_NEWUTS, [NS_USER] = CLONE_NEWUSER,
	[NS_TIME] = CLONE_NEWTIME, [NS_CGROUP] = CLONE_NEWCGROUP,
};

/* A container's own namespaces whose content ckpt saves (the cgroup
 * namespace: the cgroup kind), and of those, the ones the root unshares
 * here at restart (the pid namespace is made with it, the cgroup one by
 * the cgroup kind). */
#define NS_SAVED	((1u << NS_PID) | (1u << NS_MNT) | (1u << NS_NET) | (1u << NS_IPC) | (1u << NS_UTS) | \
			 (1u << NS_CGROUP) | (1u << NS_TIME) | (1u << NS_USER))
#define NS_UNSHARED	((1u << NS_MNT) | (1u << NS_NET) | (1u << NS_IPC) | (1u << NS_UTS))
/* ... and those the engine joins to restore their content itself (and
 * to read the clocks the tree's timers are on) */
#define NS_JOINED	((1u << NS_NET) | (1u << NS_IPC) | (1u << NS_UTS) | (1u << NS_TIME))

/* A process that unshared a pid or time namespace forks its children
 * into it: one the tree must not have either. */
static const char *const for_children[2] = { "pid_for_children", "time_for_children" };

const char *ns_name(enum ns_type type)
{
	return ns_names[type];
}

static int ns_stat(struct ckpt_log *log, const char *dir, const char *name, struct ns_id *id)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ns/%s", dir, name);
	if (stat(path, &st)) {
		if (errno != ENOENT)	/* a kernel without it */
			return log_err(log, errno, "%s:", path);
		st.st_ino = 0;
		st.st_dev = 0;
	}
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/* @dir: "/proc/self", "/proc/PID/task/TID"... */
static int ns_ids_at(struct ckpt_log *log, const char *dir, struct ns_ids *ids)
{
	int ret = 0;

	for (int i = 0; i < NR_NS_TYPES && !ret; i++)
		ret = ns_stat(log, dir, ns_names[i], &ids->id[i]);
	for (int i = 0; i < 2 && !ret; i++)
		ret = ns_stat(log, dir, for_children[i], &ids->children[i]);
	return ret;
}

int ns_ids_read(pid_t pid, struct ns_ids *ids, struct ckpt_log *log)
{
	char dir[32];

	if (pid)
		snprintf(dir, sizeof(dir), "/proc/%d", pid);
	else
		snprintf(dir, sizeof(dir), "/proc/self");
	return ns_ids_at(log, dir, ids);
}

static bool same(const struct ns_id *a, const struct ns_id *b)
{
	return a->ino == b->ino && a->dev == b->dev;
}

struct ns_cpt {
	struct ns_ids own;		/* ckpt's */
	struct ns_ids root;		/* the root's main thread's */
	uint32_t shared;		/* container: the host's, kept */
	bool read;
	struct nspid_dump pid;		/* nested pid namespaces */
};

static int refuse(struct cpt_ctx *c, pid_t pid, pid_t tid, int type, const struct ns_id *id,
		  const char *why)
{
	if (tid == pid)
		return log_err(c->log, EOPNOTSUPP, "pid %d is in its own %s namespace (%s:[%lu]), %s",
			       pid, ns_names[type], ns_names[type], (unsigned long)id->ino, why);
	return log_err(c->log, EOPNOTSUPP,
		       "pid %d: its thread %d is in its own %s namespace (%s:[%lu]), %s",
		       pid, tid, ns_names[type], ns_names[type], (unsigned long)id->ino, why);
}

/* A container's init: which namespaces are its own, and can they be. */
static int container_root_ns(struct cpt_ctx *c, struct ns_cpt *st)
{
	const struct ns_ids *host = c->host_ns;

	/* (a container's engine is here for an init of its own namespace) */
	if (same(&st->root.id[NS_PID], &host->id[NS_PID]))
		return log_err(c->log, ESRCH, "pid 1 is not the init of a pid namespace of its own");
	for (int i = 0; i < NR_NS_TYPES; i++) {
		if (!st->root.id[i].ino)
			continue;
		if (same(&st->root.id[i], &host->id[i])) {
			st->shared |= 1u << i;
			continue;
		}
		if (!(NS_SAVED & (1u << i)))
			return refuse(c, 1, 1, i, &st->root.id[i],
				      "which ckpt does not save yet");
		c->ns_own |= 1u << i;
	}
	return NS_OWN(c, NS_USER) ? ns_user_check(c, 1, c->ns_own) : 0;
}

/* Every thread of a container is in its init's namespaces (its cgroup
 * namespace is the cgroup kind's; pid namespaces nested in it are
 * ns_pid.c's). */
static int container_thread(struct cpt_ctx *c, struct ns_cpt *st, pid_t pid, pid_t tid,
			    const struct ns_ids *its)
{
	const char *nested = "inside the container (nested namespaces are not supported yet)";

	for (int i = 0; i < NR_NS_TYPES; i++)
		if (i != NS_CGROUP && i != NS_PID && !same(&its->id[i], &st->root.id[i]))
			return refuse(c, pid, tid, i, &its->id[i], nested);
	if (its->children[1].ino && !same(&its->children[1], &st->root.id[NS_TIME]))
		return refuse(c, pid, tid, NS_TIME, &its->children[1], nested);
	return 0;
}

/* Any other tree: in ckpt's namespaces, but the root's uts (and pid
 * namespaces nested below the root's: ns_pid.c). */
static int plain_thread(struct cpt_ctx *c, struct ns_cpt *st, pid_t pid, pid_t tid,
			const struct ns_ids *its, bool root)
{
	const char *why = "which ckpt does not save yet: checkpoint it from inside its namespaces";

	for (int i = 0; i < NR_NS_TYPES; i++) {
		if (i == NS_CGROUP || !st->own.id[i].ino || same(&its->id[i], &st->own.id[i]) ||
		    (i == NS_PID && !root))
			continue;
		if (i == NS_UTS && root && tid == pid) {
			c->ns_own |= 1u << NS_UTS;
			continue;
		}
		if (i == NS_UTS && (c->ns_own & (1u << NS_UTS)) &&
		    same(&its->id[i], &st->root.id[i]))
			continue;
		return refuse(c, pid, tid, i, &its->id[i], why);
	}
	if (st->own.children[1].ino && !same(&its->children[1], &st->own.children[1]))
		return refuse(c, pid, tid, NS_TIME, &its->children[1], why);
	return 0;
}

static int ns_check_thread(struct cpt_ctx *c, struct ns_cpt *st, pid_t pid, pid_t tid,
			   bool root)
{
	struct ns_ids its;
	char dir[64];
	int ret;

	snprintf(dir, sizeof(dir), "/proc/%d/task/%d", pid, tid);
	ret = ns_ids_at(c->log, dir, &its);
	if (ret)
		return ret;
	if (root && tid == pid) {
		st->root = its;
		if (c->host_ns && (ret = container_root_ns(c, st)))
			return ret;
	}
	return c->host_ns ? container_thread(c, st, pid, tid, &its)
			  : plain_thread(c, st, pid, tid, &its, root);
}

/* Held, nothing of it changed yet: refused now, it runs on as before.
 * The root is held first: the others' namespaces are checked against
 * its own. */
static int ns_hold(struct cpt_ctx *c, struct cpt_task *t)
{
	struct ns_cpt *st = kind_dump_state(c, &kind_ns);
	bool root = t == c->tasks[0];
	int ret = 0;

	if (!st->read) {
		ret = ns_ids_read(0, &st->own, c->log);
		st->read = true;
	}
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
	struct rec_ns n = { .own = c->ns_own, .shared = st->shared };
	struct rec_ns_uts u;
	int ret = 0;

	/* the whole tree is held: its pid namespaces, once */
	if (t == c->tasks[0])
		ret = nspid_scan(c, &st->pid);
	if (!ret)
		ret = nspid_dump(c, &st->pid, t);
	if (ret || t != c->tasks[0])
		return ret;
	if (c->host_ns)
		ret = iw_record(&c->w, REC_NS, &n, sizeof(n));
	if (!ret && c->host_ns && NS_OWN(c, NS_USER))
		ret = ns_user_dump(c, t->pid);
	if (!ret && NS_OWN(c, NS_UTS)) {
		ret = uts_names(c, t->pid, &u);
		if (!ret)
			ret = iw_record(&c->w, REC_NS_UTS, &u, sizeof(u));
	}
	if (!ret && c->host_ns && NS_OWN(c, NS_TIME))
		ret = ns_time_dump(c, t->pid);
	return ret;
}

static int ns_dump_thread(struct cpt_ctx *c, struct cpt_task *t, struct cpt_thread *thr)
{
	struct ns_cpt *st = kind_dump_state(c, &kind_ns);

	return nspid_dump_thread(c, &st->pid, t, thr);
}

static void ns_dump_free(struct cpt_ctx *c, void *state)
{
	struct ns_cpt *st = state;

	free(st->pid.r);
}

/* ---- restart ---- */

struct ns_rst {
	struct rec_ns_uts *uts;
	struct ns_user_maps *user;
	struct rec_ns_time time;
	uint32_t own;		/* NS's, joined or not */
	bool ns_seen, time_seen;
	bool made;		/* the root's namespaces are made */
};

static int load_ns(struct rst_ctx *c, struct rst_task *t, struct ns_rst *st, struct rec *r)
{
	const struct rec_ns *n = r->data;
	uint32_t all = (1u << NR_NS_TYPES) - 1;

	if (r->data_len != sizeof(*n) || t != c->tasks[0] || st->ns_seen ||
	    !(c->head.flags & HEAD_CONTAINER) || (n->own | n->shared) & ~all ||
	    (n->own & n->shared) || !(n->own & (1u << NS_PID)) || (n->own & ~NS_SAVED) ||
	    n->reserved)
		return log_err(c->log, EBADMSG,
			       "bad NS record %llu (a container's root's, once, of namespaces ckpt saves)",
			       (unsigned long long)r->index);
	st->ns_seen = true;
	st->own = n->own;
	c->ns_own |= n->own & ~c->ns_join;	/* joined: as they are */
	return 0;
}

static int load_uts(struct rst_ctx *c, struct rst_task *t, struct ns_rst *st, struct rec *r)
{
	struct rec_ns_uts *u = r->data;

	if (r->data_len != sizeof(*u) || t != c->tasks[0] || st->uts ||
	    !memchr(u->nodename, 0, sizeof(u->nodename)) ||
	    !memchr(u->domainname, 0, sizeof(u->domainname)) ||
	    memcmp(u->reserved, (uint8_t[6]){ 0 }, sizeof(u->reserved)) ||
	    (st->ns_seen && !(st->own & (1u << NS_UTS))))
		return log_err(c->log, EBADMSG, "bad NS_UTS record %llu (the root's, once)",
			       (unsigned long long)r->index);
	st->uts = u;
	r->data = NULL;
	if (!(c->ns_join & (1u << NS_UTS)))
		c->ns_own |= 1u << NS_UTS;
	return 0;
}

static int load_time(struct rst_ctx *c, struct rst_task *t, struct ns_rst *st,
		     const struct rec *r)
{
	const struct rec_ns_time *n = r->data;

	if (r->data_len != sizeof(*n) || t != c->tasks[0] || st->time_seen ||
	    !(st->own & (1u << NS_TIME)) || ns_time_bad(n))
		return log_err(c->log, EBADMSG,
			       "bad NS_TIME record %llu (after NS, for its own time namespace, once)",
			       (unsigned long long)r->index);
	st->time = *n;
	st->time_seen = true;
	return 0;
}

static int load_user(struct rst_ctx *c, struct rst_task *t, struct ns_rst *st,
		     const struct rec *r)
{
	struct ns_user_maps *m = calloc(1, sizeof(*m));
	int ret = m ? ns_user_parse(c->log, r->data, r->data_len, m) :
		      log_err(c->log, ENOMEM, "user namespace maps:");

	if (!ret && (t != c->tasks[0] || st->user || !(st->own & (1u << NS_USER))))
		ret = log_err(c->log, EBADMSG,
			      "bad NS_USER record %llu (after NS, for its own user namespace, once)",
			      (unsigned long long)r->index);
	if (ret) {
		ns_user_maps_free(m);
		return ret;
	}
	st->user = m;
	c->userns = m;
	return 0;
}

static int ns_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct ns_rst *st = kind_ctx_state(c, &kind_ns, sizeof(*st));

	if (!st)
		return log_err(c->log, ENOMEM, "ns state:");
	if (r->type == REC_NSPID || r->type == REC_NSTID)
		return nspid_load(c, t, r);
	if (r->type == REC_NS)
		return load_ns(c, t, st, r);
	if (r->type == REC_NS_TIME)
		return load_time(c, t, st, r);
	if (r->type == REC_NS_USER)
		return load_user(c, t, st, r);
	return load_uts(c, t, st, r);
}

/* A container's image names its namespaces; a uts namespace of its own
 * has its names. */
static int ns_check(struct rst_ctx *c, struct rst_task *t)
{
	struct ns_rst *st = kind_ctx_state(c, &kind_ns, sizeof(*st));
	int ret = nspid_check(c, t);

	if (ret || t != c->tasks[0])
		return ret;
	if (!st)
		return log_err(c->log, ENOMEM, "ns state:");
	if (!!(c->head.flags & HEAD_CONTAINER) != st->ns_seen ||
	    (st->ns_seen && !!(st->own & (1u << NS_UTS)) != !!st->uts) ||
	    !!(st->own & (1u << NS_TIME)) != st->time_seen ||
	    !!(st->own & (1u << NS_USER)) != !!st->user)
		return log_err(c->log, EBADMSG,
			       "a container's image needs its NS record (and NS_UTS, NS_TIME, NS_USER for its own uts, time, user namespaces)");
	/* its root cannot enter a namespace its own user namespace does
	 * not own */
	if (st->user && c->ns_join)
		return log_err(c->log, EOPNOTSUPP,
			       "--join-ns: the container has a user namespace of its own, which would not own the namespace joined");
	return 0;
}

static void ns_ctx_free(void *state)
{
	struct ns_rst *st = state;

	free(st->uts);
	ns_user_maps_free(st->user);
	free(st);
}

/* A string into the puppet's scratch space: its address. */
static int put_str(struct rst_task *t, size_t off, const char *s, uint64_t *at)
{
	return rst_scratch_put(t, off, s, strlen(s) + 1, at);
}

static int clone_flags(uint32_t mask)
{
	int flags = 0;

	for (int i = 0; i < NR_NS_TYPES; i++)
		if (mask & (1u << i))
			flags |= ns_clone[i];
	return flags;
}

/* The root makes its own namespaces, joins those given to join
 * (--join-ns: their fds are the root's too, cloned from restart's) and
 * names its uts namespace. */
static int root_unshare(struct rst_ctx *c, struct rst_task *t, const struct rec_ns_uts *u)
{
	struct ns_rst *st = KCSTATE(c, kind_ns);
	int ret = 0;
	uint64_t a, b;

	if (NS_OWN(c, NS_USER))
		ret = ns_user_become_root(c, t, st->user);
	if (!ret && (c->ns_own & NS_UNSHARED))
		ret = rcheck(&t->rm, NULL, "unshare (its own namespaces)", SYS_unshare,
			     clone_flags(c->ns_own & NS_UNSHARED));
	for (int i = 0; i < NR_NS_TYPES && !ret; i++)
		if (c->ns_join & (1u << i))
			ret = rcheck(&t->rm, NULL, "setns (--join-ns)", SYS_setns, c->join_fd[i],
				     ns_clone[i]);
	if (!ret && u && (c->ns_own & (1u << NS_UTS))) {
		ret = put_str(t, 0, u->nodename, &a);
		if (!ret)
			ret = put_str(t, 128, u->domainname, &b);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "sethostname", SYS_sethostname, a,
				     strlen(u->nodename));
		if (!ret)
			ret = rcheck(&t->rm, NULL, "setdomainname", SYS_setdomainname, b,
				     strlen(u->domainname));
	}
	return ret;
}

/* A container's engine joins the namespaces whose content the kinds
 * after this one restore. */
static int engine_join(struct rst_ctx *c, pid_t root)
{
	char path[64];

	if (!(c->head.flags & HEAD_CONTAINER))
		return 0;
	for (int i = 0; i < NR_NS_TYPES; i++) {
		int fd, ret = 0;

		if (!(((c->ns_own | c->ns_join) & NS_JOINED) & (1u << i)))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", root, ns_names[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, ns_clone[i]))
			ret = log_err(c->log, errno, "joining the container's %s namespace (%s):",
				      ns_names[i], path);
		if (fd >= 0)
			close(fd);
		if (ret)
			return ret;
	}
	return 0;
}

/* The root makes its namespaces before it forks the first of the others,
 * which are born in them (or, alone, when it is built). */
static int root_namespaces(struct rst_ctx *c, struct rst_task *root)
{
	struct ns_rst *st = KCSTATE(c, kind_ns);
	uint32_t made = (c->ns_own & (NS_UNSHARED | (1u << NS_TIME) | (1u << NS_USER))) | c->ns_join;
	int ret;

	if (!made || !st || st->made)
		return 0;
	st->made = true;
	ret = root_unshare(c, root, st->uts);
	if (!ret && NS_OWN(c, NS_TIME))
		ret = ns_time_restore(c, root, &st->time);
	return ret ? ret : engine_join(c, root->pid);
}

static int ns_fork_prepare(struct rst_ctx *c, struct rst_task *parent)
{
	return root_namespaces(c, c->tasks[0]) ?: nspid_prepare(c, parent);
}

/* Before the threads are made: they are cloned in them. */
static int ns_restore(struct rst_ctx *c, struct rst_task *t)
{
	return t == c->tasks[0] ? root_namespaces(c, t) ?: nspid_prepare(c, t) : 0;
}

static void ns_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_NSPID || r->type == REC_NSTID)
		return nspid_show(o, r);
	if (r->type == REC_NS) {
		const struct rec_ns *n = r->data;
		char own[96] = "", shared[96] = "";

		for (int i = 0; i < NR_NS_TYPES; i++) {
			char *s = n->own & (1u << i) ? own : n->shared & (1u << i) ? shared : NULL;

			if (s)
				snprintf(s + strlen(s), 96 - strlen(s), "%s%s", *s ? "," : "",
					 ns_names[i]);
		}
		info_str(o, "own", own);
		info_str(o, "shared", shared);
		return;
	}
	if (r->type == REC_NS_USER) {
		ns_user_show(o, r);
		return;
	}
	if (r->type == REC_NS_TIME) {
		const struct rec_ns_time *n = r->data;

		info_i64(o, "monotonic_ns", n->monotonic_ns);
		info_i64(o, "boottime_ns", n->boottime_ns);
		return;
	}
	const struct rec_ns_uts *u = r->data;

	info_str(o, "nodename", u->nodename);
	info_str(o, "domainname", u->domainname);
}

static const struct rec_desc ns_recs[] = {
	{ REC_NS_UTS, "NS_UTS", sizeof(struct rec_ns_uts) },
	{ REC_NS, "NS", sizeof(struct rec_ns) },
	{ REC_NS_TIME, "NS_TIME", sizeof(struct rec_ns_time) },
	{ REC_NSPID, "NSPID", sizeof(struct rec_nspid) },
	{ REC_NSTID, "NSTID", sizeof(struct rec_nstid) },
	{ REC_NS_USER, "NS_USER", sizeof(struct rec_ns_user) },
	{ 0 },
};

const struct kind_ops kind_ns = {
	.name = "ns",
	.recs = ns_recs,
	.phase = PHASE_IMAGE,
	.hold = ns_hold,
	.dump = ns_dump,
	.dump_thread = ns_dump_thread,
	.dump_free = ns_dump_free,
	.load = ns_load,
	.check = ns_check,
	.restore = ns_restore,
	.fork_prepare = ns_fork_prepare,
	.show = ns_show,
	.dump_size = sizeof(struct ns_cpt),
	.free_ctx = ns_ctx_free,
};
