/* ns_pid.c - pid namespaces nested inside the tree: a process of it that
 * did unshare(CLONE_NEWPID) (or clone(CLONE_NEWPID)) and forked.  Its
 * descendants have a pid at every level from the root's namespace down
 * to their own (NSpid in /proc/PID/status), all saved (NSPID, NSTID for
 * the other threads) with the namespace of each level, named by the
 * pid of its init.  Restart forks each with clone3(set_tid) of every
 * level; the init's parent makes the namespace first (unshare, as it
 * did, or CLONE_NEWPID), so the init is pid 1 of a new one again.
 *
 * Only the root's namespace is ckpt's: a pid ckpt hands a puppet in a
 * nested one (wait4, setpgid, a timer's thread, pidfd_open) is put into
 * that namespace's numbers, and ckpt, which has none there, gives it
 * fds through a pidfd on itself that every puppet inherits from the
 * root.  A namespace whose init is not in the tree (made outside it,
 * its init gone), a zombie in one, deeper than NSPID_LEVELS: refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/nsfs.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kinds.h"
#include "../model.h"
#include "../fdpass.h"
#include "ns_pid.h"

#define MAX_LEVELS	40	/* NSpid entries the kernel may show (33) */

/* ---- checkpoint ---- */

/* NSpid of @pid (@tid: of that thread), outermost first. */
static int read_nspid(struct cpt_ctx *c, pid_t pid, pid_t tid, uint32_t *lv, int *n)
{
	char name[48], *s, *p;
	int ret;

	snprintf(name, sizeof(name), "task/%d/status", tid);
	ret = proc_read(pid, name, &s, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading NSpid of %d:", pid, tid);
	p = strstr(s, "\nNSpid:");
	*n = 0;
	for (p = p ? p + 7 : NULL; p && *n < MAX_LEVELS;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || (*end != ' ' && *end != '\t' && *end != '\n'))
			break;
		lv[(*n)++] = v;
		p = *end == '\n' ? NULL : end;
	}
	free(s);
	if (!*n)
		return log_err(c->log, EIO, "pid %d: no NSpid for %d", pid, tid);
	return 0;
}

static int ino_of(struct cpt_ctx *c, pid_t pid, pid_t tid, const char *ns, uint64_t *ino)
{
	char path[80];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", pid, tid, ns);
	*ino = 0;	/* (pid_for_children: none yet, a namespace with no init) */
	if (stat(path, &st))
		return errno == ENOENT && strcmp(ns, "pid") ? 0 : log_err(c->log, errno, "%s:", path);
	*ino = st.st_ino;
	return 0;
}

struct scan {
	struct nspid_dump *d;
	uint64_t *ino, *kids;	/* each task's pid namespace, pid_for_children */
};

static int refuse(struct cpt_ctx *c, pid_t pid, const char *why, unsigned long ino)
{
	return log_err(c->log, EOPNOTSUPP, "pid %d %s (pid:[%lu]): not supported", pid, why, ino);
}

/* The task of the tree that is the init of the pid namespace @ino. */
static int init_of(struct cpt_ctx *c, const struct scan *s, uint64_t ino)
{
	for (int j = 1; j < c->nr_tasks; j++) {
		const struct rec_nspid *r = &s->d->r[j];

		if (!c->tasks[j]->zombie && s->ino[j] == ino && r->depth &&
		    r->pid[r->depth - 1] == 1)
			return j;
	}
	return -1;
}

/* Its NSpid, its namespaces' inodes. */
static int scan_one(struct cpt_ctx *c, struct scan *s, int i)
{
	struct cpt_task *t = c->tasks[i];
	struct rec_nspid *r = &s->d->r[i];
	uint32_t lv[MAX_LEVELS];
	int n, depth, ret = read_nspid(c, t->pid, t->pid, lv, &n);

	if (ret)
		return ret;
	if (!i)
		s->d->root_levels = n;
	depth = n - s->d->root_levels;
	if (depth < 0 || depth > NSPID_LEVELS)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d is %d pid namespaces below the root's: ckpt restores up to %d",
			       t->pid, depth, NSPID_LEVELS);
	if (depth && t->zombie)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d is a zombie in a nested pid namespace: not supported", t->pid);
	r->depth = depth;
	for (int k = 0; k < depth; k++)
		r->pid[k] = lv[s->d->root_levels + k];
	if (t->zombie)
		return 0;
	ret = ino_of(c, t->pid, t->pid, "pid", &s->ino[i]);
	if (!ret)
		ret = ino_of(c, t->pid, t->pid, "pid_for_children", &s->kids[i]);
	for (int j = 1; j < t->nr_threads && !ret; j++) {
		uint64_t k;

		ret = ino_of(c, t->pid, t->threads[j].tid, "pid_for_children", &k);
		if (!ret && k != s->kids[i])
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d: its thread %d forks into another pid namespace than its main thread: not supported",
				       t->pid, t->threads[j].tid);
	}
	return ret;
}

