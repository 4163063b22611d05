/* tcp_repair.c - the TCP connections ckpt holds (struct cpt_sock): an
 * established or half-closed one taken into repair mode (TCP_REPAIR) to
 * be read and, at restart, rebuilt; one being opened (SYN_SENT), held to
 * check at the end that it still is.  The rest of a TCP or UDP socket is
 * inet.c's.
 *
 * Checkpoint: the peer's packets are dropped first (netlock.c), the
 * keeper (keeper.c) is told, then the connection is read in repair mode:
 * sequence numbers, windows, negotiated options and both queues, peeked
 * without sending or consuming anything.  It stays in repair mode until
 * the checkpoint is over (inet_dump_end): killed, its close sends
 * neither FIN nor RST and the lock stays, so the peer keeps its side for
 * the restored process; otherwise it leaves repair mode as it was.
 *
 * Restart: each connection is rebuilt in repair mode (sequence numbers,
 * bind, connect without a SYN, options, queues) and leaves it only once
 * every process is built (inet_restore_end), so that two ends inside the
 * tree find each other.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/sockios.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../files.h"
#include "inet.h"
#include "tcp_repair.h"
#include "netlock.h"
#include "sockdiag.h"
#include "sockopt.h"

#define CHUNK		(64 * 1024)
#define PEEK_SLACK	(1 << 20)

/* ---- checkpoint ---- */

/* The checkpoint's: the connections ckpt holds, and the keeper that
 * puts them back if ckpt dies (keeper.h). */
struct queued_listener {
	pid_t pid;
	int fd;
	uint32_t n;		/* connections in its accept queue */
	struct rec_inet ri;
};

struct inet_cpt {
	struct cpt_sock *socks;
	int nr_socks;
	size_t cap_socks;
	struct queued_listener *lst;
	int nr_lst;
	size_t cap_lst;
	struct keeper keeper;
};

/* The peer's packets are dropped before the connection is read, and
 * until it is restored or the checkpoint ends (netlock.c).  Without a
 * lock the checkpoint goes on: one warning. */
static void conn_lock(struct cpt_ctx *c, struct cpt_sock *s)
{
	const struct inet_cpt *ic = kind_dump_state(c, &kind_inet);
	bool ready = false, warned = false;
	char why[160];

	for (int i = 0; i < ic->nr_socks - 1; i++) {
		if (ic->socks[i].opening)
			continue;
		ready |= ic->socks[i].locked && ic->socks[i].conn.family == s->conn.family;
		warned |= !ic->socks[i].locked;
	}
	s->locked = !netlock_add(&s->conn, ready, why, sizeof(why));
	if (!s->locked && !warned)
		log_warn(c->log, "no network lock: %s (a packet the peer sends before the connection is restored resets it)",
			 why);
}

static void conn_unlock(struct cpt_ctx *c, struct cpt_sock *s)
{
	char why[160];

	if (s->locked && netlock_del(&s->conn, why, sizeof(why)))
		log_warn(c->log, "pid %d fd %d: removing its network lock: %s", s->pid,
			 s->fd, why);
	s->locked = false;
}

/* A copy of the socket in ckpt's table, held to the end of the
 * checkpoint (inet_dump_end closes it). */
static int add_sock(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    const struct rec_inet *ri, struct cpt_sock **out)
{
	struct inet_cpt *ic = kind_dump_state(c, &kind_inet);
	struct cpt_sock *n;
	int copy;

	if (VEC_ROOM(ic->socks, ic->nr_socks, ic->cap_socks))
		return log_err(c->log, ENOMEM, "socket table:");
	copy = fcntl(sk, F_DUPFD_CLOEXEC, 3);
	if (copy < 0)
		return log_err(c->log, errno, "pid %d fd %d: dup:", p->pid, p->fd);
	n = &ic->socks[ic->nr_socks++];
	*n = (struct cpt_sock){ .sk = copy, .pid = p->pid, .fd = p->fd,
				.reuse = ri->opt[INET_OPT_REUSEADDR], .conn = *ri };
	*out = n;
	return 0;
}

