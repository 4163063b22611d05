/* unix_listen.c - a stream listener bound to a path and a seqpacket one
 * bound to an abstract name, with connections waiting in their backlogs
 * and an accepted connection with data queued both ways, and stream
 * sockets not connected yet, one bound: after restart the waiting
 * connections are accepted in their order, the data arrives once, new
 * clients connect, and the others can still connect or listen. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "tp.h"

static socklen_t addr(struct sockaddr_un *a, const char *name, bool abstract)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(name) + 2 > sizeof(a->sun_path))
		exit(1);
	memcpy(a->sun_path + abstract, name, strlen(name));
	return offsetof(struct sockaddr_un, sun_path) + abstract + strlen(name) + !abstract;
}

static int client(int type, struct sockaddr_un *a, socklen_t len)
{
	int s = socket(AF_UNIX, type, 0);

	return s >= 0 && !connect(s, (struct sockaddr *)a, len) ? s : -1;
}

static void expect(int fd, const char *want, const char *what)
{
	char buf[64] = "";
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	tp_check(n == (ssize_t)strlen(want) && !memcmp(buf, want, n), "%s: got %zd '%s', want '%s'",
		 what, n, buf, want);
}

/* the next connection of @l: a client's message must come through it */
static void accept_from(int l, int c, const char *msg, const char *what)
{
	int s = accept(l, NULL, NULL);

	tp_check(s >= 0, "%s: accept: %s", what, strerror(errno));
	tp_check(send(c, msg, strlen(msg), 0) == (ssize_t)strlen(msg), "%s: send", what);
	if (s >= 0)
		expect(s, msg, what);
	tp_check(s < 0 || send(s, "ack", 3, 0) == 3, "%s: answer", what);
	expect(c, "ack", what);
}

int main(int argc, char **argv)
{
	struct sockaddr_un pa, aa;
	socklen_t pl, al;
	int l, a, c0, s0, c1, c2, q1, n, fresh, bound;
	struct sockaddr_un ba;
	socklen_t bl;
	char path[200], abs_name[64], bpath[200];
	const char *tmp = getenv("TP_TMPDIR");
	struct stat st;

	tp_init(argc, argv);
	snprintf(path, sizeof(path), "%s/listen.sock", tmp ? tmp : "/tmp");
	snprintf(abs_name, sizeof(abs_name), "ckpt-test-listen-%d", getpid());
	unlink(path);
	pl = addr(&pa, path, false);
	al = addr(&aa, abs_name, true);
	snprintf(bpath, sizeof(bpath), "%s/bound.sock", tmp ? tmp : "/tmp");
	unlink(bpath);
	bl = addr(&ba, bpath, false);
	fresh = socket(AF_UNIX, SOCK_STREAM, 0);
	bound = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(bound, (struct sockaddr *)&ba, bl))
		return 1;
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	a = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (bind(l, (struct sockaddr *)&pa, pl) || listen(l, 8) || chmod(path, 0700) ||
	    bind(a, (struct sockaddr *)&aa, al) || listen(a, 4))
		return 1;
	fcntl(l, F_SETFL, O_NONBLOCK);
	c0 = client(SOCK_STREAM, &pa, pl);
	s0 = accept(l, NULL, NULL);
	c1 = client(SOCK_STREAM, &pa, pl);
	c2 = client(SOCK_STREAM, &pa, pl);
	q1 = client(SOCK_SEQPACKET, &aa, al);
	if (c0 < 0 || s0 < 0 || c1 < 0 || c2 < 0 || q1 < 0)
		return 1;
	if (send(c0, "hello-server", 12, 0) != 12 || send(s0, "hello-client", 12, 0) != 12)
		return 1;
	if (fork() == 0) {	/* shares the listener, as a prefork server */
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* none left if the test fails */
		int on = 0;
		socklen_t ol = sizeof(on);

		tp_wait_go();
		_exit(getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &on, &ol) || !on ||
		      !(fcntl(l, F_GETFL) & O_NONBLOCK));
	}
	tp_ready();
	tp_wait_go();

	tp_check(fcntl(l, F_GETFL) & O_NONBLOCK, "listener: O_NONBLOCK lost");
	tp_check(!stat(path, &st) && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0700,
		 "socket file: mode 0%o", st.st_mode);
	expect(s0, "hello-server", "accepted connection, to the server");
	expect(c0, "hello-client", "accepted connection, to the client");
	tp_check(send(s0, "more", 4, 0) == 4, "accepted connection: send");
	expect(c0, "more", "accepted connection, new data");

	accept_from(l, c1, "first", "first waiting connection");
	accept_from(l, c2, "second", "second waiting connection");
	tp_check(accept(l, NULL, NULL) < 0 && errno == EAGAIN, "a connection more than waited");
	n = client(SOCK_STREAM, &pa, pl);
	tp_check(n >= 0, "new client: connect to %s: %s", path, strerror(errno));
	if (n >= 0)
		accept_from(l, n, "new", "new client");

	accept_from(a, q1, "seq", "waiting seqpacket connection");
	n = client(SOCK_SEQPACKET, &aa, al);
	tp_check(n >= 0, "new seqpacket client: connect: %s", strerror(errno));
	if (n >= 0)
		accept_from(a, n, "newseq", "new seqpacket client");
	n = connect(fresh, (struct sockaddr *)&pa, pl);
	tp_check(!n, "unconnected socket: connect: %s", strerror(errno));
	if (!n)
		accept_from(l, fresh, "fresh", "socket unconnected until now");
	tp_check(!listen(bound, 1), "bound socket: listen: %s", strerror(errno));
	n = client(SOCK_STREAM, &ba, bl);
	tp_check(n >= 0, "client of the bound socket: connect: %s", strerror(errno));
	if (n >= 0)
		accept_from(bound, n, "late", "socket bound, listening after restart");
	tp_check(wait(&n) > 0 && WIFEXITED(n) && !WEXITSTATUS(n),
		 "the child sharing the listener: 0x%x", n);
	unlink(path);
	unlink(bpath);
	return tp_done();
}