/* The namespaces of every level above @i's own, by NS_GET_PARENT. */
static int chain(struct cpt_ctx *c, struct scan *s, int i)
{
	struct rec_nspid *r = &s->d->r[i];
	pid_t pid = c->tasks[i]->pid;
	char path[48];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return log_err(c->log, errno, "%s:", path);
	for (int k = r->depth; k >= 0 && !ret; k--) {
		struct stat st;
		int up, j;

		if (fstat(fd, &st)) {
			ret = log_err(c->log, errno, "pid %d: its pid namespace:", pid);
			break;
		}
		if (!k) {
			if (st.st_ino != s->ino[0])
				ret = refuse(c, pid, "is in a pid namespace outside the root's", st.st_ino);
			break;
		}
		j = init_of(c, s, st.st_ino);
		if (j < 0 || s->d->r[j].depth != (uint32_t)k || j > i) {
			ret = refuse(c, pid, "is in a pid namespace whose init is not in the tree (made outside it, or its init has exited)",
				     st.st_ino);
			break;
		}
		r->ns[k - 1] = c->tasks[j]->pid;
		up = ioctl(fd, NS_GET_PARENT);
		if (up < 0)
			ret = log_err(c->log, errno, "pid %d: the parent of its pid namespace:", pid);
		close(fd);
		fd = up;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Can @x be forked by @p, as it is (same namespace, or one level down
 * as the init of the namespace @p makes, or into the one @p made)? */
static bool fits(const struct rec_nspid *p, const struct rec_nspid *x)
{
	uint32_t d = p->depth;

	if (memcmp(p->ns, x->ns, d * sizeof(p->ns[0])))
		return false;
	if (x->depth == d)
		return true;
	return x->depth == d + 1 &&
	       (p->children ? p->children == x->ns[d] : x->pid[d] == 1);
}

/* A process whose pid_for_children is not its own: the namespace it
 * made, whose init must be a child of it. */
static int children(struct cpt_ctx *c, struct scan *s, int i)
{
	struct rec_nspid *r = &s->d->r[i];
	pid_t pid = c->tasks[i]->pid;

	if (c->tasks[i]->zombie || s->kids[i] == s->ino[i])
		return 0;
	if (!s->kids[i])
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d made a pid namespace for its children (unshare(CLONE_NEWPID)) and forked none into it yet: not supported",
			       pid);
	for (int j = 1; j < c->nr_tasks; j++)
		if (c->tasks[j]->ppid == pid && !c->tasks[j]->zombie && s->ino[j] == s->kids[i] &&
		    s->d->r[j].depth == r->depth + 1 && s->d->r[j].pid[r->depth] == 1) {
			r->children = c->tasks[j]->pid;
			return 0;
		}
	return refuse(c, pid, "forks its children into a pid namespace whose init is not its child (it exited, or it was entered by setns)",
		      s->kids[i]);
}

int nspid_scan(struct cpt_ctx *c, struct nspid_dump *d)
{
	struct scan s = { .d = d };
	int ret = 0;

	d->r = calloc(c->nr_tasks, sizeof(*d->r));
	s.ino = calloc(c->nr_tasks, sizeof(*s.ino));
	s.kids = calloc(c->nr_tasks, sizeof(*s.kids));
	if (!d->r || !s.ino || !s.kids)
		ret = log_err(c->log, ENOMEM, "pid namespaces:");
	for (int i = 0; i < c->nr_tasks && !ret; i++)
		ret = scan_one(c, &s, i);
	for (int i = 1; i < c->nr_tasks && !ret; i++)
		if (!c->tasks[i]->zombie)
			ret = chain(c, &s, i);
	for (int i = 0; i < c->nr_tasks && !ret; i++)
		ret = children(c, &s, i);
	for (int i = 1; i < c->nr_tasks && !ret; i++) {
		long p = id_find(&c->pids, c->tasks[i]->ppid);

		if (p >= 0 && !fits(&d->r[p], &d->r[i]))
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d: its pid namespace is neither its parent %d's nor one its parent made: not supported",
				      c->tasks[i]->pid, c->tasks[i]->ppid);
	}
	free(s.ino);
	free(s.kids);
	return ret;
}