static int conn_hold(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		     const struct rec_inet *ri, struct cpt_sock **out)
{
	struct inet_cpt *ic = kind_dump_state(c, &kind_inet);
	struct cpt_sock *n;
	int err, ret = add_sock(c, p, sk, ri, &n);

	if (ret)
		return ret;
	conn_lock(c, n);
	/* the keeper holds it before it is changed: a ckpt that dies from
	 * here on leaves it unlocked and out of repair mode */
	ret = keeper_hold(&ic->keeper, c->log, n);
	if (ret) {
		conn_unlock(c, n);
		close(n->sk);
		ic->nr_socks--;
		return ret;
	}
	if (sock_set_int(n->sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON)) {
		err = errno;
		conn_unlock(c, n);
		close(n->sk);
		ic->nr_socks--;
		return log_err(c->log, err, "pid %d fd %d: TCP_REPAIR%s:", p->pid, p->fd,
			       err == EPERM ? " (needs CAP_NET_ADMIN: not an ordinary user's)" : "");
	}
	*out = n;
	return 0;
}

static int queue_seq(int sk, int q, uint32_t *seq)
{
	int ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, q), v = 0;

	if (!ret)
		ret = sock_get_int(sk, IPPROTO_TCP, TCP_QUEUE_SEQ, &v);
	*seq = v;
	return ret;
}

/* The bytes of one queue, peeked in repair mode (nothing is consumed). */
static int peek_tcp_queue(int sk, int q, char *buf, uint32_t len, uint32_t *got)
{
	ssize_t k;

	*got = 0;
	if (sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, q))
		return -errno;
	if (!len)
		return 0;
	k = recv(sk, buf, len, MSG_PEEK | MSG_DONTWAIT);
	if (k < 0)
		return errno == EAGAIN ? 0 : -errno;
	*got = k;
	return 0;
}

static int conn_queues(int sk, struct cpt_sock *s, struct rec_inet *ri,
		       char **data)
{
	int inq = 0, outq = 0, unsent = 0, fin = fin_sent(ri->state);
	uint32_t got_snd, got_rcv, unacked = fin_unacked(ri->state), skip;
	int ret = queue_seq(sk, TCP_RECV_QUEUE, &s->rcv_nxt);

	if (!ret)
		ret = queue_seq(sk, TCP_SEND_QUEUE, &s->write_seq);
	if (!ret && (ioctl(sk, SIOCINQ, &inq) || ioctl(sk, SIOCOUTQ, &outq) ||
		     ioctl(sk, SIOCOUTQNSD, &unsent)))
		ret = -errno;
	if (ret)
		return ret;
	if (inq < 0 || outq < 0 || unsent < 0 || unsent > outq ||
	    (uint32_t)inq > INET_MAX_QUEUE || (uint32_t)outq > INET_MAX_QUEUE)
		return -EFBIG;
	/* the send queue is peeked whole, a segment partly acknowledged
	 * too: room for one more of the largest */
	*data = malloc(outq + PEEK_SLACK + inq);
	if (!*data)
		return -ENOMEM;
	ret = peek_tcp_queue(sk, TCP_SEND_QUEUE, *data, outq + PEEK_SLACK, &got_snd);
	if (!ret)
		ret = peek_tcp_queue(sk, TCP_RECV_QUEUE, *data + got_snd, inq, &got_rcv);
	sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	if (ret)
		return ret;
	/* the FIN, if not yet acknowledged, holds the last sequence number;
	 * a peek may start before snd_una (a segment partly acknowledged) */
	if (got_rcv != (uint32_t)inq || (uint32_t)outq < unacked ||
	    got_snd < (uint32_t)outq - unacked)
		return -EIO;
	skip = got_snd - (outq - unacked);
	memmove(*data, *data + skip, got_snd - skip + inq);
	got_snd -= skip;
	ri->snd_len = got_snd;
	ri->snd_seq = s->write_seq - fin - got_snd;
	ri->unsent_len = unsent - (fin && unsent);
	s->unsent = unsent;
	ri->rcv_len = inq;
	ri->rcv_seq = s->rcv_nxt - fin_rcvd(ri->state) - inq;
	return ri->unsent_len > ri->snd_len ? -EIO : 0;
}

