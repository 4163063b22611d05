/* tcp_states.c - a target with TCP connections in the closing states,
 * their peer outside the tree (a daemon it forks, orphaned at once).
 * usage: tcp_states GOFILE
 *
 * Each connection is accepted from the peer on a loopback listener:
 *   CLOSING:    we filled the peer's window and shut down (our FIN waits
 *               behind the bytes), then the peer wrote and shut down;
 *   LAST_ACK:   the peer wrote and shut down, then we filled its window
 *               and shut down;
 *   CLOSE_WAIT: the peer wrote and shut down.
 * and a pair inside the process, both ends shut down and both FINs
 * acknowledged: CLOSE on both sides; and one reset by its peer with
 * bytes not read yet (CLOSE too).  Prints READY, waits for GOFILE
 * (checkpoint --kill --tcp-established and restart meanwhile), then
 * checks: each state as it was; each reads the peer's bytes, then the
 * end of the stream; the peer gets all our bytes in order, then our FIN
 * (it drains them only now); the CLOSE_WAIT one still sends, and closes;
 * the CLOSE pair reads EOF and refuses to write (EPIPE); the reset one
 * reads its bytes, then no more, and refuses to write.  PASS, or FAIL
 * lines and exit 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { CTL, CLOSING, LAST_ACK, CLOSE_WAIT, NCONN };

static const char *const peer_bytes[NCONN] = { "", "closing-peer", "last-ack-peer",
					       "close-wait-peer" };
static int fails;

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL ");
	vprintf(fmt, ap);
	printf(" (%s)\n", strerror(err));
	va_end(ap);
	fails++;
}

static int tcp_state(int sk)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len) ? -1 : ti.tcpi_state;
}

static int wait_state(int sk, int want)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 5000; i++) {
		if (tcp_state(sk) == want)
			return 0;
		nanosleep(&ms, NULL);
	}
	return -1;
}

static int small_buf(int sk, int opt)
{
	int v = 16384;

	return setsockopt(sk, SOL_SOCKET, opt, &v, sizeof(v));
}

/* Write the pattern (byte i is i % 251) until the send buffer is full. */
static long fill(int sk)
{
	char buf[4096];
	long n = 0;
	ssize_t k;

	fcntl(sk, F_SETFL, O_NONBLOCK);
	do {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (n + i) % 251;
		k = write(sk, buf, sizeof(buf));
		n += k > 0 ? k : 0;
	} while (k > 0);
	fcntl(sk, F_SETFL, 0);
	return errno == EAGAIN ? n : -1;
}

