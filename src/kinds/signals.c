/* signals.c - signal dispositions (SIGHAND) and pending signals with
 * their siginfo (SIGPENDING).  The blocked mask and the alternate stack
 * are per thread and travel in THREAD (task.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "../arch/arch.h"
#include "../kinds.h"
#include "ns_pid.h"

struct peeksiginfo_args_ {
	uint64_t off;
	uint32_t flags;
	int32_t nr;
};
#define PEEKSIGINFO_SHARED 1
#define NSIG_ 64
/* what one record holds; the kernel's RLIMIT_SIGPENDING is near it */
#define MAX_PENDING ((CKPT_REC_MAX_META) / sizeof(struct rec_siginfo))
#define SA_RESTORER_ 0x04000000
/* every flag the kernel keeps in sa_flags */
#define SA_KNOWN (SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | \
		  SA_RESTART | SA_NODEFER | SA_RESETHAND | SA_RESTORER_ | \
		  0x00000400 /* SA_EXPOSE_TAGBITS */ | 0x00000800 /* SA_UNSUPPORTED */)

struct pending {
	struct rec_siginfo *e;
	uint32_t n;
};

struct sig_state {
	bool have_hand;
	struct rec_sighand hand;
	struct pending pend;	/* the process-wide queue */
};

#define ACT_THREADS 64	/* of one process */
#define ACT_POOL 512	/* threads making the calls of all at once */

/* What dump_ready() read of each process, by its index in the tree. */
struct sig_dump {
	struct rec_sighand **hand;
};

/* One thread of the pool and the process whose actions it reads. */
struct act_caller {
	struct remote *rm;
	struct cpt_task *t;
	int *next;		/* the next signal of that process */
};

/* The threads of @t that may read its actions with others at once: the
 * main thread and those not under seccomp (whose calls go one at a
 * time anyway: remote_call_each()).  Returns how many were added. */
static int add_callers(struct cpt_task *t, int *next, struct act_caller *pool,
		       int room)
{
	int n = 0;

	if (room < 1)
		return 0;
	pool[n++] = (struct act_caller){ &t->rm, t, next };
	for (int i = 1; i < t->nr_threads && n < ACT_THREADS && n < room &&
	     !t->rm.seccomp; i++)
		if (!t->threads[i].rm->seccomp)
			pool[n++] = (struct act_caller){ t->threads[i].rm, t, next };
	return n;
}

/* Every sigaction of the processes in @pool, each into its own slot of
 * its scratch.  The threads of a process share the table
 * (CLONE_SIGHAND): its calls are spread over its threads, and all of
 * them are made at once (remote_call_each()), their stops overlapping;
 * a single-threaded process alone makes its 62 one after the other. */
static int read_actions(struct cpt_ctx *c, struct act_caller *pool, int np)
{
	struct remote *rms[ACT_POOL];
	long (*a)[6] = malloc(ACT_POOL * sizeof(*a)), res[ACT_POOL];
	int sigs[ACT_POOL], who[ACT_POOL], ret = 0;

	if (!a)
		return log_err(c->log, ENOMEM, "reading sigactions:");
	for (;;) {
		int m = 0;

		for (int i = 0; i < np; i++) {
			int *next = pool[i].next;

			while (*next == SIGKILL || *next == SIGSTOP)
				(*next)++;
			if (*next > NSIG_)
				continue;
			rms[m] = pool[i].rm;
			a[m][0] = *next;
			a[m][1] = 0;
			a[m][2] = pool[i].t->scratch +
				  (*next - 1) * sizeof(struct rec_sigaction);
			a[m][3] = 8;
			a[m][4] = a[m][5] = 0;
			who[m] = i;
			sigs[m++] = (*next)++;
		}
		if (!m)
			break;
		ret = remote_call_each(rms, m, SYS_rt_sigaction,
				       (const long (*)[6])a, res);
		for (int i = 0; i < m && !ret; i++)
			if (res[i] < 0 && res[i] > -4096)
				ret = log_err(c->log, (int)-res[i], "pid %d: rt_sigaction(%d):",
					      pool[who[i]].t->pid, sigs[i]);
		if (ret)
			break;
	}
	free(a);
	return ret;
}

