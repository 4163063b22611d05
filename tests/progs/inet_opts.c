/* inet_opts.c - the options and kinds of internet sockets beyond plain
 * TCP and UDP: socket, IP, IPv6, TCP, UDP-Lite and raw options set to
 * values a new socket does not have, a classic BPF filter (locked),
 * UDP sockets shut down, one bound with IP_FREEBIND to an address the
 * host does not have (IP_FREEBIND cleared since), UDP-Lite sockets with
 * a datagram waiting, raw sockets (ICMP with ICMP_FILTER and connected,
 * ICMPv6 with ICMPV6_FILTER, UDP with IP_HDRINCL) bound where nothing
 * else sends,
 * and ping sockets (SOCK_DGRAM IPPROTO_ICMP/ICMPV6) where the host lets
 * root make them (net.ipv4.ping_group_range; INET_NEED_PING=1: they
 * must be there); SO_PASSSEC on a unix socket.
 *
 * After restart: every option reads as set, the filter is the same
 * program, the kinds and bound addresses are the same, the raw socket
 * sends without an address (connected), a socket shut
 * for writing cannot send but receives, one shut for reading polls
 * RDHUP, the UDP-Lite datagram arrives once from its sender and new ones
 * flow, the ping sockets keep their echo id and get an echo reply.
 */
#include "tp.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK		72
#endif
#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND		78
#endif
#define SOL_UDPLITE		136
#define UDPLITE_SEND_CSCOV	10
#define UDPLITE_RECV_CSCOV	11
#define PING_ID			4242

enum { TCP4, TCP6, UDP_WR, UDP_PEER, UDP_RD, UDP_FREE, LITE, LITE_TX, RAW_ICMP,
       RAW_ICMP6, RAW_UDP, PING4, PING6, PING_UNBOUND, UNIX, UNIX_PEER, NR };

static int sk[NR];
static bool have_ping;

static const struct opt {
	int s, level, name, val;
} opts[] = {
	{ TCP4, IPPROTO_IP, IP_TOS, 0x10 },	/* sets SO_PRIORITY too: first */
	{ TCP4, SOL_SOCKET, SO_PRIORITY, 5 },
	{ TCP4, SOL_SOCKET, SO_MARK, 7 },
	{ TCP4, SOL_SOCKET, SO_RCVLOWAT, 9 },
	{ TCP4, SOL_SOCKET, SO_OOBINLINE, 1 },
	{ TCP4, SOL_SOCKET, SO_DONTROUTE, 1 },
	{ TCP4, SOL_SOCKET, SO_TIMESTAMPNS, 1 },
	{ TCP4, SOL_SOCKET, SO_BUF_LOCK, 2 },
	{ TCP4, IPPROTO_TCP, TCP_CORK, 1 },
	{ TCP4, IPPROTO_TCP, TCP_NODELAY, 1 },
	{ TCP4, IPPROTO_TCP, TCP_USER_TIMEOUT, 12345 },
	{ TCP4, IPPROTO_TCP, TCP_SYNCNT, 3 },
	{ TCP4, IPPROTO_TCP, TCP_LINGER2, 17 },
	{ TCP4, IPPROTO_IP, IP_TTL, 33 },
	{ TCP6, IPPROTO_IPV6, IPV6_TCLASS, 0x20 },
	{ TCP6, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 44 },
	{ TCP6, IPPROTO_TCP, TCP_SAVE_SYN, 1 },
	{ TCP6, IPPROTO_TCP, TCP_FASTOPEN, 5 },
	{ TCP6, SOL_SOCKET, SO_BUF_LOCK, 3 },
	{ UDP_WR, IPPROTO_IP, IP_PKTINFO, 1 },
	{ UDP_WR, IPPROTO_IP, IP_RECVTOS, 1 },
	{ UDP_WR, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO },
	{ UDP_WR, IPPROTO_IP, IP_MULTICAST_TTL, 9 },
	{ UDP_WR, SOL_SOCKET, SO_LOCK_FILTER, 1 },
	{ UDP_FREE, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1 },
	{ UDP_FREE, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, 3 },
	{ LITE, SOL_UDPLITE, UDPLITE_SEND_CSCOV, 20 },
	{ LITE, SOL_UDPLITE, UDPLITE_RECV_CSCOV, 12 },
	{ RAW_UDP, IPPROTO_IP, IP_HDRINCL, 1 },
	{ PING4, IPPROTO_IP, IP_RECVERR, 1 },
	{ PING6, IPPROTO_IPV6, IPV6_RECVERR, 1 },
	{ UNIX, SOL_SOCKET, SO_PASSSEC, 1 },	/* unix sockets keep it too */
};
#define NR_OPTS	(int)(sizeof(opts) / sizeof(opts[0]))

