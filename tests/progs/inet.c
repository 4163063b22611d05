/* inet.c - TCP and UDP sockets, IPv4 and IPv6, with both ends of each
 * connection inside the process (checkpointed with --tcp-established,
 * tests/progs/inet.flags).
 *
 * Before the checkpoint: a listener (SO_REUSEADDR, O_NONBLOCK, backlog 7)
 * on an ephemeral loopback port; a connection to it, accepted, with bytes
 * written each way and not read (they sit in the receive queue, and
 * what the loopback did not take yet in the send queue); one over IPv6
 * whose client wrote and shut down its side (FIN_WAIT2), its server
 * reading nothing yet (CLOSE_WAIT); UDP sockets
 * bound on IPv4 and IPv6 (with IPV6_V6ONLY), with datagrams waiting in
 * them, and one connected; options set on them.  After restart:
 * the same ports and options, the unread bytes arrive exactly once, new
 * bytes flow both ways, the half-closed one gives its bytes then EOF and
 * still carries bytes the other way, the waiting datagrams arrive once,
 * from where they came, the listener accepts a new client, datagrams go
 * both ways.  A fresh process has none of these sockets.
 */
#include "tp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#define BIG	200000		/* more than the loopback sends at once */

static int lst, cli, srv, u4, u6, uc;
static int srv_sndbuf;		/* as set, before the checkpoint */
static struct sockaddr_in lst_addr;

static void die(const char *what)
{
	printf("FAIL: setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int opt(int fd, int level, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);

	getsockopt(fd, level, name, &v, &l);
	return v;
}

static void set(int fd, int level, int name, int v)
{
	if (setsockopt(fd, level, name, &v, sizeof(v)))
		die("setsockopt");
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);

	if (getsockname(fd, (void *)&ss, &l))
		return -1;
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int tcp_pair(int *c, int *s)
{
	*c = socket(AF_INET, SOCK_STREAM, 0);
	if (*c < 0 || connect(*c, (void *)&lst_addr, sizeof(lst_addr)))
		return -1;
	for (int i = 0; i < 1000; i++) {
		*s = accept(lst, NULL, NULL);
		if (*s >= 0 || errno != EAGAIN)
			break;
		usleep(1000);
	}
	return *s < 0 ? -1 : 0;
}

/* Exactly @len bytes of @want arrive on @fd, and nothing after them. */
static void expect(int fd, const char *want, size_t len, const char *what)
{
	char *buf = malloc(len + 16);
	size_t got = 0;
	struct pollfd p = { fd, POLLIN, 0 };

	while (got < len && poll(&p, 1, 3000) == 1) {
		ssize_t k = recv(fd, buf + got, len - got, MSG_DONTWAIT);

		if (k <= 0)
			break;
		got += k;
	}
	tp_check(got == len && !memcmp(buf, want, len), "%s: %zu of %zu bytes right", what,
		 got, len);
	tp_check(recv(fd, buf, 16, MSG_DONTWAIT | MSG_PEEK) <= 0, "%s: more bytes than sent",
		 what);
	free(buf);
}

static char big[BIG];

static void setup_tcp(void)
{
	struct linger lg = { 1, 5 };

	lst = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	set(lst, SOL_SOCKET, SO_REUSEADDR, 1);
	lst_addr.sin_family = AF_INET;
	lst_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lst < 0 || bind(lst, (void *)&lst_addr, sizeof(lst_addr)) || listen(lst, 7))
		die("listener");
	lst_addr.sin_port = htons(port_of(lst));
	if (tcp_pair(&cli, &srv))
		die("connection");
	set(cli, SOL_SOCKET, SO_KEEPALIVE, 1);
	set(cli, IPPROTO_TCP, TCP_KEEPIDLE, 77);
	set(srv, IPPROTO_TCP, TCP_NODELAY, 1);
	set(srv, SOL_SOCKET, SO_SNDBUF, 300000);
	/* twice that, or twice net.core.wmem_max if that is less */
	srv_sndbuf = opt(srv, SOL_SOCKET, SO_SNDBUF);
	if (setsockopt(cli, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) ||
	    setsockopt(cli, SOL_SOCKET, SO_SNDTIMEO, &(struct timeval){ 7, 0 },
		       sizeof(struct timeval)))
		die("linger");
	for (int i = 0; i < BIG; i++)
		big[i] = (char)(i * 13 + i / 251);
	if (send(cli, "client says hi", 14, 0) != 14)
		die("send");
	/* more than the loopback takes at once: some waits in srv's queue */
	fcntl(srv, F_SETFL, O_NONBLOCK);
	for (size_t done = 0; done < BIG;) {
		ssize_t k = send(srv, big + done, BIG - done, 0);

		if (k < 0 && errno != EAGAIN)
			die("send big");
		if (k < 0)
			usleep(1000);
		else
			done += k;
		if (k < 0)
			break;	/* srv's queue is full: the rest is sent later */
	}
}