static const struct rec_nspid *rec_of(struct cpt_ctx *c, const struct nspid_dump *d,
				      const struct cpt_task *t)
{
	long i = d->r ? id_find(&c->pids, t->pid) : -1;

	return i >= 0 ? &d->r[i] : NULL;
}

int nspid_dump(struct cpt_ctx *c, const struct nspid_dump *d, struct cpt_task *t)
{
	const struct rec_nspid *r = rec_of(c, d, t);

	if (!r || (!r->depth && !r->children))
		return 0;
	return iw_record(&c->w, REC_NSPID, r, sizeof(*r));
}

int nspid_dump_thread(struct cpt_ctx *c, const struct nspid_dump *d, struct cpt_task *t,
		      struct cpt_thread *thr)
{
	const struct rec_nspid *r = rec_of(c, d, t);
	struct rec_nstid n = { { 0 } };
	uint32_t lv[MAX_LEVELS];
	int k, ret;

	if (!r || !r->depth || thr->tid == t->pid)
		return 0;
	ret = read_nspid(c, t->pid, thr->tid, lv, &k);
	if (ret)
		return ret;
	if (k != d->root_levels + (int)r->depth)
		return log_err(c->log, EIO, "pid %d: thread %d has %d pid levels", t->pid,
			       thr->tid, k);
	for (uint32_t i = 0; i < r->depth; i++)
		n.tid[i] = lv[d->root_levels + i];
	return iw_record(&c->w, REC_NSTID, &n, sizeof(n));
}

/* ---- restart ---- */

/* A process's (KSTATE(t, kind_ns)); a thread's is its struct rec_nstid. */
struct nspid_rst {
	struct rec_nspid r;
	bool have;		/* its NSPID */
	bool unshared;		/* made the namespace of r.children */
	bool prepared;		/* (the root) its pidfd on ckpt is taken */
	int ckpt_fd;		/* a pidfd on ckpt, inherited; 0: none */
	int push_fd;		/* with push: ckpt's end */
	int drain_fd;		/* ... and ckpt's copy of the puppets' */
	bool push;		/* ckpt_fd is a socket to ckpt */
};

static struct nspid_rst *st_of(const struct rst_task *t)
{
	return t ? KSTATE(t, kind_ns) : NULL;
}

static uint32_t depth_of(const struct rst_task *t)
{
	const struct nspid_rst *s = st_of(t);

	return s && s->have ? s->r.depth : 0;
}

bool ns_nested(const struct rst_task *t)
{
	const struct nspid_rst *s = st_of(t);

	return s && s->have;
}

static bool bad_id(uint32_t v)
{
	return v < 1 || v > RST_PID_MAX;
}

static int load_nspid(struct rst_ctx *c, struct rst_task *t, const struct rec *r)
{
	const struct rec_nspid *n = r->data;
	struct nspid_rst *s = kind_state(t, &kind_ns, sizeof(*s));
	bool bad;

	if (!s)
		return log_err(c->log, ENOMEM, "pid namespaces:");
	/* bounds first; the root is at level 0, but may make one */
	bad = r->data_len != sizeof(*n) || t->nr_threads || s->have ||
	      n->depth > NSPID_LEVELS || (!n->depth && !n->children) ||
	      n->children > RST_PID_MAX || (t == c->tasks[0] && n->depth);
	for (uint32_t i = 0; i < NSPID_LEVELS && !bad; i++)
		bad = i < n->depth ? bad_id(n->ns[i]) || bad_id(n->pid[i]) : n->ns[i] || n->pid[i];
	if (!bad && n->depth)
		bad = (n->pid[n->depth - 1] == 1) != (n->ns[n->depth - 1] == (uint32_t)t->pid);
	if (bad)
		return log_err(c->log, EBADMSG,
			       "bad NSPID record %llu (after its TASK, once: levels 1..%d, each a pid and its namespace's init)",
			       (unsigned long long)r->index, NSPID_LEVELS);
	s->r = *n;
	s->have = true;
	return 0;
}