static struct sock_filter prog[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 1000, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, 0xffff),
	BPF_STMT(BPF_RET | BPF_K, 0),
};

static void die(const char *what)
{
	printf("FAIL: setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int mk(int family, int type, int proto)
{
	int s = socket(family, type, proto);

	if (s < 0)
		die("socket");
	return s;
}

static struct sockaddr_in a4(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static struct sockaddr_in6 a6(const char *ip, int port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	inet_pton(AF_INET6, ip, &a.sin6_addr);
	return a;
}

static void set(int s, int level, int name, int val)
{
	if (setsockopt(s, level, name, &val, sizeof(val)))
		die("setsockopt");
}

static void bind4(int s, const char *ip, int port)
{
	struct sockaddr_in a = a4(ip, port);

	if (bind(s, (void *)&a, sizeof(a)))
		die("bind");
}

static void bind6(int s, const char *ip, int port)
{
	struct sockaddr_in6 a = a6(ip, port);

	if (bind(s, (void *)&a, sizeof(a)))
		die("bind6");
}

static int port_of(int s)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);

	if (getsockname(s, (void *)&ss, &l))
		return -1;
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
					       ((struct sockaddr_in6 *)&ss)->sin6_port);
}

static void connect_to(int s, int peer)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);

	if (getsockname(peer, (void *)&ss, &l) || connect(s, (void *)&ss, l))
		die("connect");
}

static void setup_ping(void)
{
	struct sockaddr_in a = a4("127.0.0.1", PING_ID);
	struct sockaddr_in6 b = a6("::1", PING_ID);

	sk[PING4] = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
	if (sk[PING4] < 0 && errno == EACCES && !getenv("INET_NEED_PING")) {
		printf("no ping sockets here (net.ipv4.ping_group_range)\n");
		return;
	}
	if (sk[PING4] < 0)
		die("ping socket");
	sk[PING6] = mk(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6);
	sk[PING_UNBOUND] = mk(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
	if (bind(sk[PING4], (void *)&a, sizeof(a)) || bind(sk[PING6], (void *)&b, sizeof(b)))
		die("ping bind");
	have_ping = true;
}

static void setup_raw(void)
{
	struct icmp_filter f4 = { ~(1u << ICMP_ECHOREPLY) };
	struct icmp6_filter f6;

	memset(&f6, 0xff, sizeof(f6));
	f6.data[0] &= ~(1u << (ICMPV6_ECHO_REPLY & 31));
	sk[RAW_ICMP] = mk(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	bind4(sk[RAW_ICMP], "127.0.0.14", 0);
	connect_to(sk[RAW_ICMP], sk[RAW_ICMP]);
	if (setsockopt(sk[RAW_ICMP], SOL_RAW, ICMP_FILTER, &f4, sizeof(f4)))
		die("ICMP_FILTER");
	sk[RAW_ICMP6] = mk(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
	set(sk[RAW_ICMP6], IPPROTO_IPV6, IPV6_FREEBIND, 1);
	bind6(sk[RAW_ICMP6], "2001:db8::14", 0);
	if (setsockopt(sk[RAW_ICMP6], SOL_ICMPV6, ICMPV6_FILTER, &f6, sizeof(f6)))
		die("ICMPV6_FILTER");
	sk[RAW_UDP] = mk(AF_INET, SOCK_RAW, IPPROTO_UDP);
	bind4(sk[RAW_UDP], "127.0.0.13", 0);
}

static void setup(void)
{
	struct sock_fprog fp = { sizeof(prog) / sizeof(prog[0]), prog };

	for (int i = 0; i < NR; i++)
		sk[i] = -1;
	sk[TCP4] = mk(AF_INET, SOCK_STREAM, 0);
	if (setsockopt(sk[TCP4], SOL_SOCKET, SO_BINDTODEVICE, "lo", 3))
		die("SO_BINDTODEVICE");
	sk[TCP6] = mk(AF_INET6, SOCK_STREAM, 0);
	bind6(sk[TCP6], "::1", 0);
	if (listen(sk[TCP6], 3))
		die("listen");
	sk[UDP_WR] = mk(AF_INET, SOCK_DGRAM, 0);
	sk[UDP_PEER] = mk(AF_INET, SOCK_DGRAM, 0);
	bind4(sk[UDP_WR], "127.0.0.1", 0);
	bind4(sk[UDP_PEER], "127.0.0.1", 0);
	connect_to(sk[UDP_WR], sk[UDP_PEER]);
	connect_to(sk[UDP_PEER], sk[UDP_WR]);
	if (setsockopt(sk[UDP_WR], SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)))
		die("SO_ATTACH_FILTER");
	shutdown(sk[UDP_WR], SHUT_WR);
	sk[UDP_RD] = mk(AF_INET, SOCK_DGRAM, 0);
	shutdown(sk[UDP_RD], SHUT_RD);	/* ENOTCONN, but done */
	sk[UDP_FREE] = mk(AF_INET6, SOCK_DGRAM, 0);
	set(sk[UDP_FREE], IPPROTO_IPV6, IPV6_FREEBIND, 1);
	bind6(sk[UDP_FREE], "2001:db8::42", 0);
	set(sk[UDP_FREE], IPPROTO_IPV6, IPV6_FREEBIND, 0);
	sk[LITE] = mk(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE);
	sk[LITE_TX] = mk(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE);
	bind4(sk[LITE], "127.0.0.1", 0);
	bind4(sk[LITE_TX], "127.0.0.1", 0);
	connect_to(sk[LITE_TX], sk[LITE]);
	setup_raw();
	setup_ping();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, &sk[UNIX]))
		die("socketpair");
	for (int i = 0; i < NR_OPTS; i++)
		if (sk[opts[i].s] >= 0)
			set(sk[opts[i].s], opts[i].level, opts[i].name, opts[i].val);
	if (send(sk[LITE_TX], "lite", 4, 0) != 4)
		die("send UDP-Lite");
}

