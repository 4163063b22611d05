/* timers.c - interval timers (ITIMERS) and POSIX timers (POSIX_TIMER).
 * Timers resume with the time they had left at the checkpoint; a
 * periodic one waiting for its signal's delivery to be re-armed keeps its
 * period (rearm_value(), restore_posix()).  POSIX timers get their ids
 * back through PR_TIMER_CREATE_RESTORE_IDS (Linux 6.16+); before that,
 * a process's timer ids come in order from 0 (next_posix_timer_id, since
 * 3.10), so they are made in the order of their ids, and the ids in
 * between made and deleted again (timer_ids_in_order()).  The overrun
 * count of a timer is not kept. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "../kinds.h"
#include "ns_pid.h"

#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS	77
#endif
#define MAX_TIMERS	65536
/* ids a restart before Linux 6.16 makes and deletes to reach the next
 * saved one (two remote calls each) */
#define MAX_ID_SKIP	65536
#define NS		1000000000LL

struct timer_state {
	bool have_itimers;
	struct rec_itimers it;
	struct rec_posix_timer *pt;
	uint32_t nr_pt;
	size_t cap_pt;
};

static int64_t tv_ns(struct timeval tv)
{
	return tv.tv_sec * NS + tv.tv_usec * 1000;
}

static int64_t ts_ns(struct timespec ts)
{
	return ts.tv_sec * NS + ts.tv_nsec;
}

static int dump_itimers(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_itimers it;
	struct itimerval v[3];
	/* (in one stop where it has a runner page: runner.h) */
	int ret = remote_batch_begin(&t->rm, t->scratch + sizeof(v)), r;

	for (int w = 0; w < 3 && !ret; w++)
		ret = rcheck(&t->rm, NULL, "getitimer", SYS_getitimer, w,
			     t->scratch + w * sizeof(v[0]));
	r = remote_batch_end(&t->rm, !ret);
	ret = ret ? ret : r;
	if (!ret)
		ret = remote_read(&t->rm, t->scratch, v, sizeof(v));
	for (int w = 0; w < 3 && !ret; w++) {
		it.t[w].interval_ns = tv_ns(v[w].it_interval);
		it.t[w].value_ns = tv_ns(v[w].it_value);
	}
	return ret ? ret : iw_record(&c->w, REC_ITIMERS, &it, sizeof(it));
}

/* One "ID: n" block of /proc/PID/timers. */
static int parse_timer(const char *p, struct rec_posix_timer *pt)
{
	char how[16], whom[8];
	unsigned long long val;

	memset(pt, 0, sizeof(*pt));
	if (sscanf(p, "ID: %d\nsignal: %d/%llx\nnotify: %15[a-z]/%7[a-z].%u\nClockID: %d",
		   &pt->id, &pt->signo, &val, how, whom, &pt->tid, &pt->clock) != 7)
		return -EINVAL;
	pt->sigval = val;
	pt->notify = !strcmp(how, "signal") ? SIGEV_SIGNAL :
		     !strcmp(how, "none") ? SIGEV_NONE : SIGEV_THREAD;
	if (!strcmp(whom, "tid"))
		pt->notify |= SIGEV_THREAD_ID;
	return 0;
}

static int dump_posix(struct cpt_ctx *c, struct cpt_task *t)
{
	char *buf, *p;
	int ret = proc_read(t->pid, "timers", &buf, NULL);

	if (ret)
		return log_err(c->log, -ret, "pid %d: reading timers:", t->pid);
	/* blocks start "ID: " at a line start ("ClockID: " is no block) */
	for (p = buf; p && *p && !ret; p = strstr(p, "\nID: "), p = p ? p + 1 : NULL) {
		struct rec_posix_timer pt;
		struct itimerspec its;

		if (parse_timer(p, &pt)) {
			ret = log_err(c->log, EINVAL, "pid %d: cannot parse /proc timers",
				      t->pid);
			break;
		}
		ret = rcheck(&t->rm, NULL, "timer_gettime", SYS_timer_gettime,
			     pt.id, t->scratch);
		if (!ret)
			ret = remote_read(&t->rm, t->scratch, &its, sizeof(its));
		pt.t.interval_ns = ts_ns(its.it_interval);
		pt.t.value_ns = ts_ns(its.it_value);
		if (!ret)
			ret = iw_record(&c->w, REC_POSIX_TIMER, &pt, sizeof(pt));
	}
	free(buf);
	return ret;
}

static int timers_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	int ret = dump_itimers(c, t);

	return ret ? ret : dump_posix(c, t);
}

static bool tv_ok(const struct rec_timerval *v)
{
	return v->interval_ns >= 0 && v->value_ns >= 0 &&
	       v->interval_ns < (1LL << 62) && v->value_ns < (1LL << 62);
}

