/* unix_dgram_self.c - datagram sockets as CRIU's sockets_dgram has them:
 * one bound and connected to its own name, with a message to itself
 * queued, and two clients connected to a bound server, each with a
 * message queued there.  The image once held a self-connected socket
 * that restart refused as a bad record. */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/un.h>

#include "tp.h"

static struct sockaddr_un name_of(const char *dir, const char *base)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, base);
	unlink(a.sun_path);
	return a;
}

static void expect(int sk, const char *want, const char *what)
{
	char buf[64] = { 0 };
	ssize_t n = recv(sk, buf, sizeof(buf), MSG_DONTWAIT);

	tp_check(n == (ssize_t)strlen(want) + 1 && !strcmp(buf, want), "%s: got %zd '%s'",
		 what, n, n > 0 ? buf : "");
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/ckpt-dgself.XXXXXX";
	struct sockaddr_un self, srv;
	int me, server, c1, c2;

	tp_init(argc, argv);
	if (!mkdtemp(dir))
		return 2;
	self = name_of(dir, "self");
	srv = name_of(dir, "srv");
	me = socket(AF_UNIX, SOCK_DGRAM, 0);
	server = socket(AF_UNIX, SOCK_DGRAM, 0);
	c1 = socket(AF_UNIX, SOCK_DGRAM, 0);
	c2 = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (bind(me, (void *)&self, sizeof(self)) || connect(me, (void *)&self, sizeof(self)) ||
	    bind(server, (void *)&srv, sizeof(srv)) || connect(c1, (void *)&srv, sizeof(srv)) ||
	    connect(c2, (void *)&srv, sizeof(srv)))
		return 2;
	if (send(me, "to me", 6, 0) != 6 || send(c1, "one", 4, 0) != 4)
		return 2;
	tp_ready();
	tp_wait_go();

	expect(me, "to me", "self-connected");
	expect(server, "one", "server");
	tp_check(send(me, "again", 6, 0) == 6, "sending to itself after restart");
	expect(me, "again", "self-connected after restart");
	tp_check(send(c2, "two", 4, 0) == 4, "client 2 sending");
	expect(server, "two", "server after restart");
	unlink(self.sun_path);
	unlink(srv.sun_path);
	rmdir(dir);
	return tp_done();
}
