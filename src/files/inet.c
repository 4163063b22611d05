/* inet.c - TCP and UDP sockets over IPv4 and IPv6 (FILE_INET).
 *
 * Checkpoint reads a socket through ckpt's own copy of it (pidfd_getfd):
 * its addresses, options and TCP state, a UDP socket's datagrams
 * (dgram.c).  An established TCP connection (only with
 * CKPT_TCP_ESTABLISHED) is read in repair mode, and one being opened is
 * held to be checked at the end: tcp_repair.c.
 *
 * Restart makes each socket in ckpt and gives it to its process: a
 * listener bound and listening, a connection being opened connecting
 * again from its port, a connection rebuilt in repair mode
 * (tcp_repair.c), which it leaves only once every process is built.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../files.h"
#include "dgram.h"
#include "inet.h"
#include "sockdiag.h"
#include "sockopt.h"

#define MAX_TIMEO_US	(100LL * 365 * 86400 * 1000000)

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
bool inet_is_conn(const struct rec_inet *ri)
{
	switch (ri->protocol == IPPROTO_TCP ? ri->state : 0) {
	case TCP_ESTABLISHED: case TCP_FIN_WAIT1: case TCP_FIN_WAIT2:
	case TCP_CLOSE_WAIT: case TCP_LAST_ACK: case TCP_CLOSING:
		return true;
	}
	return false;
}

const char *inet_state_name(int st)
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

socklen_t inet_addr_out(const struct rec_inet *ri, bool local,
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
const char *inet_addr_str(const struct rec_inet *ri, bool local, char *buf,
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
	return tcp_hold_opening(c, p, sk, ri);
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
		ri->backlog = ti.tcpi_sacked;
		return ti.tcpi_unacked ? tcp_note_accept_queue(c, p, ri, ti.tcpi_unacked) : 0;
	case TCP_CLOSE:
		memset(ri->raddr, 0, sizeof(ri->raddr));
		ri->rport = 0;
		return tcp_dump_closed(c, p, sk, ri, data);
	case TCP_SYN_SENT:
		return dump_syn_sent(c, p, sk, ri);
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
	case TCP_CLOSE_WAIT:
	case TCP_LAST_ACK:
	case TCP_CLOSING:
		return tcp_dump_conn(c, p, sk, ri, data);
	default:
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: TCP socket in state %s (not supported yet)",
			       p->pid, p->fd, inet_state_name(ti.tcpi_state));
	}
}

static int dump_udp(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    struct rec_inet *ri, char **data)
{
	int ret;

	ri->state = ri->rport ? TCP_ESTABLISHED : TCP_CLOSE;
	ret = dgram_peek(sk, INET_MAX_QUEUE, data, &ri->rcv_len);
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

/* ---- restart ---- */

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
	       ((inet_is_conn(ri) || ri->state == TCP_SYN_SENT) && ri->lport && ri->rport);
}

/* Not a connection: no connection fields, but a UDP socket's datagrams. */
static bool queue_ok(const struct rec_inet *ri, uint32_t extra_len)
{
	struct rec_inet z = *ri;

	z.rcv_len = 0;
	if (!zero(&z.snd_seq, sizeof(z) - offsetof(struct rec_inet, snd_seq)))
		return false;
	if (ri->protocol == IPPROTO_TCP && ri->shutdown == 3 && !ri->lport && ri->rcv_len)
		return ri->rcv_len <= INET_MAX_QUEUE && extra_len == sizeof(*ri) + ri->rcv_len;
	if (ri->protocol != IPPROTO_UDP || !ri->rcv_len)
		return extra_len == sizeof(*ri) && !ri->rcv_len;
	return ri->lport && ri->rcv_len <= INET_MAX_QUEUE &&
	       extra_len == sizeof(*ri) + ri->rcv_len &&
	       !dgram_check((const char *)(ri + 1), ri->rcv_len, ri->family);
}

