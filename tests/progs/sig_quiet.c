/* sig_quiet.c - the signal a checkpoint's batches of calls stop on
 * (src/arch/x86/runner.c) is one this process would never notice: not
 * SIGURG, which it catches, nor SIGWINCH, which it blocks and has
 * pending (a signalfd or sigwait() would read it later), but SIGCHLD,
 * ignored by default.  A ckpt killed at that stop lets the signal be
 * delivered: a wrong choice runs the handler or takes the pending
 * SIGWINCH, and this program sees either.
 *
 * Its child catches all three and ignores none: it has no such signal,
 * and its actions are read the other way, spread over its two threads
 * (src/kinds/signals.c); they must come back all the same. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "tp.h"

static volatile sig_atomic_t n_urg;

static void on_sig(int sig)
{
	if (sig == SIGURG)
		n_urg++;
}

static void catch(int sig, int flags)
{
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	sigaction(sig, &sa, NULL);
}

static int caught(int sig, int flags)
{
	struct sigaction sa;

	sigaction(sig, NULL, &sa);
	return sa.sa_handler == on_sig && (sa.sa_flags & flags) == flags &&
	       sigismember(&sa.sa_mask, SIGUSR1) && !sigismember(&sa.sa_mask, SIGUSR2);
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* The child: all three caught, its checks in its exit status. */
static int child(void)
{
	pthread_t th;

	/* (none ignored, whatever it inherited: nohup's SIGHUP...) */
	for (int sig = 1; sig < SIGRTMIN; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	catch(SIGURG, SA_RESTART);
	catch(SIGWINCH, SA_RESTART | SA_NOCLDSTOP);
	catch(SIGCHLD, SA_NOCLDSTOP);
	if (pthread_create(&th, NULL, idle, NULL))
		return 2;
	tp_wait_go();
	if (!caught(SIGURG, SA_RESTART) || !caught(SIGWINCH, SA_RESTART) ||
	    !caught(SIGCHLD, SA_NOCLDSTOP))
		return 3;
	raise(SIGURG);
	return n_urg == 1 ? 0 : 4;
}

int main(int argc, char **argv)
{
	sigset_t winch, pending;
	pid_t pid;
	int st;

	tp_init(argc, argv);
	pid = fork();
	if (pid == 0)
		_exit(child());
	catch(SIGURG, SA_RESTART);
	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	sigprocmask(SIG_BLOCK, &winch, NULL);
	raise(SIGWINCH);
	usleep(100000);	/* the child's threads started */
	tp_ready();
	tp_wait_go();
	tp_check(n_urg == 0, "SIGURG's handler ran %d times, never sent one", (int)n_urg);
	sigpending(&pending);
	tp_check(sigismember(&pending, SIGWINCH), "the blocked SIGWINCH is no longer pending");
	tp_check(caught(SIGURG, SA_RESTART), "SIGURG's action changed");
	raise(SIGURG);
	tp_check(n_urg == 1, "SIGURG's handler ran %d times after one raise", (int)n_urg);
	tp_check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "the child: status 0x%x", st);
	return tp_done();
}
