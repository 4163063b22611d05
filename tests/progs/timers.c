/* timers.c - interval timers (setitimer) and POSIX timers (timer_create).
 *
 * A fresh process has no interval timers armed and no POSIX timers.  The
 * POSIX timers are created with holes in their IDs (some are deleted
 * again), so that restoring them by simply calling timer_create() in a
 * row would give different IDs and fail the ID checks.
 */
#include "tp.h"

#include <signal.h>
#include <stdint.h>
#include <sys/time.h>

#define SIG_PERIODIC	(SIGRTMIN + 1)
#define SIG_DISARMED	(SIGRTMIN + 2)
#define NS		1000000000LL

struct itv_case {
	int which;
	const char *name;
	struct itimerval set;
	long long max_used_us;	/* how much of it may run down by GO */
	long long max_over_us;	/* how far it may read above the value set */
};

/* Intervals with odd microseconds so that any rounding shows up.  The
 * kernel rounds a CPU-time itimer's value up by one tick (TICK_NSEC) when
 * it is set, and a restore that sets it again may add another, so those
 * may read up to two ticks (at HZ=100, 10 ms each) above what was set. */
static struct itv_case itv[] = {
	{ ITIMER_REAL, "ITIMER_REAL", { { 50, 0 }, { 100, 0 } },
	  30 * 1000000LL, 0 },
	{ ITIMER_VIRTUAL, "ITIMER_VIRTUAL", { { 30, 250000 }, { 100, 0 } },
	  5 * 1000000LL, 20000 },
	{ ITIMER_PROF, "ITIMER_PROF", { { 20, 500000 }, { 200, 0 } },
	  5 * 1000000LL, 20000 },
};

static volatile sig_atomic_t n_alrm, n_vtalrm, n_prof;

static void h_alrm(int sig) { (void)sig; n_alrm++; }
static void h_vtalrm(int sig) { (void)sig; n_vtalrm++; }
static void h_prof(int sig) { (void)sig; n_prof++; }

static long long tv_us(const struct timeval *tv)
{
	return tv->tv_sec * 1000000LL + tv->tv_usec;
}

static long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * NS + ts->tv_nsec;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* /proc/self/timers as text whose entries ("ID: ..." up to the next one)
 * are sorted: the order in which the kernel lists timers is an artefact
 * of creation order, not state of the timers. */
static char *proc_timers(int *count)
{
	char buf[8192], *ent[64], *out;
	size_t len, n = 0;
	FILE *f = fopen("/proc/self/timers", "r");

	*count = 0;
	if (!f)
		return NULL;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (char *p = strstr(buf, "ID: "); p && n < 64;
	     p = strstr(p + 1, "\nID: ")) {
		if (*p == '\n')
			*p++ = '\0';
		ent[n++] = p;
	}
	qsort(ent, n, sizeof(ent[0]), cmp_str);
	out = calloc(1, len + n + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		strcat(out, ent[i]);
		if (out[strlen(out) - 1] != '\n')
			strcat(out, "\n");
	}
	*count = n;
	return out;
}

static timer_t mk_timer(clockid_t clk, int notify, int signo, int value)
{
	struct sigevent ev;
	timer_t t;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = notify;
	ev.sigev_signo = signo;
	ev.sigev_value.sival_int = value;
	if (timer_create(clk, &ev, &t) != 0) {
		tp_fail("setup: timer_create: %s", strerror(errno));
		exit(1);
	}
	return t;
}

static void arm(timer_t t, long long first_ns, long long interval_ns)
{
	struct itimerspec its = {
		.it_interval = { interval_ns / NS, interval_ns % NS },
		.it_value = { first_ns / NS, first_ns % NS },
	};

	if (timer_settime(t, 0, &its, NULL) != 0) {
		tp_fail("setup: timer_settime: %s", strerror(errno));
		exit(1);
	}
}