static void check_opts(void)
{
	char dev[16] = "";
	socklen_t l = sizeof(dev);
	struct sock_filter got[8];

	for (int i = 0; i < NR_OPTS; i++) {
		int v = -1;
		socklen_t vl = sizeof(v);

		if (sk[opts[i].s] < 0)
			continue;
		tp_check(!getsockopt(sk[opts[i].s], opts[i].level, opts[i].name, &v, &vl) &&
			 v == opts[i].val, "socket %d option %d/%d: %d, want %d",
			 opts[i].s, opts[i].level, opts[i].name, v, opts[i].val);
	}
	tp_check(!getsockopt(sk[TCP4], SOL_SOCKET, SO_BINDTODEVICE, dev, &l) &&
		 !strcmp(dev, "lo"), "SO_BINDTODEVICE: '%s'", dev);
	l = 0;
	tp_check(!getsockopt(sk[UDP_WR], SOL_SOCKET, SO_GET_FILTER, NULL, &l) &&
		 l == sizeof(prog) / sizeof(prog[0]), "filter of %u instructions", l);
	memset(got, 0, sizeof(got));
	tp_check(!getsockopt(sk[UDP_WR], SOL_SOCKET, SO_GET_FILTER, got, &l) &&
		 !memcmp(got, prog, sizeof(prog)), "not the same filter");
}

static int sock_type(int s, int *t)
{
	socklen_t l = sizeof(*t);

	return getsockopt(s, SOL_SOCKET, SO_TYPE, t, &l);
}

/* @s bound to @ip (IPv4 or IPv6 text)? */
static bool bound_to(int s, const char *ip)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);
	char b[INET6_ADDRSTRLEN] = "";

	if (getsockname(s, (void *)&ss, &l))
		return false;
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, b, sizeof(b));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, b, sizeof(b));
	return !strcmp(b, ip);
}