static int u6_port, uc_port, us, u6s, us_port, u6s_port;

static void setup_udp(void)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 3, 500000 };	/* whole jiffies */

	u4 = socket(AF_INET, SOCK_DGRAM, 0);
	u6 = socket(AF_INET6, SOCK_DGRAM, 0);
	uc = socket(AF_INET, SOCK_DGRAM, 0);
	if (u4 < 0 || u6 < 0 || uc < 0)
		die("udp");
	set(u6, IPPROTO_IPV6, IPV6_V6ONLY, 1);
	set(u6, SOL_SOCKET, SO_REUSEPORT, 1);
	set(u4, SOL_SOCKET, SO_BROADCAST, 1);
	set(u4, SOL_SOCKET, SO_RCVBUF, 100000);
	if (setsockopt(u4, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(u4, (void *)&a4, sizeof(a4)) || bind(u6, (void *)&a6, sizeof(a6)))
		die("udp bind");
	u6_port = port_of(u6);
	a4.sin_port = htons(port_of(u4));
	if (connect(uc, (void *)&a4, sizeof(a4)))
		die("udp connect");
	uc_port = port_of(uc);
	/* datagrams left unread: from uc, an empty one, from another socket,
	 * and one over IPv6 */
	us = socket(AF_INET, SOCK_DGRAM, 0);
	u6s = socket(AF_INET6, SOCK_DGRAM, 0);
	a6.sin6_port = htons(u6_port);
	if (send(uc, "queued one", 10, 0) != 10 || send(uc, "", 0, 0) != 0 ||
	    sendto(us, "queued two", 10, 0, (void *)&a4, sizeof(a4)) != 10 ||
	    sendto(u6s, "queued six", 10, 0, (void *)&a6, sizeof(a6)) != 10)
		die("queued datagrams");
	us_port = port_of(us);
	u6s_port = port_of(u6s);
	close(us);
}

/* The next datagram on @fd is @want, from @port. */
static void expect_dgram(int fd, const char *want, int port, const char *what)
{
	struct sockaddr_storage from;
	socklen_t l = sizeof(from);
	char b[64];
	ssize_t k = recvfrom(fd, b, sizeof(b), MSG_DONTWAIT, (void *)&from, &l);

	tp_check(k == (ssize_t)strlen(want) && !memcmp(b, want, k) &&
		 ntohs(((struct sockaddr_in *)&from)->sin_port) == port,
		 "%s: got %zd bytes from port %d", what, k,
		 ntohs(((struct sockaddr_in *)&from)->sin_port));
}

static void check_udp(int u4_port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT,
				   .sin6_port = htons(u6_port) };
	struct timeval tv;
	socklen_t l = sizeof(tv);
	char b[16] = "";
	int s6 = socket(AF_INET6, SOCK_DGRAM, 0);

	tp_check(port_of(u4) == u4_port && port_of(u6) == u6_port && port_of(uc) == uc_port,
		 "UDP ports changed");
	tp_check(opt(u6, IPPROTO_IPV6, IPV6_V6ONLY) == 1, "IPV6_V6ONLY lost");
	tp_check(opt(u6, SOL_SOCKET, SO_REUSEPORT) == 1, "SO_REUSEPORT lost");
	getsockopt(cli, SOL_SOCKET, SO_SNDTIMEO, &tv, &l);
	tp_check(tv.tv_sec == 7 && tv.tv_usec == 0, "SO_SNDTIMEO lost");
	l = sizeof(tv);
	tp_check(opt(u4, SOL_SOCKET, SO_BROADCAST) == 1, "SO_BROADCAST lost");
	tp_check(opt(u4, SOL_SOCKET, SO_RCVBUF) == 200000, "SO_RCVBUF %d",
		 opt(u4, SOL_SOCKET, SO_RCVBUF));
	getsockopt(u4, SOL_SOCKET, SO_RCVTIMEO, &tv, &l);
	tp_check(tv.tv_sec == 3 && tv.tv_usec == 500000, "SO_RCVTIMEO lost");
	expect_dgram(u4, "queued one", uc_port, "queued datagram");
	expect_dgram(u4, "", uc_port, "queued empty datagram");
	expect_dgram(u4, "queued two", us_port, "queued datagram, other source");
	expect_dgram(u6, "queued six", u6s_port, "queued IPv6 datagram");
	/* the connected one still sends to u4, and only takes from it */
	tp_check(send(uc, "dgram", 5, 0) == 5, "connected UDP send: %s", strerror(errno));
	tp_check(recv(u4, b, sizeof(b), 0) == 5 && !memcmp(b, "dgram", 5), "UDP v4 recv");
	tp_check(sendto(s6, "six", 3, 0, (void *)&a6, sizeof(a6)) == 3, "UDP v6 send");
	tp_check(recv(u6, b, sizeof(b), MSG_DONTWAIT) == 3 ||
		 (usleep(100000), recv(u6, b, sizeof(b), MSG_DONTWAIT) == 3), "UDP v6 recv");
	close(s6);
}

