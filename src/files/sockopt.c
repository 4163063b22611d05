/* sockopt.c - helpers for socket kinds of file, and the socket options
 * an image keeps, for any family.
 *
 * One table lists the options a program can set and ckpt can read back
 * the same way.  Checkpoint reads each for a socket; those the kernel
 * does not answer for its kind (ENOPROTOOPT, EOPNOTSUPP...) are left
 * out, so the table serves TCP, UDP, raw and ping sockets alike, and
 * an option a newer kernel adds costs one line.  The image keeps each
 * as its level, name and value (struct rec_sockopt); restart sets only
 * those whose value differs from what the new socket has, so an option
 * left alone by the program stays the restart host's default.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../image_format.h"
#include "skutil.h"
#include "sockopt.h"

/* option numbers older libc headers may lack (the kernel's uapi) */
#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK		72
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif
#ifndef SO_RCVMARK
#define SO_RCVMARK		75
#endif
#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD		76
#endif
#ifndef SO_RCVPRIORITY
#define SO_RCVPRIORITY		82
#endif
#ifndef SO_TIMESTAMP_NEW
#define SO_TIMESTAMP_NEW	63
#define SO_TIMESTAMPNS_NEW	64
#endif
#ifndef SO_TIMESTAMP_OLD
#define SO_TIMESTAMP_OLD	29
#define SO_TIMESTAMPNS_OLD	35
#define SO_TIMESTAMPING_OLD	37
#endif
#ifndef IP_RECVERR_RFC4884
#define IP_RECVERR_RFC4884	26
#endif
#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE	51
#endif
#ifndef IPV6_RECVERR_RFC4884
#define IPV6_RECVERR_RFC4884	31
#endif
#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND		78
#endif
#ifndef IPV6_HDRINCL
#define IPV6_HDRINCL		36
#endif
#ifndef IPV6_ROUTER_ALERT_ISOLATE
#define IPV6_ROUTER_ALERT_ISOLATE 30
#endif
#ifndef IPV6_ADDR_PREFERENCES
#define IPV6_ADDR_PREFERENCES	72
#endif
#ifndef IPV6_MINHOPCOUNT
#define IPV6_MINHOPCOUNT	73
#endif
#ifndef IPV6_AUTOFLOWLABEL
#define IPV6_AUTOFLOWLABEL	70
#endif
#ifndef IPV6_RECVFRAGSIZE
#define IPV6_RECVFRAGSIZE	77
#endif
#ifndef IP_RECVFRAGSIZE
#define IP_RECVFRAGSIZE		25
#endif
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT	24
#endif
#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO		11
#define IPV6_FLOWINFO_SEND	33
#endif
#ifndef TCP_TX_DELAY
#define TCP_TX_DELAY		37
#endif
#ifndef TCP_INQ
#define TCP_INQ			36
#endif
#ifndef TCP_FASTOPEN_NO_COOKIE
#define TCP_FASTOPEN_NO_COOKIE	34
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT		103
#endif
#ifndef UDP_GRO
#define UDP_GRO			104
#endif
#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX	101
#define UDP_NO_CHECK6_RX	102
#endif
#define SOL_UDPLITE_		136
#define UDPLITE_SEND_CSCOV	10
#define UDPLITE_RECV_CSCOV	11
#define SOL_RAW_		255
#define ICMP_FILTER_		1
#define SOL_ICMPV6_		58
#define ICMPV6_FILTER_		1

#define MAX_VALUE	(BPF_MAXINSNS * sizeof(struct sock_filter))
#define MAX_OPTS	256

enum opt_type {
	T_INT,		/* an int in [min, max] */
	T_BYTES,	/* up to max bytes, set as read */
	T_FILTER,	/* a classic BPF program (SO_GET_FILTER), max insns */
};

struct opt_def {
	uint16_t level, name;
	uint8_t type, phase;
	int min, max;
	const char *str;
	bool dgram;	/* not of stream sockets, which read it (an accepted
			 * one its SYN's TTL as IP_MULTICAST_TTL) but
			 * refuse to set it */
};

#define DEF_(l, n, s, t, ph, lo, hi, dg) \
	{ .level = l, .name = n, .type = t, .phase = ph, .min = lo, .max = hi, \
	  .str = s, .dgram = dg }
