/* unix_scm.c - fds in flight (SCM_RIGHTS) on unix sockets, queued and
 * not received yet:
 * - a stream pair: "aaa", then "bbb" carrying a pipe's read end (we keep
 *   the write end) and a file open O_APPEND at offset 5 that nothing else
 *   holds, then "ccc": a read of 100 bytes gets "aaabbb" and both fds (a
 *   stream read stops after the message that carries fds), the next one
 *   "ccc";
 * - a datagram pair whose sender is closed: "d1", then "d2" carrying a
 *   file description we also keep (one description: its offset moves for
 *   both), then an empty datagram carrying an epoll nothing else holds,
 *   watching a pipe with data;
 * - a seqpacket pair: a message carrying both its sockets, in two
 *   SCM_RIGHTS headers (the kernel merges them);
 * - a datagram server bound to an abstract name, sent an eventfd (count
 *   42, nothing else holds it) by an unconnected socket;
 * - a child's socket, sent by us a pipe's read end we keep (with a byte
 *   in the pipe) and an epoll nothing else holds watching it;
 * - a connection handed over: a socket nothing but a message holds, its
 *   own queue holding "fromy" with an eventfd (count 7) only in flight,
 *   its peer ours.
 * After restart each message comes once, whole, in order, with its fds,
 * and they work. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "tp.h"

#define MAXFDS 4

static void send_fds(int sk, const char *data, const int *fds, int nr, bool split,
		     const struct sockaddr_un *to, socklen_t tolen)
{
	union { char b[2 * CMSG_SPACE(MAXFDS * sizeof(int))]; struct cmsghdr h; } u;
	struct iovec iov = { (void *)data, strlen(data) };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = tolen,
			    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b };
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	m.msg_controllen = split ? 2 * CMSG_SPACE(sizeof(int)) : CMSG_SPACE(nr * sizeof(int));
	c = CMSG_FIRSTHDR(&m);
	for (int i = 0; i < nr; i += split ? 1 : nr) {
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((split ? 1 : nr) * sizeof(int));
		memcpy(CMSG_DATA(c), fds + i, (split ? 1 : nr) * sizeof(int));
		c = CMSG_NXTHDR(&m, c);
	}
	if (sendmsg(sk, &m, 0) != (ssize_t)strlen(data)) {
		perror("sendmsg");
		exit(1);
	}
}

/* One read: its bytes, and the fds that came with it (-1 past them). */
static ssize_t recv_fds(int sk, char *buf, size_t len, int *fds, int *nr)
{
	union { char b[CMSG_SPACE(MAXFDS * sizeof(int))]; struct cmsghdr h; } u;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b) };
	ssize_t n = recvmsg(sk, &m, MSG_DONTWAIT);

	*nr = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); n >= 0 && c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			*nr = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(fds, CMSG_DATA(c), *nr * sizeof(int));
		}
	tp_check(n < 0 || !(m.msg_flags & (MSG_CTRUNC | MSG_TRUNC)), "truncated message");
	if (n >= 0 && n < (ssize_t)len)
		buf[n] = 0;
	return n;
}

static void expect(int sk, const char *want, int want_fds, int *fds, const char *what)
{
	char buf[100];
	int nr;
	ssize_t n = recv_fds(sk, buf, sizeof(buf) - 1, fds, &nr);

	tp_check(n == (ssize_t)strlen(want) && !memcmp(buf, want, n) && nr == want_fds,
		 "%s: got %zd bytes '%.*s' with %d fds, want '%s' with %d", what, n,
		 n > 0 ? (int)n : 0, buf, nr, want, want_fds);
}

