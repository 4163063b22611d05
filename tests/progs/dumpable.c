/* dumpable.c - the dumpable flag survives the restart: 0 in a root
 * process, and 1 in a child of another uid with two threads, where each
 * thread's credential change at restore resets it (to suid_dumpable's
 * value). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tp.h"

static void *idle(void *arg)
{
	(void)arg;
	tp_wait_go();
	return NULL;
}

static void child(int fd)
{
	pthread_t th;

	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(2);
	pthread_create(&th, NULL, idle, NULL);
	if (write(fd, "x", 1) != 1)
		_exit(2);
	tp_wait_go();
	pthread_join(th, NULL);
	_exit(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1 ? 0 : 1);
}

int main(int argc, char **argv)
{
	int p[2], st = -1;
	pid_t pid;
	char c;

	tp_init(argc, argv);
	if (pipe(p))
		return 1;
	pid = fork();
	if (pid == 0)
		child(p[1]);
	if (read(p[0], &c, 1) != 1)
		return printf("FAIL: the child did not start\n"), 1;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return printf("FAIL: PR_SET_DUMPABLE: %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	tp_check(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0, "dumpable is %d, not 0",
		 prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	waitpid(pid, &st, 0);
	tp_check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "the child of another uid: dumpable not 1 (status %#x)", st);
	return tp_done();
}
