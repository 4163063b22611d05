/* timer_cont.c - a periodic POSIX timer that signals SIGCONT, blocked,
 * its signal pending at the checkpoint.  Restart arms such a timer to
 * expire at once, so that its own signal is queued again; a stop signal
 * discards a pending SIGCONT, so restart's own calls must send none
 * after it (the one-stop calls' SIGSTOP, remote.h).  After the restart
 * the SIGCONT is pending, and unblocked it comes, and the timer, re-armed
 * by that delivery, goes on. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "tp.h"

static volatile sig_atomic_t conts;

static void on_cont(int sig)
{
	(void)sig;
	conts++;
}

static void mask_cont(int how)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGCONT);
	sigprocmask(how, &s, NULL);
}

static bool cont_pending(void)
{
	sigset_t s;

	sigpending(&s);
	return sigismember(&s, SIGCONT);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_cont };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGCONT };
	struct itimerspec its = { { 0, 50 * 1000 * 1000 }, { 0, 1000 * 1000 } };
	struct timespec wait = { 0, 300 * 1000 * 1000 };
	timer_t id;

	tp_init(argc, argv);
	sigaction(SIGCONT, &sa, NULL);
	mask_cont(SIG_BLOCK);
	if (timer_create(CLOCK_MONOTONIC, &sev, &id) || timer_settime(id, 0, &its, NULL)) {
		printf("FAIL: timer: %s\n", strerror(errno));
		return 1;
	}
	nanosleep(&wait, NULL);
	tp_check(cont_pending(), "the timer's SIGCONT is not pending before");
	tp_ready();
	tp_wait_go();
	tp_check(cont_pending(), "the timer's pending SIGCONT was lost");
	mask_cont(SIG_UNBLOCK);
	tp_check(conts == 1, "SIGCONT handled %d times at once, want 1", (int)conts);
	for (int i = 0; i < 100 && conts < 3; i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	tp_check(conts >= 3, "the timer was not re-armed: %d SIGCONTs in 1 s", (int)conts);
	return tp_done();
}
