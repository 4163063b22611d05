/* inet.c - TCP, UDP, UDP-Lite, ping (ICMP datagram) and raw sockets over
 * IPv4 and IPv6 (FILE_INET).
 *
 * Checkpoint reads a socket through ckpt's own copy of it (pidfd_getfd):
 * its addresses, options (rec_inet.opt[], and the table of sockopt.c),
 * shutdown and TCP state, a UDP socket's datagrams (dgram.c).  An established TCP connection (only with
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
#include <poll.h>
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

/* The socket type: older images have none, and only TCP and UDP. */
static int sk_type(const struct rec_inet *ri)
{
	if (ri->type)
		return ri->type;
	return ri->protocol == IPPROTO_TCP ? SOCK_STREAM : SOCK_DGRAM;
}

/* UDP or UDP-Lite: datagrams ckpt peeks at and sends again. */
static bool is_udp(const struct rec_inet *ri)
{
	return sk_type(ri) == SOCK_DGRAM &&
	       (ri->protocol == IPPROTO_UDP || ri->protocol == IPPROTO_UDPLITE);
}

static bool is_tcp(const struct rec_inet *ri)
{
	return sk_type(ri) == SOCK_STREAM;
}

/* The rec_sockopt entries after the queues. */
static const char *opts_of(const struct rec_inet *ri, uint32_t extra_len,
			   uint32_t *len)
{
	uint32_t body = sizeof(*ri) + ri->snd_len + ri->rcv_len;

	*len = extra_len - body;	/* checked at load */
	return (const char *)ri + body;
}

static bool opt_applies(const struct rec_inet *ri, int i)
{
	return (!opt_defs[i].v6 || ri->family == AF_INET6) &&
	       (!opt_defs[i].tcp || is_tcp(ri));
}

