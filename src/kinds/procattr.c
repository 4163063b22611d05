/* procattr.c - per-process and per-thread attributes (PROCATTR,
 * THREAD_ATTR): oom_score_adj, loginuid, transparent huge pages
 * disabled, dumpable, membarrier registrations; each thread's
 * parent-death signal, scheduling (policy, priority, nice) and robust
 * futex list.
 *
 * Two kinds, for the order: kind_procattr, before seccomp and creds,
 * sets what needs the puppet's privilege (loginuid needs
 * CAP_AUDIT_CONTROL in the task itself), and kind_procattr_late, after
 * creds, what a credential change resets: the dumpable flag and the
 * parent-death signal (commit_creds clears both).  oom_score_adj and
 * the scheduling attributes ckpt sets from outside, with its own
 * privilege: oom_score_adj below ckpt's own needs CAP_SYS_RESOURCE,
 * which a container's root lacks, and is refused before any process is
 * made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kinds.h"
#include "task.h"
#include "../pin.h"

#define CAP_SYS_RESOURCE_BIT	24
#define CAP_AUDIT_CONTROL_BIT	30
#define THP_EXCEPT_ADVISED	2	/* PR_THP_DISABLE_EXCEPT_ADVISED */
#define LOGINUID_UNSET		0xffffffffu
#define ROBUST_LEN		24	/* struct robust_list_head */
#define MEMBARRIER_GET_REGS	(1 << 9)	/* MEMBARRIER_CMD_GET_REGISTRATIONS */
/* the REGISTER_* commands: GLOBAL_EXPEDITED, PRIVATE_EXPEDITED, its
 * SYNC_CORE and RSEQ */
#define MEMBARRIER_REGS		((1 << 2) | (1 << 4) | (1 << 6) | (1 << 8))

struct pa_state {
	bool have;
	struct rec_procattr a;
};

struct pa_thread {
	bool have;
	struct rec_thread_attr a;
};

static int read_int(pid_t pid, const char *name, long long *v)
{
	char *buf, *end;
	int ret = proc_read(pid, name, &buf, NULL);

	if (ret)
		return ret;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	ret = errno || end == buf ? -EINVAL : 0;
	free(buf);
	return ret;
}

static int pa_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_procattr a = { 0 };
	long long oom, luid;
	long dumpable, thp, mb;
	int ret = read_int(t->pid, "oom_score_adj", &oom);

	if (ret)
		return log_err(c->log, -ret, "pid %d: oom_score_adj:", t->pid);
	if (read_int(t->pid, "loginuid", &luid))
		luid = LOGINUID_UNSET;	/* a kernel without audit */
	ret = rcheck(&t->rm, &dumpable, "prctl(PR_GET_DUMPABLE)", SYS_prctl,
		     PR_GET_DUMPABLE);
	if (!ret)
		ret = rcheck(&t->rm, &thp, "prctl(PR_GET_THP_DISABLE)", SYS_prctl,
			     PR_GET_THP_DISABLE, 0, 0, 0, 0);
	/* a kernel before 6.3 cannot say: none then */
	if (!ret)
		ret = rcall(&t->rm, &mb, SYS_membarrier, MEMBARRIER_GET_REGS, 0, 0);
	if (ret)
		return ret;
	a.membarrier = mb < 0 ? 0 : mb & MEMBARRIER_REGS;
	a.oom_score_adj = oom;
	a.loginuid = luid;
	a.dumpable = dumpable;
	a.thp_disable = thp;
	return iw_record(&c->w, REC_PROCATTR, &a, sizeof(a));
}

