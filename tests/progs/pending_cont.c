/* pending_cont.c - a blocked SIGCONT pending for the process and another
 * for one of its threads survive the restart.  A stop signal discards
 * every pending SIGCONT of the process: restart's own calls must send
 * none once these are queued (the one-stop calls' SIGSTOP, remote.h).
 * After the restart both are pending still, and unblocked, the handler
 * runs once for each. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "tp.h"

static volatile sig_atomic_t conts;
static volatile int shared_taken;	/* main has taken the process's */
static int thread_pending = -1;

static void on_cont(int sig)
{
	(void)sig;
	conts++;
}

static void block_cont(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGCONT);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

static void unblock_cont(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGCONT);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
}

static bool cont_pending(void)
{
	sigset_t s;

	sigpending(&s);
	return sigismember(&s, SIGCONT);
}

static void *second(void *arg)
{
	(void)arg;
	block_cont();
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGCONT);
	tp_wait_go();
	while (!shared_taken)
		usleep(1000);
	thread_pending = cont_pending();	/* its own alone now */
	unblock_cont();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_cont };
	pthread_t th;

	tp_init(argc, argv);
	sigaction(SIGCONT, &sa, NULL);
	block_cont();
	pthread_create(&th, NULL, second, NULL);
	kill(getpid(), SIGCONT);	/* the process's */
	sleep(1);			/* the thread has sent its own */
	tp_ready();
	tp_wait_go();
	tp_check(cont_pending(), "the process's pending SIGCONT was lost");
	unblock_cont();		/* the process's comes here */
	tp_check(conts == 1, "SIGCONT handled %d times, want 1", (int)conts);
	shared_taken = 1;
	pthread_join(th, NULL);
	tp_check(thread_pending == 1, "the thread's pending SIGCONT was lost");
	tp_check(conts == 2, "SIGCONT handled %d times in all, want 2", (int)conts);
	return tp_done();
}
