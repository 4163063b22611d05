/* kvserver.c - a small Redis-like server for the TCP tests (run.sh):
 * its clients (tests/aux/kvclient.py) are outside the checkpointed tree
 * and keep their connections across its checkpoint --kill and restart.
 *
 * usage: kvserver GOFILE.  It listens on an ephemeral loopback port
 * (prints PORT n), accepts four clients: A gets bytes of a pattern
 * until its queue is full (prints BULK n: how many it took), H gets
 * "bye\n" and the server's side is shut down (half-closed), B and E are
 * clients like any other (E shuts its side down after its requests).  Then it prints READY and waits for GOFILE
 * without reading anything, so what the clients send meanwhile waits in
 * its queues.  Then it serves: A gets "TAIL\n" after the pattern; lines
 * "SET k v" (reply OK), "GET k" (the value or NIL), "QUIT", "SHUTDOWN"
 * (exit 0) from every client and new ones; H's lines get no reply.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC	16
#define NKEYS	64

static char keys[NKEYS][32], vals[NKEYS][32];
static struct pollfd pf[MAXC];
static char buf[MAXC][1024];
static size_t blen[MAXC];
static int half;	/* the fd of H: no replies */

static void die(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

static const char *get(const char *k)
{
	for (int i = 0; i < NKEYS; i++)
		if (keys[i][0] && !strcmp(keys[i], k))
			return vals[i];
	return NULL;
}

static void put(const char *k, const char *v)
{
	int free_slot = -1;

	for (int i = 0; i < NKEYS; i++) {
		if (keys[i][0] && !strcmp(keys[i], k)) {
			snprintf(vals[i], sizeof(vals[i]), "%s", v);
			return;
		}
		if (!keys[i][0] && free_slot < 0)
			free_slot = i;
	}
	if (free_slot >= 0) {
		snprintf(keys[free_slot], sizeof(keys[0]), "%s", k);
		snprintf(vals[free_slot], sizeof(vals[0]), "%s", v);
	}
}

static void reply(int fd, const char *s)
{
	if (fd != half && send(fd, s, strlen(s), MSG_NOSIGNAL) < 0)
		printf("send: %s\n", strerror(errno));
}

/* One command line; 1 to close the client. */
static int command(int fd, char *line)
{
	char k[32], v[32], out[64];
	const char *got;

	if (sscanf(line, "SET %31s %31s", k, v) == 2) {
		put(k, v);
		reply(fd, "OK\n");
	} else if (sscanf(line, "GET %31s", k) == 1) {
		got = get(k);
		snprintf(out, sizeof(out), "%s\n", got ? got : "NIL");
		reply(fd, out);
	} else if (!strcmp(line, "QUIT")) {
		return 1;
	} else if (!strcmp(line, "SHUTDOWN")) {
		printf("SHUTDOWN\n");
		exit(0);
	} else {
		reply(fd, "ERR\n");
	}
	return 0;
}

static void serve_one(int i)
{
	ssize_t k = recv(pf[i].fd, buf[i] + blen[i], sizeof(buf[i]) - 1 - blen[i], 0);
	char *nl;

	if (k <= 0) {
		if (k < 0)
			printf("recv: %s\n", strerror(errno));
		close(pf[i].fd);
		pf[i].fd = -1;
		return;
	}
	blen[i] += k;
	buf[i][blen[i]] = 0;
	while ((nl = strchr(buf[i], '\n'))) {
		*nl = 0;
		if (command(pf[i].fd, buf[i])) {
			close(pf[i].fd);
			pf[i].fd = -1;
			return;
		}
		blen[i] -= nl + 1 - buf[i];
		memmove(buf[i], nl + 1, blen[i] + 1);
	}
}

static void serve(int lst)
{
	for (;;) {
		if (poll(pf, MAXC, -1) < 0 && errno != EINTR)
			die("poll");
		if (pf[0].revents & POLLIN) {
			int c = accept(lst, NULL, NULL);

			for (int i = 1; i < MAXC && c >= 0; i++)
				if (pf[i].fd < 0) {
					pf[i] = (struct pollfd){ c, POLLIN, 0 };
					blen[i] = 0;
					c = -1;
				}
		}
		for (int i = 1; i < MAXC; i++)
			if (pf[i].fd >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				serve_one(i);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	struct timespec ts = { 0, 2000000 };
	int lst, on = 1, ca, cb, ch, ce, reuse = 0;
	static char pat[1 << 16];
	long sent = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2)
		return 2;
	lst = socket(AF_INET, SOCK_STREAM, 0);
	if (lst < 0 || setsockopt(lst, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    bind(lst, (void *)&a, sizeof(a)) || listen(lst, 8) ||
	    getsockname(lst, (void *)&a, &l))
		die("listen");
	printf("PORT %d\n", ntohs(a.sin_port));
	ca = accept(lst, NULL, NULL);
	cb = accept(lst, NULL, NULL);
	ch = accept(lst, NULL, NULL);
	ce = accept(lst, NULL, NULL);
	if (ca < 0 || cb < 0 || ch < 0 || ce < 0)
		die("accept");
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (char)(i * 7 + i / 256);
	fcntl(ca, F_SETFL, O_NONBLOCK);
	for (;;) {	/* the pattern repeats every 64 KiB */
		ssize_t k = send(ca, pat + sent % sizeof(pat), sizeof(pat) - sent % sizeof(pat), 0);

		if (k < 0 && errno == EAGAIN)
			break;
		if (k < 0)
			die("bulk");
		sent += k;
	}
	fcntl(ca, F_SETFL, 0);
	printf("BULK %ld\n", sent);
	if (send(ch, "bye\n", 4, 0) != 4 || shutdown(ch, SHUT_WR))
		die("half close");
	half = ch;
	printf("READY\n");
	while (access(argv[1], F_OK))
		nanosleep(&ts, NULL);
	l = sizeof(reuse);
	getsockopt(lst, SOL_SOCKET, SO_REUSEADDR, &reuse, &l);
	if (reuse != 1)
		printf("FAIL listener's SO_REUSEADDR is %d\n", reuse);
	if (send(ca, "TAIL\n", 5, MSG_NOSIGNAL) != 5)
		die("tail");
	for (int i = 0; i < MAXC; i++)
		pf[i] = (struct pollfd){ -1, POLLIN, 0 };
	pf[0].fd = lst;
	pf[1].fd = ca;
	pf[2].fd = cb;
	pf[3].fd = ch;
	pf[4].fd = ce;
	serve(lst);
	return 0;
}
