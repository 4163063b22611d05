/* task.c - process identity (TASK) and per-thread fields (THREAD):
 * comm, personality, clear_child_tid, rseq, sigaltstack, blocked mask,
 * AMX permission.  set_child_tid is consumed by the kernel when a thread
 * starts and has no effect later, so (unlike the seed) it is not kept. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kinds.h"
#include "task.h"

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif

struct rseq_cfg {
	uint64_t ptr;
	uint32_t len, sig, flags, pad;
};

static int stat_fields(pid_t pid, struct rec_task *t)
{
	unsigned long long f[PROC_STAT_FIELDS];
	int ret = proc_stat(pid, NULL, f);

	if (ret)
		return ret;
	t->ppid = f[4];
	t->pgid = f[5];
	t->sid = f[6];
	t->exit_signal = f[38];
	return 0;
}

/* What a thread's remote calls answer, in its slot of the scratch. */
struct thread_got {
	uint64_t tid_address;	/* PR_GET_TID_ADDRESS */
	stack_t ss;		/* sigaltstack */
	int pdeathsig;		/* PR_GET_PDEATHSIG, procattr's (task.h) */
	uint64_t slack;		/* PR_GET_TIMERSLACK's result, procmore's */
};

/* What task_dump() asked for the THREAD records of its process: the
 * AMX permission (ARCH_GET_XCOMP_PERM), which the kernel keeps in the
 * group leader, one for every thread; and each thread's answers, asked
 * of all the threads at once (thread_calls()). */
struct task_cpt {
	pid_t pid;		/* of the process asked last */
	bool set;		/* the permission call succeeded */
	uint64_t perm;
	struct thread_got *got;	/* by index in its threads */
	int nr_got;
};

static int xcomp_perm(struct cpt_ctx *c, struct cpt_task *t)
{
	struct task_cpt *s = kind_dump_state(c, &kind_task);

	s->pid = t->pid;
	return arch_xcomp_get(&t->rm, t->scratch, &s->perm, &s->set);
}

/* One call by every thread of @t, each with @a0 and its own slot of
 * the scratch (slot @first + i for thread @first + i) as @a1, + @off;
 * a failure names @what. */
static int each_thread(struct cpt_ctx *c, struct cpt_task *t, int first, int n,
		       const char *what, long nr, long a0, size_t off,
		       struct remote **rms, long (*a)[6], long *res)
{
	int ret;

	for (int i = 0; i < n; i++) {
		rms[i] = t->threads[first + i].rm;
		a[i][0] = a0;
		a[i][1] = t->scratch + i * sizeof(struct thread_got) + off;
		a[i][2] = a[i][3] = a[i][4] = a[i][5] = 0;
	}
	ret = remote_call_each(rms, n, nr, (const long (*)[6])a, res);
	for (int i = 0; i < n && !ret; i++)
		if (res[i] < 0 && res[i] > -4096)
			ret = log_err(c->log, (int)-res[i], "tid %d: %s:", rms[i]->pid, what);
	return ret;
}

/* Every thread's clear_child_tid, sigaltstack, parent-death signal and
 * timer slack, its calls made by all
 * the threads at once (their stops overlap: a 64-thread process paid 128
 * calls' round trips one after the other), as many threads at a time
 * as the scratch has slots for their answers. */
