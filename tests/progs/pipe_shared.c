/* pipe_shared.c - a pipe's ends shared by a parent and its child stay
 * one description each: flags (O_ASYNC, and none added) and owner set
 * on them before, and a flag the child sets after the restart, are the
 * parent's too (ZDTM file_fown). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "tp.h"

int main(int argc, char **argv)
{
	int p[2], st = -1, fl0, fl1;
	pid_t pid;

	tp_init(argc, argv);
	signal(SIGIO, SIG_IGN);
	if (pipe(p) || fcntl(p[0], F_SETOWN, getpid()) ||
	    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_ASYNC))
		return printf("FAIL: setting up the pipe: %s\n", strerror(errno)), 1;
	fl0 = fcntl(p[0], F_GETFL);
	fl1 = fcntl(p[1], F_GETFL);
	pid = fork();
	if (pid == 0) {
		tp_wait_go();
		if (fcntl(p[0], F_GETFL) != fl0 || fcntl(p[1], F_GETFL) != fl1)
			_exit(2);
		_exit(fcntl(p[1], F_SETFL, fl1 | O_NONBLOCK) ? 3 : 0);
	}
	tp_ready();
	tp_wait_go();
	waitpid(pid, &st, 0);
	tp_check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "the child's flags differ from what they were (status %#x)", st);
	tp_check(fcntl(p[0], F_GETFL) == fl0, "read end's flags %#o, not %#o",
		 fcntl(p[0], F_GETFL), fl0);
	tp_check(fcntl(p[1], F_GETFL) == (fl1 | O_NONBLOCK),
		 "write end's flags %#o, not %#o: not the child's description",
		 fcntl(p[1], F_GETFL), fl1 | O_NONBLOCK);
	tp_check(fcntl(p[0], F_GETOWN) == getpid(), "read end's owner %d",
		 fcntl(p[0], F_GETOWN));
	return tp_done();
}
