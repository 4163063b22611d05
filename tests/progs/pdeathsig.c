/* pdeathsig.c - each thread's parent-death signal survives the restart
 * (the credential changes of the restore reset it), and is delivered
 * when the parent dies. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tp.h"

static int get_pdeathsig(void)
{
	int sig = -1;

	prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0);
	return sig;
}

static void *thread(void *arg)
{
	int *got = arg;

	prctl(PR_SET_PDEATHSIG, SIGWINCH, 0, 0, 0);
	tp_wait_go();
	*got = get_pdeathsig();
	return NULL;
}

int main(int argc, char **argv)
{
	int p[2], st, got = -1;
	pthread_t th;
	pid_t mid;

	tp_init(argc, argv);
	if (pipe(p))
		return 1;
	/* a middle process, whose child's parent-death signal is USR1 */
	mid = fork();
	if (mid == 0) {
		pid_t c = fork();

		if (c == 0) {
			sigset_t ss;
			int sig;

			sigemptyset(&ss);
			sigaddset(&ss, SIGUSR1);
			sigprocmask(SIG_BLOCK, &ss, NULL);
			prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0);
			if (write(p[1], "x", 1) != 1)
				_exit(1);
			tp_wait_go();
			if (get_pdeathsig() != SIGUSR1)
				_exit(2);
			sigwait(&ss, &sig);	/* the middle one dies */
			_exit(sig == SIGUSR1 ? 0 : 3);
		}
		tp_wait_go();
		waitpid(-1, NULL, WNOHANG);
		_exit(0);
	}
	if (read(p[0], &st, 1) != 1)
		return 1;
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGURG, 0, 0, 0);
	pthread_create(&th, NULL, thread, &got);
	usleep(100000);
	tp_ready();
	tp_wait_go();
	pthread_join(th, NULL);
	tp_check(get_pdeathsig() == SIGURG, "main thread's pdeathsig %d, not SIGURG",
		 get_pdeathsig());
	tp_check(got == SIGWINCH, "thread's pdeathsig %d, not SIGWINCH", got);
	waitpid(mid, &st, 0);
	/* the grandchild, the subreaper's now */
	tp_check(wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "the child's pdeathsig was not restored or not delivered (status %#x)", st);
	return tp_done();
}
