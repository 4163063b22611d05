/* seccomp.c - seccomp (SECCOMP_FILTER, SECCOMP): each thread's mode
 * (strict or filter), its chain of classic BPF filters and its own
 * no_new_privs.
 *
 * A filter would apply to the system calls ckpt makes a task execute, so
 * every thread under seccomp is traced with PTRACE_O_SUSPEND_SECCOMP, at
 * checkpoint (seccomp_hold(), once the task is held) and at restart
 * (before the filters are installed): the kernel then skips its filters
 * until we detach, so our own calls, the register restore and the release
 * are never filtered, and the filters apply from the first instruction
 * the task runs on its own.  That needs CAP_SYS_ADMIN and a ckpt not
 * itself under seccomp.
 *
 * A chain is a path in a tree of filters (a fork or TSYNC shares a
 * filter with its parent in the kernel); a filter is written once, as its
 * program, its flags and the filter below it, and threads name their
 * newest.  The kernel gives no identity to compare (kcmp has no seccomp
 * type): filters are equal when their programs, flags and whole chains
 * below them are.  At restart the part of the chain that all threads of a
 * process have in common is installed once with SECCOMP_FILTER_FLAG_TSYNC
 * (shared, as a later TSYNC by the program needs), the rest by each
 * thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "../kinds.h"

#define MAX_FILTERS	65536	/* distinct filters in one image */
#define MAX_CHAIN	8192	/* filters walked per thread at checkpoint */
/* the kernel's bound on a chain: instructions plus 4 per filter */
#define MAX_INSNS_PER_PATH	((1 << 18) / sizeof(struct sock_filter))

struct cpt_filter {
	uint32_t parent, flags, n;
	struct sock_filter *insns;
};

/* Checkpoint: the filters written so far (id = index + 1). */
struct seccomp_cpt {
	struct cpt_filter *f;
	uint32_t nr;
	size_t cap;
	pid_t nnp_of;		/* the process whose main thread's */
	uint64_t main_nnp;	/* no_new_privs this is (its first thread's) */
};

/* Why a program cannot be restored as it is, or NULL. */
static const char *prog_refused(const struct sock_filter *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t act = p[i].k & SECCOMP_RET_ACTION_FULL;

		if (BPF_CLASS(p[i].code) != BPF_RET)
			continue;
		if (BPF_RVAL(p[i].code) != BPF_K)
			return "returns an action computed at run time";
		if (act == SECCOMP_RET_USER_NOTIF)
			return "returns SECCOMP_RET_USER_NOTIF (a supervisor's listener)";
		if (act == SECCOMP_RET_TRACE)
			return "returns SECCOMP_RET_TRACE (a tracer's decision)";
	}
	return NULL;
}

static int thread_mode(struct ckpt_log *log, pid_t pid, pid_t tid,
		       uint64_t *mode, uint64_t *nnp)
{
	char *st;
	int ret = proc_read(tid, "status", &st, NULL);

	if (!ret) {
		ret = status_u64(st, "Seccomp", 10, mode);
		if (!ret && nnp)
			ret = status_u64(st, "NoNewPrivs", 10, nnp);
		free(st);
	}
	if (ret)
		return log_err(log, -ret, "pid %d tid %d: reading status:", pid, tid);
	if (*mode > SECCOMP_MODE_FILTER_)
		return log_err(log, EOPNOTSUPP, "pid %d tid %d: seccomp mode %llu",
			       pid, tid, (unsigned long long)*mode);
	return 0;
}

/* Filter @idx of @tid (0: the oldest, the first installed, as the
 * kernel's get_nth_filter() counts): its program (malloc'd) and flags;
 * 1 past the end of the chain. */