/* The far end's FIN arrived after the data: a read of 0. */
static void expect_eof(int fd, const char *what)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char b;

	tp_check(poll(&p, 1, 3000) == 1 && recv(fd, &b, 1, 0) == 0, "%s: no EOF", what);
}

static int fin_cli, fin_srv;

static void setup_fin(void)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	socklen_t l = sizeof(a6);
	int l6 = socket(AF_INET6, SOCK_STREAM, 0);

	fin_cli = socket(AF_INET6, SOCK_STREAM, 0);
	if (l6 < 0 || fin_cli < 0 || bind(l6, (void *)&a6, sizeof(a6)) || listen(l6, 1) ||
	    getsockname(l6, (void *)&a6, &l) || connect(fin_cli, (void *)&a6, sizeof(a6)) ||
	    (fin_srv = accept(l6, NULL, NULL)) < 0)
		die("v6 connection");
	close(l6);
	if (send(fin_cli, "last words", 10, 0) != 10 || shutdown(fin_cli, SHUT_WR))
		die("v6 shutdown");
}

static void check_fin(void)
{
	expect(fin_srv, "last words", 10, "v6 before FIN");
	expect_eof(fin_srv, "v6 FIN");
	tp_check(send(fin_srv, "reply", 5, 0) == 5, "v6 reply to a half-closed end");
	expect(fin_cli, "reply", 5, "v6 reply");
	tp_check(shutdown(fin_srv, SHUT_WR) == 0, "v6 shutdown of the other side");
	expect_eof(fin_cli, "v6 FIN back");
}

int main(int argc, char **argv)
{
	int lst_port, cli_port, srv_port, nc, ns, u4_port;
	char hello[] = "more after restart";

	tp_init(argc, argv);
	setup_tcp();
	setup_udp();
	setup_fin();
	lst_port = port_of(lst);
	cli_port = port_of(cli);
	srv_port = port_of(srv);
	u4_port = port_of(u4);
	tp_ready();
	tp_wait_go();

	tp_check(port_of(lst) == lst_port && port_of(cli) == cli_port &&
		 port_of(srv) == srv_port, "TCP ports changed");
	tp_check(opt(lst, SOL_SOCKET, SO_REUSEADDR) == 1, "listener lost SO_REUSEADDR");
	tp_check(opt(lst, SOL_SOCKET, SO_ACCEPTCONN) == 1, "listener is not listening");
	tp_check(fcntl(lst, F_GETFL) & O_NONBLOCK, "listener lost O_NONBLOCK");
	tp_check(opt(cli, SOL_SOCKET, SO_KEEPALIVE) == 1, "SO_KEEPALIVE lost");
	tp_check(opt(cli, IPPROTO_TCP, TCP_KEEPIDLE) == 77, "TCP_KEEPIDLE lost");
	tp_check(opt(srv, IPPROTO_TCP, TCP_NODELAY) == 1, "TCP_NODELAY lost");
	tp_check(opt(srv, SOL_SOCKET, SO_SNDBUF) == srv_sndbuf, "SO_SNDBUF %d, want %d",
		 opt(srv, SOL_SOCKET, SO_SNDBUF), srv_sndbuf);
	{
		struct linger lg;
		socklen_t l = sizeof(lg);

		getsockopt(cli, SOL_SOCKET, SO_LINGER, &lg, &l);
		tp_check(lg.l_onoff == 1 && lg.l_linger == 5, "SO_LINGER lost");
	}
	/* what was in flight arrives, once */
	expect(srv, "client says hi", 14, "client to server");
	expect(cli, big, BIG, "server to client");
	/* and the connection goes on, both ways */
	tp_check(send(cli, hello, sizeof(hello), 0) == sizeof(hello), "send after restart");
	expect(srv, hello, sizeof(hello), "client to server after");
	tp_check(send(srv, "pong", 4, 0) == 4, "send back after restart");
	expect(cli, "pong", 4, "server to client after");
	/* the listener takes new clients */
	tp_check(tcp_pair(&nc, &ns) == 0, "listener does not accept: %s", strerror(errno));
	tp_check(send(nc, "new", 3, 0) == 3, "new client send");
	expect(ns, "new", 3, "new client");
	check_udp(u4_port);
	check_fin();
	return tp_done();
}