/* The table read back at once from @t's scratch: one read, not 62. */
static int fetch_hand(struct cpt_ctx *c, struct cpt_task *t,
		      struct rec_sighand *h)
{
	int ret = remote_read(&t->rm, t->scratch, h, sizeof(*h));

	memset(&h->act[SIGKILL - 1], 0, sizeof(h->act[0]));
	memset(&h->act[SIGSTOP - 1], 0, sizeof(h->act[0]));
	return ret;
}

/* The tables of processes [@from, @to) whose threads are in @pool, read
 * and kept: a process taken into the pool has its next signal set. */
static int read_batch(struct cpt_ctx *c, struct sig_dump *s, struct act_caller *pool,
		      int np, const int *next, int from, int to)
{
	int ret = np ? read_actions(c, pool, np) : 0;

	for (int j = from; j < to && !ret; j++) {
		if (!next[j])
			continue;
		s->hand[j] = malloc(sizeof(*s->hand[j]));
		ret = !s->hand[j] ? log_err(c->log, ENOMEM, "sigactions:") :
		      fetch_hand(c, c->tasks[j], s->hand[j]);
	}
	return ret;
}

/* @t's actions read by its runner page (runner.h), in a
 * stop a batch: 1 where it has none (read as below, two stops each). */
static int runner_actions(struct cpt_ctx *c, struct cpt_task *t,
			  struct rec_sighand **out)
{
	uint64_t table = t->scratch + sizeof(struct rec_sighand);
	int ret, r;

	if (t->scratch_len < sizeof(struct rec_sighand) + REMOTE_BATCH_BYTES ||
	    !t->rm.runner)
		return 1;
	ret = remote_batch_begin(&t->rm, table);
	for (int sig = 1; sig <= NSIG_ && !ret; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			ret = rcheck(&t->rm, NULL, "rt_sigaction", SYS_rt_sigaction, sig, 0,
				     t->scratch + (sig - 1) * sizeof(struct rec_sigaction), 8);
	r = remote_batch_end(&t->rm, !ret);
	ret = ret ? ret : r;
	if (ret)
		return ret;
	*out = malloc(sizeof(**out));
	if (!*out)
		return log_err(c->log, ENOMEM, "sigactions:");
	return fetch_hand(c, t, *out);
}

/* The actions of every process of the tree, read at once, before the
 * dumps: a tree of 100 processes makes 62 rounds of calls, not 6200
 * calls one after the other.  Those under seccomp are left to their own
 * dump (their calls go one at a time anyway). */
static int sig_dump_ready(struct cpt_ctx *c)
{
	struct sig_dump *s = kind_dump_state(c, &kind_signals);
	struct act_caller *pool = calloc(ACT_POOL, sizeof(*pool));
	int *next = calloc(c->nr_tasks, sizeof(*next));
	int ret = 0, np = 0, first = 0;

	s->hand = calloc(c->nr_tasks, sizeof(*s->hand));
	if (!pool || !next || !s->hand) {
		free(pool);
		free(next);
		return log_err(c->log, ENOMEM, "reading sigactions:");
	}
	for (int i = 0; i < c->nr_tasks && !ret; i++) {
		struct cpt_task *t = c->tasks[i];

		if (t->zombie || t->rm.seccomp || t->scratch_len < sizeof(struct rec_sighand))
			continue;
		ret = runner_actions(c, t, &s->hand[i]);
		if (ret <= 0)
			continue;
		ret = 0;
		if (np == ACT_POOL) {	/* full: read, then go on */
			ret = read_batch(c, s, pool, np, next, first, i);
			np = 0;
			first = i;
		}
		next[i] = 1;
		np += add_callers(t, &next[i], pool + np, ACT_POOL - np);
	}
	if (!ret)
		ret = read_batch(c, s, pool, np, next, first, c->nr_tasks);
	free(pool);
	free(next);
	return ret;
}

static void sig_dump_free(struct cpt_ctx *c, void *state)
{
	struct sig_dump *s = state;

	for (int i = 0; s->hand && i < c->nr_tasks; i++)
		free(s->hand[i]);
	free(s->hand);
}

static int dump_hand(struct cpt_ctx *c, struct cpt_task *t)
{
	struct sig_dump *s = kind_dump_state(c, &kind_signals);
	long i = id_find(&c->pids, t->pid);
	struct act_caller pool[ACT_THREADS];
	struct rec_sighand h;
	int next = 1, ret;

	if (s->hand && i >= 0 && s->hand[i])
		return iw_record(&c->w, REC_SIGHAND, s->hand[i], sizeof(h));
	if (t->scratch_len < sizeof(h))
		return log_err(c->log, ENOSPC, "pid %d: scratch too small for sigactions",
			       t->pid);
	/* under seccomp: read here, its calls one at a time */
	ret = read_actions(c, pool, add_callers(t, &next, pool, ACT_THREADS));
	if (!ret)
		ret = fetch_hand(c, t, &h);
	return ret ? ret : iw_record(&c->w, REC_SIGHAND, &h, sizeof(h));
}

/* The queue, a batch at a time (one signal per call is quadratic: the
 * kernel walks the queue to the offset each time). */
static int peek_sigqueue(struct cpt_ctx *c, pid_t tid, bool shared,
			 struct rec_siginfo **out, uint32_t *n)
{
	enum { BATCH = 256 };
	struct peeksiginfo_args_ a = {
		.flags = shared ? PEEKSIGINFO_SHARED : 0,
		.nr = BATCH,
	};
	siginfo_t *si = malloc(BATCH * sizeof(*si));
	uint32_t cap = *n;
	int ret = 0;

