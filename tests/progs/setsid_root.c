/* setsid_root.c - a root that leads its own session (started under
 * setsid: pid = pgid = sid), with a pty as its controlling terminal, a
 * child A in its group and a child B leading a group of its own, the
 * terminal's foreground group.  After restart (plain, --detach, --pidns,
 * or inside a pid namespace where restart's caller's session is not
 * visible) each is in the session and group it had, and the session
 * still has its terminal with B in the foreground. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <termios.h>

#include "tp.h"

static int ids(pid_t sid, pid_t pgid)
{
	int fd;

	tp_wait_go();
	if (getsid(0) != sid)
		return 2;
	if (getpgrp() != pgid)
		return 3;
	fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return 4;
	close(fd);
	return 0;
}

static int reap(pid_t kid, const char *name)
{
	int st = 0;

	if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		tp_fail("child %s (pid %d) lost its session, group or terminal (status 0x%x: "
			"2 session, 3 group, 4 terminal)", name, kid, st);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pid_t me, a, b;
	int m, s;

	tp_init(argc, argv);
	if (setsid() < 0) {
		perror("setsid");
		return 1;
	}
	me = getpid();
	m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) || unlockpt(m))
		return 1;
	s = open(ptsname(m), O_RDWR);	/* our controlling terminal */
	if (s < 0)
		return 1;
	a = fork();
	if (a == 0)
		_exit(ids(me, me));
	b = fork();
	if (b == 0) {
		setpgid(0, 0);
		_exit(ids(me, getpid()));
	}
	setpgid(b, b);
	signal(SIGTTOU, SIG_IGN);
	if (tcsetpgrp(s, b)) {
		perror("tcsetpgrp");
		return 1;
	}
	tp_check(getsid(0) == me && getpgrp() == me && tcgetsid(s) == me,
		 "not set up: session %d group %d terminal's session %d", getsid(0),
		 getpgrp(), tcgetsid(s));
	tp_ready();
	tp_wait_go();
	tp_check(getsid(0) == me, "the root is in session %d, not its own %d", getsid(0), me);
	tp_check(getpgrp() == me, "the root is in group %d, not its own %d", getpgrp(), me);
	tp_check(tcgetsid(s) == me, "the terminal's session is %d, not %d", tcgetsid(s), me);
	tp_check(tcgetpgrp(s) == b, "the terminal's foreground group is %d, not B's %d",
		 tcgetpgrp(s), b);
	reap(a, "A");
	reap(b, "B");
	return tp_done();
}