/* A TCP connection, whole or half closed, that ckpt rebuilds. */
bool inet_is_conn(const struct rec_inet *ri)
{
	switch (is_tcp(ri) ? ri->state : 0) {
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
	int ping = family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;

	if (family != AF_INET && family != AF_INET6)
		return false;
	if (type == SOCK_RAW)
		return proto >= 0 && proto < 263;	/* the kernel's IPPROTO_MAX */
	return (type == SOCK_STREAM && proto == IPPROTO_TCP) ||
	       (type == SOCK_DGRAM && (proto == IPPROTO_UDP ||
				       proto == IPPROTO_UDPLITE || proto == ping));
}

static const char *kind_name(const struct rec_inet *ri)
{
	if (sk_type(ri) == SOCK_RAW)
		return "raw";
	switch (ri->protocol) {
	case IPPROTO_TCP: return "TCP";
	case IPPROTO_UDP: return "UDP";
	case IPPROTO_UDPLITE: return "UDP-Lite";
	default: return "ping";
	}
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
	ri->type = type;
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

/* A bound UDP socket as inet_diag shows it: connected (to port 0 too,
 * which getpeername() does not tell) and its shutdown, exactly. */
static int udp_one(void *arg, const void *msg, uint32_t len)
{
	const struct inet_diag_msg *m = msg;
	struct syn_find *f = arg;
	struct sockdiag_attrs a;

	if (len < sizeof(*m) || m->idiag_inode != f->ino || f->found)
		return 0;
	f->found = true;
	if (m->idiag_state == TCP_ESTABLISHED) {
		f->ri->state = TCP_ESTABLISHED;
		memcpy(f->ri->raddr, m->id.idiag_dst, f->ri->family == AF_INET ? 4 : 16);
		f->ri->rport = ntohs(m->id.idiag_dport);
	}
	if (!sockdiag_attrs(msg, len, sizeof(*m), &a) && a.data[INET_DIAG_SHUTDOWN] &&
	    a.len[INET_DIAG_SHUTDOWN] >= 1)
		f->ri->shutdown = *(const uint8_t *)a.data[INET_DIAG_SHUTDOWN] & 3;
	return 0;
}

/* Shutdown as poll() tells it (RCV_SHUTDOWN, or both), then what
 * inet_diag says of a bound UDP socket, which tells SEND_SHUTDOWN too. */
static int dgram_state(const struct fd_probe *p, int sk, struct rec_inet *ri)
{
	struct inet_diag_req_v2 req = {
		.sdiag_family = ri->family, .sdiag_protocol = ri->protocol,
		.idiag_states = ~0u,
	};
	struct syn_find f = { p->st.st_ino, ri, false };
	struct pollfd pf = { sk, POLLRDHUP, 0 };

	ri->state = ri->rport ? TCP_ESTABLISHED : TCP_CLOSE;
	if (poll(&pf, 1, 0) < 0)
		return -errno;
	ri->shutdown = pf.revents & POLLHUP ? 3 : pf.revents & POLLRDHUP ? 1 : 0;
	if (!is_udp(ri) || !ri->lport)
		return 0;	/* unbound UDP sockets are not listed */
	return sockdiag_dump(&req, sizeof(req), udp_one, &f);
}

/* A raw or ping socket's peer (connect()): getpeername() does not tell
 * (no port), inet_diag may not list them; /proc/PID/net/{raw,icmp}[6]
 * does, "sl local rem st ... inode" with addresses as the kernel's
 * 32-bit words in hex.  A ping socket not bound yet is not listed (nor
 * is its peer known anywhere). */
static int proc_net_peer(const struct fd_probe *p, struct rec_inet *ri)
{
	const char *f = sk_type(ri) == SOCK_RAW ? "raw" : "icmp";
	char path[64], line[512], rem[40];
	unsigned long ino;
	unsigned int st, port, w[4];
	FILE *fp;
	int ret = -ENOENT, words = ri->family == AF_INET ? 1 : 4;

	snprintf(path, sizeof(path), "/proc/%d/net/%s%s", p->pid, f,
		 ri->family == AF_INET ? "" : "6");
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while (ret == -ENOENT && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%*x %39[0-9A-Fa-f]:%x %x %*x:%*x %*x:%*x %*x %*u %*d %lu",
			   rem, &port, &st, &ino) != 4 || ino != p->st.st_ino)
			continue;
		ret = strlen(rem) == 8u * words ? 0 : -EBADMSG;
		for (int i = 0; !ret && i < words; i++)
			if (sscanf(rem + 8 * i, "%8x", &w[i]) != 1)
				ret = -EBADMSG;
		if (!ret && st == TCP_ESTABLISHED) {
			memcpy(ri->raddr, w, 4 * words);	/* as the kernel holds it */
			ri->rport = port;
			ri->state = TCP_ESTABLISHED;
		}
	}
	fclose(fp);
	return ret == -ENOENT && sk_type(ri) != SOCK_RAW && !ri->lport ? 0 : ret;
}

/* Raw and ping sockets: their packets cannot be sent to them again. */
static int dgram_empty(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		       const struct rec_inet *ri)
{
	char b;
	ssize_t k = recv(sk, &b, 1, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);

	if (k >= 0)
		return log_err(c->log, EBUSY,
			       "pid %d fd %d: %s socket (protocol %u) has packets waiting to be read (not supported yet)",
			       p->pid, p->fd, kind_name(ri), ri->protocol);
	return 0;
}

static int dump_udp(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    struct rec_inet *ri, char **data)
{
	int ret = dgram_state(p, sk, ri);

	if (ret == -ENOENT) {	/* a kernel without udp_diag */
		log_warn(c->log, "pid %d fd %d: no inet_diag for %s here: its socket on port %u is taken as not shut for writing",
			 p->pid, p->fd, kind_name(ri), ri->lport);
		ret = 0;
	}
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: the state of %s socket on port %u:",
			       p->pid, p->fd, kind_name(ri), ri->lport);
	if (!is_udp(ri)) {
		ret = proc_net_peer(p, ri);
		if (ret)
			return log_err(c->log, -ret, "pid %d fd %d: %s socket (protocol %u) in /proc/%d/net:",
				       p->pid, p->fd, kind_name(ri), ri->protocol, p->pid);
		return dgram_empty(c, p, sk, ri);
	}
	ret = dgram_peek(sk, INET_MAX_QUEUE, data, &ri->rcv_len);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: reading the datagrams waiting on port %u:",
			       p->pid, p->fd, ri->lport);
	return 0;
}