static int load_nstid(struct rst_ctx *c, struct rst_task *t, const struct rec *r)
{
	const struct rec_nstid *n = r->data;
	struct rec_nstid *s = t->nr_threads > 1 ? kind_thread_state(t, &kind_ns, sizeof(*s)) : NULL;
	uint32_t d = depth_of(t);
	bool bad = r->data_len != sizeof(*n) || !d || t->nr_threads < 2 || !s || s->tid[0];

	for (uint32_t i = 0; i < NSPID_LEVELS && !bad; i++)
		bad = i < d ? bad_id(n->tid[i]) : n->tid[i] != 0;
	if (bad)
		return log_err(c->log, EBADMSG,
			       "bad NSTID record %llu (once after each THREAD but the first of a nested process, its levels only)",
			       (unsigned long long)r->index);
	*s = *n;
	return 0;
}

int nspid_load(struct rst_ctx *c, struct rst_task *t, const struct rec *r)
{
	return r->type == REC_NSPID ? load_nspid(c, t, r) : load_nstid(c, t, r);
}

static long index_of(struct rst_ctx *c, const struct rst_task *t)
{
	return id_find(&c->pids, t->pid);
}

/* Each level's namespace is named by its init, which comes before the
 * others in it; every thread has its tids. */
static int check_levels(struct rst_ctx *c, struct rst_task *t, const struct rec_nspid *r)
{
	for (uint32_t k = 0; k < r->depth; k++) {
		struct rst_task *init = rst_task_by_pid(c, r->ns[k]);
		const struct nspid_rst *is = st_of(init);

		if (!is || !is->have || is->r.depth != k + 1 || is->r.pid[k] != 1 ||
		    memcmp(is->r.ns, r->ns, (k + 1) * sizeof(r->ns[0])) ||
		    index_of(c, init) > index_of(c, t))
			return log_err(c->log, EBADMSG,
				       "pid %d: NSPID level %u names pid %u, not the init of a pid namespace before it",
				       t->pid, k + 1, r->ns[k]);
	}
	for (int j = 1; j < t->nr_threads; j++) {
		const struct rec_nstid *n = KTSTATE(&t->threads[j], kind_ns);

		if (r->depth && (!n || !n->tid[0]))
			return log_err(c->log, EBADMSG, "tid %d: no NSTID record",
				       t->threads[j].tid);
	}
	return 0;
}

static const struct rec_nspid none;

static const struct rec_nspid *rec_or_none(const struct rst_task *t)
{
	const struct nspid_rst *s = st_of(t);

	return s && s->have ? &s->r : &none;
}

int nspid_check(struct rst_ctx *c, struct rst_task *t)
{
	const struct rec_nspid *r = rec_or_none(t);
	struct rst_task *p = t == c->tasks[0] ? NULL : rst_task_by_pid(c, t->t.ppid);
	int ret = check_levels(c, t, r);

	if (!ret && p && !fits(rec_or_none(p), r))
		ret = log_err(c->log, EBADMSG,
			      "pid %d: NSPID: its pid namespace is neither its parent %d's nor one its parent makes",
			      t->pid, p->pid);
	if (!ret && r->children) {
		struct rst_task *k = rst_task_by_pid(c, r->children);

		if (!k || k->t.ppid != (uint32_t)t->pid || (k->t.flags & TASK_ZOMBIE) ||
		    depth_of(k) != r->depth + 1 || rec_or_none(k)->ns[r->depth] != r->children)
			ret = log_err(c->log, EBADMSG,
				      "pid %d: NSPID: its children's pid namespace's init %u is no child of it",
				      t->pid, r->children);
	}
	/* a zombie (no NSPID) is forked by a parent at the root's level */
	for (int i = 1; t == c->tasks[0] && i < c->nr_tasks && !ret; i++)
		if ((c->tasks[i]->t.flags & TASK_ZOMBIE) &&
		    depth_of(rst_task_by_pid(c, c->tasks[i]->t.ppid)))
			ret = log_err(c->log, EBADMSG, "pid %d: a zombie in a nested pid namespace",
				      c->tasks[i]->pid);
	return ret;
}

void nspid_show(struct info_out *o, const struct rec *r)
{
	const uint32_t *v = r->type == REC_NSPID ? ((const struct rec_nspid *)r->data)->pid
						 : ((const struct rec_nstid *)r->data)->tid;
	char s[NSPID_LEVELS * 24 + 1] = "";
	uint32_t d = NSPID_LEVELS;

	if (r->type == REC_NSPID) {
		const struct rec_nspid *n = r->data;

		d = n->depth;
		info_u64(o, "depth", n->depth);
		if (n->children)
			info_u64(o, "children_ns_init", n->children);
		for (uint32_t i = 0; i < d; i++)
			snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%u", i ? "," : "", n->ns[i]);
		info_str(o, "ns_inits", s);
		s[0] = '\0';
	}
	for (uint32_t i = 0; i < d && v[i]; i++)
		snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%u", i ? "," : "", v[i]);
	info_str(o, r->type == REC_NSPID ? "pids" : "tids", s);
}

