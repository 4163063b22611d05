/* inet.c - TCP and UDP sockets over IPv4 and IPv6 (FILE_INET).
 *
 * Checkpoint reads a socket through ckpt's own copy of it (pidfd_getfd):
 * its addresses, options and TCP state.  An established TCP connection
 * (only with CKPT_TCP_ESTABLISHED) is put in repair mode (TCP_REPAIR):
 * then its sequence numbers, windows, negotiated options and both queues
 * can be read without sending anything or consuming anything.  It stays
 * in repair mode until the checkpoint is over: killed, its close sends
 * neither FIN nor RST, so the peer keeps its side for the restored
 * process; otherwise it leaves repair mode exactly as it was.
 *
 * Restart makes each socket in ckpt and gives it to its process.  A
 * connection is rebuilt in repair mode (sequence numbers, bind, connect
 * without a SYN, options, queues) and leaves repair mode only once every
 * process is built, so that two ends inside the tree find each other.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../files.h"
#include "dgram.h"
#include "netlock.h"
#include "sockdiag.h"
#include "sockopt.h"

#define MAX_QUEUE	((uint32_t)(MAX_FILE_EXTRA - sizeof(struct rec_inet)) / 2)
#define MAX_TIMEO_US	(100LL * 365 * 86400 * 1000000)
#define CHUNK		(64 * 1024)
#define PEEK_SLACK	(1 << 20)

struct opt_def {
	int level, name;
	int min, max;
	bool v6, tcp;		/* IPv6 only, TCP only */
};

static const struct opt_def opt_defs[INET_NR_OPTS] = {
	[INET_OPT_REUSEADDR] = { SOL_SOCKET, SO_REUSEADDR, 0, 1 },
	[INET_OPT_REUSEPORT] = { SOL_SOCKET, SO_REUSEPORT, 0, 1 },
	[INET_OPT_KEEPALIVE] = { SOL_SOCKET, SO_KEEPALIVE, 0, 1 },
	[INET_OPT_BROADCAST] = { SOL_SOCKET, SO_BROADCAST, 0, 1 },
	[INET_OPT_RCVBUF] = { SOL_SOCKET, SO_RCVBUF, 0, INT_MAX },
	[INET_OPT_SNDBUF] = { SOL_SOCKET, SO_SNDBUF, 0, INT_MAX },
	[INET_OPT_LINGER] = { SOL_SOCKET, SO_LINGER, -1, 65535 },
	[INET_OPT_V6ONLY] = { IPPROTO_IPV6, IPV6_V6ONLY, 0, 1, .v6 = true },
	[INET_OPT_NODELAY] = { IPPROTO_TCP, TCP_NODELAY, 0, 1, .tcp = true },
	[INET_OPT_KEEPIDLE] = { IPPROTO_TCP, TCP_KEEPIDLE, 1, 32767, .tcp = true },
	[INET_OPT_KEEPINTVL] = { IPPROTO_TCP, TCP_KEEPINTVL, 1, 32767, .tcp = true },
	[INET_OPT_KEEPCNT] = { IPPROTO_TCP, TCP_KEEPCNT, 1, 127, .tcp = true },
};

static bool opt_applies(const struct rec_inet *ri, int i)
{
	return (!opt_defs[i].v6 || ri->family == AF_INET6) &&
	       (!opt_defs[i].tcp || ri->protocol == IPPROTO_TCP);
}

/* A TCP connection, whole or half closed, that ckpt rebuilds. */
static bool is_conn(const struct rec_inet *ri)
{
	switch (ri->protocol == IPPROTO_TCP ? ri->state : 0) {
	case TCP_ESTABLISHED: case TCP_FIN_WAIT1: case TCP_FIN_WAIT2:
	case TCP_CLOSE_WAIT: case TCP_LAST_ACK: case TCP_CLOSING:
		return true;
	}
	return false;
}

/* Our FIN is sent (the last sequence number of the send queue). */
static bool fin_sent(int state)
{
	return state == TCP_FIN_WAIT1 || state == TCP_FIN_WAIT2 ||
	       state == TCP_LAST_ACK || state == TCP_CLOSING;
}

/* ... and not yet acknowledged. */
static bool fin_unacked(int state)
{
	return state == TCP_FIN_WAIT1 || state == TCP_LAST_ACK || state == TCP_CLOSING;
}

/* The peer's FIN came in (after the receive queue). */
static bool fin_rcvd(int state)
{
	return state == TCP_CLOSE_WAIT || state == TCP_LAST_ACK || state == TCP_CLOSING;
}