#define DEF(l, n, t, ph, lo, hi, dg) DEF_(l, n, #n, t, ph, lo, hi, dg)
#define B(l, n)		DEF_(l, n, #n, T_INT, SOCKOPT_EARLY, 0, 1, false)
#define I(l, n, lo, hi)	DEF_(l, n, #n, T_INT, SOCKOPT_EARLY, lo, hi, false)
#define BYTES(l, n, mx)	DEF_(l, n, #n, T_BYTES, SOCKOPT_EARLY, 0, mx, false)
#define LATE(l, n, lo, hi) DEF_(l, n, #n, T_INT, SOCKOPT_LATE, lo, hi, false)
#define MCAST(l, n, lo, hi) DEF_(l, n, #n, T_INT, SOCKOPT_EARLY, lo, hi, true)

/* In the order restart sets them: IP_TOS before SO_PRIORITY, which it
 * sets too; SO_BUF_LOCK after the buffer sizes (rec_inet.opt[]), which
 * lock them; the filter before SO_LOCK_FILTER. */
static const struct opt_def defs[] = {
	I(IPPROTO_IP, IP_TOS, 0, 255),
	I(IPPROTO_IP, IP_TTL, 1, 255),
	B(IPPROTO_IP, IP_HDRINCL),
	B(IPPROTO_IP, IP_RECVERR),
	B(IPPROTO_IP, IP_RECVERR_RFC4884),
	B(IPPROTO_IP, IP_RECVTTL),
	B(IPPROTO_IP, IP_RECVTOS),
	B(IPPROTO_IP, IP_RECVOPTS),
	B(IPPROTO_IP, IP_RETOPTS),
	B(IPPROTO_IP, IP_PKTINFO),
	B(IPPROTO_IP, IP_PASSSEC),
	B(IPPROTO_IP, IP_RECVORIGDSTADDR),
	B(IPPROTO_IP, IP_RECVFRAGSIZE),
	B(IPPROTO_IP, IP_CHECKSUM),
	B(IPPROTO_IP, IP_ROUTER_ALERT),
	B(IPPROTO_IP, IP_NODEFRAG),
	I(IPPROTO_IP, IP_MTU_DISCOVER, 0, 5),
	B(IPPROTO_IP, IP_TRANSPARENT),
	MCAST(IPPROTO_IP, IP_MULTICAST_TTL, 0, 255),
	MCAST(IPPROTO_IP, IP_MULTICAST_LOOP, 0, 1),
	MCAST(IPPROTO_IP, IP_MULTICAST_ALL, 0, 1),
	DEF(IPPROTO_IP, IP_MULTICAST_IF, T_BYTES, SOCKOPT_EARLY, 0, 4, true),
	B(IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT),
	I(IPPROTO_IP, IP_MINTTL, 0, 255),
	I(IPPROTO_IP, IP_LOCAL_PORT_RANGE, INT_MIN, INT_MAX),
	BYTES(IPPROTO_IP, IP_OPTIONS, 40),
	LATE(IPPROTO_IP, IP_FREEBIND, 0, 1),

	I(IPPROTO_IPV6, IPV6_UNICAST_HOPS, -1, 255),
	MCAST(IPPROTO_IPV6, IPV6_MULTICAST_HOPS, -1, 255),
	MCAST(IPPROTO_IPV6, IPV6_MULTICAST_LOOP, 0, 1),
	MCAST(IPPROTO_IPV6, IPV6_MULTICAST_IF, 0, INT_MAX),
	MCAST(IPPROTO_IPV6, IPV6_MULTICAST_ALL, 0, 1),
	B(IPPROTO_IPV6, IPV6_RECVPKTINFO),
	B(IPPROTO_IPV6, IPV6_2292PKTINFO),
	B(IPPROTO_IPV6, IPV6_2292HOPOPTS),
	B(IPPROTO_IPV6, IPV6_2292DSTOPTS),
	B(IPPROTO_IPV6, IPV6_2292RTHDR),
	B(IPPROTO_IPV6, IPV6_2292HOPLIMIT),
	B(IPPROTO_IPV6, IPV6_RECVHOPLIMIT),
	B(IPPROTO_IPV6, IPV6_RECVRTHDR),
	B(IPPROTO_IPV6, IPV6_RECVHOPOPTS),
	B(IPPROTO_IPV6, IPV6_RECVDSTOPTS),
	B(IPPROTO_IPV6, IPV6_RECVTCLASS),
	I(IPPROTO_IPV6, IPV6_TCLASS, -1, 255),
	B(IPPROTO_IPV6, IPV6_RECVPATHMTU),
	I(IPPROTO_IPV6, IPV6_MTU_DISCOVER, 0, 5),
	B(IPPROTO_IPV6, IPV6_RECVERR),
	B(IPPROTO_IPV6, IPV6_RECVERR_RFC4884),
	B(IPPROTO_IPV6, IPV6_TRANSPARENT),
	B(IPPROTO_IPV6, IPV6_RECVORIGDSTADDR),
	B(IPPROTO_IPV6, IPV6_AUTOFLOWLABEL),
	B(IPPROTO_IPV6, IPV6_DONTFRAG),
	I(IPPROTO_IPV6, IPV6_ADDR_PREFERENCES, 0, INT_MAX),
	I(IPPROTO_IPV6, IPV6_MINHOPCOUNT, 0, 255),
	B(IPPROTO_IPV6, IPV6_RECVFRAGSIZE),
	B(IPPROTO_IPV6, IPV6_FLOWINFO),
	B(IPPROTO_IPV6, IPV6_FLOWINFO_SEND),
	I(IPPROTO_IPV6, IPV6_CHECKSUM, -1, INT_MAX),
	B(IPPROTO_IPV6, IPV6_HDRINCL),
	B(IPPROTO_IPV6, IPV6_ROUTER_ALERT),
	B(IPPROTO_IPV6, IPV6_ROUTER_ALERT_ISOLATE),
	LATE(IPPROTO_IPV6, IPV6_FREEBIND, 0, 1),

	B(IPPROTO_TCP, TCP_CORK),
	I(IPPROTO_TCP, TCP_SYNCNT, 1, 255),
	I(IPPROTO_TCP, TCP_LINGER2, INT_MIN, INT_MAX),
	I(IPPROTO_TCP, TCP_DEFER_ACCEPT, 0, INT_MAX),
	BYTES(IPPROTO_TCP, TCP_CONGESTION, 16),
	I(IPPROTO_TCP, TCP_USER_TIMEOUT, 0, INT_MAX),
	I(IPPROTO_TCP, TCP_NOTSENT_LOWAT, INT_MIN, INT_MAX),
	B(IPPROTO_TCP, TCP_THIN_LINEAR_TIMEOUTS),
	I(IPPROTO_TCP, TCP_FASTOPEN, 0, INT_MAX),
	B(IPPROTO_TCP, TCP_FASTOPEN_CONNECT),
	B(IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE),
	B(IPPROTO_TCP, TCP_INQ),
	I(IPPROTO_TCP, TCP_TX_DELAY, 0, INT_MAX),
	I(IPPROTO_TCP, TCP_SAVE_SYN, 0, 2),

	B(IPPROTO_UDP, UDP_CORK),
	I(IPPROTO_UDP, UDP_SEGMENT, 0, 65535),
	B(IPPROTO_UDP, UDP_GRO),
	B(IPPROTO_UDP, UDP_NO_CHECK6_TX),
	B(IPPROTO_UDP, UDP_NO_CHECK6_RX),
	I(SOL_UDPLITE_, UDPLITE_SEND_CSCOV, 0, 65535),
	I(SOL_UDPLITE_, UDPLITE_RECV_CSCOV, 0, 65535),
	BYTES(SOL_RAW_, ICMP_FILTER_, 4),
	BYTES(SOL_ICMPV6_, ICMPV6_FILTER_, 32),

	I(SOL_SOCKET, SO_PRIORITY, INT_MIN, INT_MAX),
	I(SOL_SOCKET, SO_RCVLOWAT, 0, INT_MAX),
	I(SOL_SOCKET, SO_MARK, INT_MIN, INT_MAX),
	B(SOL_SOCKET, SO_RCVMARK),
	B(SOL_SOCKET, SO_RCVPRIORITY),
	B(SOL_SOCKET, SO_PASSCRED),
	B(SOL_SOCKET, SO_PASSSEC),
	B(SOL_SOCKET, SO_PASSPIDFD),
	B(SOL_SOCKET, SO_DONTROUTE),
	B(SOL_SOCKET, SO_NO_CHECK),
	B(SOL_SOCKET, SO_OOBINLINE),
	B(SOL_SOCKET, SO_TIMESTAMP_OLD),
	B(SOL_SOCKET, SO_TIMESTAMPNS_OLD),
	B(SOL_SOCKET, SO_TIMESTAMP_NEW),
	B(SOL_SOCKET, SO_TIMESTAMPNS_NEW),
	BYTES(SOL_SOCKET, SO_TIMESTAMPING_OLD, 8),
	B(SOL_SOCKET, SO_RXQ_OVFL),
	B(SOL_SOCKET, SO_WIFI_STATUS),
	B(SOL_SOCKET, SO_SELECT_ERR_QUEUE),
	I(SOL_SOCKET, SO_BUSY_POLL, 0, INT_MAX),
	B(SOL_SOCKET, SO_PREFER_BUSY_POLL),
	I(SOL_SOCKET, SO_BUSY_POLL_BUDGET, 0, 65535),
	B(SOL_SOCKET, SO_ZEROCOPY),
	BYTES(SOL_SOCKET, SO_MAX_PACING_RATE, 8),
	BYTES(SOL_SOCKET, SO_TXTIME, 8),
	LATE(SOL_SOCKET, SO_BUF_LOCK, 0, 3),
	DEF(SOL_SOCKET, SO_BINDTODEVICE, T_BYTES, SOCKOPT_LATE, 0, IFNAMSIZ, false),
	DEF(SOL_SOCKET, SO_ATTACH_FILTER, T_FILTER, SOCKOPT_LATE, 0, BPF_MAXINSNS, false),
	LATE(SOL_SOCKET, SO_LOCK_FILTER, 0, 1),
	LATE(SOL_SOCKET, SO_PEEK_OFF, -1, INT_MAX),
};