static bool any_nested(struct rst_ctx *c)
{
	for (int i = 0; i < c->nr_tasks; i++)
		if (ns_nested(c->tasks[i]))
			return true;
	return false;
}

/* In a user namespace of its own the root cannot take from ckpt (it has
 * no capability over ckpt's namespace): it has the end of a socket pair
 * container.c made before cloning it, over which ckpt sends instead. */
static int take_socket(struct rst_ctx *c, struct rst_task *root, struct nspid_rst *s)
{
	long fd;
	int ret = rcheck(&root->rm, &fd, "fcntl(F_DUPFD ckpt's socket)", SYS_fcntl,
			 c->give_fd[1], F_DUPFD, c->fd_floor);

	s->ckpt_fd = ret ? 0 : fd;
	s->push_fd = c->give_fd[0];
	s->drain_fd = c->give_fd[1];
	s->push = !ret;
	return ret;
}

int nspid_prepare(struct rst_ctx *c, struct rst_task *parent)
{
	struct nspid_rst *s;
	long pidfd, fd;
	int ret;

	if (parent != c->tasks[0] || (!any_nested(c) && !c->give))
		return 0;
	s = kind_state(parent, &kind_ns, sizeof(*s));
	if (!s)
		return log_err(c->log, ENOMEM, "pid namespaces:");
	if (s->prepared)
		return 0;
	s->prepared = true;
	if (c->give)
		return take_socket(c, parent, s);
	/* the root is in ckpt's pid namespace: it can name it */
	ret = rcheck(&parent->rm, &pidfd, "pidfd_open (ckpt)", SYS_pidfd_open, getpid(), 0);
	if (ret)
		return ret;
	ret = rcheck(&parent->rm, &fd, "fcntl(F_DUPFD pidfd)", SYS_fcntl, pidfd, F_DUPFD,
		     c->fd_floor);
	rcall(&parent->rm, &pidfd, SYS_close, pidfd);
	s->ckpt_fd = ret ? 0 : fd;
	return ret;
}

int nspid_fork_into(struct rst_ctx *c, struct rst_task *parent, struct rst_task *child,
		    uint64_t *flags)
{
	struct nspid_rst *ps = kind_state(parent, &kind_ns, sizeof(*ps));
	struct nspid_rst *cs = kind_state(child, &kind_ns, sizeof(*cs));
	uint32_t dp = depth_of(parent), d = depth_of(child);

	if (!ps || !cs)
		return log_err(c->log, ENOMEM, "pid namespaces:");
	cs->ckpt_fd = ps->ckpt_fd;	/* a copy of its table */
	cs->push_fd = ps->push_fd;
	cs->drain_fd = ps->drain_fd;
	cs->push = ps->push;
	if (d == dp && ps->unshared)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: forked by %d in its own pid namespace after its first child into the one %d made: not supported",
			       child->pid, parent->pid, parent->pid);
	if (d != dp + 1)
		return 0;
	if (!ps->have || !ps->r.children) {
		*flags |= CLONE_NEWPID;
		return 0;
	}
	if (ps->unshared)
		return 0;
	ps->unshared = true;
	return rcheck(&parent->rm, NULL, "unshare(CLONE_NEWPID)", SYS_unshare, CLONE_NEWPID);
}

/* @id's pids below the root's level, and its process's record. */
static const uint32_t *levels_of(const struct rst_task *t, pid_t id,
				 const struct rec_nspid **r)
{
	*r = rec_or_none(t);
	if (id == t->pid)
		return (*r)->pid;
	for (int j = 1; j < t->nr_threads; j++)
		if (t->threads[j].tid == id) {
			const struct rec_nstid *n = KTSTATE(&t->threads[j], kind_ns);

			return n ? n->tid : NULL;
		}
	return NULL;
}

int nspid_set_tid(const struct rst_task *t, int i, pid_t out[NSPID_LEVELS + 1])
{
	const struct rec_nspid *r;
	const uint32_t *v = levels_of(t, i ? t->threads[i].tid : t->pid, &r);
	uint32_t d = v ? r->depth : 0;

	for (uint32_t k = 0; k < d; k++)
		out[k] = v[d - 1 - k];
	out[d] = i ? t->threads[i].tid : t->pid;
	return d + 1;
}