static int timers_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct timer_state *s = kind_state(t, &kind_timers, sizeof(*s));
	const struct rec_posix_timer *pt = r->data;

	if (!s)
		return log_err(c->log, ENOMEM, "timer state:");
	if (r->type == REC_ITIMERS) {
		if (r->data_len != sizeof(s->it) || s->have_itimers)
			return log_err(c->log, EBADMSG, "bad or repeated ITIMERS record");
		memcpy(&s->it, r->data, sizeof(s->it));
		for (int i = 0; i < 3; i++)
			if (!tv_ok(&s->it.t[i]))
				return log_err(c->log, EBADMSG, "ITIMERS: bad time");
		s->have_itimers = true;
		return 0;
	}
	if (r->data_len != sizeof(*pt) || pt->id < 0 || !tv_ok(&pt->t) ||
	    pt->signo < 0 || pt->signo > 64 || pt->reserved ||
	    (pt->notify & ~SIGEV_THREAD_ID) > SIGEV_THREAD ||
	    s->nr_pt >= MAX_TIMERS)
		return log_err(c->log, EBADMSG, "bad POSIX_TIMER record %llu",
			       (unsigned long long)r->index);
	for (uint32_t i = 0; i < s->nr_pt; i++)
		if (s->pt[i].id == pt->id)
			return log_err(c->log, EBADMSG, "POSIX timer id %d twice", pt->id);
	if (VEC_ROOM(s->pt, s->nr_pt, s->cap_pt))
		return log_err(c->log, ENOMEM, "timers:");
	s->pt[s->nr_pt++] = *pt;
	return 0;
}

/* What a timer is armed with at restart.  A periodic timer that reads
 * "0 left" has expired and waits for its signal's delivery to be
 * re-armed (the kernel re-arms ITIMER_REAL when SIGALRM is dequeued):
 * its signal is pending, blocked, or was caught in flight while ckpt
 * held the process, and comes back as saved.  Set with 0 it would be
 * disarmed, interval and all: it gets one period instead, so it fires
 * again one period on, as after a delivery (if its signal is still
 * pending then, the two merge, as they would have). */
static int64_t rearm_value(const struct rec_timerval *t)
{
	return t->value_ns || !t->interval_ns ? t->value_ns : t->interval_ns;
}

static struct timespec ns_ts(int64_t ns)
{
	return (struct timespec){ ns / NS, ns % NS };
}

/* A periodic POSIX timer whose signal is pending (blocked, or held back
 * by ckpt) waits for its delivery to be re-armed, and queues no other
 * meanwhile, its expirations counted as overruns.  Restored as a plain
 * signal, beside a timer armed again, it would come twice: so it is left
 * to the timer, set to expire at once, to queue its own signal, whose
 * delivery re-arms it as the saved one's would have (the overrun count
 * starts again from 0). */
static int restore_posix(struct rst_task *t, const struct rec_posix_timer *pt,
			 bool in_order)
{
	struct sigevent sev;
	struct itimerspec its = { ns_ts(pt->t.interval_ns), ns_ts(rearm_value(&pt->t)) };
	uint64_t sev_at, id_at, its_at;
	int id = pt->id, ret;
	long got;
	uint32_t skipped = 0;

	if (pt->t.interval_ns && (pt->notify & ~SIGEV_THREAD_ID) == SIGEV_SIGNAL &&
	    sig_take_timer(t, pt->id, pt->signo))
		its.it_value = (struct timespec){ 0, 1 };
	/* a SIGCONT it queues while the process is built is discarded by
	 * the SIGSTOP of a one-stop call (remote.h) */
	if ((pt->notify & ~SIGEV_THREAD_ID) == SIGEV_SIGNAL && pt->signo == SIGCONT)
		rst_slow_calls(t);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = pt->notify;
	sev.sigev_signo = pt->signo;
	sev.sigev_value.sival_ptr = (void *)pt->sigval;
	/* sigev_notify_thread_id, as its own pid namespace numbers it */
	sev._sigev_un._tid = ns_tid_in(t, pt->tid);
	ret = rst_scratch_put(t, 0, &sev, sizeof(sev), &sev_at);
	if (!ret)
		ret = rst_scratch_put(t, 128, &id, sizeof(id), &id_at);
	if (!ret)
		ret = rst_scratch_put(t, 256, &its, sizeof(its), &its_at);
	for (;;) {
		if (!ret)
			ret = rcheck(&t->rm, NULL, "timer_create", SYS_timer_create,
				     pt->clock, sev_at, id_at);
		if (!ret)
			ret = remote_read(&t->rm, id_at, &id, sizeof(id));
		/* in order: an id below the saved one is made and let go */
		if (ret || !in_order || id >= pt->id)
			break;
		if (++skipped > MAX_ID_SKIP)
			return log_err(t->rm.log, ERANGE,
				       "pid %d: POSIX timer %d: this kernel (before Linux 6.16) gives timer ids in order, and %u ids below it are too many to go through",
				       t->pid, pt->id, MAX_ID_SKIP);
		ret = rcheck(&t->rm, NULL, "timer_delete", SYS_timer_delete, id);
	}
	if (!ret && id != pt->id)
		ret = log_err(t->rm.log, EEXIST, "pid %d: POSIX timer %d came back as %d",
			      t->pid, pt->id, id);
	if (!ret && (pt->t.value_ns || pt->t.interval_ns))
		ret = rcheck(&t->rm, &got, "timer_settime", SYS_timer_settime,
			     id, 0, its_at, 0);
	return ret;
}