static const char *state_name(int st)
{
	static const char *const names[] = {
		"?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1",
		"FIN_WAIT2", "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK",
		"LISTEN", "CLOSING", "NEW_SYN_RECV",
	};

	return st >= 0 && st < (int)(sizeof(names) / sizeof(names[0])) ? names[st] : "?";
}

static int get_linger(int sk, int *val)
{
	struct linger l;
	socklen_t len = sizeof(l);

	if (getsockopt(sk, SOL_SOCKET, SO_LINGER, &l, &len))
		return -errno;
	*val = l.l_onoff ? l.l_linger : -1;
	return 0;
}

static int get_timeo(int sk, int name, int64_t *us)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);

	if (getsockopt(sk, SOL_SOCKET, name, &tv, &len))
		return -errno;
	*us = tv.tv_sec * 1000000LL + tv.tv_usec;
	return 0;
}

static int get_opts(int sk, struct rec_inet *ri)
{
	int ret = 0;

	for (int i = 0; i < INET_NR_OPTS && !ret; i++) {
		if (!opt_applies(ri, i))
			continue;
		if (i == INET_OPT_LINGER)
			ret = get_linger(sk, &ri->opt[i]);
		else
			ret = sock_get_int(sk, opt_defs[i].level, opt_defs[i].name,
					   &ri->opt[i]);
	}
	if (!ret)
		ret = get_timeo(sk, SO_RCVTIMEO, &ri->rcvtimeo_us);
	if (!ret)
		ret = get_timeo(sk, SO_SNDTIMEO, &ri->sndtimeo_us);
	return ret;
}

/* ---- addresses ---- */

static void addr_in(struct rec_inet *ri, const struct sockaddr_storage *ss,
		    uint8_t *addr, uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)ss;

		memcpy(addr, &a->sin_addr, 4);
		*port = ntohs(a->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ss;

		memcpy(addr, &a->sin6_addr, 16);
		*port = ntohs(a->sin6_port);
		if (addr == ri->laddr)
			ri->scope_id = a->sin6_scope_id;
	}
}

static socklen_t addr_out(const struct rec_inet *ri, bool local,
			  struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (ri->family == AF_INET) {
		struct sockaddr_in *a = (void *)ss;

		a->sin_family = AF_INET;
		memcpy(&a->sin_addr, local ? ri->laddr : ri->raddr, 4);
		a->sin_port = htons(local ? ri->lport : ri->rport);
		return sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (void *)ss;

		a->sin6_family = AF_INET6;
		memcpy(&a->sin6_addr, local ? ri->laddr : ri->raddr, 16);
		a->sin6_port = htons(local ? ri->lport : ri->rport);
		a->sin6_scope_id = ri->scope_id;
		return sizeof(*a);
	}
}

/* "addr:port" for messages. */
static const char *addr_str(const struct rec_inet *ri, bool local, char *buf,
			    size_t n)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(ri->family, local ? ri->laddr : ri->raddr, a, sizeof(a));
	snprintf(buf, n, ri->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a,
		 local ? ri->lport : ri->rport);
	return buf;
}

/* ---- checkpoint ---- */

static bool supported(int family, int type, int proto)
{
	return (family == AF_INET || family == AF_INET6) &&
	       ((type == SOCK_STREAM && proto == IPPROTO_TCP) ||
		(type == SOCK_DGRAM && proto == IPPROTO_UDP));
}

static int describe(int sk, struct rec_inet *ri)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int family, type, proto, ret;

	ret = sock_get_int(sk, SOL_SOCKET, SO_DOMAIN, &family);
	if (!ret)
		ret = sock_get_int(sk, SOL_SOCKET, SO_TYPE, &type);
	if (!ret)
		ret = sock_get_int(sk, SOL_SOCKET, SO_PROTOCOL, &proto);
	if (ret)
		return ret;
	if (!supported(family, type, proto))
		return -EOPNOTSUPP;
	ri->family = family;
	ri->protocol = proto;
	if (getsockname(sk, (void *)&ss, &len))
		return -errno;
	addr_in(ri, &ss, ri->laddr, &ri->lport);
	len = sizeof(ss);
	if (!getpeername(sk, (void *)&ss, &len))
		addr_in(ri, &ss, ri->raddr, &ri->rport);
	else if (errno != ENOTCONN)
		return -errno;
	return get_opts(sk, ri);
}

static bool inet_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	int sk, family = 0, type = 0, proto = 0;
	bool ok = false;

	if (!S_ISSOCK(p->st.st_mode) || (sk = sock_copy(p->pid, p->fd)) < 0)
		return false;
	if (!sock_get_int(sk, SOL_SOCKET, SO_DOMAIN, &family) &&
	    !sock_get_int(sk, SOL_SOCKET, SO_TYPE, &type) &&
	    !sock_get_int(sk, SOL_SOCKET, SO_PROTOCOL, &proto))
		ok = supported(family, type, proto);
	close(sk);
	return ok;
}

