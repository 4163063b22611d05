/* unix_stream.c - stream socketpairs with data queued both ways, a big
 * queue, a half-closed pair, a pair whose peer has closed, a pair split
 * between parent and child, and socket options: after restart the queued
 * data arrives exactly once and new data flows both ways. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tp.h"

#define BIG 100000

static char big[BIG];

/* exactly @len bytes, already queued: nothing waits for them */
static int take(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, MSG_DONTWAIT);

		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

static void expect(int fd, const char *want, const char *what)
{
	char buf[256] = "";

	tp_check(!take(fd, buf, strlen(want)) && !memcmp(buf, want, strlen(want)),
		 "%s: got '%s', want '%s'", what, buf, want);
}

static void nothing_more(int fd, const char *what)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

	tp_check(n < 0 && errno == EAGAIN, "%s: more data than was sent (%zd)", what, n);
}

static void child(int s)
{
	char buf[32] = "";

	if (write(s, "child-before", 12) != 12)
		_exit(2);
	tp_wait_go();
	if (read(s, buf, 12) != 12 || memcmp(buf, "parent-after", 12))
		_exit(3);
	_exit(write(s, "child-after", 11) == 11 ? 0 : 4);
}

int main(int argc, char **argv)
{
	int p[2], h[2], g[2], x[2], one = 1, v = 0, st, rcvbuf = 0;
	struct timeval tv = { 3, 500000 }, tv2;
	socklen_t sl = sizeof(v);
	char buf[BIG];

	tp_init(argc, argv);
	for (int i = 0; i < BIG; i++)
		big[i] = 'a' + i % 23;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, p) || socketpair(AF_UNIX, SOCK_STREAM, 0, h) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, g) || socketpair(AF_UNIX, SOCK_STREAM, 0, x))
		return 1;
	if (write(p[0], "to-one", 6) != 6 || write(p[0], big, BIG) != BIG ||
	    write(p[1], "to-zero-xyz", 11) != 11)
		return 1;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	setsockopt(p[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	v = 300000;
	setsockopt(p[1], SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	getsockopt(p[1], SOL_SOCKET, SO_RCVBUF, &rcvbuf, &sl);	/* as rmem_max lets it be */
	setsockopt(p[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	v = 2;
	setsockopt(p[1], SOL_SOCKET, SO_PEEK_OFF, &v, sizeof(v));
	if (write(h[0], "last words", 10) != 10 || shutdown(h[0], SHUT_WR))
		return 1;
	if (write(g[1], "orphan", 6) != 6 || close(g[1]))
		return 1;
	if (fork() == 0) {
		close(x[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* none left if the test fails */
		child(x[1]);
	}
	close(x[1]);
	sleep(1);
	tp_ready();
	tp_wait_go();

	tp_check(fcntl(p[0], F_GETFL) & O_NONBLOCK, "O_NONBLOCK lost");
	tp_check(!getsockopt(p[0], SOL_SOCKET, SO_PASSCRED, &v, &sl) && v, "SO_PASSCRED lost");
	sl = sizeof(v);
	tp_check(!getsockopt(p[1], SOL_SOCKET, SO_RCVBUF, &v, &sl) && v == rcvbuf,
		 "SO_RCVBUF %d, want %d", v, rcvbuf);
	sl = sizeof(v);
	tp_check(!getsockopt(p[1], SOL_SOCKET, SO_PEEK_OFF, &v, &sl) && v == 2,
		 "SO_PEEK_OFF %d, want 2", v);
	v = -1;
	setsockopt(p[1], SOL_SOCKET, SO_PEEK_OFF, &v, sizeof(v));
	sl = sizeof(tv2);
	tp_check(!getsockopt(p[1], SOL_SOCKET, SO_RCVTIMEO, &tv2, &sl) &&
		 tv2.tv_sec == 3 && tv2.tv_usec == 500000, "SO_RCVTIMEO lost");

	expect(p[1], "to-one", "pair, queued for one");
	tp_check(!take(p[1], buf, BIG) && !memcmp(buf, big, BIG), "the big queue differs");
	nothing_more(p[1], "pair, one");
	expect(p[0], "to-zero-xyz", "pair, queued for zero");
	nothing_more(p[0], "pair, zero");
	tp_check(write(p[0], "new->1", 6) == 6 && write(p[1], "new->0", 6) == 6, "pair: write");
	expect(p[1], "new->1", "pair, new data to one");
	expect(p[0], "new->0", "pair, new data to zero");

	expect(h[1], "last words", "half-closed pair");
	tp_check(recv(h[1], buf, 1, MSG_DONTWAIT) == 0, "half-closed pair: no EOF after the data");
	tp_check(write(h[1], "reply", 5) == 5, "half-closed pair: the open way is shut");
	expect(h[0], "reply", "half-closed pair, the open way");
	tp_check(send(h[0], "x", 1, MSG_NOSIGNAL) < 0 && errno == EPIPE,
		 "half-closed pair: writing the shut way works");

	expect(g[0], "orphan", "pair whose peer closed");
	tp_check(recv(g[0], buf, 1, MSG_DONTWAIT) == 0, "pair whose peer closed: no EOF");

	expect(x[0], "child-before", "parent and child");
	tp_check(write(x[0], "parent-after", 12) == 12, "parent and child: write");
	tp_check(read(x[0], buf, 11) == 11 && !memcmp(buf, "child-after", 11),
		 "parent and child: the child's answer");
	tp_check(wait(&st) > 0 && WIFEXITED(st) && !WEXITSTATUS(st), "child failed: 0x%x", st);
	return tp_done();
}