static int conn_params(int sk, const struct tcp_info *ti, struct rec_inet *ri)
{
	struct tcp_repair_window w;
	socklen_t len = sizeof(w);
	int mss, ts, ret;

	ret = sock_get_int(sk, IPPROTO_TCP, TCP_MAXSEG, &mss);
	if (!ret)
		ret = sock_get_int(sk, IPPROTO_TCP, TCP_TIMESTAMP, &ts);
	if (!ret && getsockopt(sk, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, &len))
		ret = -errno;
	if (ret)
		return ret;
	ri->mss = mss;
	ri->timestamp = ts;
	ri->tcpi_opts = ti->tcpi_options &
			(TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE);
	if (ri->tcpi_opts & TCPI_OPT_WSCALE) {
		ri->snd_wscale = ti->tcpi_snd_wscale;
		ri->rcv_wscale = ti->tcpi_rcv_wscale;
	}
	ri->snd_wl1 = w.snd_wl1;
	ri->snd_wnd = w.snd_wnd;
	ri->max_window = w.max_window;
	ri->rcv_wnd = w.rcv_wnd;
	ri->rcv_wup = w.rcv_wup;
	return 0;
}

/* The connection as it stands once held: its state, queues and window.
 * -EAGAIN: it moved while being read (a packet that passed the lock
 * before it was in place, an acknowledgement of our FIN). */
static int read_conn(int sk, struct cpt_sock *s, struct rec_inet *ri, char **data)
{
	struct tcp_info ti, again;
	socklen_t len = sizeof(ti);
	uint32_t rcv = 0, wr = 0;
	int ret, unsent = 0;

	memset(&ti, 0, sizeof(ti));
	memset(&again, 0, sizeof(again));
	if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -errno;
	ri->state = ti.tcpi_state;
	if (!inet_is_conn(ri))
		return -ECONNRESET;
	ret = conn_queues(sk, s, ri, data);
	if (!ret)
		ret = conn_params(sk, &ti, ri);
	if (!ret && getsockopt(sk, IPPROTO_TCP, TCP_INFO, &again, &len))
		ret = -errno;
	if (!ret)
		ret = queue_seq(sk, TCP_RECV_QUEUE, &rcv);
	if (!ret)
		ret = queue_seq(sk, TCP_SEND_QUEUE, &wr);
	sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	/* (what is unsent moves too: a loss probe's timer sends new data) */
	if (!ret && ioctl(sk, SIOCOUTQNSD, &unsent))
		ret = -errno;
	if (!ret && (again.tcpi_state != ti.tcpi_state || rcv != s->rcv_nxt ||
		     wr != s->write_seq || unsent != s->unsent))
		ret = -EAGAIN;
	if (ret == -EIO)	/* queues that do not add up: moving too */
		ret = -EAGAIN;
	if (ret) {
		free(*data);
		*data = NULL;
	}
	return ret;
}

/* A connection that ended: closed both ways, its port released. */
static void as_closed(struct rec_inet *ri)
{
	struct rec_inet z = { .family = ri->family, .protocol = ri->protocol,
			      .state = TCP_CLOSE, .shutdown = 3 };

	memcpy(z.opt, ri->opt, sizeof(z.opt));
	z.rcvtimeo_us = ri->rcvtimeo_us;
	z.sndtimeo_us = ri->sndtimeo_us;
	*ri = z;
}

int tcp_note_accept_queue(struct cpt_ctx *c, const struct fd_probe *p,
			  const struct rec_inet *ri, uint32_t n)
{
	struct inet_cpt *ic = kind_dump_state(c, &kind_inet);
	struct queued_listener *l;

	if (c->flags & CKPT_SKIP_IN_FLIGHT) {
		log_warn(c->log, "pid %d fd %d: %u connections waiting to be accepted on port %u are dropped (--skip-in-flight)",
			 p->pid, p->fd, n, ri->lport);
		return 0;
	}
	l = VEC_PUSH(ic->lst, ic->nr_lst, ic->cap_lst);
	if (!l)
		return log_err(c->log, ENOMEM, "listener table:");
	*l = (struct queued_listener){ p->pid, p->fd, n, *ri };
	return 0;
}

/* The other end of @ri's connection waits in a listener's accept queue
 * (sock_diag: established, no file yet) with nothing queued either way,
 * so that connecting again gives the same. */