static ino_t ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* The child: its socket's message, once GOFILE exists. */
static int child(int sk)
{
	struct epoll_event e;
	int fds[MAXFDS];
	char c;

	tp_wait_go();
	expect(sk, "kid", 2, fds, "child");
	tp_check(epoll_wait(fds[1], &e, 1, 0) == 1 && e.data.u64 == 0x5678,
		 "child: the epoll in flight lost its watch");
	tp_check(read(fds[0], &c, 1) == 1 && c == 'q', "child: the pipe in flight lost its byte");
	return tp_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int st[2], dg[2], sp[2], p1[2], p2[2], file, shared, ep, ev, srv, cl, fds[MAXFDS];
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = 0x1234 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *tmp = getenv("TP_TMPDIR");
	char path[256], buf[16];
	socklen_t sl;
	uint64_t cnt = 42;

	int ks[2], p3[2], ep2, status, hs[2], xy[2], ev2;
	pid_t kid;

	tp_init(argc, argv);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, ks))
		return 1;
	kid = fork();
	if (kid == 0) {
		close(ks[0]);
		return child(ks[1]);
	}
	close(ks[1]);
	e.data.u64 = 0x5678;
	ep2 = epoll_create1(0);
	if (kid < 0 || pipe(p3) || ep2 < 0 || epoll_ctl(ep2, EPOLL_CTL_ADD, p3[0], &e) ||
	    write(p3[1], "q", 1) != 1)
		return 1;
	send_fds(ks[0], "kid", (int[]){ p3[0], ep2 }, 2, false, NULL, 0);
	close(ep2);
	e.data.u64 = 0x1234;
	snprintf(path, sizeof(path), "%s/scm.file", tmp ? tmp : "/tmp");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, st) || socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) || pipe(p1) || pipe(p2))
		return 1;
	file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
	shared = open(path, O_RDONLY);
	if (file < 0 || shared < 0 || write(file, "hello world", 11) != 11 ||
	    lseek(file, 5, SEEK_SET) != 5 || lseek(shared, 3, SEEK_SET) != 3)
		return 1;
	/* the stream */
	send(st[0], "aaa", 3, 0);
	send_fds(st[0], "bbb", (int[]){ p1[0], file }, 2, false, NULL, 0);
	send(st[0], "ccc", 3, 0);
	close(p1[0]);
	close(file);
	/* the datagrams, their sender gone */
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, p2[0], &e) || write(p2[1], "x", 1) != 1)
		return 1;
	send(dg[0], "d1", 2, 0);
	send_fds(dg[0], "d2", &shared, 1, false, NULL, 0);
	send_fds(dg[0], "", &ep, 1, false, NULL, 0);
	close(ep);
	close(dg[0]);
	/* the seqpacket pair, carrying itself */
	send_fds(sp[0], "sp", sp, 2, true, NULL, 0);
	/* the server */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "ckpt-test-scm-%d", getpid());
	sl = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1);
	srv = socket(AF_UNIX, SOCK_DGRAM, 0);
	cl = socket(AF_UNIX, SOCK_DGRAM, 0);
	ev = eventfd(0, EFD_NONBLOCK);
	if (srv < 0 || cl < 0 || ev < 0 || bind(srv, (struct sockaddr *)&sa, sl) ||
	    write(ev, &cnt, 8) != 8)
		return 1;
	send_fds(cl, "srv", &ev, 1, false, &sa, sl);
	close(ev);
	/* the connection handed over */
	cnt = 7;
	ev2 = eventfd(0, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, hs) || socketpair(AF_UNIX, SOCK_STREAM, 0, xy) ||
	    ev2 < 0 || write(ev2, &cnt, 8) != 8)
		return 1;
	send_fds(xy[1], "fromy", &ev2, 1, false, NULL, 0);
	send_fds(hs[0], "conn", &xy[0], 1, false, NULL, 0);
	close(ev2);
	close(xy[0]);

	tp_ready();
	tp_wait_go();

	expect(st[1], "aaabbb", 2, fds, "stream");
	tp_check(write(p1[1], "y", 1) == 1 && read(fds[0], buf, 2) == 1 && buf[0] == 'y',
		 "the pipe in flight does not carry data");
	tp_check((fcntl(fds[1], F_GETFL) & O_APPEND) && lseek(fds[1], 0, SEEK_CUR) == 5 &&
		 read(fds[1], buf, 6) == 6 && !memcmp(buf, " world", 6),
		 "the file in flight lost its flags or offset");
	expect(st[1], "ccc", 0, fds, "stream after");
	expect(dg[1], "d1", 0, fds, "datagram 1");
	expect(dg[1], "d2", 1, fds, "datagram 2");
	tp_check(lseek(fds[0], 0, SEEK_CUR) == 3 && lseek(shared, 8, SEEK_SET) == 8 &&
		 lseek(fds[0], 0, SEEK_CUR) == 8,
		 "the description in flight is not the one we hold");
	expect(dg[1], "", 1, fds, "datagram 3");
	tp_check(epoll_wait(fds[0], &e, 1, 0) == 1 && e.data.u64 == 0x1234,
		 "the epoll in flight lost its watch");
	tp_check(recv(dg[1], buf, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN, "a datagram too many");
	expect(sp[1], "sp", 2, fds, "seqpacket");
	tp_check(ino_of(fds[0]) == ino_of(sp[0]) && ino_of(fds[1]) == ino_of(sp[1]),
		 "the sockets in flight are not the pair");
	tp_check(send(fds[0], "z", 1, 0) == 1 && recv(sp[1], buf, 2, MSG_DONTWAIT) == 1 &&
		 buf[0] == 'z', "the socket in flight does not send to its peer");
	expect(srv, "srv", 1, fds, "server");
	tp_check(read(fds[0], &cnt, 8) == 8 && cnt == 42, "the eventfd in flight lost its count");
	expect(hs[1], "conn", 1, fds, "handed over");
	xy[0] = fds[0];
	expect(xy[0], "fromy", 1, fds, "the connection's own queue");
	tp_check(read(fds[0], &cnt, 8) == 8 && cnt == 7, "the eventfd in flight lost its count");
	tp_check(send(xy[0], "x", 1, 0) == 1 && recv(xy[1], buf, 2, MSG_DONTWAIT) == 1 &&
		 buf[0] == 'x', "the connection handed over does not reach its peer");
	tp_check(waitpid(kid, &status, 0) == kid && WIFEXITED(status) && !WEXITSTATUS(status),
		 "the child failed");
	return tp_done();
}