	if (!si)
		return log_err(c->log, ENOMEM, "pending signals:");
	for (;;) {
		long k = ptrace(PTRACE_PEEKSIGINFO, tid, &a, si);

		if (k < 0) {
			ret = log_err(c->log, errno, "tid %d: PTRACE_PEEKSIGINFO:", tid);
			break;
		}
		if (k == 0)
			break;
		if (*n + (uint64_t)k > MAX_PENDING) {
			ret = log_err(c->log, E2BIG, "tid %d: more than %u pending signals",
				      tid, (unsigned)MAX_PENDING);
			break;
		}
		if (*n + k > cap) {
			struct rec_siginfo *p;

			cap = (*n + k) * 2;
			p = realloc(*out, cap * sizeof(**out));
			if (!p) {
				ret = log_err(c->log, ENOMEM, "pending signals:");
				break;
			}
			*out = p;
		}
		for (long i = 0; i < k; i++) {
			memset(&(*out)[*n], 0, sizeof(**out));
			(*out)[*n].shared = shared;
			memcpy((*out)[*n].info, &si[i], sizeof(si[i]));
			(*n)++;
		}
		a.off += k;
	}
	free(si);
	return ret;
}

static int write_pending(struct cpt_ctx *c, struct rec_siginfo *p, uint32_t n)
{
	int ret = n ? iw_record(&c->w, REC_SIGPENDING, p, n * sizeof(*p)) : 0;

	free(p);
	return ret;
}

static int sig_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_siginfo *p = NULL;
	uint32_t n = 0;
	int ret = dump_hand(c, t);

	if (!ret)
		ret = peek_sigqueue(c, t->pid, true, &p, &n);
	if (ret) {
		free(p);
		return ret;
	}
	return write_pending(c, p, n);
}

static int sig_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			   struct cpt_thread *th)
{
	struct rec_siginfo *p = NULL;
	uint32_t n = 0;
	int ret = peek_sigqueue(c, th->tid, false, &p, &n);

	/* signals caught mid-delivery when we stopped it are still due */
	for (int i = 0; i < th->rm->nr_stolen && !ret; i++) {
		void *q = realloc(p, (n + 1) * sizeof(*p));

		if (!q) {
			ret = log_err(c->log, ENOMEM, "pending signals:");
			break;
		}
		p = q;
		memset(&p[n], 0, sizeof(p[0]));
		memcpy(p[n].info, &th->rm->stolen[i], sizeof(siginfo_t));
		n++;
	}
	if (ret) {
		free(p);
		return ret;
	}
	return write_pending(c, p, n);
}

