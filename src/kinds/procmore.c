/* procmore.c - the attributes of a process and of its threads that
 * PROCATTR and THREAD_ATTR (procattr.c) have no room for: a thread's
 * timer slack and I/O priority (ionice), the process's coredump_filter
 * and memory-deny-write-execute (PROC_MORE, THREAD_MORE).  An image of
 * an older ckpt has neither record: the restarted process keeps what its
 * puppet inherited from ckpt.
 *
 * The I/O priority and coredump_filter are read and set from ckpt
 * (ioprio_get/set, /proc); the timer slack is asked by the task kind
 * with its other calls of every thread (task.h) and set by each thread
 * in its batch; memory-deny-write-execute, which refuses what the build
 * does (an area made executable), is set once the build is over, by the
 * last thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kinds.h"
#include "task.h"

#ifndef PR_SET_MDWE
#define PR_SET_MDWE	65
#define PR_GET_MDWE	66
#endif
#define MDWE_BITS	3	/* REFUSE_EXEC_GAIN, NO_INHERIT */
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_RT	1
#define COREDUMP_BITS	0x1ffu

struct more_state {
	bool have;
	struct rec_proc_more p;
};

struct more_thread {
	bool have;
	struct rec_thread_more t;
};

static int read_filter(pid_t pid, uint32_t *v)
{
	char *buf, *end;
	int ret = proc_read(pid, "coredump_filter", &buf, NULL);

	if (ret)
		return ret;
	*v = strtoul(buf, &end, 16);
	ret = end == buf ? -EINVAL : 0;
	free(buf);
	return ret;
}

static int more_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_proc_more p = { 0 };
	long mdwe;
	int ret = read_filter(t->pid, &p.coredump_filter);

	if (ret)
		return log_err(c->log, -ret, "pid %d: coredump_filter:", t->pid);
	/* (a kernel before 6.3 has none: EINVAL) */
	ret = rcall(&t->rm, &mdwe, SYS_prctl, PR_GET_MDWE, 0, 0, 0, 0);
	if (ret)
		return ret;
	p.mdwe = mdwe < 0 ? 0 : mdwe;
	return iw_record(&c->w, REC_PROC_MORE, &p, sizeof(p));
}

static int more_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			    struct cpt_thread *th)
{
	struct rec_thread_more m = { 0 };
	long prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, th->tid);
	int ret;

	if (prio < 0)
		return log_err(c->log, errno, "tid %d: ioprio_get:", th->tid);
	m.ioprio = prio;
	ret = task_timerslack(c, t, th, &m.timerslack_ns);
	return ret ? ret : iw_record(&c->w, REC_THREAD_MORE, &m, sizeof(m));
}

static int load_thread(struct rst_ctx *c, struct rst_task *t, const struct rec *r)
{
	const struct rec_thread_more *m = r->data;
	struct more_thread *s = t->nr_threads ?
		kind_thread_state(t, &kind_procmore, sizeof(*s)) : NULL;

	if (!s || s->have || r->data_len != sizeof(*m) || m->reserved ||
	    m->ioprio >= 1u << 16 || m->ioprio >> 13 > 3)
		return log_err(c->log, EBADMSG, "bad, repeated or misplaced THREAD_MORE record");
	s->t = *m;
	s->have = true;
	return 0;
}

static int more_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	const struct rec_proc_more *p = r->data;
	struct more_state *s;

	if (r->type == REC_THREAD_MORE)
		return load_thread(c, t, r);
	s = kind_state(t, &kind_procmore, sizeof(*s));
	if (!s)
		return log_err(c->log, ENOMEM, "procmore:");
	if (s->have || r->data_len != sizeof(*p) || p->reserved ||
	    p->coredump_filter & ~COREDUMP_BITS || p->mdwe & ~MDWE_BITS)
		return log_err(c->log, EBADMSG, "bad or repeated PROC_MORE record");
	s->p = *p;
	s->have = true;
	return 0;
}

/* From ckpt: the puppet has ckpt's own filter, mostly the same. */
static int more_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct more_state *s = KSTATE(t, kind_procmore);
	char path[64], val[16];
	uint32_t now;
	int fd, n, ret = 0;

	if (!s || (!read_filter(t->pid, &now) && now == s->p.coredump_filter))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/coredump_filter", t->pid);
	n = snprintf(val, sizeof(val), "0x%x", s->p.coredump_filter);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, n) != n)
		ret = log_err(c->log, errno, "pid %d: restoring coredump_filter 0x%x:",
			      t->pid, s->p.coredump_filter);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* The one it has (ckpt's, inherited) is no call: a real-time class
 * needs CAP_SYS_NICE or CAP_SYS_ADMIN, which the error says. */
static int set_ioprio(struct rst_ctx *c, struct rst_thread *th, uint32_t prio)
{
	long now = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, th->tid);

	if (now == (long)prio)
		return 0;
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, th->tid, prio))
		return log_err(c->log, errno, "tid %d: restoring I/O priority class %u level %u%s:",
			       th->tid, prio >> 13, prio & 7,
			       prio >> 13 == IOPRIO_CLASS_RT ? " (real-time: CAP_SYS_NICE)" : "");
	return 0;
}

static int more_restore_thread(struct rst_ctx *c, struct rst_task *t,
			       struct rst_thread *th)
{
	struct more_state *s = KSTATE(t, kind_procmore);
	struct more_thread *m = KTSTATE(th, kind_procmore);
	int ret = m ? set_ioprio(c, th, m->t.ioprio) : 0;

	/* (0, a real-time thread's: the kernel keeps that at 0 and ignores
	 * the call; a fair thread's 0 would be its default) */
	if (!ret && m && m->t.timerslack_ns)
		ret = rcheck(th->rm, NULL, "prctl(PR_SET_TIMERSLACK)", SYS_prctl,
			     PR_SET_TIMERSLACK, m->t.timerslack_ns);
	if (ret || !s || !s->p.mdwe || th != &t->threads[t->nr_threads - 1])
		return ret;
	return rcheck(th->rm, NULL, "prctl(PR_SET_MDWE)", SYS_prctl, PR_SET_MDWE,
		      s->p.mdwe, 0, 0, 0);
}

static void more_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_THREAD_MORE) {
		const struct rec_thread_more *m = r->data;

		info_u64(o, "timerslack_ns", m->timerslack_ns);
		info_u64(o, "ioprio_class", m->ioprio >> 13);
		info_u64(o, "ioprio_level", m->ioprio & 7);
		return;
	}
	const struct rec_proc_more *p = r->data;

	info_hex(o, "coredump_filter", p->coredump_filter);
	info_u64(o, "mdwe", p->mdwe);
}

static const struct rec_desc more_recs[] = {
	{ REC_PROC_MORE, "PROC_MORE", sizeof(struct rec_proc_more) },
	{ REC_THREAD_MORE, "THREAD_MORE", sizeof(struct rec_thread_more) },
	{ 0 }
};

const struct kind_ops kind_procmore = {
	.name = "procmore",
	.recs = more_recs,
	.phase = PHASE_STATE,
	.dump = more_dump,
	.dump_thread = more_dump_thread,
	.load = more_load,
	.restore = more_restore,
	.restore_thread = more_restore_thread,
	.show = more_show,
};