struct queued_find {
	const struct rec_inet *ri;
	bool found;
};

static int queued_one(void *arg, const void *msg, uint32_t len)
{
	const struct inet_diag_msg *m = msg;
	struct queued_find *f = arg;
	size_t n = f->ri->family == AF_INET ? 4 : 16;

	if (len >= sizeof(*m) && ntohs(m->id.idiag_sport) == f->ri->rport &&
	    ntohs(m->id.idiag_dport) == f->ri->lport &&
	    !memcmp(m->id.idiag_src, f->ri->raddr, n) &&
	    !memcmp(m->id.idiag_dst, f->ri->laddr, n) && !m->idiag_inode &&
	    !m->idiag_rqueue && !m->idiag_wqueue)
		f->found = true;
	return 0;
}

static bool to_accept_queue(const struct rec_inet *ri)
{
	struct inet_diag_req_v2 req = {
		.sdiag_family = ri->family, .sdiag_protocol = IPPROTO_TCP,
		.idiag_states = 1 << TCP_ESTABLISHED,
	};
	struct queued_find f = { ri, false };

	return ri->state == TCP_ESTABLISHED && !ri->rcv_len &&
	       !sockdiag_dump(&req, sizeof(req), queued_one, &f) && f.found;
}

int tcp_dump_conn(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		  struct rec_inet *ri, char **data)
{
	struct timespec pause = { 0, 2000000 };
	struct cpt_sock *s = NULL;
	char peer[80];
	int ret, tries = 0;

	inet_addr_str(ri, false, peer, sizeof(peer));
	if (c->flags & CKPT_TCP_CLOSE) {	/* saved as closed, left alone */
		log_info(c->log, "pid %d fd %d: TCP connection to %s saved as closed (--tcp-close)",
			 p->pid, p->fd, peer);
		as_closed(ri);
		return 0;
	}
	if (!(c->flags & CKPT_TCP_ESTABLISHED))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: TCP connection to %s (use --tcp-established to save it)",
			       p->pid, p->fd, peer);
	ret = conn_hold(c, p, sk, ri, &s);
	if (ret)
		return ret;
	/* packets already past the lock settle within a few milliseconds */
	while ((ret = read_conn(s->sk, s, ri, data)) == -EAGAIN && ++tries < 50)
		nanosleep(&pause, NULL);
	if (ret == -ECONNRESET)
		return log_err(c->log, EAGAIN,
			       "pid %d fd %d: TCP connection to %s closed while it was saved (state %s); try again",
			       p->pid, p->fd, peer, inet_state_name(ri->state));
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: reading TCP connection to %s:",
			       p->pid, p->fd, peer);
	s->to_queued = to_accept_queue(ri);
	if (s->to_queued)
		ri->conn_flags |= INET_CONN_RECONNECT;
	return 0;
}

/* Held to the end of the checkpoint, which fails if it is opened
 * meanwhile (the peer would see a connection the image does not have). */
int tcp_hold_opening(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		     const struct rec_inet *ri)
{
	struct cpt_sock *n;
	int ret = add_sock(c, p, sk, ri, &n);

	if (!ret)
		n->opening = true;
	return ret;
}

/* Nothing may have come in since the queues were read: the peer takes
 * it for delivered, and the image lacks it.  (Acknowledgements may come:
 * the image then has bytes the peer has, which it drops when they are
 * sent again.) */
/* Each connection waiting in an accept queue has its client in the
 * tree, which connects again at restart; else the checkpoint is refused
 * (--skip-in-flight drops them). */
static int check_accept_queues(struct cpt_ctx *c, const struct inet_cpt *ic)
{
	for (int i = 0; i < ic->nr_lst; i++) {
		const struct queued_listener *l = &ic->lst[i];
		size_t n = l->ri.family == AF_INET ? 4 : 16;
		uint32_t found = 0;

		for (int j = 0; j < ic->nr_socks; j++) {
			const struct rec_inet *r = &ic->socks[j].conn;

			found += ic->socks[j].to_queued && r->family == l->ri.family &&
				 r->rport == l->ri.lport &&
				 (!memcmp(r->raddr, l->ri.laddr, n) ||
				  !memcmp(l->ri.laddr, (uint8_t[16]){ 0 }, n));
		}
		if (found != l->n)
			return log_err(c->log, EBUSY,
				       "pid %d fd %d: %u connections wait to be accepted on port %u, %u of them from a client in the tree with nothing sent (not supported yet; --skip-in-flight drops them)",
				       l->pid, l->fd, l->n, l->ri.lport, found);
	}
	return 0;
}