/* The thread's CPU mask, as long as the kernel's (its nr_cpu_ids). */
static int dump_cpus(struct cpt_ctx *c, pid_t tid)
{
	uint64_t mask[MAX_CPU_WORDS];
	long n = syscall(SYS_sched_getaffinity, tid, sizeof(mask), mask);

	if (n < 0)
		return log_err(c->log, errno, "tid %d: sched_getaffinity:", tid);
	/* a 32-bit kernel's longs: an odd count of 4-byte words */
	if (n % 8)
		memset((char *)mask + n, 0, 8 - n % 8);
	n = (n + 7) / 8 * 8;
	/* every CPU online is no choice of the thread's: restart gives it
	 * every CPU of the machine it runs on */
	if (!pin_restricted(mask, n))
		return 0;
	return iw_record(&c->w, REC_THREAD_CPUS, mask, n);
}

static int pa_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			  struct cpt_thread *thr)
{
	struct rec_thread_attr a = { 0 };
	struct sched_attr sa = { 0 };
	int sig, ret = task_pdeathsig(c, t, thr, &sig);

	if (ret)
		return ret;
	if (syscall(SYS_sched_getattr, thr->tid, &sa, sizeof(sa), 0))
		return log_err(c->log, errno, "tid %d: sched_getattr:", thr->tid);
	if (syscall(SYS_get_robust_list, thr->tid, &a.robust_list, &a.robust_len))
		return log_err(c->log, errno, "tid %d: get_robust_list:", thr->tid);
	a.pdeathsig = sig;
	a.policy = sa.sched_policy;
	a.flags = sa.sched_flags & SCHED_FLAG_RESET_ON_FORK;
	a.nice = sa.sched_nice;
	a.priority = sa.sched_priority;
	/* a fair task's runtime is its slice, the kernel's default unless
	 * set: only a deadline task's times are its own */
	if (sa.sched_policy == SCHED_DEADLINE) {
		a.runtime = sa.sched_runtime;
		a.deadline = sa.sched_deadline;
		a.period = sa.sched_period;
	}
	ret = iw_record(&c->w, REC_THREAD_ATTR, &a, sizeof(a));
	return ret ? ret : dump_cpus(c, thr->tid);
}

static int check_procattr(const struct rec_procattr *a)
{
	return a->oom_score_adj < -1000 || a->oom_score_adj > 1000 ||
	       a->dumpable > 2 || a->thp_disable > 3 || a->reserved ||
	       a->membarrier & ~MEMBARRIER_REGS ||
	       (a->thp_disable & THP_EXCEPT_ADVISED && !(a->thp_disable & 1));
}

static int check_sched(const struct rec_thread_attr *a)
{
	bool rt = a->policy == SCHED_FIFO || a->policy == SCHED_RR;

	if (a->pdeathsig > 64 || a->robust_len != ROBUST_LEN ||
	    a->flags & ~(uint64_t)SCHED_FLAG_RESET_ON_FORK ||
	    a->nice < -20 || a->nice > 19 || a->priority > 99 ||
	    rt != (a->priority != 0))
		return -1;
	switch (a->policy) {
	case SCHED_NORMAL: case SCHED_BATCH: case SCHED_IDLE:
	case SCHED_FIFO: case SCHED_RR:
		return a->runtime || a->deadline || a->period ? -1 : 0;
	case SCHED_DEADLINE:
		return !a->runtime || a->runtime > a->deadline ||
		       (a->period && a->deadline > a->period) ? -1 : 0;
	}
	return -1;
}

static bool cpus_bad(const uint64_t *w, size_t len)
{
	uint64_t any = 0;

	if (!len || len % 8 || len > MAX_CPU_WORDS * 8)
		return true;
	for (size_t i = 0; i < len / 8; i++)
		any |= w[i];
	return !any;
}

/* Kept with the thread (ctx.h): restart gives it when the thread is let
 * go, after the build that ran on one CPU (pin.c). */
static int load_cpus(struct rst_ctx *c, struct rst_task *t, const struct rec *r)
{
	struct rst_thread *th = t->nr_threads ? &t->threads[t->nr_threads - 1] : NULL;

	if (!th || th->cpus || cpus_bad(r->data, r->data_len))
		return log_err(c->log, EBADMSG,
			       "bad, repeated or misplaced THREAD_CPUS record");
	th->cpus = malloc(r->data_len);
	if (!th->cpus)
		return log_err(c->log, ENOMEM, "THREAD_CPUS:");
	memcpy(th->cpus, r->data, r->data_len);
	th->cpus_len = r->data_len;
	return 0;
}