static int load_pending(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	const struct rec_siginfo *e = r->data;
	uint32_t n = r->data_len / sizeof(*e);
	struct pending *pd;

	if (r->data_len % sizeof(*e) || n == 0 || n > MAX_PENDING)
		return log_err(c->log, EBADMSG, "bad SIGPENDING record");
	pd = e[0].shared ? &((struct sig_state *)kind_state(t, &kind_signals,
							     sizeof(struct sig_state)))->pend
			 : kind_thread_state(t, &kind_signals, sizeof(*pd));
	if (!pd || pd->e)
		return log_err(c->log, EBADMSG,
			       "SIGPENDING out of place (repeated, or before its THREAD)");
	for (uint32_t i = 0; i < n; i++) {
		siginfo_t si;

		memcpy(&si, e[i].info, sizeof(si));
		if (si.si_signo < 1 || si.si_signo > NSIG_ || e[i].shared != e[0].shared ||
		    e[i].shared > 1 || e[i].reserved)
			return log_err(c->log, EBADMSG, "SIGPENDING: bad signal %d",
				       si.si_signo);
	}
	pd->e = r->data;
	pd->n = n;
	r->data = NULL;
	return 0;
}

static int sig_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct sig_state *s = kind_state(t, &kind_signals, sizeof(*s));

	if (!s)
		return log_err(c->log, ENOMEM, "signal state:");
	if (r->type == REC_SIGPENDING)
		return load_pending(c, t, r);
	if (r->data_len != sizeof(s->hand) || s->have_hand)
		return log_err(c->log, EBADMSG, "bad or repeated SIGHAND record");
	memcpy(&s->hand, r->data, sizeof(s->hand));
	for (int i = 0; i < NSIG_; i++)
		if (s->hand.act[i].flags & ~(uint64_t)SA_KNOWN)
			return log_err(c->log, EBADMSG,
				       "SIGHAND: signal %d has unknown flags 0x%llx",
				       i + 1, (unsigned long long)s->hand.act[i].flags);
		else if (task_ia32(t) && (s->hand.act[i].handler >= ARCH_COMPAT_LIMIT ||
					  s->hand.act[i].restorer >= ARCH_COMPAT_LIMIT))
			return log_err(c->log, EBADMSG,
				       "SIGHAND: signal %d: handler beyond a 32-bit process's 4 GiB",
				       i + 1);
	s->have_hand = true;
	return 0;
}

static int sig_check(struct rst_ctx *c, struct rst_task *t)
{
	struct sig_state *s = KSTATE(t, kind_signals);

	if (!s || !s->have_hand)
		return log_err(c->log, EBADMSG, "pid %d: image has no SIGHAND record",
			       t->pid);
	return 0;
}

static bool take_timer(struct pending *pd, int id, int signo)
{
	for (uint32_t i = 0; pd && i < pd->n; i++) {
		siginfo_t si;

		memcpy(&si, pd->e[i].info, sizeof(si));
		if (si.si_code != SI_TIMER || si.si_signo != signo || si.si_timerid != id)
			continue;
		memmove(&pd->e[i], &pd->e[i + 1], (pd->n - i - 1) * sizeof(pd->e[0]));
		pd->n--;
		return true;
	}
	return false;
}

bool sig_take_timer(struct rst_task *t, int id, int signo)
{
	struct sig_state *s = KSTATE(t, kind_signals);

	/* an ignored signal queued now, before its disposition is set,
	 * would be dropped by it: such a one is queued after, as saved */
	if (!s || signo < 1 || signo > NSIG_ ||
	    s->hand.act[signo - 1].handler == (uint64_t)SIG_IGN)
		return false;
	if (take_timer(&s->pend, id, signo))
		return true;
	for (int j = 0; j < t->nr_threads; j++)
		if (take_timer(KTSTATE(&t->threads[j], kind_signals), id, signo))
			return true;
	return false;
}