static int inet_dump_check(struct cpt_ctx *c)
{
	struct inet_cpt *ic = kind_dump_state(c, &kind_inet);

	if (check_accept_queues(c, ic))
		return -EBUSY;
	for (int i = 0; i < ic->nr_socks; i++) {
		struct cpt_sock *s = &ic->socks[i];
		uint32_t rcv = 0, wr = 0;
		struct tcp_info ti;
		socklen_t len = sizeof(ti);
		int ret;

		if (s->opening) {
			if (getsockopt(s->sk, IPPROTO_TCP, TCP_INFO, &ti, &len))
				return log_err(c->log, errno, "pid %d fd %d: TCP_INFO:", s->pid,
					       s->fd);
			if (ti.tcpi_state != TCP_SYN_SENT)
				return log_err(c->log, EAGAIN,
					       "pid %d fd %d: its TCP connection was opened while it was saved; try again",
					       s->pid, s->fd);
			continue;
		}
		ret = queue_seq(s->sk, TCP_RECV_QUEUE, &rcv);
		if (!ret)
			ret = queue_seq(s->sk, TCP_SEND_QUEUE, &wr);
		sock_set_int(s->sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
		if (ret)
			return log_err(c->log, -ret, "pid %d fd %d: TCP connection:", s->pid,
				       s->fd);
		if (rcv != s->rcv_nxt || wr != s->write_seq)
			return log_err(c->log, EAGAIN,
				       "pid %d fd %d: data came in on its TCP connection while it was saved; try again",
				       s->pid, s->fd);
	}
	return 0;
}

/* Killed: closing our copy, in repair mode, sends nothing, and the
 * network lock stays until the restart.  Else the lock goes, then the
 * connection leaves repair mode (repair mode had overridden SO_REUSEADDR)
 * with a window probe (sent in ESTABLISHED only): the peer answers it
 * with an acknowledgement of all it has, which replaces the ones the
 * lock dropped.  Without it the sender learns of them only at its next
 * retransmission, and one blocked on a full send buffer may not be woken
 * at all.  (A half-closed connection still waits for a retransmission.) */
static void inet_dump_end(struct cpt_ctx *c, bool killed)
{
	struct inet_cpt *ic = kind_dump_state(c, &kind_inet);

	for (int i = 0; i < ic->nr_socks; i++) {
		struct cpt_sock *s = &ic->socks[i];

		if (!killed)
			conn_unlock(c, s);
		if (!killed && !s->opening &&
		    (sock_set_int(s->sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF) ||
		     sock_set_int(s->sk, SOL_SOCKET, SO_REUSEADDR, s->reuse)))
			log_warn(c->log, "pid %d fd %d: leaving TCP repair mode: %s", s->pid,
				 s->fd, strerror(errno));
		close(s->sk);
	}
	free(ic->socks);
	ic->socks = NULL;
	ic->nr_socks = 0;
	ic->cap_socks = 0;
	free(ic->lst);
	ic->lst = NULL;
	ic->nr_lst = 0;
	ic->cap_lst = 0;
	keeper_end(&ic->keeper, c->log, true);
}

/* Killed from now on: the keeper leaves their connections as they are. */
static void inet_dump_kill(struct cpt_ctx *c)
{
	struct inet_cpt *ic = kind_dump_state(c, &kind_inet);

	keeper_killing(&ic->keeper, c->log);
}

/* A socket in CLOSE whose reads see the end of the stream (poll, which
 * consumes nothing, says POLLRDHUP): shut down, or a connection that
 * ended, which the kernel shut down both ways and whose port it released
 * (getsockname still shows it) unless bind() had locked it.  That lock
 * cannot be seen: such a socket is restored unbound. */
int tcp_dump_closed(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    struct rec_inet *ri, char **data)
{
	struct pollfd pfd = { .fd = sk, .events = POLLRDHUP };
	int inq = 0;
	ssize_t k;

	if (poll(&pfd, 1, 0) < 0)
		return log_err(c->log, errno, "pid %d fd %d: poll of a closed TCP socket:",
			       p->pid, p->fd);
	if (!(pfd.revents & POLLRDHUP))
		return 0;
	ri->shutdown = 3;	/* SHUT_RD 1 | SHUT_WR 2 */
	memset(ri->laddr, 0, sizeof(ri->laddr));
	ri->lport = 0;
	ri->scope_id = 0;
	/* bytes it received and were not read yet: peeked only if there
	 * are some, as a peek at nothing would take a pending error */
	if (ioctl(sk, SIOCINQ, &inq) || inq < 0 || (uint32_t)inq > INET_MAX_QUEUE)
		return log_err(c->log, inq < 0 || (uint32_t)inq > INET_MAX_QUEUE ? EFBIG : errno,
			       "pid %d fd %d: the bytes waiting on a closed TCP socket:",
			       p->pid, p->fd);
	if (!inq)
		return 0;
	*data = malloc(inq);
	if (!*data)
		return log_err(c->log, ENOMEM, "closed TCP socket:");
	k = recv(sk, *data, inq, MSG_PEEK | MSG_DONTWAIT);
	if (k != inq)
		return log_err(c->log, k < 0 ? errno : EIO,
			       "pid %d fd %d: peeking %d bytes waiting on a closed TCP socket:",
			       p->pid, p->fd, inq);
	ri->rcv_len = inq;
	return 0;
}

/* ---- restart ---- */

static void restore_unlock(struct rst_ctx *c, const struct rec_inet *ri);

const struct rec_inet *tcp_as_closed(struct rst_ctx *c, const struct rec_inet *ri,
				     struct rec_inet *closed)
{
	char where[80];

	log_info(c->log, "TCP connection %s restored closed (--tcp-close)",
		 inet_addr_str(ri, true, where, sizeof(where)));
	restore_unlock(c, ri);
	*closed = *ri;
	as_closed(closed);
	return closed;
}


/* Connections rebuilt in repair mode, ckpt's copies: they leave it once
 * every process is built (inet_restore_end). */
struct inet_pending {
	int sk;
	const struct rst_file *f;
};

struct inet_rst {
	struct inet_pending *p;
	int n;
	size_t cap;
};

/* Fill one queue in repair mode: the receive queue as if received, the
 * send queue as if sent and not yet acknowledged. */
int tcp_fill_queue(int sk, int q, const char *data, uint32_t len)
{
	uint32_t done = 0;

	if (sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, q))
		return -errno;
	while (done < len) {
		ssize_t k = send(sk, data + done, len - done < CHUNK ? len - done : CHUNK,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		done += k;
	}
	return 0;
}

static int conn_options(int sk, const struct rec_inet *ri, uint32_t ts)
{
	struct tcp_repair_opt o[4];
	int n = 0;

	o[n++] = (struct tcp_repair_opt){ TCPOPT_MAXSEG, ri->mss };
	if (ri->tcpi_opts & TCPI_OPT_WSCALE)
		o[n++] = (struct tcp_repair_opt){ TCPOPT_WINDOW,
						  ri->snd_wscale | (ri->rcv_wscale << 16) };
	if (ri->tcpi_opts & TCPI_OPT_SACK)
		o[n++] = (struct tcp_repair_opt){ TCPOPT_SACK_PERMITTED, 0 };
	if (ri->tcpi_opts & TCPI_OPT_TIMESTAMPS)
		o[n++] = (struct tcp_repair_opt){ TCPOPT_TIMESTAMP, 0 };
	if (setsockopt(sk, IPPROTO_TCP, TCP_REPAIR_OPTIONS, o, n * sizeof(o[0])))
		return -errno;
	return sock_set_int(sk, IPPROTO_TCP, TCP_TIMESTAMP, ts);
}

static int conn_window(int sk, const struct rec_inet *ri)
{
	struct tcp_repair_window w = {
		.snd_wl1 = ri->snd_wl1, .snd_wnd = ri->snd_wnd,
		.max_window = ri->max_window, .rcv_wnd = ri->rcv_wnd,
		.rcv_wup = ri->rcv_wup,
	};
	uint32_t rcv_nxt = ri->rcv_seq + ri->rcv_len;

	/* not past what we have received: the peer's FIN is not in it */
	if ((int32_t)(w.rcv_wup - rcv_nxt) > 0)
		w.rcv_wup = rcv_nxt;
	/* the window was last updated by a segment past what was in order,
	 * held out of order (not saved: the peer sends it again); the
	 * kernel refuses a window update mark beyond the window (EINVAL),
	 * and one at rcv_nxt only lets the next update in sooner */
	if ((int32_t)(w.snd_wl1 - (rcv_nxt + w.rcv_wnd)) > 0)
		w.snd_wl1 = rcv_nxt;
	if (w.max_window < w.snd_wnd)
		w.max_window = w.snd_wnd;

	return setsockopt(sk, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, sizeof(w)) ? -errno : 0;
}

/* The send queue must fit in the send buffer again, with its overhead;
 * the buffer is set back to what it was once it is filled. */
static int sndbuf_room(int sk, const struct rec_inet *ri)
{
	long want = 4L * ri->snd_len + (1 << 20);
	int now = 0, ret = sock_get_int(sk, SOL_SOCKET, SO_SNDBUF, &now);

	if (ret || now >= want || !ri->snd_len)
		return ret;
	return sock_set_int(sk, SOL_SOCKET, SO_SNDBUFFORCE, want > INT_MAX ? INT_MAX / 2 : want / 2);
}

/* The connection as it was, still in repair mode.  With a FIN sent, all
 * the send queue goes before it (as sent: it is retransmitted). */
int tcp_rebuild_conn(int sk, const struct rec_inet *ri, uint32_t ts)
{
	const char *sndq = (const char *)(ri + 1), *rcvq = sndq + ri->snd_len;
	bool fin = fin_sent(ri->state);
	uint32_t sent = fin ? ri->snd_len : ri->snd_len - ri->unsent_len;
	struct sockaddr_storage ss;
	socklen_t len = inet_addr_out(ri, false, &ss);
	int ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON);

	/* bound only (over what may hold the port): it connects once its
	 * listener is back (reconnect) */
	if (!ret && (ri->conn_flags & INET_CONN_RECONNECT))
		return inet_bind(sk, ri);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_QUEUE_SEQ, ri->rcv_seq);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_QUEUE_SEQ, ri->snd_seq);
	if (!ret)
		ret = inet_bind(sk, ri);
	if (!ret && connect(sk, (void *)&ss, len))	/* no SYN in repair mode */
		ret = -errno;
	if (!ret)
		ret = conn_options(sk, ri, ts);
	if (!ret)
		ret = tcp_fill_queue(sk, TCP_RECV_QUEUE, rcvq, ri->rcv_len);
	if (!ret)
		ret = conn_window(sk, ri);
	if (!ret)
		ret = sndbuf_room(sk, ri);
	if (!ret)
		ret = tcp_fill_queue(sk, TCP_SEND_QUEUE, sndq, sent);
	if (!ret)
		ret = tcp_replay_fins(sk, ri);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	return ret;
}