#define NR_DEFS	(int)(sizeof(defs) / sizeof(defs[0]))

int sock_copy(pid_t pid, int fd)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0), sk, err;

	if (pidfd < 0)
		return -errno;
	sk = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = errno;
	close(pidfd);
	return sk < 0 ? -err : sk;
}

int sock_get_int(int sk, int level, int name, int *val)
{
	socklen_t len = sizeof(*val);

	*val = 0;
	return getsockopt(sk, level, name, val, &len) ? -errno : 0;
}

int sock_set_int(int sk, int level, int name, int val)
{
	return setsockopt(sk, level, name, &val, sizeof(val)) ? -errno : 0;
}

int sock_family_of(pid_t pid, int fd)
{
	int sk = sock_copy(pid, fd), family, ret;

	if (sk < 0)
		return sk;
	ret = sock_get_int(sk, SOL_SOCKET, SO_DOMAIN, &family);
	close(sk);
	return ret ? ret : family;
}

/* ---- reading an option ---- */

static const struct opt_def *def_of(int level, int name)
{
	for (int i = 0; i < NR_DEFS; i++)
		if (defs[i].level == level && defs[i].name == name)
			return &defs[i];
	return NULL;
}

/* The option's value into @buf (MAX_VALUE bytes): its length, or
 * -errno. */