/* The peer's packets are dropped before the connection is read, and
 * until it is restored or the checkpoint ends (netlock.c).  Without a
 * lock the checkpoint goes on: one warning. */
static void lock(struct cpt_ctx *c, struct cpt_sock *s)
{
	bool ready = false, warned = false;
	char why[160];

	for (int i = 0; i < c->nr_socks - 1; i++) {
		if (c->socks[i].opening)
			continue;
		ready |= c->socks[i].locked && c->socks[i].conn.family == s->conn.family;
		warned |= !c->socks[i].locked;
	}
	s->locked = !netlock_add(&s->conn, ready, why, sizeof(why));
	if (!s->locked && !warned)
		log_warn(c->log, "no network lock: %s (a packet the peer sends before the connection is restored resets it)",
			 why);
}

static void unlock(struct cpt_ctx *c, struct cpt_sock *s)
{
	char why[160];

	if (s->locked && netlock_del(&s->conn, why, sizeof(why)))
		log_warn(c->log, "pid %d fd %d: removing its network lock: %s", s->pid,
			 s->fd, why);
	s->locked = false;
}

/* ckpt keeps its own copy of the connection, in repair mode, until the
 * checkpoint is over (inet_dump_end). */
/* A copy of the socket in ckpt's table, held to the end of the
 * checkpoint (inet_dump_end closes it). */
static int add_sock(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    const struct rec_inet *ri, struct cpt_sock **out)
{
	struct cpt_sock *n = realloc(c->socks, (c->nr_socks + 1) * sizeof(*n));
	int copy;

	if (!n)
		return log_err(c->log, ENOMEM, "socket table:");
	c->socks = n;
	copy = fcntl(sk, F_DUPFD_CLOEXEC, 3);
	if (copy < 0)
		return log_err(c->log, errno, "pid %d fd %d: dup:", p->pid, p->fd);
	n = &c->socks[c->nr_socks++];
	*n = (struct cpt_sock){ .sk = copy, .pid = p->pid, .fd = p->fd,
				.reuse = ri->opt[INET_OPT_REUSEADDR], .conn = *ri };
	*out = n;
	return 0;
}

static int hold(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		const struct rec_inet *ri, struct cpt_sock **out)
{
	struct cpt_sock *n;
	int err, ret = add_sock(c, p, sk, ri, &n);

	if (ret)
		return ret;
	lock(c, n);
	/* the keeper holds it before it is changed: a ckpt that dies from
	 * here on leaves it unlocked and out of repair mode */
	ret = keeper_hold(c, n);
	if (ret) {
		unlock(c, n);
		close(n->sk);
		c->nr_socks--;
		return ret;
	}
	if (sock_set_int(n->sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON)) {
		err = errno;
		unlock(c, n);
		close(n->sk);
		c->nr_socks--;
		return log_err(c->log, err, "pid %d fd %d: TCP_REPAIR:", p->pid, p->fd);
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
static int peek_queue(int sk, int q, char *buf, uint32_t len, uint32_t *got)
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
	    (uint32_t)inq > MAX_QUEUE || (uint32_t)outq > MAX_QUEUE)
		return -EFBIG;
	/* the send queue is peeked whole, a segment partly acknowledged
	 * too: room for one more of the largest */
	*data = malloc(outq + PEEK_SLACK + inq);
	if (!*data)
		return -ENOMEM;
	ret = peek_queue(sk, TCP_SEND_QUEUE, *data, outq + PEEK_SLACK, &got_snd);
	if (!ret)
		ret = peek_queue(sk, TCP_RECV_QUEUE, *data + got_snd, inq, &got_rcv);
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
	int ret;

	memset(&ti, 0, sizeof(ti));
	memset(&again, 0, sizeof(again));
	if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -errno;
	ri->state = ti.tcpi_state;
	if (!is_conn(ri))
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
	if (!ret && (again.tcpi_state != ti.tcpi_state || rcv != s->rcv_nxt ||
		     wr != s->write_seq))
		ret = -EAGAIN;
	if (ret == -EIO)	/* queues that do not add up: moving too */
		ret = -EAGAIN;
	if (ret) {
		free(*data);
		*data = NULL;
	}
	return ret;
}

