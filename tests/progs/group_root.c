/* group_root.c - a root that leads a process group of its own in a
 * session led outside the tree (a job its shell made a group), with a
 * child in that group.  After restart both are in the root's group, in
 * one session. */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "tp.h"

int main(int argc, char **argv)
{
	pid_t me, kid;
	int st = 0;

	tp_init(argc, argv);
	if (setpgid(0, 0)) {
		perror("setpgid");
		return 1;
	}
	me = getpid();
	kid = fork();
	if (kid == 0) {
		tp_wait_go();
		_exit(getpgrp() != me ? 2 : getsid(0) != getsid(getppid()) ? 3 : 0);
	}
	tp_check(getpgrp() == me && getsid(0) != me, "not set up: group %d session %d",
		 getpgrp(), getsid(0));
	tp_ready();
	tp_wait_go();
	tp_check(getpgrp() == me, "the root is in group %d, not its own %d", getpgrp(), me);
	tp_check(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the child lost the root's group or session (status 0x%x: 2 group, 3 session)",
		 st);
	return tp_done();
}