static int pa_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	if (r->type == REC_PROCATTR) {
		struct pa_state *s = kind_state(t, &kind_procattr, sizeof(*s));

		if (!s)
			return log_err(c->log, ENOMEM, "procattr:");
		if (s->have || r->data_len != sizeof(s->a) || check_procattr(r->data))
			return log_err(c->log, EBADMSG, "bad or repeated PROCATTR record");
		s->a = *(const struct rec_procattr *)r->data;
		s->have = true;
		return 0;
	}
	if (r->type == REC_THREAD_CPUS)
		return load_cpus(c, t, r);
	struct pa_thread *th = t->nr_threads ? kind_thread_state(t, &kind_procattr,
								 sizeof(*th)) : NULL;

	if (!th || th->have || r->data_len != sizeof(th->a) || check_sched(r->data))
		return log_err(c->log, EBADMSG,
			       "bad, repeated or misplaced THREAD_ATTR record");
	th->a = *(const struct rec_thread_attr *)r->data;
	th->have = true;
	return 0;
}

static bool have_cap(int cap)
{
	uint64_t eff;

	return !proc_status_u64(getpid(), "CapEff", 16, &eff) &&
	       eff & (1ULL << cap);
}

/* The loginuid ckpt has is the puppet's; another needs ckpt's
 * CAP_AUDIT_CONTROL. */
static int check_loginuid(struct rst_ctx *c, struct rst_task *t, uint32_t v)
{
	long long own;

	if (read_int(getpid(), "loginuid", &own) || (uint32_t)own == v ||
	    have_cap(CAP_AUDIT_CONTROL_BIT))
		return 0;
	return log_err(c->log, EPERM,
		       "pid %d: cannot restore loginuid %u: ckpt's own is %u, and changing it needs CAP_AUDIT_CONTROL",
		       t->pid, v, (uint32_t)own);
}

/* Images of an older ckpt have neither record: nothing is set then.
 * A value below ckpt's own (which the puppet starts at) would be
 * refused with EACCES at restore: say so before anything is made. */
static int pa_check(struct rst_ctx *c, struct rst_task *t)
{
	struct pa_state *s = KSTATE(t, kind_procattr);
	long long own;
	int ret;

	if (!s || !c->here)
		return 0;
	ret = check_loginuid(c, t, s->a.loginuid);
	if (ret)
		return ret;
	if (read_int(getpid(), "oom_score_adj", &own) ||
	    s->a.oom_score_adj >= own || have_cap(CAP_SYS_RESOURCE_BIT))
		return 0;
	return log_err(c->log, EPERM,
		       "pid %d: cannot restore oom_score_adj %d: below ckpt's own %lld, and lowering it needs CAP_SYS_RESOURCE",
		       t->pid, s->a.oom_score_adj, own);
}

static int write_oom(struct rst_ctx *c, struct rst_task *t, int v)
{
	char path[64], val[16];
	int fd, n, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", t->rm.pid);
	n = snprintf(val, sizeof(val), "%d", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, n) != n)
		ret = log_err(c->log, errno,
			      "pid %d: cannot restore oom_score_adj %d:", t->pid, v);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Only the task itself may write its loginuid: /proc/thread-self. */