static int get_value(int sk, const struct opt_def *d, void *buf)
{
	socklen_t len = d->type == T_INT ? sizeof(int) : (socklen_t)d->max;

	if (d->type == T_FILTER) {
		void *insns;
		uint32_t n;
		int ret = skfilter_get(sk, &insns, &n);

		if (ret || !n)	/* none: NULL */
			return ret;
		memcpy(buf, insns, n * sizeof(struct sock_filter));
		free(insns);
		return n * sizeof(struct sock_filter);
	}
	memset(buf, 0, len);
	if (getsockopt(sk, d->level, d->name, buf, &len))
		return -errno;
	return len;
}

/* Errors that say the option does not apply to this kind of socket. */
static bool not_here(int err)
{
	return err == -ENOPROTOOPT || err == -EOPNOTSUPP || err == -EINVAL ||
	       err == -ENOTCONN;
}

static bool value_ok(const struct opt_def *d, const void *v, uint32_t len)
{
	int i;

	if (d->type == T_FILTER)
		return len % sizeof(struct sock_filter) == 0 &&
		       len / sizeof(struct sock_filter) <= (uint32_t)d->max;
	if (d->type == T_BYTES)
		return len <= (uint32_t)d->max;
	if (len != sizeof(int))
		return false;
	memcpy(&i, v, sizeof(i));
	return i >= d->min && i <= d->max;
}

static int append(char **buf, uint32_t *len, const struct opt_def *d,
		  const void *v, uint32_t vlen)
{
	struct rec_sockopt e = { d->level, d->name, vlen };
	uint32_t pad = (4 - vlen % 4) % 4;
	char *n = realloc(*buf, *len + sizeof(e) + vlen + pad);

	if (!n)
		return -ENOMEM;
	memcpy(n + *len, &e, sizeof(e));
	memcpy(n + *len + sizeof(e), v, vlen);
	memset(n + *len + sizeof(e) + vlen, 0, pad);
	*buf = n;
	*len += sizeof(e) + vlen + pad;
	return 0;
}