static int dump_conn(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		     struct rec_inet *ri, char **data)
{
	struct timespec pause = { 0, 2000000 };
	struct cpt_sock *s = NULL;
	char peer[80];
	int ret, tries = 0;

	addr_str(ri, false, peer, sizeof(peer));
	if (!(c->flags & CKPT_TCP_ESTABLISHED))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: TCP connection to %s (use --tcp-established to save it)",
			       p->pid, p->fd, peer);
	ret = hold(c, p, sk, ri, &s);
	if (ret)
		return ret;
	/* packets already past the lock settle within a few milliseconds */
	while ((ret = read_conn(s->sk, s, ri, data)) == -EAGAIN && ++tries < 50)
		nanosleep(&pause, NULL);
	if (ret == -ECONNRESET)
		return log_err(c->log, EAGAIN,
			       "pid %d fd %d: TCP connection to %s closed while it was saved (state %s); try again",
			       p->pid, p->fd, peer, state_name(ri->state));
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: reading TCP connection to %s:",
			       p->pid, p->fd, peer);
	return 0;
}

/* A connection being opened: getpeername() says ENOTCONN until the
 * handshake is done, sock_diag knows where the SYNs go. */
struct syn_find {
	ino_t ino;
	struct rec_inet *ri;
	bool found;
};

static int syn_one(void *arg, const void *msg, uint32_t len)
{
	const struct inet_diag_msg *m = msg;
	struct syn_find *f = arg;

	if (len < sizeof(*m) || m->idiag_inode != f->ino || f->found)
		return 0;
	memcpy(f->ri->raddr, m->id.idiag_dst, f->ri->family == AF_INET ? 4 : 16);
	f->ri->rport = ntohs(m->id.idiag_dport);
	f->found = true;
	return 0;
}

/* Held to the end of the checkpoint, which fails if it is opened
 * meanwhile (the peer would see a connection the image does not have). */
static int hold_opening(struct cpt_ctx *c, const struct fd_probe *p, int sk,
			const struct rec_inet *ri)
{
	struct cpt_sock *n;
	int ret = add_sock(c, p, sk, ri, &n);

	if (!ret)
		n->opening = true;
	return ret;
}

static int dump_syn_sent(struct cpt_ctx *c, const struct fd_probe *p, int sk,
			 struct rec_inet *ri)
{
	struct inet_diag_req_v2 req = {
		.sdiag_family = ri->family, .sdiag_protocol = IPPROTO_TCP,
		.idiag_states = 1 << TCP_SYN_SENT,
	};
	struct syn_find f = { p->st.st_ino, ri, false };
	int ret = sockdiag_dump(&req, sizeof(req), syn_one, &f);

	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: sock_diag of TCP connections being opened:",
			       p->pid, p->fd);
	if (!f.found || !ri->rport)
		return log_err(c->log, EAGAIN,
			       "pid %d fd %d: TCP connection being opened, not found by sock_diag (connected meanwhile?); try again",
			       p->pid, p->fd);
	return hold_opening(c, p, sk, ri);
}

static int dump_tcp(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    struct rec_inet *ri, char **data)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return log_err(c->log, errno, "pid %d fd %d: TCP_INFO:", p->pid, p->fd);
	ri->state = ti.tcpi_state;
	switch (ti.tcpi_state) {
	case TCP_LISTEN:
		/* for a listener: the accept queue, and its bound */
		if (ti.tcpi_unacked)
			return log_err(c->log, EBUSY,
				       "pid %d fd %d: %u connections wait to be accepted on port %u (not supported yet)",
				       p->pid, p->fd, ti.tcpi_unacked, ri->lport);
		ri->backlog = ti.tcpi_sacked;
		return 0;
	case TCP_CLOSE:
		memset(ri->raddr, 0, sizeof(ri->raddr));
		ri->rport = 0;
		return 0;
	case TCP_SYN_SENT:
		return dump_syn_sent(c, p, sk, ri);
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
	case TCP_CLOSE_WAIT:
	case TCP_LAST_ACK:
	case TCP_CLOSING:
		return dump_conn(c, p, sk, ri, data);
	default:
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: TCP socket in state %s (not supported yet)",
			       p->pid, p->fd, state_name(ti.tcpi_state));
	}
}

static int dump_udp(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    struct rec_inet *ri, char **data)
{
	int ret;

	ri->state = ri->rport ? TCP_ESTABLISHED : TCP_CLOSE;
	ret = dgram_peek(sk, MAX_QUEUE, data, &ri->rcv_len);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: reading the datagrams waiting on port %u:",
			       p->pid, p->fd, ri->lport);
	return 0;
}

static int inet_dump(struct cpt_ctx *c, const struct fd_probe *p,
		     struct rec_file *f, void **extra, uint32_t *extra_len)
{
	struct rec_inet *ri = calloc(1, sizeof(*ri));
	int sk = sock_copy(p->pid, p->fd), ret;
	char *data = NULL;

