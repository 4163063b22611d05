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

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define ARCH_GET_XCOMP_PERM	0x1022
#define ARCH_REQ_XCOMP_PERM	0x1023
#define XFEATURE_XTILEDATA	18

struct rseq_cfg {
	uint64_t ptr;
	uint32_t len, sig, flags, pad;
};

struct task_state {
	bool have_thread;
	struct rec_thread th;
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

static int task_dump_thread(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_thread th = { .tid = t->pid, .sigmask = t->rm.sigmask };
	struct rseq_cfg rs = { 0 };
	stack_t ss;
	uint64_t addr, val;
	long res;
	int ret;

	ret = rcheck(&t->rm, NULL, "prctl(PR_GET_TID_ADDRESS)", SYS_prctl,
		     PR_GET_TID_ADDRESS, t->scratch);
	if (!ret)
		ret = remote_read(&t->rm, t->scratch, &th.clear_child_tid, 8);
	if (ret)
		return ret;
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, t->pid, sizeof(rs), &rs) < 0)
		return log_err(c->log, errno, "pid %d: rseq configuration:", t->pid);
	th.rseq_ptr = rs.ptr;
	th.rseq_len = rs.len;
	th.rseq_sig = rs.sig;
	th.rseq_flags = rs.flags;
	addr = t->scratch;
	ret = rcheck(&t->rm, NULL, "sigaltstack", SYS_sigaltstack, 0, addr);
	if (!ret)
		ret = remote_read(&t->rm, addr, &ss, sizeof(ss));
	if (ret)
		return ret;
	th.ss_sp = (uint64_t)ss.ss_sp;
	th.ss_size = ss.ss_size;
	th.ss_flags = ss.ss_flags;
	ret = remote_call(&t->rm, &res, SYS_arch_prctl, ARCH_GET_XCOMP_PERM,
			  addr, 0, 0, 0, 0);
	if (ret)
		return ret;
	if (res == 0 && !remote_read(&t->rm, addr, &val, 8)) {
		th.xcomp_perm_set = 1;
		th.xcomp_perm = val;
	}
	return iw_record(&c->w, REC_THREAD, &th, sizeof(th));
}

static int task_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_task rt = { .pid = t->pid, .nr_threads = 1 };
	char *s;
	int ret;

	ret = stat_fields(t->pid, &rt);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading stat:", t->pid);
	if (t->rm.group_stop)
		rt.flags |= TASK_STOPPED;
	ret = proc_read(t->pid, "comm", &s, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading comm:", t->pid);
	s[strcspn(s, "\n")] = '\0';
	snprintf(rt.comm, sizeof(rt.comm), "%s", s);
	free(s);
	ret = proc_read(t->pid, "personality", &s, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading personality:", t->pid);
	rt.personality = strtoul(s, NULL, 16);
	free(s);
	ret = iw_record(&c->w, REC_TASK, &rt, sizeof(rt));
	return ret ? ret : task_dump_thread(c, t);
}

static int task_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct task_state *s = kind_state(t, &kind_task, sizeof(*s));
	const struct rec_thread *th = r->data;
	int ret;

	if (!s)
		return log_err(c->log, ENOMEM, "task state:");
	ret = rec_want(c->log, r, sizeof(*th), "THREAD");
	if (ret)
		return ret;
	if (s->have_thread)
		return log_err(c->log, EBADMSG,
			       "pid %d: more than one THREAD (multi-threaded images are not supported yet)",
			       t->pid);
	if (th->tid != (uint32_t)t->pid)
		return log_err(c->log, EBADMSG, "THREAD tid %u in task %d",
			       th->tid, t->pid);
	if (th->ss_flags & ~(uint32_t)(SS_ONSTACK | SS_DISABLE | SS_AUTODISARM))
		return log_err(c->log, EBADMSG, "THREAD: bad sigaltstack flags 0x%x",
			       th->ss_flags);
	if (th->rseq_ptr && (th->rseq_len < 32 || th->rseq_len > 4096))
		return log_err(c->log, EBADMSG, "THREAD: bad rseq length %u",
			       th->rseq_len);
	s->th = *th;
	s->have_thread = true;
	return 0;
}

static int task_check(struct rst_ctx *c, struct rst_task *t)
{
	struct task_state *s = t->kind_state[kind_index(&kind_task)];

	if (!s || !s->have_thread)
		return log_err(c->log, EBADMSG, "pid %d: image has no THREAD record",
			       t->pid);
	return 0;
}

static int restore_thread(struct rst_task *t, const struct rec_thread *th)
{
	struct remote *rm = &t->rm;
	uint64_t addr;
	int ret = 0;

	if (th->xcomp_perm_set && (th->xcomp_perm & (1ULL << XFEATURE_XTILEDATA))) {
		ret = rcheck(rm, NULL, "arch_prctl(ARCH_REQ_XCOMP_PERM)",
			     SYS_arch_prctl, ARCH_REQ_XCOMP_PERM,
			     XFEATURE_XTILEDATA);
		/* ptrace cannot load tile data into the small xstate buffer a
		 * task has until it first touches AMX: make it touch it */
		rm->sc_ip = t->tramp + TRAMP_AMX;
		if (!ret)
			ret = rcheck(rm, NULL, "first AMX use", SYS_getpid, 0);
		rm->sc_ip = t->tramp;
	}
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
	rm->sigmask = th->sigmask;
	return ret;
}

static int task_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct task_state *s = t->kind_state[kind_index(&kind_task)];
	uint64_t addr;
	int ret;

	(void)c;
	ret = rcheck(&t->rm, NULL, "personality", SYS_personality,
		     t->t.personality);
	if (!ret)
		ret = rst_scratch_put(t, 0, t->t.comm, sizeof(t->t.comm), &addr);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "prctl(PR_SET_NAME)", SYS_prctl,
			     PR_SET_NAME, addr);
	return ret ? ret : restore_thread(t, &s->th);
}

static void task_show(struct info_out *o, const struct rec *r)
{
	const struct rec_thread *th = r->data;


		info_u64(o, "tid", th->tid);
		info_hex(o, "clear_child_tid", th->clear_child_tid);
		info_hex(o, "rseq", th->rseq_ptr);
		info_u64(o, "rseq_len", th->rseq_len);
		info_hex(o, "sigmask", th->sigmask);
		info_hex(o, "altstack", th->ss_sp);
	info_u64(o, "altstack_size", th->ss_size);
	if (th->xcomp_perm_set)
		info_hex(o, "xcomp_perm", th->xcomp_perm);
}

const struct kind_ops kind_task = {
	.name = "task",
	.types = { REC_THREAD },
	.phase = PHASE_STATE,
	.dump = task_dump,
	.load = task_load,
	.check = task_check,
	.restore = task_restore,
	.show = task_show,
};
