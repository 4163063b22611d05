/* sigsuspend.c - a task checkpointed inside sigsuspend() has a temporary
 * mask in force; the kernel keeps its real mask aside and puts it back
 * when the call returns.  After restart the real mask must come back. */
#include <signal.h>
#include <sys/time.h>

#include "tp.h"

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
	(void)sig;
	fired = 1;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 0 }, { 1, 500000 } };
	sigset_t block, wait_mask, now;
	int ret;

	tp_init(argc, argv);
	signal(SIGALRM, on_alarm);
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigaddset(&block, SIGUSR2);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigfillset(&wait_mask);
	sigdelset(&wait_mask, SIGALRM);
	setitimer(ITIMER_REAL, &it, NULL);
	tp_ready();
	/* the runner checkpoints while we wait here for the alarm */
	ret = sigsuspend(&wait_mask);
	tp_check(ret == -1 && errno == EINTR && fired, "sigsuspend: %d %d fired %d",
		 ret, errno, fired);
	sigprocmask(SIG_BLOCK, NULL, &now);
	tp_check(sigismember(&now, SIGALRM) && sigismember(&now, SIGUSR2),
		 "the mask in force before sigsuspend was not put back");
	tp_check(!sigismember(&now, SIGINT), "SIGINT blocked after sigsuspend");
	tp_wait_go();
	return tp_done();
}
