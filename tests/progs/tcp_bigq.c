/* tcp_bigq.c - a TCP connection (both ends in the process, checkpointed
 * with --tcp-established) whose queues hold more than one image record:
 * the receiving end's buffer forced to 48 MiB holds 20 MiB unread, and
 * the sending end's 24 MiB buffer holds what did not fit there.  After
 * restart every byte arrives once, in order, and new bytes still flow.
 * ckpt refused such a connection (EFBIG) while a socket's state had to
 * fit one 16 MiB record.
 */
#include "tp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define RCVQ	(20u << 20)	/* into the receiver's queue */
#define TOTAL	(RCVQ + (6u << 20))	/* the rest waits in the sender's */

static void die(const char *what)
{
	printf("FAIL: setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void set(int fd, int name, int v)
{
	if (setsockopt(fd, SOL_SOCKET, name, &v, sizeof(v)))
		die("setsockopt");
}

static unsigned char byte_at(size_t i)
{
	return (unsigned char)(i * 2654435761u >> 13);
}

/* write bytes [*off, upto) of the stream as far as @fd takes them */
static void push(int fd, size_t *off, size_t upto)
{
	static unsigned char buf[65536];

	while (*off < upto) {
		size_t n = upto - *off < sizeof(buf) ? upto - *off : sizeof(buf);
		ssize_t k;

		for (size_t i = 0; i < n; i++)
			buf[i] = byte_at(*off + i);
		k = send(fd, buf, n, MSG_DONTWAIT);
		if (k < 0 && errno == EAGAIN)
			return;
		if (k <= 0)
			die("send");
		*off += k;
	}
}

static void connect_pair(int *cli, int *srv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int lst = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*cli = socket(AF_INET, SOCK_STREAM, 0);
	if (lst < 0 || *cli < 0 || bind(lst, (void *)&a, sizeof(a)) ||
	    getsockname(lst, (void *)&a, &l) || listen(lst, 1))
		die("listen");
	/* buffers before the connection, so the windows scale to them */
	set(*cli, SO_SNDBUFFORCE, 24 << 20);
	set(lst, SO_RCVBUFFORCE, 48 << 20);
	if (connect(*cli, (void *)&a, sizeof(a)))
		die("connect");
	*srv = accept(lst, NULL, NULL);
	if (*srv < 0)
		die("accept");
	close(lst);
}

int main(int argc, char **argv)
{
	size_t off = 0, got = 0, bad = 0, want;
	int cli, srv, inq = 0, outq = 0;
	static unsigned char buf[65536];

	tp_init(argc, argv);
	connect_pair(&cli, &srv);
	for (int tries = 0; tries < 400 && off < TOTAL; tries++) {
		push(cli, &off, TOTAL);
		usleep(5000);
	}
	ioctl(srv, SIOCINQ, &inq);
	ioctl(cli, SIOCOUTQ, &outq);
	/* SIOCOUTQ counts what the receiver queued but did not ack yet */
	if ((size_t)inq < (16u << 20) || outq <= 0 || off != TOTAL)
		printf("FAIL: setup: %d bytes unread, %d unacked, %zu of %u written (want over 16 MiB unread)\n",
		       inq, outq, off, TOTAL);
	tp_ready();
	tp_wait_go();

	want = off + 4096;		/* new bytes after the old */
	push(cli, &off, want);
	while (got < want) {
		/* the new bytes go out as the sender's queue makes room,
		 * which may be after the last of the old arrived (its ack) */
		struct pollfd p[2] = {
			{ .fd = srv, .events = POLLIN },
			{ .fd = cli, .events = off < want ? POLLOUT : 0 },
		};
		ssize_t k;

		/* 30 s: a segment loopback dropped under load (its backlog
		 * full) comes again only after the retransmission timer,
		 * which backs off 1, 2, 4... s */
		if (poll(p, 2, 30000) <= 0) {
			tp_fail("only %zu of %zu bytes arrived", got, want);
			break;
		}
		if (p[1].revents & POLLOUT)
			push(cli, &off, want);
		if (!(p[0].revents & POLLIN))
			continue;
		k = recv(srv, buf, sizeof(buf), MSG_DONTWAIT);
		if (k < 0 && errno == EAGAIN)
			continue;
		if (k <= 0) {
			tp_fail("recv after %zu bytes: %s", got, k ? strerror(errno) : "EOF");
			break;
		}
		for (ssize_t i = 0; i < k; i++)
			bad += buf[i] != byte_at(got + i);
		got += k;
		push(cli, &off, want);
	}
	tp_check(!bad, "%zu of %zu bytes changed", bad, got);
	tp_check(send(srv, "x", 1, 0) == 1 && recv(cli, buf, 1, 0) == 1 && buf[0] == 'x',
		 "no bytes the other way");
	return tp_done();
}