/* The options of the table (sockopt.c), after the queues in *data. */
static int dump_sockopts(struct cpt_ctx *c, const struct fd_probe *p, int sk,
			 const struct rec_inet *ri, char **data, uint32_t *len)
{
	const char *what = "?";
	int ret;

	*len = ri->snd_len + ri->rcv_len;
	ret = sockopt_dump(sk, data, len, &what);
	if (ret == -EACCES && !strcmp(what, "SO_ATTACH_FILTER"))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: %s socket's filter is an eBPF program (SO_ATTACH_BPF), which cannot be read back (not supported)",
			       p->pid, p->fd, kind_name(ri));
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: %s socket option %s:", p->pid,
			       p->fd, kind_name(ri), what);
	return 0;
}

static int inet_dump(struct cpt_ctx *c, const struct fd_probe *p,
		     struct rec_file *f, void **extra, uint32_t *extra_len)
{
	struct rec_inet *ri = calloc(1, sizeof(*ri));
	int sk = sock_copy(p->pid, p->fd), ret;
	char *data = NULL;
	uint32_t len = 0;

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
	else if (is_tcp(ri))
		ret = dump_tcp(c, p, sk, ri, &data);
	else
		ret = dump_udp(c, p, sk, ri, &data);
	if (!ret)
		ret = dump_sockopts(c, p, sk, ri, &data, &len);
	close(sk);
	if (!ret && len) {
		struct rec_inet *n = realloc(ri, sizeof(*ri) + len);

		if (n) {
			ri = n;
			memcpy(ri + 1, data, len);
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
	*extra_len = sizeof(*ri) + len;
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
	/* TCP: a closed socket's shutdown (3: a connection that ended, its
	 * port released); the others: SHUT_RD 1 | SHUT_WR 2 */
	if (ri->shutdown > 3 || (is_tcp(ri) && ri->shutdown && ri->state != TCP_CLOSE))
		return false;
	if (!is_tcp(ri))	/* connected to port 0 is connected; raw and
				 * ping sockets connect unbound */
		return (ri->state == TCP_CLOSE && !ri->rport) ||
		       (ri->state == TCP_ESTABLISHED && (ri->lport || !is_udp(ri)));
	if (ri->state == TCP_LISTEN)
		return ri->lport && ri->backlog <= 65535 && !ri->rport;
	return (ri->state == TCP_CLOSE && !ri->rport) ||
	       ((inet_is_conn(ri) || ri->state == TCP_SYN_SENT) && ri->lport && ri->rport);
}

/* Not a connection: no connection fields, but a UDP socket's datagrams.
 * @body: the bytes of the record and its queues, the options after. */
static bool queue_ok(const struct rec_inet *ri, uint32_t body)
{
	struct rec_inet z = *ri;

	z.rcv_len = 0;
	if (!zero(&z.snd_seq, sizeof(z) - offsetof(struct rec_inet, snd_seq)))
		return false;
	if (is_tcp(ri) && ri->shutdown == 3 && !ri->lport && ri->rcv_len)
		return ri->rcv_len <= INET_MAX_QUEUE && body == sizeof(*ri) + ri->rcv_len;
	if (!is_udp(ri) || !ri->rcv_len)
		return body == sizeof(*ri) && !ri->rcv_len;
	return ri->lport && ri->rcv_len <= INET_MAX_QUEUE &&
	       body == sizeof(*ri) + ri->rcv_len &&
	       !dgram_check((const char *)(ri + 1), ri->rcv_len, ri->family);
}

static bool conn_ok(const struct rec_inet *ri, uint32_t body)
{
	if (!inet_is_conn(ri))
		return queue_ok(ri, body);
	return ri->snd_len <= INET_MAX_QUEUE && ri->rcv_len <= INET_MAX_QUEUE &&
	       body == sizeof(*ri) + ri->snd_len + ri->rcv_len &&
	       ri->unsent_len <= ri->snd_len && ri->mss >= 1 && ri->mss <= 65535 &&
	       !(ri->tcpi_opts & ~(TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE)) &&
	       ri->snd_wscale <= 14 && ri->rcv_wscale <= 14 &&
	       !(ri->conn_flags & ~INET_CONN_RECONNECT) &&
	       (!ri->conn_flags || (ri->state == TCP_ESTABLISHED && !ri->rcv_len)) &&
	       ((ri->tcpi_opts & TCPI_OPT_WSCALE) || (!ri->snd_wscale && !ri->rcv_wscale));
}

/* The kind: an older image's (no type) TCP or UDP, or what checkpoint
 * supports. */
static bool kind_ok(const struct rec_inet *ri)
{
	if (ri->family != AF_INET && ri->family != AF_INET6)
		return false;
	if (!ri->type)
		return ri->protocol == IPPROTO_TCP || ri->protocol == IPPROTO_UDP;
	return ri->type <= SOCK_RAW && supported(ri->family, ri->type, ri->protocol);
}

static bool inet_ok(const struct rec_inet *ri, uint32_t extra_len)
{
	uint64_t body = (uint64_t)sizeof(*ri) + ri->snd_len + ri->rcv_len;

	if (!kind_ok(ri) || body > extra_len ||
	    (ri->state != TCP_LISTEN && ri->backlog))
		return false;
	if (ri->family == AF_INET &&
	    (!zero(ri->laddr + 4, 12) || !zero(ri->raddr + 4, 12) || ri->scope_id))
		return false;
	return state_ok(ri) && opts_ok(ri) && conn_ok(ri, (uint32_t)body);
}

static int inet_load(struct rst_ctx *c, struct rst_file *f)
{
	const char *what = "?", *opts;
	struct rec_inet *ri;
	uint32_t len;

	if (f->f.extra_len < sizeof(*ri) || strncmp(f->path, "socket:", 7))
		return log_err(c->log, EBADMSG, "FILE %u: bad inet socket", f->f.id);
	ri = malloc(f->f.extra_len);	/* aligned, the queues with it */
	if (!ri)
		return log_err(c->log, ENOMEM, "inet socket:");
	memcpy(ri, f->extra, f->f.extra_len);
	f->priv = ri;
	if (!inet_ok(ri, f->f.extra_len))
		return log_err(c->log, EBADMSG, "FILE %u: bad inet socket", f->f.id);
	opts = opts_of(ri, f->f.extra_len, &len);
	if (sockopt_check(opts, len, &what))
		return log_err(c->log, EBADMSG, "FILE %u: bad inet socket option (%s)",
			       f->f.id, what);
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

static int build_tcp(int sk, const struct rec_inet *ri, uint32_t ts)
{
	if (ri->state == TCP_LISTEN)
		return rebuild_listener(sk, ri);
	if (ri->state == TCP_CLOSE)
		return tcp_rebuild_closed(sk, ri, tcp_bind);
	if (inet_is_conn(ri))
		return tcp_rebuild_conn(sk, ri, ts);
	if (ri->state == TCP_SYN_SENT)
		return reconnect(sk, ri);
	return 0;
}

/* UDP, UDP-Lite, raw, ping: bound, connected, its datagrams sent to it
 * again, then shut down as it was (unconnected, shutdown() says
 * ENOTCONN but does it). */
static int build_dgram(int sk, const struct rec_inet *ri)
{
	static const uint8_t any[16];
	struct sockaddr_storage ss;
	socklen_t len = inet_addr_out(ri, false, &ss);
	bool raw = sk_type(ri) == SOCK_RAW;	/* its "port": the protocol */
	int ret = 0;

	if (raw ? memcmp(ri->laddr, any, sizeof(any)) != 0 : ri->lport != 0)
		ret = inet_bind(sk, ri);
	if (!ret && ri->state == TCP_ESTABLISHED && connect(sk, (void *)&ss, len))
		ret = -errno;
	if (!ret && ri->rcv_len)
		ret = dgram_inject(sk, ri, (const char *)(ri + 1), ri->rcv_len);
	if (!ret && ri->shutdown && shutdown(sk, ri->shutdown - 1) && errno != ENOTCONN)
		ret = -errno;
	return ret;
}

#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND	78
#endif

/* An address not on this host (any longer) is bound as the program
 * bound it, with IP_FREEBIND or not: restart binds with it, then sets
 * it as it was (LATE), or off in an older image that has no value.
 * IPV6_FREEBIND is the same flag, and the one raw IPv6 sockets take. */
static int freebind_on(int sk, const struct rec_inet *ri, int *level, int *name)
{
	static const uint8_t any[16];
	int now = 0;

	*level = ri->family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
	*name = ri->family == AF_INET ? IP_FREEBIND : IPV6_FREEBIND;
	if (!memcmp(ri->laddr, any, sizeof(any)) ||
	    sock_get_int(sk, *level, *name, &now) || now) {
		*level = -1;
		return 0;
	}
	return sock_set_int(sk, *level, *name, 1);
}

static int make_socket(const struct rec_inet *ri, const char *opts, uint32_t olen,
		       uint32_t ts, int *out, const char **what)
{
	int sk = socket(ri->family, sk_type(ri) | SOCK_CLOEXEC, ri->protocol);
	int ret, fb = 0, fb_level = -1, fb_name = 0;

	if (sk < 0)
		return -errno;
	*out = sk;
	*what = "its options";
	ret = set_opts(sk, ri);
	if (!ret)
		ret = sockopt_restore(sk, opts, olen, SOCKOPT_EARLY, what);
	if (!ret)
		ret = freebind_on(sk, ri, &fb_level, &fb_name);
	if (!ret)
		*what = "its addresses";
	if (!ret)
		ret = is_tcp(ri) ? build_tcp(sk, ri, ts) : build_dgram(sk, ri);
	if (!ret)
		ret = sockopt_restore(sk, opts, olen, SOCKOPT_LATE, what);
	if (!ret && fb_level >= 0 && sockopt_find_int(opts, olen, fb_level, fb_name, &fb))
		ret = sock_set_int(sk, fb_level, fb_name, 0);
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
	const char *what = "?", *opts;
	uint32_t olen;
	int sk = -1, ret;
	char where[80];

	/* the options follow the saved record's queues, whatever --tcp-close
	 * makes of the connection */
	opts = opts_of(ri, f->f.extra_len, &olen);
	if (inet_is_conn(ri) && (c->flags & CKPT_TCP_CLOSE))
		ri = tcp_as_closed(c, ri, &closed);
	ret = make_socket(ri, opts, olen, ri->timestamp + ms_since(c), &sk, &what);

	if (!ret && fcntl(sk, F_SETFL, f->f.flags & ~O_ACCMODE))
		ret = -errno;
	if (ret) {
		if (sk >= 0)
			close(sk);
		return log_err(c->log, -ret, "pid %d: restoring %s socket %s (%s), %s:", t->pid,
			       kind_name(ri), inet_addr_str(ri, true, where, sizeof(where)),
			       inet_state_name(ri->state), what);
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
	info_str(o, "proto", sk_type(&ri) == SOCK_RAW ? "raw" :
			     ri.protocol == IPPROTO_TCP ? "tcp" :
			     ri.protocol == IPPROTO_UDP ? "udp" :
			     ri.protocol == IPPROTO_UDPLITE ? "udplite" : "ping");
	if (sk_type(&ri) == SOCK_RAW)
		info_u64(o, "protocol", ri.protocol);
	if (ri.shutdown)
		info_u64(o, "shutdown", ri.shutdown);
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