static int thread_calls(struct cpt_ctx *c, struct cpt_task *t)
{
	struct task_cpt *s = kind_dump_state(c, &kind_task);
	int per = t->scratch_len / sizeof(struct thread_got), n = t->nr_threads, ret = 0;
	struct remote **rms = malloc((per < n ? per : n) * sizeof(*rms));
	long (*a)[6] = malloc((per < n ? per : n) * sizeof(*a));
	long *res = malloc((per < n ? per : n) * sizeof(*res));

	free(s->got);
	s->got = calloc(n, sizeof(*s->got));
	s->nr_got = n;
	if (!rms || !a || !res || !s->got)
		ret = log_err(c->log, ENOMEM, "pid %d: thread table:", t->pid);
	for (int first = 0; first < n && !ret; first += per) {
		int m = n - first < per ? n - first : per;

		ret = each_thread(c, t, first, m, "prctl(PR_GET_TID_ADDRESS)", SYS_prctl,
				  PR_GET_TID_ADDRESS, 0, rms, a, res);
		if (!ret)
			ret = each_thread(c, t, first, m, "sigaltstack", SYS_sigaltstack, 0,
					  offsetof(struct thread_got, ss), rms, a, res);
		if (!ret)
			ret = each_thread(c, t, first, m, "prctl(PR_GET_PDEATHSIG)", SYS_prctl,
					  PR_GET_PDEATHSIG, offsetof(struct thread_got, pdeathsig),
					  rms, a, res);
		if (!ret)
			ret = remote_read(&t->rm, t->scratch, &s->got[first],
					  m * sizeof(*s->got));
		if (!ret)
			ret = each_thread(c, t, first, m, "prctl(PR_GET_TIMERSLACK)", SYS_prctl,
					  PR_GET_TIMERSLACK, 0, rms, a, res);
		for (int i = 0; i < m && !ret; i++)
			s->got[first + i].slack = res[i];
	}
	free(rms);
	free(a);
	free(res);
	return ret;
}

static void task_dump_free(struct cpt_ctx *c, void *state)
{
	struct task_cpt *s = state;

	free(s->got);
}

/* What thread_calls() got of @th, asked with its process. */
static int got_of(struct cpt_ctx *c, const struct cpt_task *t,
		  const struct cpt_thread *th, struct thread_got *got)
{
	struct task_cpt *s = kind_dump_state(c, &kind_task);
	long idx = th - t->threads;

	if (s->pid != t->pid || idx < 0 || idx >= s->nr_got)
		return log_err(c->log, EINVAL, "tid %d: not asked with its process", th->tid);
	*got = s->got[idx];
	return 0;
}

static int task_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			    struct cpt_thread *thr)
{
	struct task_cpt *s = kind_dump_state(c, &kind_task);
	struct rec_thread th = { .tid = thr->tid, .sigmask = thr->rm->sigmask };
	struct rseq_cfg rs = { 0 };
	char name[64], *comm;
	struct thread_got got = { 0 };
	int ret = got_of(c, t, thr, &got);

	if (ret)
		return ret;
	th.clear_child_tid = got.tid_address;
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, thr->tid, sizeof(rs), &rs) < 0)
		return log_err(c->log, errno, "tid %d: rseq configuration:", thr->tid);
	th.rseq_ptr = rs.ptr;
	th.rseq_len = rs.len;
	th.rseq_sig = rs.sig;
	th.rseq_flags = rs.flags;
	th.ss_sp = (uint64_t)got.ss.ss_sp;
	th.ss_size = got.ss.ss_size;
	th.ss_flags = got.ss.ss_flags;
	if (s->pid == t->pid && s->set) {
		th.xcomp_perm_set = 1;
		th.xcomp_perm = s->perm;
	}
	snprintf(name, sizeof(name), "task/%d/comm", thr->tid);
	ret = proc_read(t->pid, name, &comm, NULL);
	if (ret)
		return log_err(c->log, -ret, "tid %d: reading comm:", thr->tid);
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(th.comm, sizeof(th.comm), "%s", comm);
	free(comm);
	return iw_record(&c->w, REC_THREAD, &th, sizeof(th));
}

int task_pdeathsig(struct cpt_ctx *c, const struct cpt_task *t,
		   const struct cpt_thread *th, int *sig)
{
	struct thread_got got = { 0 };
	int ret = got_of(c, t, th, &got);

	if (!ret)
		*sig = got.pdeathsig;
	return ret;
}