	if (sk < 0 || !ri) {
		free(ri);
		if (sk >= 0)
			close(sk);
		return log_err(c->log, sk < 0 ? -sk : ENOMEM, "pid %d fd %d: its socket:",
			       p->pid, p->fd);
	}
	ret = describe(sk, ri);
	if (ret)
		ret = log_err(c->log, -ret, "pid %d fd %d: reading socket:", p->pid, p->fd);
	else if (ri->protocol == IPPROTO_TCP)
		ret = dump_tcp(c, p, sk, ri, &data);
	else
		ret = dump_udp(c, p, sk, ri, &data);
	close(sk);
	if (!ret && (ri->snd_len || ri->rcv_len)) {
		struct rec_inet *n = realloc(ri, sizeof(*ri) + ri->snd_len + ri->rcv_len);

		if (n) {
			ri = n;
			memcpy(ri + 1, data, ri->snd_len + ri->rcv_len);
		} else {
			ret = log_err(c->log, ENOMEM, "socket queues:");
		}
	}
	free(data);
	if (ret) {
		free(ri);
		return ret;
	}
	*extra = ri;
	*extra_len = sizeof(*ri) + ri->snd_len + ri->rcv_len;
	return 0;
}

/* Nothing may have come in since the queues were read: the peer takes
 * it for delivered, and the image lacks it.  (Acknowledgements may come:
 * the image then has bytes the peer has, which it drops when they are
 * sent again.) */
static int inet_dump_check(struct cpt_ctx *c)
{
	for (int i = 0; i < c->nr_socks; i++) {
		struct cpt_sock *s = &c->socks[i];
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
	for (int i = 0; i < c->nr_socks; i++) {
		struct cpt_sock *s = &c->socks[i];

		if (!killed)
			unlock(c, s);
		if (!killed && !s->opening &&
		    (sock_set_int(s->sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF) ||
		     sock_set_int(s->sk, SOL_SOCKET, SO_REUSEADDR, s->reuse)))
			log_warn(c->log, "pid %d fd %d: leaving TCP repair mode: %s", s->pid,
				 s->fd, strerror(errno));
		close(s->sk);
	}
	free(c->socks);
	c->socks = NULL;
	c->nr_socks = 0;
	keeper_done(c);
}

/* ---- restart ---- */

/* Connections rebuilt in repair mode, ckpt's copies: they leave it once
 * every process is built (inet_restore_end). */
struct inet_pending {
	int sk;
	const struct rst_file *f;
};

struct inet_rst {
	struct inet_pending *p;
	int n;
};

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static bool opts_ok(const struct rec_inet *ri)
{
	for (int i = 0; i < INET_OPT_SLOTS; i++) {
		bool on = i < INET_NR_OPTS && opt_applies(ri, i);

		if (!on && ri->opt[i])
			return false;
		if (on && (ri->opt[i] < opt_defs[i].min || ri->opt[i] > opt_defs[i].max))
			return false;
	}
	return ri->rcvtimeo_us >= 0 && ri->rcvtimeo_us <= MAX_TIMEO_US &&
	       ri->sndtimeo_us >= 0 && ri->sndtimeo_us <= MAX_TIMEO_US;
}

static bool state_ok(const struct rec_inet *ri)
{
	if (ri->protocol == IPPROTO_UDP)
		return (ri->state == TCP_CLOSE && !ri->rport) ||
		       (ri->state == TCP_ESTABLISHED && ri->rport && ri->lport);
	if (ri->state == TCP_LISTEN)
		return ri->lport && ri->backlog <= 65535 && !ri->rport;
	return (ri->state == TCP_CLOSE && !ri->rport) ||
	       ((is_conn(ri) || ri->state == TCP_SYN_SENT) && ri->lport && ri->rport);
}

/* Not a connection: no connection fields, but a UDP socket's datagrams. */
static bool queue_ok(const struct rec_inet *ri, uint32_t extra_len)
{
	struct rec_inet z = *ri;

	z.rcv_len = 0;
	if (!zero(&z.snd_seq, sizeof(z) - offsetof(struct rec_inet, snd_seq)))
		return false;
	if (ri->protocol != IPPROTO_UDP || !ri->rcv_len)
		return extra_len == sizeof(*ri) && !ri->rcv_len;
	return ri->lport && ri->rcv_len <= MAX_QUEUE &&
	       extra_len == sizeof(*ri) + ri->rcv_len &&
	       !dgram_check((const char *)(ri + 1), ri->rcv_len, ri->family);
}

static bool conn_ok(const struct rec_inet *ri, uint32_t extra_len)
{
	if (!is_conn(ri))
		return queue_ok(ri, extra_len);
	return ri->snd_len <= MAX_QUEUE && ri->rcv_len <= MAX_QUEUE &&
	       extra_len == sizeof(*ri) + ri->snd_len + ri->rcv_len &&
	       ri->unsent_len <= ri->snd_len && ri->mss >= 1 && ri->mss <= 65535 &&
	       !(ri->tcpi_opts & ~(TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE)) &&
	       ri->snd_wscale <= 14 && ri->rcv_wscale <= 14 && !ri->reserved2 &&
	       ((ri->tcpi_opts & TCPI_OPT_WSCALE) || (!ri->snd_wscale && !ri->rcv_wscale));
}

static bool inet_ok(const struct rec_inet *ri, uint32_t extra_len)
{
	if (ri->family != AF_INET && ri->family != AF_INET6)
		return false;
	if (ri->protocol != IPPROTO_TCP && ri->protocol != IPPROTO_UDP)
		return false;
	if (ri->reserved || ri->reserved1 ||
	    (ri->state != TCP_LISTEN && ri->backlog))
		return false;
	if (ri->family == AF_INET &&
	    (!zero(ri->laddr + 4, 12) || !zero(ri->raddr + 4, 12) || ri->scope_id))
		return false;
	return state_ok(ri) && opts_ok(ri) && conn_ok(ri, extra_len);
}

static int inet_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_inet *ri;

	if (f->f.extra_len < sizeof(*ri) || strncmp(f->path, "socket:", 7))
		return log_err(c->log, EBADMSG, "FILE %u: bad inet socket", f->f.id);
	ri = malloc(f->f.extra_len);	/* aligned, the queues with it */
	if (!ri)
		return log_err(c->log, ENOMEM, "inet socket:");
	memcpy(ri, f->extra, f->f.extra_len);
	f->priv = ri;
	if (!inet_ok(ri, f->f.extra_len))
		return log_err(c->log, EBADMSG, "FILE %u: bad inet socket", f->f.id);
	return 0;
}