static int get_filter(struct ckpt_log *log, pid_t pid, pid_t tid, long idx,
		      struct cpt_filter *f)
{
	struct __ptrace_seccomp_metadata md = { .filter_off = idx };
	long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, idx, NULL);

	if (n < 0 && errno == ENOENT)
		return 1;
	if (n < 0)
		return log_err(log, errno, "pid %d tid %d: PTRACE_SECCOMP_GET_FILTER %ld:",
			       pid, tid, idx);
	if (n < 1 || n > BPF_MAXINSNS)
		return log_err(log, EOPNOTSUPP, "pid %d tid %d: seccomp filter %ld has %ld instructions",
			       pid, tid, idx, n);
	f->n = n;
	f->insns = calloc(n, sizeof(*f->insns));
	if (!f->insns)
		return log_err(log, ENOMEM, "seccomp filter:");
	errno = 0;
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, idx, f->insns) != n ||
	    ptrace(PTRACE_SECCOMP_GET_METADATA, tid, sizeof(md), &md) < 0) {
		free(f->insns);
		f->insns = NULL;
		return log_err(log, errno ? errno : EAGAIN,
			       "pid %d tid %d: reading seccomp filter %ld:", pid, tid, idx);
	}
	f->flags = md.flags;
	return 0;
}

static void free_chain(struct cpt_filter *v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i].insns);
	free(v);
}

/* Every filter of @tid, oldest first, each checked; *nr of them. */
static int get_chain(struct ckpt_log *log, pid_t pid, pid_t tid,
		     struct cpt_filter **out, int *nr)
{
	struct cpt_filter *v = NULL;
	size_t cap = 0;
	int n = 0, ret = 0;

	for (;;) {
		struct cpt_filter f = { 0 };
		const char *why;

		if (n == MAX_CHAIN) {
			ret = log_err(log, E2BIG, "pid %d tid %d: more than %d seccomp filters",
				      pid, tid, MAX_CHAIN);
			break;
		}
		ret = get_filter(log, pid, tid, n, &f);
		if (ret) {
			ret = ret > 0 ? 0 : ret;
			break;
		}
		why = prog_refused(f.insns, f.n);
		if (why || (f.flags & ~SECCOMP_FILTER_FLAG_LOG)) {
			free(f.insns);
			ret = log_err(log, EOPNOTSUPP,
				      "pid %d tid %d: seccomp filter %d (0 is the oldest) %s: not supported",
				      pid, tid, n, why ? why : "has unknown flags");
			break;
		}
		if (VEC_ROOM(v, n, cap)) {
			free(f.insns);
			ret = log_err(log, ENOMEM, "seccomp filters:");
			break;
		}
		v[n++] = f;
	}
	if (!ret && !n)
		ret = log_err(log, EOPNOTSUPP, "pid %d tid %d: seccomp filter mode without filters",
			      pid, tid);
	if (ret) {
		free_chain(v, n);
		return ret;
	}
	*out = v;
	*nr = n;
	return 0;
}

/* The remote calls to come are checked against the thread's filters
 * (sfilter.h): they take the programs. */
static int hand_to_remote(struct remote *rm, uint64_t mode, struct cpt_filter *v, int n)
{
	int k = mode == SECCOMP_MODE_FILTER_ ? n : 0;
	struct sfilter_set *s = calloc(1, sizeof(*s) + k * sizeof(s->prog[0]));

	if (!s)
		return -ENOMEM;
	s->mode = mode;
	for (int i = 0; i < k; i++) {
		s->prog[i] = (struct sfilter_prog){ v[i].insns, v[i].n };
		v[i].insns = NULL;
	}
	s->n = k;
	sfilter_set_free(rm->seccomp);
	rm->seccomp = s;
	return 0;
}

/* Its threads under seccomp are made to skip their filters while we hold
 * them (PTRACE_O_SUSPEND_SECCOMP), and what cannot be restored is refused
 * now. */