/* Read to the end of the stream: the pattern's length, or -1. */
static long drain(int sk)
{
	char buf[4096];
	long n = 0;
	ssize_t k;

	while ((k = read(sk, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < k; i++, n++)
			if ((unsigned char)buf[i] != n % 251)
				return -1;
	return k ? -1 : n;
}

/* The peer: outside the tree, it waits for "A" to shut the CLOSING one
 * down, for "G" (after the restart) to drain, and answers the byte
 * counts it got. */
static void peer(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int sk[NCONN];
	char c, out[64], got[32] = "";
	long n1, n2;
	ssize_t k;

	alarm(30);
	for (int i = 0; i < NCONN; i++) {
		sk[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (sk[i] < 0 || small_buf(sk[i], SO_RCVBUF) ||
		    connect(sk[i], (void *)&a, sizeof(a)))
			_exit(1);
	}
	for (int i = LAST_ACK; i <= CLOSE_WAIT; i++)
		if (write(sk[i], peer_bytes[i], strlen(peer_bytes[i])) < 0 ||
		    shutdown(sk[i], SHUT_WR))
			_exit(1);
	if (read(sk[CTL], &c, 1) != 1 || c != 'A')
		_exit(1);
	if (write(sk[CLOSING], peer_bytes[CLOSING], strlen(peer_bytes[CLOSING])) < 0 ||
	    shutdown(sk[CLOSING], SHUT_WR))
		_exit(1);
	if (read(sk[CTL], &c, 1) != 1 || c != 'G')
		_exit(1);
	n1 = drain(sk[CLOSING]);
	n2 = drain(sk[LAST_ACK]);
	k = read(sk[CLOSE_WAIT], got, sizeof(got) - 1);
	if (k > 0 && read(sk[CLOSE_WAIT], &c, 1) != 0)
		k = -1;
	snprintf(out, sizeof(out), "%ld %ld %s\n", n1, n2, k > 0 ? got : "-");
	if (write(sk[CTL], out, strlen(out)) < 0)
		_exit(1);
	_exit(0);
}

static void expect_state(int sk, int want, const char *what)
{
	int st = tcp_state(sk);

	if (st != want)
		fail("%s: state %d, want %d", what, st, want);
}

/* The peer's bytes, then the end of the stream. */
static void expect_bytes(int sk, const char *want, const char *what)
{
	char buf[64] = "";
	ssize_t k = read(sk, buf, sizeof(buf) - 1), end = read(sk, buf + 40, 1);

	if (k != (ssize_t)strlen(want) || memcmp(buf, want, k) || end)
		fail("%s: read %zd bytes, then %zd", what, k, end);
}

/* A pair inside the process, both ends shut down: both CLOSE. */
static int closed_pair(int lst, const struct sockaddr_in *a, int sk[2])
{
	sk[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (sk[0] < 0 || connect(sk[0], (void *)a, sizeof(*a)))
		return -1;
	sk[1] = accept(lst, NULL, NULL);
	if (sk[1] < 0 || shutdown(sk[0], SHUT_WR) || shutdown(sk[1], SHUT_WR))
		return -1;
	return wait_state(sk[0], TCP_CLOSE) || wait_state(sk[1], TCP_CLOSE) ? -1 : 0;
}

/* One whose peer (closed with a zero linger) reset it, with bytes it
 * has not read. */
static int reset_one(int lst, const struct sockaddr_in *a, int *sk)
{
	struct linger l = { 1, 0 };
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0 || connect(c, (void *)a, sizeof(*a)) || (*sk = accept(lst, NULL, NULL)) < 0 ||
	    write(c, "unread", 6) != 6 || setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof(l)) ||
	    close(c))
		return -1;
	return wait_state(*sk, TCP_CLOSE);
}

static int setup(int lst, const struct sockaddr_in *a, int sk[NCONN], long sent[NCONN],
		 int pair[2], int *reset)
{
	for (int i = 0; i < NCONN; i++)
		if ((sk[i] = accept(lst, NULL, NULL)) < 0 || small_buf(sk[i], SO_SNDBUF))
			return -1;
	/* CLOSING: our FIN waits behind a full window when theirs comes */
	sent[CLOSING] = fill(sk[CLOSING]);
	if (sent[CLOSING] < 0 || shutdown(sk[CLOSING], SHUT_WR) || write(sk[CTL], "A", 1) != 1 ||
	    wait_state(sk[CLOSING], TCP_CLOSING))
		return -1;
	/* LAST_ACK: theirs first */
	if (wait_state(sk[LAST_ACK], TCP_CLOSE_WAIT))
		return -1;
	sent[LAST_ACK] = fill(sk[LAST_ACK]);
	if (sent[LAST_ACK] < 0 || shutdown(sk[LAST_ACK], SHUT_WR) ||
	    wait_state(sk[LAST_ACK], TCP_LAST_ACK) || wait_state(sk[CLOSE_WAIT], TCP_CLOSE_WAIT))
		return -1;
	return closed_pair(lst, a, pair) || reset_one(lst, a, reset) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lst, sk[NCONN], pair[2], reset;
	long sent[NCONN] = { 0 }, n1 = -2, n2 = -2;
	char res[64] = "", word[32] = "";
	struct pollfd p;
	pid_t pid;
	ssize_t k;

	if (argc < 2)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);
	lst = socket(AF_INET, SOCK_STREAM, 0);
	if (lst < 0 || bind(lst, (void *)&a, sizeof(a)) || listen(lst, 8) ||
	    getsockname(lst, (void *)&a, &alen))
		return printf("FAIL listener: %s\n", strerror(errno)), 1;
	pid = fork();
	if (!pid) {		/* the peer's parent leaves it orphaned */
		if (fork() == 0) {
			close(lst);	/* the listener is the target's alone */
			setsid();
			peer(ntohs(a.sin_port));
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	if (setup(lst, &a, sk, sent, pair, &reset))
		return printf("FAIL setting up: %s\n", strerror(errno)), 1;
	printf("READY %d\n", getpid());
	while (access(argv[1], F_OK))
		usleep(2000);

	expect_state(sk[CLOSING], TCP_CLOSING, "CLOSING");
	expect_state(sk[LAST_ACK], TCP_LAST_ACK, "LAST_ACK");
	expect_state(sk[CLOSE_WAIT], TCP_CLOSE_WAIT, "CLOSE_WAIT");
	expect_state(pair[0], TCP_CLOSE, "CLOSE (client)");
	expect_state(pair[1], TCP_CLOSE, "CLOSE (server)");
	expect_state(reset, TCP_CLOSE, "CLOSE (reset)");
	k = read(reset, res, sizeof(res));
	if (k != 6 || memcmp(res, "unread", 6) || read(reset, res, 1) > 0 ||
	    write(reset, "x", 1) != -1)
		fail("reset: read %zd bytes (%.6s), or more, or could write", k, res);
	memset(res, 0, sizeof(res));
	for (int i = CLOSING; i < NCONN; i++)
		expect_bytes(sk[i], peer_bytes[i], peer_bytes[i]);
	if (write(sk[CLOSE_WAIT], "reply", 5) != 5 || close(sk[CLOSE_WAIT]))
		fail("CLOSE_WAIT: write");
	for (int i = 0; i < 2; i++) {
		char c;

		if (read(pair[i], &c, 1) != 0)
			fail("CLOSE %s: read, not the end of the stream", i ? "server" : "client");
		if (write(pair[i], "x", 1) != -1 || errno != EPIPE)
			fail("CLOSE %s: write, not EPIPE", i ? "server" : "client");
	}
	/* the peer drains our bytes only now */
	p = (struct pollfd){ .fd = sk[CTL], .events = POLLIN };
	if (write(sk[CTL], "G", 1) != 1 || poll(&p, 1, 20000) != 1 ||
	    (k = read(sk[CTL], res, sizeof(res) - 1)) <= 0 ||
	    sscanf(res, "%ld %ld %31s", &n1, &n2, word) != 3)
		fail("peer: no answer (%s)", res);
	if (n1 != sent[CLOSING] || n2 != sent[LAST_ACK])
		fail("peer got %s bytes, we sent %ld and %ld", res, sent[CLOSING], sent[LAST_ACK]);
	if (strcmp(word, "reply"))
		fail("peer got '%s' on CLOSE_WAIT", word);
	if (wait_state(sk[CLOSING], TCP_CLOSE) || wait_state(sk[LAST_ACK], TCP_CLOSE))
		fail("CLOSING %d, LAST_ACK %d: not closed once acknowledged",
		     tcp_state(sk[CLOSING]), tcp_state(sk[LAST_ACK]));
	if (fails)
		return 1;
	printf("PASS\n");
	return 0;
}
