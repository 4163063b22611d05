/* session_chain.c - a session whose leader has exited, with members of
 * different parents: the leader's child A, re-parented to us (a
 * subreaper), and A's child B, whose parent A is itself in the session.
 * After restart both are still in that session, with their parents. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tp.h"

static int check(pid_t sid, pid_t ppid)
{
	tp_wait_go();
	if (getsid(0) != sid)
		return 2;
	if (getppid() != ppid)
		return 3;
	return 0;
}

int main(int argc, char **argv)
{
	int p[2], st;
	pid_t ab[2], leader;

	tp_init(argc, argv);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pipe(p))
		return 1;
	leader = fork();
	if (leader == 0) {
		pid_t a;

		setsid();
		a = fork();
		if (a == 0) {
			pid_t me = getpid(), sid = getsid(0), b = fork();

			if (b == 0)
				_exit(check(sid, me));	/* B: parent A */
			ab[0] = me;
			ab[1] = b;
			if (write(p[1], ab, sizeof(ab)) != sizeof(ab))
				_exit(1);
			tp_wait_go();
			if (getsid(0) != sid)
				_exit(4);
			if (waitpid(b, &st, 0) != b || !WIFEXITED(st))
				_exit(5);
			_exit(WEXITSTATUS(st));
		}
		_exit(0);	/* the session lives on without its leader */
	}
	waitpid(leader, NULL, 0);
	if (read(p[0], ab, sizeof(ab)) != sizeof(ab))
		return 1;
	sleep(1);
	tp_check(getsid(ab[0]) == leader && getsid(ab[1]) == leader,
		 "not set up: sessions %d %d, leader %d", getsid(ab[0]), getsid(ab[1]),
		 leader);
	tp_ready();
	tp_wait_go();
	tp_check(getsid(ab[0]) == leader, "A is in session %d, not %d", getsid(ab[0]),
		 leader);
	tp_check(waitpid(ab[0], &st, 0) == ab[0] && WIFEXITED(st) && !WEXITSTATUS(st),
		 "A or B lost its session or parent (status 0x%x)", st);
	return tp_done();
}
