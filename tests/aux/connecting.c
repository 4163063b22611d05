/* connecting.c - a target with two TCP connections being opened (SYN_SENT)
 * to a listener outside the tree whose accept queue is full, so that its
 * SYNs are dropped until it accepts.
 * usage: connecting PORT
 * A: a non-blocking connect(), then poll() for the end of the handshake;
 * B: a thread blocked in connect().  Prints READY once both sockets are
 * in SYN_SENT; then, once connected, sends "A\n" on A and "B\n" on B and
 * prints PASS (or FAIL lines, exit 1). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in peer;
static int fails;

static void fail(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	fails++;
}

static int tcp_state(int sk)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len) ? -1 : ti.tcpi_state;
}

static void *blocking(void *arg)
{
	int sk = *(int *)arg;

	if (connect(sk, (void *)&peer, sizeof(peer)))
		fail("B: blocking connect");
	else if (send(sk, "B\n", 2, MSG_NOSIGNAL) != 2)
		fail("B: send");
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec ms = { 0, 1000000 };
	int a, b, err = 0, i;
	socklen_t len = sizeof(err);
	pthread_t th;
	struct pollfd pf;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2)
		return 2;
	peer = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(atoi(argv[1])),
				     .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	a = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	b = socket(AF_INET, SOCK_STREAM, 0);
	if (a < 0 || b < 0)
		return fail("socket"), 1;
	if (!connect(a, (void *)&peer, sizeof(peer)) || errno != EINPROGRESS)
		return fail("A: connect did not wait"), 1;
	if (pthread_create(&th, NULL, blocking, &b))
		return fail("pthread_create"), 1;
	for (i = 0; i < 2000 && (tcp_state(a) != TCP_SYN_SENT || tcp_state(b) != TCP_SYN_SENT); i++)
		nanosleep(&ms, NULL);
	if (i == 2000)
		return printf("FAIL not both in SYN_SENT: %d %d\n", tcp_state(a), tcp_state(b)), 1;
	printf("READY %d\n", getpid());
	pf = (struct pollfd){ a, POLLOUT, 0 };
	if (poll(&pf, 1, 30000) != 1)
		fail("A: poll for the handshake");
	else if (getsockopt(a, SOL_SOCKET, SO_ERROR, &err, &len) || err)
		errno = err, fail("A: SO_ERROR");
	else if (send(a, "A\n", 2, MSG_NOSIGNAL) != 2)
		fail("A: send");
	if ((fcntl(a, F_GETFL) & O_NONBLOCK) == 0 || (fcntl(b, F_GETFL) & O_NONBLOCK))
		printf("FAIL O_NONBLOCK not as it was\n"), fails++;
	pthread_join(th, NULL);
	printf(fails ? "FAIL\n" : "PASS\n");
	return fails ? 1 : 0;
}
