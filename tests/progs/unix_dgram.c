/* unix_dgram.c - datagram and seqpacket sockets: pairs with messages
 * queued both ways (an empty one, a big one), a datagram server bound to
 * a path (and one to a path relative to the cwd) and one to an abstract
 * name with messages from a connected
 * client and from an unconnected sender: after restart every message
 * arrives exactly once, whole, in order, and new ones flow. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "tp.h"

#define BIG 5000

static char big[BIG];

static socklen_t addr(struct sockaddr_un *a, const char *name, bool abstract)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(name) + 2 > sizeof(a->sun_path))
		exit(1);
	memcpy(a->sun_path + abstract, name, strlen(name));
	return offsetof(struct sockaddr_un, sun_path) + abstract + strlen(name) + !abstract;
}

static void expect(int fd, const void *want, size_t len, const char *what)
{
	char buf[65536];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	tp_check(n == (ssize_t)len && !memcmp(buf, want, len),
		 "%s: got %zd bytes '%.*s', want %zu '%.*s'", what, n, n > 0 ? (int)(n < 40 ? n : 40) : 0,
		 buf, len, (int)(len < 40 ? len : 40), (const char *)want);
}
#define EXPECT(fd, s, what) expect(fd, s, strlen(s), what)

static void nothing_more(int fd, const char *what)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

	tp_check(n < 0 && errno == EAGAIN, "%s: a message more than was sent (%zd)", what, n);
}

int main(int argc, char **argv)
{
	int d[2], q[2], srv, abs_srv, rel_srv, cl, u;
	struct sockaddr_un sa, aa, ra;
	socklen_t sl, al, rl;
	char path[200], abs_name[64];
	const char *tmp = getenv("TP_TMPDIR");

	tp_init(argc, argv);
	snprintf(path, sizeof(path), "%s/dgram.sock", tmp ? tmp : "/tmp");
	snprintf(abs_name, sizeof(abs_name), "ckpt-test-dgram-%d", getpid());
	unlink(path);
	if (tmp && chdir(tmp))
		return 1;
	unlink("rel.sock");
	rl = addr(&ra, "rel.sock", false);
	for (int i = 0; i < BIG; i++)
		big[i] = 'A' + i % 26;
	sl = addr(&sa, path, false);
	al = addr(&aa, abs_name, true);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, d) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, q))
		return 1;
	srv = socket(AF_UNIX, SOCK_DGRAM, 0);
	abs_srv = socket(AF_UNIX, SOCK_DGRAM, 0);
	cl = socket(AF_UNIX, SOCK_DGRAM, 0);
	u = socket(AF_UNIX, SOCK_DGRAM, 0);
	rel_srv = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (bind(rel_srv, (struct sockaddr *)&ra, rl) ||
	    sendto(u, "r1", 2, 0, (struct sockaddr *)&ra, rl) != 2)
		return 1;
	if (bind(srv, (struct sockaddr *)&sa, sl) || bind(abs_srv, (struct sockaddr *)&aa, al) ||
	    connect(cl, (struct sockaddr *)&sa, sl))
		return 1;
	if (send(d[0], "m1", 2, 0) != 2 || send(d[0], "", 0, 0) != 0 ||
	    send(d[0], "message-three", 13, 0) != 13 || send(d[0], big, BIG, 0) != BIG ||
	    send(d[1], "back1", 5, 0) != 5 || send(d[1], "back2", 5, 0) != 5)
		return 1;
	if (send(q[0], "s1", 2, 0) != 2 || send(q[0], "s22", 3, 0) != 3 ||
	    send(q[0], "s333", 4, 0) != 4 || send(q[1], "r1", 2, 0) != 2)
		return 1;
	if (send(cl, "c1", 2, 0) != 2 || send(cl, "c2", 2, 0) != 2 ||
	    sendto(u, "u1", 2, 0, (struct sockaddr *)&sa, sl) != 2 ||
	    sendto(u, "a1", 2, 0, (struct sockaddr *)&aa, al) != 2)
		return 1;
	tp_ready();
	tp_wait_go();

	EXPECT(d[1], "m1", "dgram pair, message 1");
	expect(d[1], "", 0, "dgram pair, the empty message");
	EXPECT(d[1], "message-three", "dgram pair, message 3");
	expect(d[1], big, BIG, "dgram pair, the big message");
	nothing_more(d[1], "dgram pair, one");
	EXPECT(d[0], "back1", "dgram pair, back 1");
	EXPECT(d[0], "back2", "dgram pair, back 2");
	nothing_more(d[0], "dgram pair, zero");
	tp_check(send(d[0], "new0", 4, 0) == 4 && send(d[1], "new1", 4, 0) == 4, "dgram pair: send");
	EXPECT(d[1], "new0", "dgram pair, new to one");
	EXPECT(d[0], "new1", "dgram pair, new to zero");

	EXPECT(q[1], "s1", "seqpacket 1");
	EXPECT(q[1], "s22", "seqpacket 2");
	EXPECT(q[1], "s333", "seqpacket 3");
	nothing_more(q[1], "seqpacket, one");
	EXPECT(q[0], "r1", "seqpacket back");
	nothing_more(q[0], "seqpacket, zero");
	tp_check(send(q[1], "later", 5, 0) == 5, "seqpacket: send");
	EXPECT(q[0], "later", "seqpacket, new");

	EXPECT(srv, "c1", "bound server, from the client 1");
	EXPECT(srv, "c2", "bound server, from the client 2");
	EXPECT(srv, "u1", "bound server, from the sender");
	nothing_more(srv, "bound server");
	tp_check(send(cl, "c3", 2, 0) == 2, "connected client: send: %s", strerror(errno));
	tp_check(sendto(u, "u2", 2, 0, (struct sockaddr *)&sa, sl) == 2, "sendto path: %s",
		 strerror(errno));
	EXPECT(srv, "c3", "bound server, new from the client");
	EXPECT(srv, "u2", "bound server, new from the sender");

	EXPECT(abs_srv, "a1", "abstract server");
	nothing_more(abs_srv, "abstract server");
	tp_check(sendto(u, "a2", 2, 0, (struct sockaddr *)&aa, al) == 2, "sendto abstract: %s",
		 strerror(errno));
	EXPECT(abs_srv, "a2", "abstract server, new");
	EXPECT(rel_srv, "r1", "server bound to a relative path");
	tp_check(sendto(u, "r2", 2, 0, (struct sockaddr *)&ra, rl) == 2, "sendto relative path: %s",
		 strerror(errno));
	EXPECT(rel_srv, "r2", "server bound to a relative path, new");
	unlink(path);
	unlink("rel.sock");
	return tp_done();
}
