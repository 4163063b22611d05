/* timers_periodic.c - periodic timers keep firing after a restart.
 *
 * The kernel re-arms an ITIMER_REAL only when its SIGALRM is dequeued:
 * while the signal waits (the process held by ckpt, or the signal
 * blocked) the timer reads "0 left" with its interval kept, and a
 * restore that sets it so disarms it.  A POSIX timer likewise waits for
 * its signal's delivery to be re-armed.
 *
 * The parent runs a 20 ms setitimer loop and a 10 ms periodic POSIX timer
 * with their signals unblocked: ckpt holds it longer than a period, so
 * the signals usually wait (or are caught in flight) at the checkpoint.
 * Its child runs the same with both signals blocked, so that both are
 * pending, for certain, at the checkpoint.  After GO each unblocks them,
 * counts ticks for 500 ms and fails if the timers stopped (a dead timer
 * gives at most the one tick that was pending).  The child also has a
 * periodic POSIX timer whose signal is ignored and blocked: pending, it
 * must still be pending after restart.
 */
#include "tp.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/wait.h>

#define SIG_POSIX	(SIGRTMIN + 3)
#define SIG_IGNORED	(SIGRTMIN + 5)
#define ITIMER_US	20000
#define POSIX_NS	10000000L
#define COUNT_MS	500
#define MIN_ALRM	5	/* of 25 */
#define MIN_POSIX	10	/* of 50 */

static volatile sig_atomic_t n_alrm, n_posix;

/* While the child unblocks its signals: when each POSIX timer signal
 * came (the check below decides whether the second was its own). */
static struct {
	volatile sig_atomic_t on, n;
	long long at[2];
} took;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void h_alrm(int sig) { (void)sig; n_alrm++; }

static void h_posix(int sig)
{
	int n = took.n;

	(void)sig;
	n_posix++;
	if (!took.on || n >= 2)
		return;
	took.at[n] = now_ns();
	took.n = n + 1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int arm(timer_t *tid)
{
	struct itimerval itv = { { 0, ITIMER_US }, { 0, ITIMER_US } };
	struct itimerspec its = { { 0, POSIX_NS }, { 0, POSIX_NS } };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIG_POSIX };
	struct sigaction sa = { .sa_handler = h_alrm, .sa_flags = SA_RESTART };

	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = h_posix;
	sigaction(SIG_POSIX, &sa, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, tid) ||
	    timer_settime(*tid, 0, &its, NULL) || setitimer(ITIMER_REAL, &itv, NULL)) {
		perror("arming timers");
		return -1;
	}
	return 0;
}

/* A 10 ms periodic POSIX timer whose signal is ignored and blocked:
 * the signal is queued once and stays pending. */
static int arm_ignored(timer_t *tid, sigset_t *set)
{
	struct itimerspec its = { { 0, POSIX_NS }, { 0, POSIX_NS } };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIG_IGNORED };

	sigemptyset(set);
	sigaddset(set, SIG_IGNORED);
	sigprocmask(SIG_BLOCK, set, NULL);
	signal(SIG_IGNORED, SIG_IGN);
	if (timer_create(CLOCK_MONOTONIC, &sev, tid) || timer_settime(*tid, 0, &its, NULL)) {
		perror("arming the ignored timer");
		return -1;
	}
	return 0;
}

/* A timer has one signal queued at most, however many periods passed
 * (the rest are overruns): one comes in as the child unblocks, not one
 * restored and one from the re-armed timer.  The timer, re-armed as
 * the first is taken, fires again at the next point of its 10 ms grid,
 * which may be microseconds later, before the first handler has run
 * (a machine under load takes longer): a second signal is its own if
 * the grid, as the timer reads now, has a point between the unblocking
 * (@from) and that signal's handler (@at). */
static bool fired_between(timer_t tid, long long from, long long at)
{
	struct itimerspec its;
	long long now = now_ns(), next, k;

	if (timer_gettime(tid, &its))
		return false;
	next = now + its.it_value.tv_sec * 1000000000LL + its.it_value.tv_nsec;
	k = (next - at + POSIX_NS - 1) / POSIX_NS;	/* last point <= at */
	return next - k * POSIX_NS > from;
}

/* After GO: the periods are still set, and the timers still fire. */
static void check(const char *who, timer_t tid, const sigset_t *sigs, bool blocked)
{
	struct itimerval itv;
	struct itimerspec its;
	long long from;
	int a, p;

	tp_check(!getitimer(ITIMER_REAL, &itv) && !itv.it_interval.tv_sec &&
		 itv.it_interval.tv_usec == ITIMER_US,
		 "%s: ITIMER_REAL interval %ld.%06ld s, not 20 ms", who,
		 (long)itv.it_interval.tv_sec, (long)itv.it_interval.tv_usec);
	tp_check(!timer_gettime(tid, &its) && !its.it_interval.tv_sec &&
		 its.it_interval.tv_nsec == POSIX_NS,
		 "%s: POSIX timer interval %ld.%09ld s, not 10 ms", who,
		 (long)its.it_interval.tv_sec, (long)its.it_interval.tv_nsec);
	sleep_ms(30);	/* long enough for any timer re-armed at restart to fire */
	took.on = blocked;
	p = n_posix;
	from = now_ns();
	sigprocmask(SIG_UNBLOCK, sigs, NULL);
	p = n_posix - p;	/* (before took.on ends: took.n counts as many) */
	took.on = 0;
	if (blocked && p == 2 && took.n == 2 && fired_between(tid, from, took.at[1]))
		p = 1;
	tp_check(!blocked || p == 1, "%s: %d POSIX timer signals were pending, not 1",
		 who, p);
	sleep_ms(20);
	a = n_alrm;
	p = n_posix;
	sleep_ms(COUNT_MS);
	a = n_alrm - a;
	p = n_posix - p;
	tp_check(a >= MIN_ALRM, "%s: %d SIGALRM in %d ms after restart (20 ms setitimer loop)",
		 who, a, COUNT_MS);
	tp_check(p >= MIN_POSIX, "%s: %d POSIX timer ticks in %d ms after restart (10 ms period)",
		 who, p, COUNT_MS);
}

int main(int argc, char **argv)
{
	sigset_t sigs;
	timer_t tid;
	pid_t kid;
	int st;

	tp_init(argc, argv);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGALRM);
	sigaddset(&sigs, SIG_POSIX);
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0) {
		/* blocked: after the first expiry each timer waits for its
		 * signal's delivery, which only comes after restart */
		sigset_t ign, pend;
		timer_t itid;

		sigprocmask(SIG_BLOCK, &sigs, NULL);
		if (arm(&tid) || arm_ignored(&itid, &ign))
			_exit(1);
		tp_wait_go();
		/* blocked, an ignored signal stays pending all the same */
		tp_check(!sigpending(&pend) && sigismember(&pend, SIG_IGNORED),
			 "blocked (child): the ignored POSIX timer signal is no longer pending");
		check("blocked (child)", tid, &sigs, true);
		_exit(tp_failures ? 1 : 0);
	}
	if (arm(&tid))
		return 1;
	sleep_ms(100);
	tp_check(n_alrm > 0 && n_posix > 0, "not set up: %d SIGALRM, %d POSIX ticks",
		 n_alrm, n_posix);
	tp_ready();
	tp_wait_go();
	check("unblocked", tid, &sigs, false);
	tp_check(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the child, whose timer signals were blocked, failed (status 0x%x)", st);
	return tp_done();
}