static int seccomp_hold(struct cpt_ctx *c, struct cpt_task *t)
{
	for (int i = 0; i < t->nr_threads; i++) {
		pid_t tid = t->threads[i].tid;
		struct cpt_filter *v;
		uint64_t mode;
		int n, ret = thread_mode(c->log, t->pid, tid, &mode, NULL);

		if (ret)
			return ret;
		if (!mode)
			continue;
		/* remote_seize()'s options, and the suspension */
		if (ptrace(PTRACE_SETOPTIONS, tid, 0, PTRACE_O_TRACESYSGOOD |
			   PTRACE_O_SUSPEND_SECCOMP))
			return log_err(c->log, errno,
				       "pid %d tid %d runs under seccomp, whose filters ckpt must suspend (PTRACE_O_SUSPEND_SECCOMP: needs CAP_SYS_ADMIN and a ckpt not itself under seccomp):",
				       t->pid, tid);
		v = NULL;
		n = 0;
		if (mode == SECCOMP_MODE_FILTER_)	/* refused early */
			ret = get_chain(c->log, t->pid, tid, &v, &n);
		if (!ret)
			ret = hand_to_remote(t->threads[i].rm, mode, v, n);
		free_chain(v, n);
		if (ret)
			return log_err(c->log, -ret, "pid %d tid %d: seccomp filters:",
				       t->pid, tid);
	}
	return 0;
}

/* The id of the filter @f on top of @parent, written now if it is new. */
static int filter_id(struct cpt_ctx *c, uint32_t parent, struct cpt_filter *f,
		     uint32_t *id)
{
	struct seccomp_cpt *s = kind_dump_state(c, &kind_seccomp);
	struct rec_seccomp_filter rf = { 0 };
	struct cpt_filter *nf;
	int ret;

	for (uint32_t i = 0; i < s->nr; i++) {
		const struct cpt_filter *g = &s->f[i];

		if (g->parent == parent && g->flags == f->flags && g->n == f->n &&
		    !memcmp(g->insns, f->insns, f->n * sizeof(*f->insns))) {
			*id = i + 1;
			return 0;
		}
	}
	if (s->nr == MAX_FILTERS)
		return log_err(c->log, E2BIG, "more than %d seccomp filters", MAX_FILTERS);
	nf = VEC_PUSH(s->f, s->nr, s->cap);
	if (!nf)
		return log_err(c->log, ENOMEM, "seccomp filters:");
	*nf = *f;
	nf->parent = parent;
	f->insns = NULL;	/* kept by the table now */
	*id = s->nr;
	rf = (struct rec_seccomp_filter){ *id, parent, nf->flags, nf->n };
	ret = iw_begin(&c->w, REC_SECCOMP_FILTER, sizeof(rf) + rf.nr_insns * 8ULL);
	if (!ret)
		ret = iw_write(&c->w, &rf, sizeof(rf));
	if (!ret)
		ret = iw_write(&c->w, nf->insns, rf.nr_insns * 8ULL);
	return ret ? ret : iw_end(&c->w);
}

/* Filter records (new ones) are written here, before the SECCOMP record,
 * still under the thread's TASK. */
static int seccomp_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			       struct cpt_thread *th)
{
	struct seccomp_cpt *s = kind_dump_state(c, &kind_seccomp);
	struct rec_seccomp rs = { 0 };
	uint64_t mode, nnp, main_nnp;
	struct cpt_filter *v = NULL;
	int n = 0, ret;

	ret = thread_mode(c->log, t->pid, th->tid, &mode, &nnp);
	if (ret)
		return ret;
	/* (the main thread's is its process's, asked first) */
	if (th == &t->threads[0]) {
		s->nnp_of = t->pid;
		s->main_nnp = nnp;
	}
	ret = s->nnp_of == t->pid ? 0 : proc_status_u64(t->pid, "NoNewPrivs", 10, &s->main_nnp);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading status:", t->pid);
	main_nnp = s->main_nnp;
	if (!mode && nnp == main_nnp)
		return 0;	/* CREDS says it all */
	if (mode == SECCOMP_MODE_FILTER_)
		ret = get_chain(c->log, t->pid, th->tid, &v, &n);
	for (int i = 0; i < n && !ret; i++)
		ret = filter_id(c, rs.filter, &v[i], &rs.filter);
	free_chain(v, n);
	rs.mode = mode;
	rs.no_new_privs = nnp;
	return ret ? ret : iw_record(&c->w, REC_SECCOMP, &rs, sizeof(rs));
}