int tcp_keep_pending(struct rst_ctx *c, int sk, const struct rst_file *f)
{
	struct inet_rst *st = kind_ctx_state(c, &kind_inet, sizeof(*st));
	struct inet_pending *n = st ? VEC_PUSH(st->p, st->n, st->cap) : NULL;

	if (!n)
		return -ENOMEM;
	*n = (struct inet_pending){ sk, f };
	return 0;
}

/* What the connection had not sent yet goes as new data. */
static int send_unsent(int sk, const struct rec_inet *ri)
{
	const char *p = (const char *)(ri + 1) + ri->snd_len - ri->unsent_len;
	uint32_t done = 0;

	if (fin_sent(ri->state) || (ri->conn_flags & INET_CONN_RECONNECT))
		return 0;	/* sent before the FIN, in repair mode, or by
				 * reconnect() */
	while (done < ri->unsent_len) {
		ssize_t k = send(sk, p + done, ri->unsent_len - done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		done += k;
	}
	return 0;
}

/* The network lock a checkpoint --kill left, if any, goes once the
 * connection is back, so the peer's packets reach it.  None (exit 1), or
 * no iptables here: nothing to do. */
static void restore_unlock(struct rst_ctx *c, const struct rec_inet *ri)
{
	char why[160], where[80];
	int ret = netlock_del(ri, why, sizeof(why));

	if (ret && ret != 1 && ret != -ENOENT)
		log_warn(c->log, "TCP connection %s: removing its network lock: %s",
			 inet_addr_str(ri, true, where, sizeof(where)), why);
}

static void relock(struct rst_ctx *c, const struct rec_inet *ri)
{
	char why[160], where[80];

	if (netlock_add(ri, false, why, sizeof(why)))
		log_warn(c->log, "TCP connection %s: putting its network lock back: %s",
			 inet_addr_str(ri, true, where, sizeof(where)), why);
}

/* The client of a connection that waited in an accept queue connects to
 * its listener again, restored by now, and sends what it had sent: the
 * listener's queue has it back as it was, under new sequence numbers
 * that no one had seen. */
static int reconnect(int sk, const struct rec_inet *ri)
{
	struct sockaddr_storage ss;
	socklen_t len = inet_addr_out(ri, false, &ss);
	struct pollfd pfd = { .fd = sk, .events = POLLOUT };
	int fl = fcntl(sk, F_GETFL), ret, err = 0;
	const char *q = (const char *)(ri + 1);
	uint32_t done = 0;

	ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP);
	if (!ret && (fl < 0 || fcntl(sk, F_SETFL, fl | O_NONBLOCK)))
		ret = -errno;
	if (!ret && connect(sk, (void *)&ss, len) && errno != EINPROGRESS)
		ret = -errno;
	if (!ret && poll(&pfd, 1, 5000) != 1)
		ret = -ETIMEDOUT;
	if (!ret && (sock_get_int(sk, SOL_SOCKET, SO_ERROR, &err) || err))
		ret = err ? -err : -errno;
	while (!ret && done < ri->snd_len) {
		ssize_t k = send(sk, q + done, ri->snd_len - done, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k <= 0)
			ret = k < 0 ? -errno : -EIO;
		else
			done += k;
	}
	if (fl >= 0)
		fcntl(sk, F_SETFL, fl);
	return ret;
}