static void inet_free(struct rst_file *f)
{
	free(f->priv);
}

static int set_timeo(int sk, int name, int64_t us)
{
	struct timeval tv = { us / 1000000, us % 1000000 };

	return us && setsockopt(sk, SOL_SOCKET, name, &tv, sizeof(tv)) ? -errno : 0;
}

static int set_opt(int sk, const struct rec_inet *ri, int i)
{
	const struct opt_def *d = &opt_defs[i];
	int now = 0, ret;

	ret = i == INET_OPT_LINGER ? get_linger(sk, &now) :
				     sock_get_int(sk, d->level, d->name, &now);
	if (ret || now == ri->opt[i])
		return ret;	/* what a new socket has is left alone */
	if (i == INET_OPT_LINGER) {
		struct linger l = { ri->opt[i] >= 0, ri->opt[i] >= 0 ? ri->opt[i] : 0 };

		return setsockopt(sk, SOL_SOCKET, SO_LINGER, &l, sizeof(l)) ? -errno : 0;
	}
	/* buffers: the kernel doubles what it is given; FORCE passes the
	 * system's maximum, which autotuning may have passed too */
	if (i == INET_OPT_RCVBUF)
		return sock_set_int(sk, SOL_SOCKET, SO_RCVBUFFORCE, ri->opt[i] / 2);
	if (i == INET_OPT_SNDBUF)
		return sock_set_int(sk, SOL_SOCKET, SO_SNDBUFFORCE, ri->opt[i] / 2);
	return sock_set_int(sk, d->level, d->name, ri->opt[i]);
}

static int set_opts(int sk, const struct rec_inet *ri)
{
	int ret = 0;

	for (int i = 0; i < INET_NR_OPTS && !ret; i++)
		if (opt_applies(ri, i))
			ret = set_opt(sk, ri, i);
	if (!ret)
		ret = set_timeo(sk, SO_RCVTIMEO, ri->rcvtimeo_us);
	if (!ret)
		ret = set_timeo(sk, SO_SNDTIMEO, ri->sndtimeo_us);
	return ret;
}

static int do_bind(int sk, const struct rec_inet *ri)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_out(ri, true, &ss);

	return bind(sk, (void *)&ss, len) ? -errno : 0;
}

/* Bound in repair mode, which binds over what still holds the port (a
 * connection of the killed process in TIME_WAIT, or a restored one). */
static int tcp_bind(int sk, const struct rec_inet *ri)
{
	int ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON);

	if (!ret)
		ret = do_bind(sk, ri);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP);
	if (!ret)	/* repair mode reset it */
		ret = sock_set_int(sk, SOL_SOCKET, SO_REUSEADDR, ri->opt[INET_OPT_REUSEADDR]);
	return ret;
}