int task_timerslack(struct cpt_ctx *c, const struct cpt_task *t,
		    const struct cpt_thread *th, uint64_t *ns)
{
	struct thread_got got = { 0 };
	int ret = got_of(c, t, th, &got);

	if (!ret)
		*ns = got.slack;
	return ret;
}

/* A SIGSTOP one of its threads took while ckpt worked (see
 * steal_signal()) stops the whole process. */
static bool stopped_thread(const struct cpt_task *t)
{
	for (int i = 0; i < t->nr_threads; i++)
		if (t->threads[i].rm->group_stop)
			return true;
	return false;
}

static int task_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_task rt = { .pid = t->pid, .nr_threads = t->nr_threads };
	uint32_t sub = 0;
	char *s;
	int ret;

	ret = stat_fields(t->pid, &rt);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading stat:", t->pid);
	ret = proc_read(t->pid, "comm", &s, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading comm:", t->pid);
	s[strcspn(s, "\n")] = '\0';
	snprintf(rt.comm, sizeof(rt.comm), "%s", s);
	free(s);
	if (t->zombie) {
		rt.flags = TASK_ZOMBIE;
		rt.exit_code = t->exit_code;
		return iw_record(&c->w, REC_TASK, &rt, sizeof(rt));
	}
	if (t->rm.group_stop || stopped_thread(t)) {
		rt.flags |= TASK_STOPPED;
		rt.stop_sig = t->rm.group_stop ? t->rm.stop_sig : SIGSTOP;
	}
	ret = xcomp_perm(c, t);
	if (!ret)
		ret = thread_calls(c, t);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "prctl(PR_GET_CHILD_SUBREAPER)", SYS_prctl,
		     PR_GET_CHILD_SUBREAPER, t->scratch);
	if (!ret)
		ret = remote_read(&t->rm, t->scratch, &sub, sizeof(sub));
	if (ret)
		return ret;
	if (sub)
		rt.flags |= TASK_SUBREAPER;
	if (t->shares_files)
		rt.flags |= TASK_SHARES_FILES;
	if (t->shares_fs)
		rt.flags |= TASK_SHARES_FS;
	if (t->shares_vm)
		rt.flags |= TASK_SHARES_VM;
	if (t->shares_sighand)
		rt.flags |= TASK_SHARES_SIGHAND;
	ret = proc_read(t->pid, "personality", &s, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading personality:", t->pid);
	rt.personality = strtoul(s, NULL, 16);
	free(s);
	return iw_record(&c->w, REC_TASK, &rt, sizeof(rt));
}

/* restart.c has added the thread to the model; this checks and keeps
 * its fields. */
static int task_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct rec_thread *s = kind_thread_state(t, &kind_task, sizeof(*s));
	const struct rec_thread *th = r->data;
	int ret;

	if (!s)
		return log_err(c->log, ENOMEM, "thread state:");
	ret = rec_want(c->log, r, sizeof(*th), "THREAD");
	if (ret)
		return ret;
	if (r->data_len != sizeof(*th) || th->tid < 1 ||
	    (t->nr_threads == 1) != (th->tid == (uint32_t)t->pid))
		return log_err(c->log, EBADMSG,
			       "THREAD record %llu: bad tid %u (the main thread %d comes first)",
			       (unsigned long long)r->index, th->tid, t->pid);
	if (th->ss_flags & ~(uint32_t)(SS_ONSTACK | SS_DISABLE | SS_AUTODISARM))
		return log_err(c->log, EBADMSG, "THREAD: bad sigaltstack flags 0x%x",
			       th->ss_flags);
	if (th->rseq_ptr && (th->rseq_len < 32 || th->rseq_len > 4096))
		return log_err(c->log, EBADMSG, "THREAD: bad rseq length %u",
			       th->rseq_len);
	if (!memchr(th->comm, '\0', sizeof(th->comm)) || th->xcomp_perm_set > 1)
		return log_err(c->log, EBADMSG, "THREAD: bad comm or flags");
	*s = *th;
	return 0;
}