static void seccomp_dump_free(struct cpt_ctx *c, void *state)
{
	struct seccomp_cpt *s = state;

	for (uint32_t i = 0; i < s->nr; i++)
		free(s->f[i].insns);
	free(s->f);
}

/* ---- restart ---------------------------------------------------------- */

struct rst_filter {
	uint32_t parent, flags, n;
	uint32_t depth;		/* filters in its chain, itself included */
	uint32_t cost;		/* the kernel's measure of the chain */
	void *rec;		/* its record's payload; the program follows */
};

struct seccomp_rst {
	struct rst_filter *f;	/* by id - 1 */
	uint32_t nr;
	size_t cap;
};

struct seccomp_thread {
	struct rec_seccomp s;
};

/* Restart: the filter the process's threads share, installed once. */
struct seccomp_task {
	uint32_t shared;
};

static const struct sock_filter *insns_of(const struct rst_filter *f)
{
	return (const struct sock_filter *)((const char *)f->rec +
					    sizeof(struct rec_seccomp_filter));
}

static int filter_load(struct rst_ctx *c, struct rec *r)
{
	struct seccomp_rst *s = kind_ctx_state(c, &kind_seccomp, sizeof(*s));
	const struct rec_seccomp_filter *rf = r->data;
	struct rst_filter nf = { 0 };
	const char *why;
	int ret = rec_want(c->log, r, sizeof(*rf), "SECCOMP_FILTER");

	if (!s)
		return log_err(c->log, ENOMEM, "seccomp:");
	if (ret)
		return ret;
	if (rf->nr_insns < 1 || rf->nr_insns > BPF_MAXINSNS ||
	    r->data_len != sizeof(*rf) + rf->nr_insns * 8ULL)
		return log_err(c->log, EBADMSG, "SECCOMP_FILTER %u: %u instructions in %zu bytes",
			       rf->id, rf->nr_insns, r->data_len);
	if (s->nr >= MAX_FILTERS || rf->id != s->nr + 1 || rf->parent > s->nr)
		return log_err(c->log, EBADMSG, "SECCOMP_FILTER id %u (parent %u) out of order",
			       rf->id, rf->parent);
	if (rf->flags & ~SECCOMP_FILTER_FLAG_LOG)
		return log_err(c->log, EBADMSG, "SECCOMP_FILTER %u: bad flags %#x",
			       rf->id, rf->flags);
	nf = (struct rst_filter){ rf->parent, rf->flags, rf->nr_insns, 1, rf->nr_insns + 4, NULL };
	if (rf->parent) {
		nf.depth += s->f[rf->parent - 1].depth;
		nf.cost += s->f[rf->parent - 1].cost;
	}
	if (nf.cost > MAX_INSNS_PER_PATH)
		return log_err(c->log, EBADMSG, "SECCOMP_FILTER %u: chain too long (%u instructions)",
			       rf->id, nf.cost);
	why = prog_refused((const void *)(rf + 1), rf->nr_insns);
	if (why)
		return log_err(c->log, EBADMSG, "SECCOMP_FILTER %u %s", rf->id, why);
	if (VEC_ROOM(s->f, s->nr, s->cap))
		return log_err(c->log, ENOMEM, "seccomp filters:");
	nf.rec = r->data;
	r->data = NULL;
	s->f[s->nr++] = nf;
	return 0;
}

