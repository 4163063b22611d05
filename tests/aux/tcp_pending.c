/* tcp_pending.c - a target with a loopback listener, one connection
 * waiting in its accept queue (its client end held here), and an
 * accepted connection with bytes sent each way.
 * usage: tcp_pending GOFILE queued|closed
 * Prints "READY pid port", waits for GOFILE, then checks:
 *   queued (checkpoint --tcp-established): the waiting connection is in
 *     the accept queue again and carries bytes both ways, and so does
 *     the accepted one (its bytes arrive once);
 *   closed (checkpoint --skip-in-flight, restart --tcp-close): nothing
 *     to accept, the accepted one and the client ends closed (state
 *     CLOSE, reads see the end, writes fail with EPIPE);
 * and that the listener accepts a new client.  PASS, or FAIL lines.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fails;

static void fail(const char *what)
{
	printf("FAIL %s (%s)\n", what, strerror(errno));
	fails++;
}

static int tcp_state(int sk)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len) ? -1 : ti.tcpi_state;
}

/* @a's bytes arrive on @b. */
static void expect_flow(int a, int b, const char *what)
{
	struct pollfd p = { .fd = b, .events = POLLIN };
	char buf[8] = "";

	if (write(a, "flow", 4) != 4 || poll(&p, 1, 5000) != 1 || read(b, buf, 8) != 4 ||
	    memcmp(buf, "flow", 4))
		fail(what);
}

static void expect_closed(int sk, const char *what)
{
	char c;

	if (tcp_state(sk) != TCP_CLOSE)
		fail(what);
	if (read(sk, &c, 1) != 0)
		fail(what);
	if (write(sk, "x", 1) != -1 || errno != EPIPE)
		fail(what);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lst, pending, cli, srv, n, fresh;
	struct pollfd p;

	if (argc < 3)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);
	lst = socket(AF_INET, SOCK_STREAM, 0);
	cli = socket(AF_INET, SOCK_STREAM, 0);
	pending = socket(AF_INET, SOCK_STREAM, 0);
	if (lst < 0 || cli < 0 || pending < 0 || bind(lst, (void *)&a, sizeof(a)) ||
	    listen(lst, 8) || getsockname(lst, (void *)&a, &alen) ||
	    connect(cli, (void *)&a, sizeof(a)) || (srv = accept(lst, NULL, NULL)) < 0 ||
	    write(cli, "ping", 4) != 4 || write(srv, "pong", 4) != 4 ||
	    connect(pending, (void *)&a, sizeof(a)) || fcntl(lst, F_SETFL, O_NONBLOCK))
		return printf("FAIL setting up: %s\n", strerror(errno)), 1;
	printf("READY %d %d\n", getpid(), ntohs(a.sin_port));
	while (access(argv[1], F_OK))
		usleep(2000);

	if (!strcmp(argv[2], "queued")) {
		char buf[8] = "";

		if (read(srv, buf, 8) != 4 || memcmp(buf, "ping", 4) || read(cli, buf, 8) != 4 ||
		    memcmp(buf, "pong", 4))
			fail("accepted: its bytes");
		expect_flow(cli, srv, "accepted: client to server");
		expect_flow(srv, cli, "accepted: server to client");
		if ((n = accept(lst, NULL, NULL)) < 0)
			fail("the waiting connection is not in the accept queue");
		expect_flow(pending, n, "the waiting one: client to server");
		expect_flow(n, pending, "the waiting one: server to client");
	} else {
		if ((n = accept(lst, NULL, NULL)) >= 0 || errno != EAGAIN)
			fail("a waiting connection to accept after --skip-in-flight");
		expect_closed(cli, "client: not closed");
		expect_closed(srv, "accepted: not closed");
		expect_closed(pending, "client of the dropped one: not closed");
	}
	fresh = socket(AF_INET, SOCK_STREAM, 0);
	p = (struct pollfd){ .fd = lst, .events = POLLIN };
	if (fresh < 0 || connect(fresh, (void *)&a, sizeof(a)) || poll(&p, 1, 5000) != 1 ||
	    (n = accept(lst, NULL, NULL)) < 0)
		fail("the listener accepts no new client");
	if (fails)
		return 1;
	printf("PASS\n");
	return 0;
}
