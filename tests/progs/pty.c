/* pty.c - a pty pair inside the tree: the root holds the master (packet
 * mode); a child leads a session whose controlling terminal is the
 * slave, and its child G, a group of its own in the foreground, answers
 * lines on it.  After restart: termios (no echo, no output processing,
 * ^G as the interrupt character, a kill character), window size, packet
 * mode, the unlocked slave, the session and foreground group, and data
 * flowing both ways (^G must interrupt G through the terminal), also
 * from an fd the leader opened as /dev/tty. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>

#include "tp.h"

#define INTR	0x07
#define KILLC	0x0b

static volatile sig_atomic_t got_int;

static void on_int(int sig)
{
	(void)sig;
	got_int = 1;
}

/* G: answers each line; a line cut by SIGINT is answered "intr".
 * SIGINT is let in only while it waits in ppoll(): one that comes while
 * it writes an answer waits for the ppoll(), rather than being handled
 * just before a read() that would then block for good. */
static void answerer(int fd)
{
	struct sigaction sa = { .sa_handler = on_int };	/* no SA_RESTART */
	sigset_t intr, waiting;
	char buf[256], out[300];

	sigemptyset(&intr);
	sigaddset(&intr, SIGINT);
	sigprocmask(SIG_BLOCK, &intr, &waiting);
	sigaction(SIGINT, &sa, NULL);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = got_int ? -1 : ppoll(&p, 1, NULL, &waiting);
		ssize_t n;

		if (got_int) {
			got_int = 0;
			if (write(fd, "intr\n", 5) != 5)
				_exit(2);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			_exit(3);
		n = read(fd, buf, sizeof(buf) - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		buf[n] = 0;
		if (!strcmp(buf, "quit\n"))
			_exit(tcgetpgrp(fd) == getpgrp() ? 0 : 4);
		snprintf(out, sizeof(out), "got:%s", buf);
		if (write(fd, out, strlen(out)) != (ssize_t)strlen(out))
			_exit(2);
	}
}

/* C: the session leader; the slave is its controlling terminal, at fd 0
 * and fd 5. */
static void leader(const char *slave)
{
	int fd, st;
	pid_t g;

	setsid();
	fd = open(slave, O_RDWR);	/* the first tty a leader opens: its ctty */
	if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 5) < 0)
		_exit(10);
	close(fd);
	fd = open("/dev/tty", O_WRONLY);	/* the terminal by that name */
	if (fd < 0 || dup2(fd, 7) != 7)
		_exit(12);
	close(fd);
	g = fork();
	if (g == 0) {
		setpgid(0, 0);
		/* a read from a background group stops it (SIGTTIN) for good:
		 * the line from the root may come before our parent's
		 * tcsetpgrp() */
		for (int i = 0; tcgetpgrp(0) != getpgrp() && i < 3000; i++)
			usleep(10000);
		answerer(0);
	}
	setpgid(g, g);
	if (tcsetpgrp(0, g))
		_exit(11);
	tp_wait_go();
	if (write(7, "c7\n", 3) != 3)
		tp_fail("writing to /dev/tty: %m");
	tp_check(tcgetsid(5) == getpid(), "the slave is not our session's terminal (tcgetsid %d)",
		 tcgetsid(5));
	tp_check(tcgetpgrp(0) == g, "foreground group %d, want %d", tcgetpgrp(0), g);
	fd = open("/dev/tty", O_RDWR);
	tp_check(fd >= 0, "no controlling terminal: /dev/tty: %m");
	tp_check(waitpid(g, &st, 0) == g && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the answerer ended with 0x%x", st);
	_exit(tp_failures ? 13 : 0);
}

/* One packet from the master: data without its header byte; status
 * packets (a flush) are skipped.  Until @want has come, at most 5 s. */
static bool expect(int m, const char *want)
{
	char buf[512], got[1024] = "";
	size_t len = 0;

	/* 30 s: a loaded machine running ASan builds side by side */
	for (int tries = 0; tries < 3000 && !strstr(got, want); tries++) {
		ssize_t n = read(m, buf, sizeof(buf));

		if (n < 0 && errno == EAGAIN) {
			usleep(10000);
			continue;
		}
		if (n <= 0)
			break;
		if (buf[0] != TIOCPKT_DATA || n == 1)
			continue;
		if (len + n < sizeof(got)) {
			memcpy(got + len, buf + 1, n - 1);
			len += n - 1;
			got[len] = 0;
		}
	}
	if (!strstr(got, want))
		tp_fail("wanted '%s' from the terminal, got '%s'", want, got);
	return strstr(got, want) != NULL;
}

static void say(int m, const char *s)
{
	if (write(m, s, strlen(s)) != (ssize_t)strlen(s))
		tp_fail("writing to the master: %m");
}

static void check_settings(int m)
{
	struct termios t;
	struct winsize ws;
	int pkt = 0, lck = 1;

	tp_check(!tcgetattr(m, &t), "tcgetattr: %m");
	tp_check(!(t.c_lflag & ECHO) && (t.c_lflag & ICANON) && (t.c_lflag & ISIG),
		 "lflag 0%o: want ICANON|ISIG without ECHO", t.c_lflag);
	tp_check(!(t.c_oflag & OPOST), "output processing is on again");
	tp_check(t.c_cc[VINTR] == INTR && t.c_cc[VKILL] == KILLC,
		 "special chars intr %#x kill %#x", t.c_cc[VINTR], t.c_cc[VKILL]);
	tp_check(!ioctl(m, TIOCGWINSZ, &ws) && ws.ws_row == 33 && ws.ws_col == 111 &&
		 ws.ws_xpixel == 7 && ws.ws_ypixel == 9, "window size %ux%u", ws.ws_row,
		 ws.ws_col);
	tp_check(!ioctl(m, TIOCGPKT, &pkt) && pkt, "packet mode lost");
	tp_check(!ioctl(m, TIOCGPTLCK, &lck) && !lck, "the slave is locked");
}

int main(int argc, char **argv)
{
	struct winsize ws = { 33, 111, 7, 9 };
	struct termios t;
	int m, one = 1, st;
	pid_t c;

	tp_init(argc, argv);
	m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) || unlockpt(m) || tcgetattr(m, &t))
		return 1;
	t.c_lflag = ICANON | ISIG;
	t.c_oflag &= ~OPOST;
	t.c_cc[VINTR] = INTR;
	t.c_cc[VKILL] = KILLC;
	if (tcsetattr(m, TCSANOW, &t) || ioctl(m, TIOCSWINSZ, &ws) || ioctl(m, TIOCPKT, &one))
		return 1;
	c = fork();
	if (c == 0) {
		const char *name = ptsname(m);

		close(m);
		leader(name);
	}
	fcntl(m, F_SETFL, O_NONBLOCK);
	say(m, "hello\n");
	if (!expect(m, "got:hello\n"))
		return tp_done();
	tp_ready();	/* nothing is queued in the pty now */
	tp_wait_go();
	check_settings(m);
	expect(m, "c7\n");	/* from the leader's /dev/tty fd */
	say(m, "ab");		/* a line killed by the kill character */
	say(m, (char[]){ KILLC, 0 });
	say(m, "ping\n");
	expect(m, "got:ping\n");
	say(m, (char[]){ INTR, 0 });	/* SIGINT to the foreground group */
	expect(m, "intr\n");
	say(m, "quit\n");
	tp_check(waitpid(c, &st, 0) == c && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the session leader ended with 0x%x", st);
	return tp_done();
}