static int inet_restore_end(struct rst_ctx *c)
{
	struct inet_rst *st = KCSTATE(c, kind_inet);

	for (int i = 0; st && i < st->n; i++) {
		const struct rec_inet *ri = st->p[i].f->priv;
		int sk = st->p[i].sk, ret;
		char where[80];

		/* leaving repair mode sends a window probe: the peer learns
		 * our window, and answers, past the lock, with its own */
		restore_unlock(c, ri);
		if (ri->conn_flags & INET_CONN_RECONNECT)
			ret = reconnect(sk, ri);
		else
			ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF);
		if (ret)	/* still restartable: the lock comes back */
			relock(c, ri);
		if (!ret)
			ret = sock_set_int(sk, SOL_SOCKET, SO_REUSEADDR,
					   ri->opt[INET_OPT_REUSEADDR]);
		if (!ret)
			ret = send_unsent(sk, ri);
		if (!ret)
			ret = inet_set_opt(sk, ri, INET_OPT_SNDBUF);
		close(sk);
		st->p[i].sk = -1;
		if (ret)
			return log_err(c->log, -ret, "TCP connection %s:",
				       inet_addr_str(ri, true, where, sizeof(where)));
	}
	return 0;
}

static void inet_free_ctx(void *state)
{
	struct inet_rst *st = state;

	for (int i = 0; i < st->n; i++)
		if (st->p[i].sk >= 0)
			close(st->p[i].sk);	/* in repair mode: silently */
	free(st->p);
	free(st);
}

const struct kind_ops kind_inet = {
	.name = "inet",
	.dump_size = sizeof(struct inet_cpt),
	.dump_check = inet_dump_check,
	.dump_kill = inet_dump_kill,
	.dump_end = inet_dump_end,
	.restore_end = inet_restore_end,
	.free_ctx = inet_free_ctx,
};