static int by_id(const void *a, const void *b)
{
	const struct rec_posix_timer *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* Whether the ids must be reached in order: PR_TIMER_CREATE_RESTORE_IDS
 * is not there (EINVAL before Linux 6.16; the test build's
 * CKPT_TEST_TIMER_IDS_IN_ORDER acts so), else it is on now. */
static int timer_ids_in_order(struct rst_task *t, bool *in_order)
{
	long res;
	int ret;

#ifdef CKPT_TEST_HOOKS
	if (getenv("CKPT_TEST_TIMER_IDS_IN_ORDER")) {
		*in_order = true;
		return 0;
	}
#endif
	ret = rcall(&t->rm, &res, SYS_prctl, PR_TIMER_CREATE_RESTORE_IDS, 1);
	*in_order = !ret && res == -EINVAL;
	if (!ret && res < 0 && res != -EINVAL)
		ret = log_err(t->rm.log, (int)-res, "pid %d: prctl(PR_TIMER_CREATE_RESTORE_IDS):",
			      t->pid);
	return ret;
}

static int timers_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct timer_state *s = t->kind_state[kind_index(&kind_timers)];
	bool in_order = false;
	uint64_t addr;
	int ret = 0;

	(void)c;
	if (s->nr_pt) {
		qsort(s->pt, s->nr_pt, sizeof(*s->pt), by_id);
		ret = timer_ids_in_order(t, &in_order);
	}
	for (uint32_t i = 0; i < s->nr_pt && !ret; i++)
		ret = restore_posix(t, &s->pt[i], in_order);
	if (s->nr_pt && !ret && !in_order)
		ret = rcheck(&t->rm, NULL, "prctl(PR_TIMER_CREATE_RESTORE_IDS)",
			     SYS_prctl, PR_TIMER_CREATE_RESTORE_IDS, 0);
	for (int w = 0; w < 3 && !ret; w++) {
		int64_t value = rearm_value(&s->it.t[w]);
		struct itimerval v = {
			{ s->it.t[w].interval_ns / NS, s->it.t[w].interval_ns % NS / 1000 },
			{ value / NS, value % NS / 1000 },
		};

		/* one not armed is none: the puppet, a new process, has no
		 * interval timer (fork(2)), and a call is a stop */
		if (!value)
			continue;
		/* a timer about to fire must not be disarmed by rounding */
		if (!v.it_value.tv_sec && !v.it_value.tv_usec)
			v.it_value.tv_usec = 1;
		ret = rst_scratch_put(t, 0, &v, sizeof(v), &addr);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "setitimer", SYS_setitimer, w, addr, 0);
	}
	return ret;
}

static int timers_check(struct rst_ctx *c, struct rst_task *t)
{
	struct timer_state *s = t->kind_state[kind_index(&kind_timers)];

	if (!s || !s->have_itimers)
		return log_err(c->log, EBADMSG, "pid %d: image has no ITIMERS record",
			       t->pid);
	return 0;
}

static void timers_free(struct rst_task *t, void *state)
{
	struct timer_state *s = state;

	(void)t;
	free(s->pt);
	free(s);
}

static void timers_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_ITIMERS) {
		const struct rec_itimers *it = r->data;

		info_i64(o, "real_ns", it->t[0].value_ns);
		info_i64(o, "real_interval_ns", it->t[0].interval_ns);
		info_i64(o, "virtual_ns", it->t[1].value_ns);
		info_i64(o, "virtual_interval_ns", it->t[1].interval_ns);
		info_i64(o, "prof_ns", it->t[2].value_ns);
		info_i64(o, "prof_interval_ns", it->t[2].interval_ns);
	} else {
		const struct rec_posix_timer *pt = r->data;

		info_i64(o, "id", pt->id);
		info_i64(o, "clock", pt->clock);
		info_i64(o, "signal", pt->signo);
		info_i64(o, "value_ns", pt->t.value_ns);
		info_i64(o, "interval_ns", pt->t.interval_ns);
	}
}

static const struct rec_desc timers_recs[] = {
	{ REC_ITIMERS, "ITIMERS", sizeof(struct rec_itimers) },
	{ REC_POSIX_TIMER, "POSIX_TIMER", sizeof(struct rec_posix_timer) },
	{ 0 }
};

const struct kind_ops kind_timers = {
	.name = "timers",
	.recs = timers_recs,
	.phase = PHASE_STATE,
	.rst_batch = true,
	.dump = timers_dump,
	.load = timers_load,
	.check = timers_check,
	.restore = timers_restore,
	.free = timers_free,
	.show = timers_show,
};