static int set_loginuid(struct rst_task *t, struct rst_thread *th, uint32_t v)
{
	static const char path[] = "/proc/thread-self/loginuid";
	char val[16], name[64];
	long long cur;
	uint64_t pa, va;
	long fd, res;
	int n = snprintf(val, sizeof(val), "%d", (int)v), ret;

	snprintf(name, sizeof(name), "task/%d/loginuid", th->rm->pid);
	if (read_int(t->rm.pid, name, &cur))
		cur = LOGINUID_UNSET;	/* a kernel without audit */
	if ((uint32_t)cur == v)
		return 0;	/* inherited from ckpt */
	ret = rst_scratch_put(t, 0, path, sizeof(path), &pa);
	if (!ret)
		ret = rst_scratch_put(t, 64, val, n, &va);
	if (!ret)
		ret = rcheck(th->rm, &fd, "open(/proc/thread-self/loginuid)",
			     SYS_openat, AT_FDCWD, pa, O_WRONLY);
	if (ret)
		return ret;
	ret = rcall(th->rm, &res, SYS_write, fd, va, n);
	if (!ret && res != n)
		ret = log_err(th->rm->log, res < 0 ? (int)-res : EIO,
			      "tid %d: restoring loginuid %u:", th->tid, v);
	rcall(th->rm, &fd, SYS_close, fd);
	return ret;
}

static int pa_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct pa_state *s = KSTATE(t, kind_procattr);
	int ret;

	if (!s)
		return 0;
	ret = write_oom(c, t, s->a.oom_score_adj);
	if (!ret && s->a.thp_disable)
		ret = rcheck(&t->rm, NULL, "prctl(PR_SET_THP_DISABLE)", SYS_prctl,
			     PR_SET_THP_DISABLE, 1,
			     s->a.thp_disable & THP_EXCEPT_ADVISED, 0, 0);
	for (int cmd = 1; cmd <= MEMBARRIER_REGS && !ret; cmd <<= 1)
		if (s->a.membarrier & cmd)
			ret = rcheck(&t->rm, NULL, "membarrier(REGISTER)", SYS_membarrier,
				     cmd, 0, 0);
	return ret;
}

/* From ckpt, with its CAP_SYS_NICE: before creds or after, the same. */
static int set_sched(struct rst_ctx *c, struct rst_thread *th,
		     const struct rec_thread_attr *a)
{
	struct sched_attr sa = {
		.size = sizeof(sa),
		.sched_policy = a->policy,
		.sched_flags = a->flags,
		.sched_nice = a->nice,
		.sched_priority = a->priority,
		.sched_runtime = a->runtime,
		.sched_deadline = a->deadline,
		.sched_period = a->period,
	};

	if (syscall(SYS_sched_setattr, th->rm->pid, &sa, 0))
		return log_err(c->log, errno,
			       "tid %d: restoring scheduling policy %u priority %u nice %d:",
			       th->tid, a->policy, a->priority, a->nice);
	return 0;
}

/* The thread's own CPU mask, or the caller's where it has none or none
 * of its CPUs is here: the build ran on one CPU (pin.c).  From ckpt,
 * while the thread has ckpt's ids. */
static int give_cpus(struct rst_ctx *c, struct rst_task *t, struct rst_thread *th)
{
	int ret = pin_release(&c->pin, th->tid, th->cpus, th->cpus_len);

	if (ret < 0)
		return log_err(c->log, -ret, "pid %d: tid %d: giving back its CPU mask:",
			       t->pid, th->tid);
	if (ret)
		log_warn(c->log, "pid %d: tid %d: none of the CPUs it was allowed is usable here: it runs on restart's own",
			 t->pid, th->tid);
	return 0;
}

static int pa_restore_thread(struct rst_ctx *c, struct rst_task *t,
			     struct rst_thread *th)
{
	struct pa_state *s = KSTATE(t, kind_procattr);
	struct pa_thread *ta = KTSTATE(th, kind_procattr);
	int ret = s ? set_loginuid(t, th, s->a.loginuid) : 0;

	if (!ret && ta && ta->a.robust_list)
		ret = rcheck(th->rm, NULL, "set_robust_list", SYS_set_robust_list,
			     ta->a.robust_list, ta->a.robust_len);
	/* the last of its remote calls on ckpt's CPU (the few after, creds
	 * and registers, wake it on its own) */
	if (!ret)
		ret = give_cpus(c, t, th);
	return ret || !ta || !ta->have ? ret : set_sched(c, th, &ta->a);
}