static int seccomp_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct seccomp_rst *s = kind_ctx_state(c, &kind_seccomp, sizeof(*s));
	struct seccomp_thread *th;
	const struct rec_seccomp *rs = r->data;
	int ret;

	if (r->type == REC_SECCOMP_FILTER)
		return filter_load(c, r);
	ret = rec_want(c->log, r, sizeof(*rs), "SECCOMP");
	if (ret)
		return ret;
	if (!s || !t->nr_threads)
		return log_err(c->log, s ? EBADMSG : ENOMEM, "SECCOMP record out of place");
	th = kind_thread_state(t, &kind_seccomp, sizeof(*th));
	if (!th)
		return log_err(c->log, ENOMEM, "seccomp:");
	if (th->s.mode || th->s.no_new_privs || r->data_len != sizeof(*rs) ||
	    rs->mode > SECCOMP_MODE_FILTER_ || rs->no_new_privs > 1 || rs->reserved ||
	    (rs->mode == SECCOMP_MODE_FILTER_) != (rs->filter != 0) ||
	    rs->filter > s->nr || (!rs->mode && !rs->no_new_privs))
		return log_err(c->log, EBADMSG, "bad or repeated SECCOMP record (mode %u, filter %u)",
			       rs->mode, rs->filter);
	th->s = *rs;
	return 0;
}

/* The newest filter both @a and @b have (0: none). */
static uint32_t common_filter(const struct seccomp_rst *s, uint32_t a, uint32_t b)
{
	while (a && b && a != b) {
		if (s->f[a - 1].depth >= s->f[b - 1].depth)
			a = s->f[a - 1].parent;
		else
			b = s->f[b - 1].parent;
	}
	return a == b ? a : 0;
}

static int install(struct rst_ctx *c, struct rst_task *t, struct remote *rm,
		   uint32_t id, uint32_t flags)
{
	const struct rst_filter *f = &((struct seccomp_rst *)KCSTATE(c, kind_seccomp))->f[id - 1];
	/* struct sock_fprog: a 16-bit length, the pointer 8 bytes on (the
	 * length as a 64-bit word would read 0 on a big-endian machine) */
	struct { uint16_t len, pad[3]; uint64_t filter; } prog = { f->n, { 0 }, 0 };
	uint64_t at;
	long res;
	int ret = rst_scratch_put(t, 64, insns_of(f), f->n * 8ULL, &prog.filter);

	if (!ret)
		ret = rst_scratch_put(t, 0, &prog, sizeof(prog), &at);
	if (!ret)
		ret = remote_call(rm, &res, SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				  f->flags | flags, at, 0, 0, 0);
	if (!ret && res)
		ret = log_err(c->log, res < 0 ? (int)-res : ESRCH,
			      "pid %d tid %d: installing seccomp filter %u%s:", t->pid,
			      rm->pid, id, res > 0 ? " (TSYNC: a thread differs)" : "");
	return ret;
}

/* The filters after @from up to @to (one of its descendants), oldest first. */
static int install_chain(struct rst_ctx *c, struct rst_task *t, struct remote *rm,
			 uint32_t from, uint32_t to, uint32_t flags)
{
	const struct seccomp_rst *s = KCSTATE(c, kind_seccomp);
	uint32_t *path, n = 0;
	int ret = 0;

	if (to == from)
		return 0;
	path = calloc(s->f[to - 1].depth, sizeof(*path));
	if (!path)
		return log_err(c->log, ENOMEM, "seccomp chain:");
	for (uint32_t id = to; id != from; id = s->f[id - 1].parent)
		path[n++] = id;
	while (n && !ret)
		ret = install(c, t, rm, path[--n], flags);
	free(path);
	return ret;
}

static struct seccomp_thread *thread_state(struct rst_thread *th)
{
	return KTSTATE(th, kind_seccomp);
}

/* Our calls, and the rest of the restart, are not filtered until the
 * task is let go; the part of the chain every thread has is installed
 * once, shared (TSYNC), by the main thread. */
