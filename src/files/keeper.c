/* keeper.c - the keeper of a checkpoint's TCP repair mode and network
 * locks (keeper.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../ctx.h"
#include "../fdpass.h"
#include "inet.h"
#include "keeper.h"
#include "netlock.h"

#define KEEPER_MAX	4096	/* sockets one keeper holds */

enum { MSG_HOLD = 1, MSG_KILLING, MSG_DONE, MSG_WATCH };

struct keeper_msg {
	uint32_t type;
	int32_t reuse;
	uint8_t locked;
	struct rec_inet conn;
};

struct held {
	int sk, pidfd;
	struct keeper_msg m;
};

static bool exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* ckpt died: put back what it would have put back (inet_dump_end). */
static void keeper_undo(struct held *h, int n, bool killing)
{
	char why[160];

	for (int i = 0; i < n; i++) {
		if (killing && exited(h[i].pidfd))
			continue;	/* killed with its image complete */
		if (h[i].m.locked)
			netlock_del(&h[i].m.conn, why, sizeof(why));
		int off = TCP_REPAIR_OFF;

		setsockopt(h[i].sk, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off));
		setsockopt(h[i].sk, SOL_SOCKET, SO_REUSEADDR, &h[i].m.reuse,
			   sizeof(h[i].m.reuse));
	}
}

static int recv_msg(int ch, struct keeper_msg *m, int fds[2])
{
	unsigned int nfd = 2;
	ssize_t k = fd_recv(ch, m, sizeof(*m), 0, fds, &nfd);

	if (nfd != 2) {	/* (a message holds two, or none) */
		while (nfd)
			close(fds[--nfd]);
		fds[0] = fds[1] = -1;
	}
	return k == (ssize_t)sizeof(*m) ? 0 : -1;
}

/* A restart died while letting its processes go: those it let go are
 * killed too, so that nothing half-restored runs on. */
static void kill_watched(const int *w, int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_pidfd_send_signal, w[i], SIGKILL, NULL, 0);
}

static __attribute__((noreturn)) void keeper_main(int ch)
{
	/* (a process of its own; not static: ckpt's every start would map
	 * 0.9 MB of zeros for the test build's leak check to read) */
	struct held *h = calloc(KEEPER_MAX, sizeof(*h));
	int *w = calloc(KEEPER_MAX, sizeof(*w));
	bool killing = false;
	struct keeper_msg m;
	int n = 0, nw = 0, fds[2];

	if (!h || !w)	/* ckpt finds the channel closed at its first word */
		_exit(1);
	while (recv_msg(ch, &m, fds) == 0) {
		if (m.type == MSG_DONE)
			_exit(0);
		if (m.type == MSG_KILLING)
			killing = true;
		if (m.type == MSG_HOLD && fds[0] >= 0 && n < KEEPER_MAX) {
			h[n++] = (struct held){ fds[0], fds[1], m };
		} else if (m.type == MSG_WATCH && fds[0] >= 0 && nw < KEEPER_MAX) {
			w[nw++] = fds[0];
			close(fds[1]);	/* (the pidfd, sent twice: a message has two) */
		} else if (fds[0] >= 0) {	/* (none kept: two or none came) */
			close(fds[0]);
			close(fds[1]);
		}
	}
	kill_watched(w, nw);
	keeper_undo(h, n, killing);
	_exit(1);
}

static int keeper_start(struct keeper *k, struct ckpt_log *log)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return log_err(log, errno, "keeper channel:");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return log_err(log, errno, "starting the keeper:");
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setsid();
		signal(SIGPIPE, SIG_IGN);
		/* nothing of ckpt's: not its image, not its caller's pipes */
		for (int fd = 0; fd < 3 && null >= 0; fd++)
			dup2(null, fd);
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		syscall(SYS_close_range, 4, ~0U, 0);
		keeper_main(3);
	}
	close(sv[1]);
	k->fd = sv[0];
	k->pid = pid;
	return 0;
}

static int send_msg(struct keeper *k, struct ckpt_log *log,
		    const struct keeper_msg *m, int sk, int pidfd)
{
	int fds[2] = { sk, pidfd };

	if (fd_send(k->fd, m, sizeof(*m), fds, sk >= 0 ? 2 : 0, MSG_NOSIGNAL) != sizeof(*m))
		return log_err(log, errno, "telling the keeper:");
	return 0;
}

int keeper_hold(struct keeper *k, struct ckpt_log *log, const struct cpt_sock *s)
{
	struct keeper_msg m = { .type = MSG_HOLD, .reuse = s->reuse,
				.locked = s->locked, .conn = s->conn };
	int pidfd, ret = k->pid ? 0 : keeper_start(k, log);

	if (ret)
		return ret;
	pidfd = syscall(SYS_pidfd_open, s->pid, 0);
	if (pidfd < 0)
		return log_err(log, errno, "pid %d: pidfd_open:", s->pid);
	ret = send_msg(k, log, &m, s->sk, pidfd);
	close(pidfd);
	return ret;
}

void keeper_killing(struct keeper *k, struct ckpt_log *log)
{
	struct keeper_msg m = { .type = MSG_KILLING };

	if (k->pid)
		send_msg(k, log, &m, -1, -1);
}

int keeper_watch(struct keeper *k, struct ckpt_log *log, pid_t pid)
{
	struct keeper_msg m = { .type = MSG_WATCH };
	int pidfd, ret = k->pid ? 0 : keeper_start(k, log);

	if (ret)
		return ret;
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return log_err(log, errno, "pid %d: pidfd_open:", pid);
	ret = send_msg(k, log, &m, pidfd, pidfd);
	close(pidfd);
	return ret;
}

void keeper_end(struct keeper *k, struct ckpt_log *log, bool done)
{
	struct keeper_msg m = { .type = MSG_DONE };

	if (!k->pid)
		return;
	if (done)
		send_msg(k, log, &m, -1, -1);
	close(k->fd);
	while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
		;
	k->pid = 0;
	k->fd = -1;
}