pid_t ns_tid_in(const struct rst_task *t, pid_t id)
{
	const struct rec_nspid *r;
	const uint32_t *v = levels_of(t, id, &r);

	return v && r->depth ? (pid_t)v[r->depth - 1] : id;
}

pid_t ns_pid_in(struct rst_ctx *c, const struct rst_task *viewer, pid_t id)
{
	const struct rec_nspid *vr = rec_or_none(viewer), *r = NULL;
	const uint32_t *v = NULL;
	uint32_t vd = vr->depth;

	if (!vd)
		return id;
	for (int i = 0; i < c->nr_tasks && !v; i++)
		v = levels_of(c->tasks[i], id, &r);
	if (!v || r->depth < vd || memcmp(r->ns, vr->ns, vd * sizeof(r->ns[0])))
		return 0;
	return v[vd - 1];
}

int ns_pidfd_give(struct rst_ctx *c, struct rst_task *t, pid_t id, unsigned int flags,
		  long *fd)
{
	pid_t in = ns_pid_in(c, t, id);
	int ours, ret;

	if (in)
		return rcheck(&t->rm, fd, "pidfd_open", SYS_pidfd_open, in, flags);
	/* (it has no number there: it is nested, and has the pidfd on ckpt) */
	ours = syscall(SYS_pidfd_open, id, flags);
	if (ours < 0)
		return log_err(c->log, errno, "pid %d: pidfd_open(%d) for it:", t->pid, id);
	ret = ns_ckpt_give(t, ours, fd);
	close(ours);
	return ret;
}

/* ckpt's @ours sent over the socket, received by the puppet. */
static int push(struct rst_task *t, const struct nspid_rst *s, int ours, long *fd)
{
	char one = 0, cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &one, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	uint64_t a_iov, a_buf, a_msg;
	int ret;

	if (fd_send(s->push_fd, &one, 1, &ours, 1, 0) != 1)
		return log_err(t->rm.log, errno, "pid %d: sending it fd %d:", t->pid, ours);
	/* the same message, in its scratch space: byte, cmsg, iovec, msghdr */
	ret = rst_scratch_put(t, 64, cbuf, sizeof(cbuf), &a_buf);
	iov.iov_base = (void *)(uintptr_t)(a_buf - 64);
	m.msg_control = (void *)(uintptr_t)a_buf;
	if (!ret)
		ret = rst_scratch_put(t, 128, &iov, sizeof(iov), &a_iov);
	m.msg_iov = (void *)(uintptr_t)a_iov;
	if (!ret)
		ret = rst_scratch_put(t, 192, &m, sizeof(m), &a_msg);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "recvmsg (an fd from ckpt)", SYS_recvmsg, s->ckpt_fd,
			     a_msg, MSG_CMSG_CLOEXEC);
	if (!ret)
		ret = remote_read(&t->rm, a_buf, cbuf, sizeof(cbuf));
	cm = (struct cmsghdr *)cbuf;
	if (!ret && (cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int))))
		ret = log_err(t->rm.log, EPROTO, "pid %d: no fd came with ckpt's message", t->pid);
	if (ret) {
		/* what the puppet did not take would be the next one's */
		unsigned int keep = 0;
		char b;

		while (fd_recv(s->drain_fd, &b, 1, MSG_DONTWAIT, NULL, &keep) > 0)
			keep = 0;
	}
	if (!ret) {
		int got;

		memcpy(&got, CMSG_DATA(cm), sizeof(got));
		/* as pidfd_getfd gives it: not close-on-exec */
		*fd = got;
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFD)", SYS_fcntl, got, F_SETFD, 0);
	}
	return ret;
}

int ns_ckpt_give(struct rst_task *t, int ours, long *fd)
{
	const struct nspid_rst *s = st_of(t);

	if (s && s->ckpt_fd && s->push)
		return push(t, s, ours, fd);
	return rcheck(&t->rm, fd, "pidfd_getfd (through ckpt)", SYS_pidfd_getfd,
		      s ? s->ckpt_fd : 0, ours, 0);
}

int ns_ckpt_fd(const struct rst_task *t)
{
	const struct nspid_rst *s = st_of(t);

	return s ? s->ckpt_fd : 0;
}

int ns_ckpt_fd_close(struct rst_task *t)
{
	struct nspid_rst *s = st_of(t);
	int fd = s ? s->ckpt_fd : 0;

	if (!fd)
		return 0;
	s->ckpt_fd = 0;
	return rcheck(&t->rm, NULL, "close (pidfd on ckpt)", SYS_close, fd);
}