int sockopt_dump(int sk, char **buf, uint32_t *len, const char **what)
{
	char *v = malloc(MAX_VALUE);
	int type = 0, ret = v ? sock_get_int(sk, SOL_SOCKET, SO_TYPE, &type) : -ENOMEM;

	*what = "SO_TYPE";
	for (int i = 0; i < NR_DEFS && !ret; i++) {
		int k;

		if (defs[i].dgram && type == SOCK_STREAM)
			continue;
		k = get_value(sk, &defs[i], v);
		*what = defs[i].str;
		if (k < 0 && not_here(k))
			continue;
		if (k < 0)
			ret = k;
		else if (!value_ok(&defs[i], v, k))
			ret = -ERANGE;	/* a value restart would refuse */
		else
			ret = append(buf, len, &defs[i], v, k);
	}
	free(v);
	return ret;
}

/* ---- restart ---- */

/* The entry at *off, bounds first: its definition and value. */
static int next(const char *buf, uint32_t len, uint32_t *off,
		const struct opt_def **d, const char **v, uint32_t *vlen)
{
	struct rec_sockopt e;
	uint32_t pad;

	if (len - *off < sizeof(e))
		return -EBADMSG;
	memcpy(&e, buf + *off, sizeof(e));
	*d = def_of(e.level, e.name);
	if (!*d || e.len > MAX_VALUE || e.len > len - *off - sizeof(e))
		return -EBADMSG;
	pad = (4 - e.len % 4) % 4;
	if (pad > len - *off - sizeof(e) - e.len)
		return -EBADMSG;
	*v = buf + *off + sizeof(e);
	*vlen = e.len;
	*off += sizeof(e) + e.len + pad;
	return value_ok(*d, *v, e.len) ? 0 : -EBADMSG;
}

int sockopt_check(const char *buf, uint32_t len, const char **what)
{
	bool seen[NR_DEFS] = { false };
	uint32_t off = 0;
	int n = 0;

	*what = "option entry";
	while (off < len) {
		const struct opt_def *d;
		const char *v;
		uint32_t vlen;

		if (n++ >= MAX_OPTS || next(buf, len, &off, &d, &v, &vlen))
			return -EBADMSG;
		*what = d->str;
		if (seen[d - defs])
			return -EBADMSG;
		seen[d - defs] = true;
	}
	return 0;
}

static int set_value(int sk, const struct opt_def *d, const char *v,
		     uint32_t vlen)
{
	if (d->type == T_FILTER) {
		if (!vlen)	/* never on a new socket: it has none */
			return setsockopt(sk, SOL_SOCKET, SO_DETACH_FILTER, NULL, 0) ? -errno : 0;
		return skfilter_set(sk, v, vlen / sizeof(struct sock_filter));
	}
	return setsockopt(sk, d->level, d->name, v, vlen) ? -errno : 0;
}

int sockopt_restore(int sk, const char *buf, uint32_t len,
		    enum sockopt_phase phase, const char **what)
{
	char *now = malloc(MAX_VALUE);
	uint32_t off = 0;
	int ret = now ? 0 : -ENOMEM;

	while (!ret && off < len) {
		const struct opt_def *d;
		const char *v;
		uint32_t vlen;
		int k;

		if (next(buf, len, &off, &d, &v, &vlen)) {
			ret = -EBADMSG;	/* checked at load: cannot be */
			break;
		}
		*what = d->str;
		if (d->phase != phase)
			continue;
		k = get_value(sk, d, now);
		if (k >= 0 && (uint32_t)k == vlen && !memcmp(now, v, vlen))
			continue;
		ret = set_value(sk, d, v, vlen);
	}
	free(now);
	return ret;
}

int sockopt_find_int(const char *buf, uint32_t len, int level, int name,
		     int *val)
{
	uint32_t off = 0;

	while (off < len) {
		const struct opt_def *d;
		const char *v;
		uint32_t vlen;

		if (next(buf, len, &off, &d, &v, &vlen))
			return -EBADMSG;
		if (d->level == level && d->name == name && d->type == T_INT) {
			memcpy(val, v, sizeof(*val));
			return 0;
		}
	}
	return -ENOENT;
}