static bool conn_ok(const struct rec_inet *ri, uint32_t extra_len)
{
	if (!inet_is_conn(ri))
		return queue_ok(ri, extra_len);
	return ri->snd_len <= INET_MAX_QUEUE && ri->rcv_len <= INET_MAX_QUEUE &&
	       extra_len == sizeof(*ri) + ri->snd_len + ri->rcv_len &&
	       ri->unsent_len <= ri->snd_len && ri->mss >= 1 && ri->mss <= 65535 &&
	       !(ri->tcpi_opts & ~(TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE)) &&
	       ri->snd_wscale <= 14 && ri->rcv_wscale <= 14 &&
	       !(ri->conn_flags & ~INET_CONN_RECONNECT) &&
	       (!ri->conn_flags || (ri->state == TCP_ESTABLISHED && !ri->rcv_len)) &&
	       ((ri->tcpi_opts & TCPI_OPT_WSCALE) || (!ri->snd_wscale && !ri->rcv_wscale));
}

static bool inet_ok(const struct rec_inet *ri, uint32_t extra_len)
{
	if (ri->family != AF_INET && ri->family != AF_INET6)
		return false;
	if (ri->protocol != IPPROTO_TCP && ri->protocol != IPPROTO_UDP)
		return false;
	if (ri->shutdown > 3 ||
	    (ri->shutdown && (ri->protocol != IPPROTO_TCP || ri->state != TCP_CLOSE)) ||
	    ri->reserved1 ||
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

int inet_set_opt(int sk, const struct rec_inet *ri, int i)
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
			ret = inet_set_opt(sk, ri, i);
	if (!ret)
		ret = set_timeo(sk, SO_RCVTIMEO, ri->rcvtimeo_us);
	if (!ret)
		ret = set_timeo(sk, SO_SNDTIMEO, ri->sndtimeo_us);
	return ret;
}

int inet_bind(int sk, const struct rec_inet *ri)
{
	struct sockaddr_storage ss;
	socklen_t len = inet_addr_out(ri, true, &ss);

	return bind(sk, (void *)&ss, len) ? -errno : 0;
}

/* Bound in repair mode, which binds over what still holds the port (a
 * connection of the killed process in TIME_WAIT, or a restored one). */
static int tcp_bind(int sk, const struct rec_inet *ri)
{
	int ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON);

	if (!ret)
		ret = inet_bind(sk, ri);
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

/* The handshake starts again from the same port: the peer saw at most a
 * SYN, which it forgets when ours has a new sequence number.  A thread
 * that was blocked in connect() waits on in it again (its call is
 * restarted as after a signal). */
static int reconnect(int sk, const struct rec_inet *ri)
{
	struct sockaddr_storage ss;
	socklen_t len = inet_addr_out(ri, false, &ss);
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
		else if (!ret && ri->state == TCP_CLOSE)
			ret = tcp_rebuild_closed(sk, ri, tcp_bind);
		else if (!ret && inet_is_conn(ri))
			ret = tcp_rebuild_conn(sk, ri, ts);
		else if (!ret && ri->state == TCP_SYN_SENT)
			ret = reconnect(sk, ri);
		return ret;
	}
	if (ri->lport)
		ret = inet_bind(sk, ri);
	len = inet_addr_out(ri, false, &ss);
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
	struct rec_inet closed;
	int sk = -1, ret;
	char where[80];

	if (inet_is_conn(ri) && (c->flags & CKPT_TCP_CLOSE))
		ri = tcp_as_closed(c, ri, &closed);
	ret = make_socket(ri, ri->timestamp + ms_since(c), &sk);

	if (!ret && fcntl(sk, F_SETFL, f->f.flags & ~O_ACCMODE))
		ret = -errno;
	if (ret) {
		if (sk >= 0)
			close(sk);
		return log_err(c->log, -ret, "pid %d: restoring %s socket %s (%s):", t->pid,
			       ri->protocol == IPPROTO_TCP ? "TCP" : "UDP",
			       inet_addr_str(ri, true, where, sizeof(where)), inet_state_name(ri->state));
	}
	ret = files_give(t, sk, fd);
	if (!ret && inet_is_conn(ri)) {
		ret = tcp_keep_pending(c, sk, f);
		if (!ret)
			return 0;
		log_err(c->log, -ret, "socket table:");
	}
	close(sk);
	return ret;
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
	info_str(o, "state", inet_state_name(ri.state));
	info_str(o, "local", inet_addr_str(&ri, true, a, sizeof(a)));
	if (ri.rport)
		info_str(o, "remote", inet_addr_str(&ri, false, a, sizeof(a)));
	if (ri.state == TCP_LISTEN)
		info_u64(o, "backlog", ri.backlog);
	if (inet_is_conn(&ri))
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