static int task_check(struct rst_ctx *c, struct rst_task *t)
{
	if (t->nr_threads != (int)t->t.nr_threads)
		return log_err(c->log, EBADMSG, "pid %d: TASK says %u threads, image has %d",
			       t->pid, t->t.nr_threads, t->nr_threads);
	for (int i = 0; i < t->nr_threads; i++)
		if (!KTSTATE(&t->threads[i], kind_task))
			return log_err(c->log, EBADMSG, "tid %d: no THREAD record",
				       t->threads[i].tid);
	return 0;
}

static int task_restore(struct rst_ctx *c, struct rst_task *t)
{
	int ret = rcheck(&t->rm, NULL, "personality", SYS_personality,
			 t->t.personality);

	if (!ret && (t->t.flags & TASK_SUBREAPER))
		ret = rcheck(&t->rm, NULL, "prctl(PR_SET_CHILD_SUBREAPER)", SYS_prctl,
			     PR_SET_CHILD_SUBREAPER, 1);
	return ret;
}

static int task_restore_thread(struct rst_ctx *c, struct rst_task *t,
			       struct rst_thread *thr)
{
	const struct rec_thread *th = KTSTATE(thr, kind_task);
	struct remote *rm = thr->rm;
	uint64_t addr;
	int ret = 0;

	if (th->xcomp_perm_set)
		ret = arch_xcomp_set(t, rm, th->xcomp_perm);
	if (!ret)
		ret = rcheck(rm, NULL, "set_tid_address", SYS_set_tid_address,
			     th->clear_child_tid);
	if (!ret && th->rseq_ptr)
		ret = rcheck(rm, NULL, "rseq registration", SYS_rseq,
			     th->rseq_ptr, th->rseq_len, 0, th->rseq_sig);
	if (!ret) {
		stack_t ss = {
			.ss_sp = (void *)th->ss_sp,
			.ss_size = th->ss_size,
			/* on-stack is a state the kernel derives from sp */
			.ss_flags = th->ss_flags & ~SS_ONSTACK,
		};
		ret = rst_scratch_put(t, 0, &ss, sizeof(ss), &addr);
		if (!ret)
			ret = rcheck(rm, NULL, "sigaltstack", SYS_sigaltstack,
				     addr, 0);
	}
	if (!ret)
		ret = rst_scratch_put(t, 0, th->comm, sizeof(th->comm), &addr);
	if (!ret)
		ret = rcheck(rm, NULL, "prctl(PR_SET_NAME)", SYS_prctl,
			     PR_SET_NAME, addr);
	rm->sigmask = th->sigmask;
	return ret;
}

static void task_show(struct info_out *o, const struct rec *r)
{
	const struct rec_thread *th = r->data;

	info_u64(o, "tid", th->tid);
	info_str(o, "comm", th->comm);
	info_hex(o, "clear_child_tid", th->clear_child_tid);
	info_hex(o, "rseq", th->rseq_ptr);
	info_u64(o, "rseq_len", th->rseq_len);
	info_hex(o, "sigmask", th->sigmask);
	info_hex(o, "altstack", th->ss_sp);
	info_u64(o, "altstack_size", th->ss_size);
	if (th->xcomp_perm_set)
		info_hex(o, "xcomp_perm", th->xcomp_perm);
}

static const struct rec_desc task_recs[] = {
	{ REC_THREAD, "THREAD", sizeof(struct rec_thread) },
	{ 0 }
};

const struct kind_ops kind_task = {
	.name = "task",
	.recs = task_recs,
	.phase = PHASE_STATE,
	.rst_batch = true,
	.dump = task_dump,
	.dump_thread = task_dump_thread,
	.dump_size = sizeof(struct task_cpt),
	.dump_free = task_dump_free,
	.load = task_load,
	.check = task_check,
	.restore = task_restore,
	.restore_thread = task_restore_thread,
	.show = task_show,
};