/* Queued by the thread to itself: the kernel allows any si_code for that.
 * All signals stay blocked until the task is released. */
static int queue_pending(struct rst_task *t, struct remote *rm, pid_t tid,
			 const struct pending *pd)
{
	uint64_t addr;
	int ret = 0;

	for (uint32_t i = 0; pd && i < pd->n && !ret; i++) {
		int signo;

		memcpy(&signo, pd->e[i].info, sizeof(signo));
		if (signo == SIGCONT)	/* the SIGSTOP of a one-stop call would drop it */
			rst_slow_calls(t);
		ret = rst_scratch_put(t, 0, pd->e[i].info, sizeof(pd->e[i].info), &addr);
		if (ret)
			break;
		if (pd->e[i].shared)
			ret = rcheck(rm, NULL, "rt_sigqueueinfo", SYS_rt_sigqueueinfo,
				     ns_tid_in(t, t->pid), signo, addr);
		else	/* (as its own pid namespace numbers them) */
			ret = rcheck(rm, NULL, "rt_tgsigqueueinfo", SYS_rt_tgsigqueueinfo,
				     ns_tid_in(t, t->pid), ns_tid_in(t, tid), signo, addr);
	}
	return ret;
}

static int sig_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct sig_state *s = KSTATE(t, kind_signals);
	uint64_t addr;
	int ret = 0;

	for (int sig = 1; sig <= NSIG_ && !ret; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (task_ia32(t)) {	/* its handlers get 32-bit frames */
			ret = ia32_sigaction(t, sig, &s->hand.act[sig - 1]);
			continue;
		}
		/* the one it has already: no call (most are) */
		if (c->puppet_act && !memcmp(&c->puppet_act->act[sig - 1],
					     &s->hand.act[sig - 1], sizeof(s->hand.act[0])))
			continue;
		ret = rst_scratch_put(t, 0, &s->hand.act[sig - 1],
				      sizeof(s->hand.act[0]), &addr);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "rt_sigaction", SYS_rt_sigaction,
				     sig, addr, 0, 8);
	}
	return ret ? ret : queue_pending(t, &t->rm, t->pid, &s->pend);
}

static int sig_restore_thread(struct rst_ctx *c, struct rst_task *t,
			      struct rst_thread *th)
{
	return queue_pending(t, th->rm, th->tid, KTSTATE(th, kind_signals));
}

static void pending_free(void *state)
{
	struct pending *pd = state;

	free(pd->e);
	free(pd);
}

static void sig_free(struct rst_task *t, void *state)
{
	struct sig_state *s = state;

	free(s->pend.e);
	free(s);
}

static void sig_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_SIGHAND) {
		const struct rec_sighand *h = r->data;
		uint64_t caught = 0, ignored = 0;

		for (int i = 0; i < NSIG_; i++) {
			if (h->act[i].handler == (uint64_t)SIG_IGN)
				ignored |= 1ULL << i;
			else if (h->act[i].handler != (uint64_t)SIG_DFL)
				caught |= 1ULL << i;
		}
		info_hex(o, "caught", caught);
		info_hex(o, "ignored", ignored);
	} else {
		info_u64(o, "signals", r->data_len / sizeof(struct rec_siginfo));
	}
}

static const struct rec_desc signals_recs[] = {
	{ REC_SIGHAND, "SIGHAND", sizeof(struct rec_sighand) },
	{ REC_SIGPENDING, "SIGPENDING", 0 },
	{ 0 }
};

const struct kind_ops kind_signals = {
	.name = "signals",
	.recs = signals_recs,
	.phase = PHASE_STATE,
	.rst_batch = true,
	.dump = sig_dump,
	.dump_thread = sig_dump_thread,
	.dump_ready = sig_dump_ready,
	.dump_size = sizeof(struct sig_dump),
	.dump_free = sig_dump_free,
	.load = sig_load,
	.check = sig_check,
	.restore = sig_restore,
	.restore_thread = sig_restore_thread,
	.free = sig_free,
	.free_thread = pending_free,
	.show = sig_show,
};