/* After creds, each thread's: its credential change resets its
 * parent-death signal, and the dumpable flag of their common mm, so that
 * is set after the last thread's. */
static int late_restore_thread(struct rst_ctx *c, struct rst_task *t,
			       struct rst_thread *th)
{
	struct pa_state *s = KSTATE(t, kind_procattr);
	struct pa_thread *ta = KTSTATE(th, kind_procattr);
	int ret;

	(void)c;
	ret = !ta ? 0 : rcheck(th->rm, NULL, "prctl(PR_SET_PDEATHSIG)", SYS_prctl,
			       PR_SET_PDEATHSIG, ta->a.pdeathsig);
	if (ret || !s || th != &t->threads[t->nr_threads - 1])
		return ret;
	if (s->a.dumpable > 1)	/* suid_dumpable's: the kernel's own doing */
		return 0;
	return rcheck(th->rm, NULL, "prctl(PR_SET_DUMPABLE)", SYS_prctl,
		      PR_SET_DUMPABLE, s->a.dumpable);
}

/* "0-3,8" */
static void show_cpus(struct info_out *o, const struct rec *r)
{
	const uint64_t *w = r->data;
	size_t nbits = r->data_len / 8 * 64, len = 0;
	char buf[512] = "";

	if (cpus_bad(w, r->data_len))
		return;
	for (size_t i = 0; i < nbits && len < sizeof(buf) - 32; i++) {
		size_t j = i;

		if (!(w[i / 64] >> (i % 64) & 1))
			continue;
		while (j + 1 < nbits && w[(j + 1) / 64] >> ((j + 1) % 64) & 1)
			j++;
		if (j > i)
			len += snprintf(buf + len, sizeof(buf) - len, "%s%zu-%zu",
					len ? "," : "", i, j);
		else
			len += snprintf(buf + len, sizeof(buf) - len, "%s%zu",
					len ? "," : "", i);
		i = j;
	}
	info_str(o, "cpus", buf);
}

static void pa_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_THREAD_CPUS) {
		show_cpus(o, r);
		return;
	}
	if (r->type == REC_PROCATTR) {
		const struct rec_procattr *a = r->data;

		info_i64(o, "oom_score_adj", a->oom_score_adj);
		info_i64(o, "loginuid", (int32_t)a->loginuid);
		info_u64(o, "dumpable", a->dumpable);
		info_u64(o, "thp_disable", a->thp_disable);
		info_hex(o, "membarrier", a->membarrier);
		return;
	}
	const struct rec_thread_attr *a = r->data;

	info_u64(o, "pdeathsig", a->pdeathsig);
	info_u64(o, "policy", a->policy);
	info_hex(o, "flags", a->flags);
	info_i64(o, "nice", a->nice);
	info_u64(o, "priority", a->priority);
	info_hex(o, "robust_list", a->robust_list);
	if (a->policy == SCHED_DEADLINE) {
		info_u64(o, "runtime", a->runtime);
		info_u64(o, "deadline", a->deadline);
		info_u64(o, "period", a->period);
	}
}

static const struct rec_desc procattr_recs[] = {
	{ REC_PROCATTR, "PROCATTR", sizeof(struct rec_procattr) },
	{ REC_THREAD_ATTR, "THREAD_ATTR", sizeof(struct rec_thread_attr) },
	{ REC_THREAD_CPUS, "THREAD_CPUS", 0 },
	{ 0 }
};

const struct kind_ops kind_procattr = {
	.name = "procattr",
	.recs = procattr_recs,
	.phase = PHASE_STATE,
	.dump = pa_dump,
	.dump_thread = pa_dump_thread,
	.load = pa_load,
	.check = pa_check,
	.restore = pa_restore,
	.restore_thread = pa_restore_thread,
	.show = pa_show,
};

const struct kind_ops kind_procattr_late = {
	.name = "procattr_late",
	.phase = PHASE_STATE,
	.restore_thread = late_restore_thread,
};