/* Waits up to a second for @sig and checks it comes from timer @t. */
static void expect_timer_signal(int sig, timer_t t, int value,
				const char *what)
{
	struct timespec to = { 1, 0 };
	sigset_t set;
	siginfo_t si;

	sigemptyset(&set);
	sigaddset(&set, sig);
	memset(&si, 0, sizeof(si));
	if (sigtimedwait(&set, &si, &to) != sig) {
		tp_fail("%s: no signal %d within 1 s: %s", what, sig,
			strerror(errno));
		return;
	}
	tp_check(si.si_code == SI_TIMER, "%s: si_code %d, want SI_TIMER",
		 what, si.si_code);
	tp_check(si.si_value.sival_int == value, "%s: si_value %d, want %d",
		 what, si.si_value.sival_int, value);
	tp_check(si.si_timerid == (int)(intptr_t)t,
		 "%s: si_timerid %d, want %d", what, si.si_timerid,
		 (int)(intptr_t)t);
	tp_check(si.si_overrun >= 0, "%s: si_overrun %d", what,
		 si.si_overrun);
}

int main(int argc, char **argv)
{
	timer_t t_periodic, t_disarmed, t_none, junk[4], t_new;
	struct itimerspec its;
	struct sigaction sa;
	sigset_t set;
	char *timers_before, *timers_after;
	int n_before, n_after;

	tp_init(argc, argv);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h_alrm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = h_vtalrm;
	sigaction(SIGVTALRM, &sa, NULL);
	sa.sa_handler = h_prof;
	sigaction(SIGPROF, &sa, NULL);

	/* The POSIX timers' signals are only ever taken by sigtimedwait. */
	sigemptyset(&set);
	sigaddset(&set, SIG_PERIODIC);
	sigaddset(&set, SIG_DISARMED);
	sigprocmask(SIG_BLOCK, &set, NULL);

	for (unsigned i = 0; i < sizeof(itv) / sizeof(itv[0]); i++) {
		if (setitimer(itv[i].which, &itv[i].set, NULL) != 0) {
			tp_fail("setup: setitimer(%s): %s", itv[i].name,
				strerror(errno));
			return 1;
		}
	}

	/* IDs 0, 2, 4, 5 end up deleted: holes a naive restore loses. */
	junk[0] = mk_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	t_periodic = mk_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIG_PERIODIC, 77);
	junk[1] = mk_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	t_disarmed = mk_timer(CLOCK_REALTIME, SIGEV_SIGNAL, SIG_DISARMED, 88);
	junk[2] = mk_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	junk[3] = mk_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	t_none = mk_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	for (int i = 0; i < 4; i++)
		timer_delete(junk[i]);

	arm(t_periodic, 50 * 1000000LL, 50 * 1000000LL);
	arm(t_none, 100 * NS, 3 * NS + 123456789);

	timers_before = proc_timers(&n_before);
	tp_check(timers_before && n_before == 3,
		 "setup: /proc/self/timers lists %d timers", n_before);
	if (tp_failures)
		return 1;

	tp_ready();
	tp_wait_go();

	/* Interval timers: the interval exactly, the remaining time > 0 and
	 * not more than was set, and not run down implausibly far. */
	for (unsigned i = 0; i < sizeof(itv) / sizeof(itv[0]); i++) {
		struct itimerval cur;
		long long set_us = tv_us(&itv[i].set.it_value);
		long long left;

		memset(&cur, 0, sizeof(cur));
		if (getitimer(itv[i].which, &cur) != 0) {
			tp_fail("getitimer(%s): %s", itv[i].name,
				strerror(errno));
			continue;
		}
		tp_check(tv_us(&cur.it_interval) ==
			 tv_us(&itv[i].set.it_interval),
			 "%s: interval %lld us, want %lld us", itv[i].name,
			 tv_us(&cur.it_interval),
			 tv_us(&itv[i].set.it_interval));
		left = tv_us(&cur.it_value);
		tp_check(left > 0 && left <= set_us + itv[i].max_over_us,
			 "%s: remaining %lld us, want in (0, %lld]",
			 itv[i].name, left, set_us + itv[i].max_over_us);
		tp_check(left >= set_us - itv[i].max_used_us,
			 "%s: remaining %lld us, ran down more than %lld us",
			 itv[i].name, left, itv[i].max_used_us);
	}
	tp_check(n_alrm + n_vtalrm + n_prof == 0,
		 "an interval timer fired (ALRM %d VTALRM %d PROF %d)",
		 n_alrm, n_vtalrm, n_prof);

	/* The same POSIX timers, under the same IDs. */
	timers_after = proc_timers(&n_after);
	tp_check(timers_after && n_after == 3,
		 "/proc/self/timers lists %d timers, want 3", n_after);
	if (timers_before && timers_after &&
	    strcmp(timers_before, timers_after) != 0)
		tp_fail("/proc/self/timers changed:\n--- before\n%s"
			"--- after\n%s---", timers_before, timers_after);

	memset(&its, 0xff, sizeof(its));
	if (timer_gettime(t_periodic, &its) != 0) {
		tp_fail("timer_gettime(periodic, id %d): %s",
			(int)(intptr_t)t_periodic, strerror(errno));
	} else {
		tp_check(ts_ns(&its.it_interval) == 50 * 1000000LL,
			 "periodic timer: interval %lld ns, want 50 ms",
			 ts_ns(&its.it_interval));
		tp_check(ts_ns(&its.it_value) > 0 &&
			 ts_ns(&its.it_value) <= 50 * 1000000LL,
			 "periodic timer: next expiry in %lld ns",
			 ts_ns(&its.it_value));
	}

	memset(&its, 0xff, sizeof(its));
	if (timer_gettime(t_disarmed, &its) != 0)
		tp_fail("timer_gettime(disarmed, id %d): %s",
			(int)(intptr_t)t_disarmed, strerror(errno));
	else
		tp_check(ts_ns(&its.it_value) == 0 &&
			 ts_ns(&its.it_interval) == 0,
			 "disarmed timer: value %lld ns interval %lld ns",
			 ts_ns(&its.it_value), ts_ns(&its.it_interval));

	memset(&its, 0xff, sizeof(its));
	if (timer_gettime(t_none, &its) != 0) {
		tp_fail("timer_gettime(SIGEV_NONE, id %d): %s",
			(int)(intptr_t)t_none, strerror(errno));
	} else {
		tp_check(ts_ns(&its.it_interval) == 3 * NS + 123456789,
			 "SIGEV_NONE timer: interval %lld ns, want 3.123456789 s",
			 ts_ns(&its.it_interval));
		tp_check(ts_ns(&its.it_value) > 0 &&
			 ts_ns(&its.it_value) <= 100 * NS,
			 "SIGEV_NONE timer: remaining %lld ns, want in (0, 100 s]",
			 ts_ns(&its.it_value));
		tp_check(ts_ns(&its.it_value) >= 70 * NS,
			 "SIGEV_NONE timer: remaining %lld ns, ran down > 30 s",
			 ts_ns(&its.it_value));
	}

	/* The periodic timer delivers its signal with its value and ID; the
	 * second one shows that it is still running after restart (the first
	 * may be one that was pending at checkpoint time). */
	expect_timer_signal(SIG_PERIODIC, t_periodic, 77, "periodic timer");
	expect_timer_signal(SIG_PERIODIC, t_periodic, 77,
			    "periodic timer (again)");

	/* The disarmed timer still delivers what it was created with. */
	arm(t_disarmed, 10 * 1000000LL, 0);
	expect_timer_signal(SIG_DISARMED, t_disarmed, 88, "realtime timer");

	/* Deleted IDs stay deleted, and new timers can still be made. */
	tp_check(timer_gettime(junk[0], &its) != 0 && errno == EINVAL,
		 "deleted timer id %d exists", (int)(intptr_t)junk[0]);
	t_new = mk_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	tp_check(t_new != t_periodic && t_new != t_disarmed && t_new != t_none,
		 "new timer got the id %d of an existing one",
		 (int)(intptr_t)t_new);

	timer_delete(t_new);
	timer_delete(t_periodic);
	timer_delete(t_disarmed);
	timer_delete(t_none);
	return tp_done();
}