static int rebuild_listener(int sk, const struct rec_inet *ri)
{
	int ret = tcp_bind(sk, ri);

	/* listen() checks the port again: connections restored on it are
	 * not listeners, and with SO_REUSEADDR do not conflict */
	if (!ret)
		ret = sock_set_int(sk, SOL_SOCKET, SO_REUSEADDR, 1);
	if (!ret && listen(sk, ri->backlog))
		ret = -errno;
	if (!ret)
		ret = sock_set_int(sk, SOL_SOCKET, SO_REUSEADDR, ri->opt[INET_OPT_REUSEADDR]);
	return ret;
}

/* Fill one queue in repair mode: the receive queue as if received, the
 * send queue as if sent and not yet acknowledged. */
static int fill_queue(int sk, int q, const char *data, uint32_t len)
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
static int rebuild_conn(int sk, const struct rec_inet *ri, uint32_t ts)
{
	const char *sndq = (const char *)(ri + 1), *rcvq = sndq + ri->snd_len;
	bool fin = fin_sent(ri->state);
	uint32_t sent = fin ? ri->snd_len : ri->snd_len - ri->unsent_len;
	struct sockaddr_storage ss;
	socklen_t len = addr_out(ri, false, &ss);
	int ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON);

	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_QUEUE_SEQ, ri->rcv_seq);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_QUEUE_SEQ, ri->snd_seq);
	if (!ret)
		ret = do_bind(sk, ri);
	if (!ret && connect(sk, (void *)&ss, len))	/* no SYN in repair mode */
		ret = -errno;
	if (!ret)
		ret = conn_options(sk, ri, ts);
	if (!ret)
		ret = fill_queue(sk, TCP_RECV_QUEUE, rcvq, ri->rcv_len);
	if (!ret)
		ret = conn_window(sk, ri);
	if (!ret)
		ret = sndbuf_room(sk, ri);
	if (!ret)
		ret = fill_queue(sk, TCP_SEND_QUEUE, sndq, sent);
	if (!ret && fin && shutdown(sk, SHUT_WR))
		ret = -errno;
	/* The peer's FIN cannot be received again (it has our ack of it):
	 * reads see the end of the stream after the queue all the same.
	 * Our acks stay one short of it, which the peer takes for old. */
	if (!ret && fin_rcvd(ri->state) && shutdown(sk, SHUT_RD))
		ret = -errno;
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
	return ret;
}

/* The handshake starts again from the same port: the peer saw at most a
 * SYN, which it forgets when ours has a new sequence number.  A thread
 * that was blocked in connect() waits on in it again (its call is
 * restarted as after a signal). */
static int reconnect(int sk, const struct rec_inet *ri)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_out(ri, false, &ss);
	int fl = fcntl(sk, F_GETFL), ret = tcp_bind(sk, ri);

	if (!ret && (fl < 0 || fcntl(sk, F_SETFL, fl | O_NONBLOCK)))
		ret = -errno;
	if (!ret && !connect(sk, (void *)&ss, len))
		return 0;	/* the peer is this host, and answered at once */
	if (ret)
		return ret;
	/* refused or unreachable at once: the program's connect would have
	 * failed too, and it finds the socket unconnected */
	return errno == EINPROGRESS || errno == ECONNREFUSED || errno == ENETUNREACH ||
	       errno == EHOSTUNREACH ? 0 : -errno;
}

static int keep_pending(struct rst_ctx *c, int sk, const struct rst_file *f)
{
	struct inet_rst *st = kind_ctx_state(c, &kind_inet, sizeof(*st));
	struct inet_pending *n = st ? realloc(st->p, (st->n + 1) * sizeof(*n)) : NULL;

	if (!n)
		return -ENOMEM;
	st->p = n;
	n[st->n++] = (struct inet_pending){ sk, f };
	return 0;
}

static int make_socket(const struct rec_inet *ri, uint32_t ts, int *out)
{
	int type = ri->protocol == IPPROTO_TCP ? SOCK_STREAM : SOCK_DGRAM;
	int sk = socket(ri->family, type | SOCK_CLOEXEC, ri->protocol), ret;
	struct sockaddr_storage ss;
	socklen_t len;

	if (sk < 0)
		return -errno;
	*out = sk;
	ret = set_opts(sk, ri);
	if (ret || ri->protocol == IPPROTO_TCP) {
		if (!ret && ri->state == TCP_LISTEN)
			ret = rebuild_listener(sk, ri);
		else if (!ret && ri->state == TCP_CLOSE && ri->lport)
			ret = tcp_bind(sk, ri);
		else if (!ret && is_conn(ri))
			ret = rebuild_conn(sk, ri, ts);
		else if (!ret && ri->state == TCP_SYN_SENT)
			ret = reconnect(sk, ri);
		return ret;
	}
	if (ri->lport)
		ret = do_bind(sk, ri);
	len = addr_out(ri, false, &ss);
	if (!ret && ri->state == TCP_ESTABLISHED && connect(sk, (void *)&ss, len))
		ret = -errno;
	if (!ret && ri->rcv_len)
		ret = dgram_inject(sk, ri, (const char *)(ri + 1), ri->rcv_len);
	return ret;
}