static int seccomp_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct seccomp_task *st;
	const struct seccomp_rst *s = KCSTATE(c, kind_seccomp);
	uint32_t shared = 0;
	bool any = false;

	for (int i = 0; i < t->nr_threads; i++) {
		const struct seccomp_thread *th = thread_state(&t->threads[i]);
		uint32_t head = th ? th->s.filter : 0;

		shared = i == 0 ? head : common_filter(s, shared, head);
		if (!th || !th->s.mode)
			continue;
		any = true;
		/* no more clones or forks to follow: what remote_seize() set */
		if (ptrace(PTRACE_SETOPTIONS, t->threads[i].tid, 0, PTRACE_O_TRACESYSGOOD |
			   PTRACE_O_EXITKILL | PTRACE_O_SUSPEND_SECCOMP))
			return log_err(c->log, errno,
				       "pid %d tid %d: PTRACE_O_SUSPEND_SECCOMP (needs CAP_SYS_ADMIN, and a ckpt not under seccomp):",
				       t->pid, t->threads[i].tid);
	}
	if (!any)
		return 0;
	st = kind_state(t, &kind_seccomp, sizeof(*st));
	if (!st)
		return log_err(c->log, ENOMEM, "seccomp:");
	st->shared = shared;
	return install_chain(c, t, &t->rm, 0, shared,
			     t->nr_threads > 1 ? SECCOMP_FILTER_FLAG_TSYNC : 0);
}

static int seccomp_restore_thread(struct rst_ctx *c, struct rst_task *t,
				  struct rst_thread *th)
{
	const struct seccomp_thread *s = thread_state(th);
	const struct seccomp_task *st = KSTATE(t, kind_seccomp);
	int ret = 0;

	if (!s)
		return 0;
	if (s->s.no_new_privs)
		ret = rcheck(th->rm, NULL, "prctl(PR_SET_NO_NEW_PRIVS)", SYS_prctl,
			     PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (!ret && s->s.mode == SECCOMP_MODE_STRICT_)
		ret = rcheck(th->rm, NULL, "prctl(PR_SET_SECCOMP strict)", SYS_prctl,
			     PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
	if (!ret && s->s.mode == SECCOMP_MODE_FILTER_)
		ret = install_chain(c, t, th->rm, st ? st->shared : 0, s->s.filter, 0);
	return ret;
}

static void seccomp_free_ctx(void *state)
{
	struct seccomp_rst *s = state;

	for (uint32_t i = 0; i < s->nr; i++)
		free(s->f[i].rec);
	free(s->f);
	free(s);
}

static void seccomp_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_SECCOMP_FILTER) {
		const struct rec_seccomp_filter *rf = r->data;

		info_u64(o, "id", rf->id);
		info_u64(o, "parent", rf->parent);
		info_hex(o, "flags", rf->flags);
		info_u64(o, "nr_insns", rf->nr_insns);
	} else {
		const struct rec_seccomp *rs = r->data;

		info_str(o, "mode", rs->mode == SECCOMP_MODE_STRICT_ ? "strict" :
				    rs->mode == SECCOMP_MODE_FILTER_ ? "filter" : "none");
		info_u64(o, "filter", rs->filter);
		info_u64(o, "no_new_privs", rs->no_new_privs);
	}
}

static const struct rec_desc seccomp_recs[] = {
	{ REC_SECCOMP_FILTER, "SECCOMP_FILTER", 0 },
	{ REC_SECCOMP, "SECCOMP", 0 },
	{ 0 }
};

const struct kind_ops kind_seccomp = {
	.name = "seccomp",
	.recs = seccomp_recs,
	.phase = PHASE_STATE,
	.hold = seccomp_hold,
	.dump_thread = seccomp_dump_thread,
	.load = seccomp_load,
	.restore = seccomp_restore,
	.restore_thread = seccomp_restore_thread,
	.free_ctx = seccomp_free_ctx,
	.show = seccomp_show,
	.dump_size = sizeof(struct seccomp_cpt),
	.dump_free = seccomp_dump_free,
};