static void check_kinds(void)
{
	struct icmp_filter f4 = { 0 };
	uint32_t f6[8] = { 0 };
	socklen_t l = sizeof(f4);
	int fb = -1;

	tp_check(!getsockopt(sk[RAW_ICMP], SOL_RAW, ICMP_FILTER, &f4, &l) &&
		 f4.data == ~(1u << ICMP_ECHOREPLY), "ICMP_FILTER %x", f4.data);
	l = sizeof(f6);
	tp_check(!getsockopt(sk[RAW_ICMP6], SOL_ICMPV6, ICMPV6_FILTER, f6, &l) &&
		 f6[0] == ~(1u << (ICMPV6_ECHO_REPLY & 31)) && f6[7] == ~0u,
		 "ICMPV6_FILTER %x %x", f6[0], f6[7]);
	for (int i = RAW_ICMP; i <= RAW_UDP; i++) {
		int t = 0;

		tp_check(!sock_type(sk[i], &t) && t == SOCK_RAW, "socket %d not raw", i);
	}
	l = sizeof(fb);
	tp_check(!getsockopt(sk[UDP_FREE], IPPROTO_IPV6, IPV6_FREEBIND, &fb, &l) && fb == 0,
		 "IPV6_FREEBIND %d", fb);
	tp_check(port_of(sk[UDP_FREE]) > 0, "the free-bound socket lost its port");
}

static void check_flows(int lite_tx_port)
{
	struct sockaddr_in from;
	socklen_t l = sizeof(from);
	struct pollfd pf = { sk[UDP_RD], POLLRDHUP, 0 };
	struct icmphdr echo = { .type = ICMP_ECHO };
	char b[16] = "";

	tp_check(bound_to(sk[RAW_ICMP], "127.0.0.14") && bound_to(sk[RAW_UDP], "127.0.0.13") &&
		 bound_to(sk[RAW_ICMP6], "2001:db8::14") && bound_to(sk[UDP_FREE], "2001:db8::42"),
		 "a raw or free-bound socket lost its address");
	tp_check(send(sk[RAW_ICMP], &echo, sizeof(echo), 0) == sizeof(echo),
		 "the raw socket is no longer connected: %s", strerror(errno));
	tp_check(send(sk[UDP_WR], "x", 1, MSG_DONTWAIT) < 0 && errno == EPIPE,
		 "sent on a socket shut for writing");
	tp_check(send(sk[UDP_PEER], "y", 1, 0) == 1 &&
		 recv(sk[UDP_WR], b, sizeof(b), 0) == 1 && b[0] == 'y',
		 "the socket shut for writing does not receive");
	tp_check(poll(&pf, 1, 0) == 1 && (pf.revents & POLLRDHUP), "not shut for reading");
	tp_check(recvfrom(sk[LITE], b, sizeof(b), MSG_DONTWAIT, (void *)&from, &l) == 4 &&
		 !memcmp(b, "lite", 4) && ntohs(from.sin_port) == lite_tx_port,
		 "the waiting UDP-Lite datagram");
	tp_check(recv(sk[LITE], b, sizeof(b), MSG_DONTWAIT) < 0, "a UDP-Lite datagram twice");
	tp_check(send(sk[LITE_TX], "more", 4, 0) == 4 &&
		 recv(sk[LITE], b, sizeof(b), 0) == 4 && !memcmp(b, "more", 4),
		 "a new UDP-Lite datagram");
}

/* An echo request from ping socket @s to @to, and its reply. */
static void ping(int s, const void *to, socklen_t tl, int type, int reply, int id)
{
	struct icmphdr h = { .type = type, .un.echo.sequence = htons(7) };
	struct timeval tv = { 2, 0 };
	struct icmphdr r = { 0 };

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tp_check(port_of(s) == id, "ping socket %d: echo id %d", s, port_of(s));
	tp_check(sendto(s, &h, sizeof(h), 0, to, tl) == sizeof(h) &&
		 recv(s, &r, sizeof(r), 0) >= (ssize_t)sizeof(r) && r.type == reply &&
		 ntohs(r.un.echo.sequence) == 7, "ping socket %d: no echo reply", s);
}

int main(int argc, char **argv)
{
	struct sockaddr_in lo4 = a4("127.0.0.1", 0);
	struct sockaddr_in6 lo6 = a6("::1", 0);
	int lite_tx_port;

	tp_init(argc, argv);
	setup();
	lite_tx_port = port_of(sk[LITE_TX]);
	tp_ready();
	tp_wait_go();
	check_opts();
	check_kinds();
	check_flows(lite_tx_port);
	if (have_ping) {
		ping(sk[PING4], &lo4, sizeof(lo4), ICMP_ECHO, ICMP_ECHOREPLY, PING_ID);
		ping(sk[PING6], &lo6, sizeof(lo6), ICMPV6_ECHO_REQUEST, ICMPV6_ECHO_REPLY,
		     PING_ID);
		ping(sk[PING_UNBOUND], &lo4, sizeof(lo4), ICMP_ECHO, ICMP_ECHOREPLY, 0);
	}
	return tp_done();
}