/* TCP timestamps (milliseconds) go on from where they were, plus the
 * time since the checkpoint: a peer drops segments whose timestamp goes
 * back (PAWS). */
static uint32_t ms_since(const struct rst_ctx *c)
{
	struct timespec now;
	int64_t ns;

	clock_gettime(CLOCK_REALTIME, &now);
	ns = now.tv_sec * 1000000000LL + now.tv_nsec - (int64_t)c->head.time_ns;
	return ns > 0 ? (uint32_t)(ns / 1000000) : 0;
}

static int inet_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		     long *fd)
{
	const struct rec_inet *ri = f->priv;
	int sk = -1, ret = make_socket(ri, ri->timestamp + ms_since(c), &sk);
	char where[80];

	if (!ret && fcntl(sk, F_SETFL, f->f.flags & ~O_ACCMODE))
		ret = -errno;
	if (ret) {
		if (sk >= 0)
			close(sk);
		return log_err(c->log, -ret, "pid %d: restoring %s socket %s (%s):", t->pid,
			       ri->protocol == IPPROTO_TCP ? "TCP" : "UDP",
			       addr_str(ri, true, where, sizeof(where)), state_name(ri->state));
	}
	ret = files_give(t, sk, fd);
	if (!ret && is_conn(ri)) {
		ret = keep_pending(c, sk, f);
		if (!ret)
			return 0;
		log_err(c->log, -ret, "socket table:");
	}
	close(sk);
	return ret;
}

/* What the connection had not sent yet goes as new data. */
static int send_unsent(int sk, const struct rec_inet *ri)
{
	const char *p = (const char *)(ri + 1) + ri->snd_len - ri->unsent_len;
	uint32_t done = 0;

	if (fin_sent(ri->state))
		return 0;	/* sent before the FIN, in repair mode */
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
			 addr_str(ri, true, where, sizeof(where)), why);
}

static void relock(struct rst_ctx *c, const struct rec_inet *ri)
{
	char why[160], where[80];

	if (netlock_add(ri, false, why, sizeof(why)))
		log_warn(c->log, "TCP connection %s: putting its network lock back: %s",
			 addr_str(ri, true, where, sizeof(where)), why);
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
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF);
		if (ret)	/* still restartable: the lock comes back */
			relock(c, ri);
		if (!ret)
			ret = sock_set_int(sk, SOL_SOCKET, SO_REUSEADDR,
					   ri->opt[INET_OPT_REUSEADDR]);
		if (!ret)
			ret = send_unsent(sk, ri);
		if (!ret)
			ret = set_opt(sk, ri, INET_OPT_SNDBUF);
		close(sk);
		st->p[i].sk = -1;
		if (ret)
			return log_err(c->log, -ret, "TCP connection %s:",
				       addr_str(ri, true, where, sizeof(where)));
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

static void inet_show(struct info_out *o, const struct rec_file *f,
		      const void *extra, uint32_t extra_len)
{
	struct rec_inet ri;
	char a[80];

	if (extra_len < sizeof(ri))
		return;
	memcpy(&ri, extra, sizeof(ri));
	info_str(o, "proto", ri.protocol == IPPROTO_TCP ? "tcp" :
			     ri.protocol == IPPROTO_UDP ? "udp" : "?");
	info_u64(o, "family", ri.family == AF_INET6 ? 6 : 4);
	info_str(o, "state", state_name(ri.state));
	info_str(o, "local", addr_str(&ri, true, a, sizeof(a)));
	if (ri.rport)
		info_str(o, "remote", addr_str(&ri, false, a, sizeof(a)));
	if (ri.state == TCP_LISTEN)
		info_u64(o, "backlog", ri.backlog);
	if (is_conn(&ri))
		info_u64(o, "sendq", ri.snd_len);
	if (ri.rcv_len)
		info_u64(o, "recvq", ri.rcv_len);
}

const struct file_ops file_inet = {
	.kind = FILE_INET,
	.name = "inet",
	.match = inet_match,
	.dump = inet_dump,
	.load = inet_load,
	.open = inet_open,
	.free = inet_free,
	.show = inet_show,
};

const struct kind_ops kind_inet = {
	.name = "inet",
	.dump_check = inet_dump_check,
	.dump_end = inet_dump_end,
	.restore_end = inet_restore_end,
	.free_ctx = inet_free_ctx,
};
