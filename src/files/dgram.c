/* dgram.c - the datagrams waiting in a UDP or UDP-Lite socket, for inet.c.
 *
 * Checkpoint peeks at them one after the other with SO_PEEK_OFF (nothing
 * is consumed; the program's own peek offset is put back).  Restart
 * sends each again from where it came, through a raw socket that writes
 * the IP header itself: the restored socket receives it from the same
 * address and port, as a connected socket must.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dgram.h"
#include "sockopt.h"

#define MAX_DGRAM	65535
#define MAX_DGRAMS	100000

static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* The next datagram at the peek offset: its length, or -errno (-EAGAIN:
 * no more). */
static ssize_t peek_dgram(int sk, char *buf, struct sockaddr_storage *from)
{
	struct iovec iov = { buf, MAX_DGRAM };
	struct msghdr m = { .msg_name = from, .msg_namelen = sizeof(*from),
			    .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t k = recvmsg(sk, &m, MSG_PEEK | MSG_DONTWAIT);

	if (k < 0)
		return -errno;
	return m.msg_flags & MSG_TRUNC ? -EMSGSIZE : k;
}

static int append(char **data, uint32_t *len, uint32_t max, const struct rec_dgram *d,
		  const char *buf)
{
	char *n;

	if (sizeof(*d) + d->len > max - *len)
		return -EFBIG;
	n = realloc(*data, *len + sizeof(*d) + d->len);
	if (!n)
		return -ENOMEM;
	memcpy(n + *len, d, sizeof(*d));
	memcpy(n + *len + sizeof(*d), buf, d->len);
	*data = n;
	*len += sizeof(*d) + d->len;
	return 0;
}

static void from_addr(struct rec_dgram *d, const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)ss;

		memcpy(d->addr, &a->sin_addr, 4);
		d->port = ntohs(a->sin_port);
	} else {
		const struct sockaddr_in6 *a = (const void *)ss;

		memcpy(d->addr, &a->sin6_addr, 16);
		d->port = ntohs(a->sin6_port);
	}
}

int dgram_peek(int sk, uint32_t max, char **data, uint32_t *len)
{
	char *buf = malloc(MAX_DGRAM);
	int old = -1, ret = 0, n = 0;

	*data = NULL;
	*len = 0;
	if (!buf)
		return -ENOMEM;
	sock_get_int(sk, SOL_SOCKET, SO_PEEK_OFF, &old);
	ret = sock_set_int(sk, SOL_SOCKET, SO_PEEK_OFF, 0);
	while (!ret && n++ < MAX_DGRAMS) {
		struct sockaddr_storage from = { 0 };
		struct rec_dgram d = { 0 };
		ssize_t k = peek_dgram(sk, buf, &from);

		if (k == -EAGAIN)
			break;
		if (k < 0) {
			ret = k;
			break;
		}
		d.len = k;
		from_addr(&d, &from);
		ret = append(data, len, max, &d, buf);
	}
	if (!ret && n > MAX_DGRAMS)
		ret = -EFBIG;
	sock_set_int(sk, SOL_SOCKET, SO_PEEK_OFF, old);
	free(buf);
	if (ret) {
		free(*data);
		*data = NULL;
		*len = 0;
	}
	return ret;
}

/* The next entry at *off, bounds first. */
static int next(const char *data, uint32_t len, uint32_t *off, struct rec_dgram *d)
{
	if (len - *off < sizeof(*d))
		return -EBADMSG;
	memcpy(d, data + *off, sizeof(*d));
	if (d->reserved || d->len > MAX_DGRAM || d->len > len - *off - sizeof(*d))
		return -EBADMSG;
	*off += sizeof(*d) + d->len;
	return 0;
}

int dgram_check(const char *data, uint32_t len, int family)
{
	static const uint8_t zero[12];
	uint32_t off = 0;
	struct rec_dgram d;

	while (off < len) {
		if (next(data, len, &off, &d))
			return -EBADMSG;
		if (family == AF_INET && memcmp(d.addr + 4, zero, 12))
			return -EBADMSG;
	}
	return 0;
}

static uint16_t csum_add(uint32_t sum, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (b[i] << 8) | b[i + 1];
	if (n & 1)
		sum += b[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* The UDP (or UDP-Lite, whose length field is its checksum coverage,
 * 0: all) checksum of @u and the data, with the pseudo header of
 * addresses @alen bytes long. */
static uint16_t l4_csum(const uint8_t *src, const uint8_t *dst, size_t alen,
			int proto, const struct udphdr *u, const char *data, uint32_t len)
{
	uint32_t pseudo[2] = { htonl(sizeof(*u) + len), htonl(proto) };
	uint16_t sum;

	sum = csum_add(0, src, alen);
	sum = csum_add(sum, dst, alen);
	sum = csum_add(sum, pseudo, sizeof(pseudo));
	sum = csum_add(sum, u, sizeof(*u));
	sum = ~csum_add(sum, data, len);
	return htons(sum ? sum : 0xffff);
}

static void udp_hdr(struct udphdr *u, int proto, uint16_t sport, uint16_t dport,
		    uint32_t len)
{
	u->source = htons(sport);
	u->dest = htons(dport);
	u->len = proto == IPPROTO_UDPLITE ? 0 : htons(sizeof(*u) + len);
	u->check = 0;
}

/* One IPv4 packet: the kernel fills in the header's length, id and
 * checksum; a UDP checksum of 0 means none (UDP-Lite's is mandatory). */
static int send4(int raw, int proto, const uint8_t *src, const uint8_t *dst,
		 uint16_t sport, uint16_t dport, const char *data, uint32_t len, char *pkt)
{
	struct iphdr ip = { .ihl = 5, .version = 4, .ttl = 64, .protocol = proto };
	struct udphdr u;
	struct sockaddr_in to = { .sin_family = AF_INET };

	udp_hdr(&u, proto, sport, dport, len);
	if (proto == IPPROTO_UDPLITE)
		u.check = l4_csum(src, dst, 4, proto, &u, data, len);

	memcpy(&ip.saddr, src, 4);
	memcpy(&ip.daddr, dst, 4);
	memcpy(&to.sin_addr, dst, 4);
	memcpy(pkt, &ip, sizeof(ip));
	memcpy(pkt + sizeof(ip), &u, sizeof(u));
	memcpy(pkt + sizeof(ip) + sizeof(u), data, len);
	return sendto(raw, pkt, sizeof(ip) + sizeof(u) + len, 0, (void *)&to,
		      sizeof(to)) < 0 ? -errno : 0;
}

/* One IPv6 packet, whose UDP checksum is mandatory. */
static int send6(int raw, int proto, const uint8_t *src, const uint8_t *dst,
		 uint16_t sport, uint16_t dport, const char *data, uint32_t len, char *pkt)
{
	struct ip6_hdr ip = { 0 };
	struct udphdr u;
	struct sockaddr_in6 to = { .sin6_family = AF_INET6 };

	udp_hdr(&u, proto, sport, dport, len);
	ip.ip6_flow = htonl(6 << 28);
	ip.ip6_plen = htons(sizeof(u) + len);
	ip.ip6_nxt = proto;
	ip.ip6_hlim = 64;
	memcpy(&ip.ip6_src, src, 16);
	memcpy(&ip.ip6_dst, dst, 16);
	memcpy(&to.sin6_addr, dst, 16);
	u.check = l4_csum(src, dst, 16, proto, &u, data, len);
	memcpy(pkt, &ip, sizeof(ip));
	memcpy(pkt + sizeof(ip), &u, sizeof(u));
	memcpy(pkt + sizeof(ip) + sizeof(u), data, len);
	return sendto(raw, pkt, sizeof(ip) + sizeof(u) + len, 0, (void *)&to,
		      sizeof(to)) < 0 ? -errno : 0;
}

/* How many datagrams with data @sk holds now (an empty one already
 * peeked at is passed over by the next peeks). */
static int count(int sk, char *buf)
{
	struct sockaddr_storage from;
	ssize_t k;
	int n = 0, i = 0;

	if (sock_set_int(sk, SOL_SOCKET, SO_PEEK_OFF, 0))
		return -errno;
	while (i++ < MAX_DGRAMS && (k = peek_dgram(sk, buf, &from)) >= 0)
		n += k > 0;
	sock_set_int(sk, SOL_SOCKET, SO_PEEK_OFF, -1);
	return n;
}

/* Where a datagram for @ri's socket goes: its address, or loopback if
 * it is bound to any. */
static void dest(const struct rec_inet *ri, bool v4, uint8_t *dst)
{
	static const uint8_t zero[16];

	if (v4) {
		const uint8_t *a = ri->family == AF_INET ? ri->laddr : ri->laddr + 12;

		memcpy(dst, a, 4);
		if (!memcmp(dst, zero, 4) || (ri->family == AF_INET6 &&
					      memcmp(ri->laddr, v4mapped, 12)))
			memcpy(dst, (uint8_t[]){ 127, 0, 0, 1 }, 4);
	} else {
		memcpy(dst, ri->laddr, 16);
		if (!memcmp(dst, zero, 16))
			memcpy(dst, &in6addr_loopback, 16);
	}
}

int dgram_inject(int sk, const struct rec_inet *ri, const char *data, uint32_t len)
{
	char *pkt = malloc(sizeof(struct ip6_hdr) + sizeof(struct udphdr) + MAX_DGRAM);
	int raw[2] = { -1, -1 }, ret = 0, n = 0;
	struct timespec tick = { 0, 1000000 };
	uint32_t off = 0;

	if (!pkt)
		return -ENOMEM;
	while (!ret && off < len) {
		struct rec_dgram d;
		const char *payload;
		bool v4;
		uint8_t dst[16];

		if (next(data, len, &off, &d))
			break;	/* checked at load: cannot be */
		payload = data + off - d.len;
		v4 = ri->family == AF_INET || !memcmp(d.addr, v4mapped, 12);
		if (raw[v4] < 0)
			raw[v4] = socket(v4 ? AF_INET : AF_INET6, SOCK_RAW | SOCK_CLOEXEC,
					 IPPROTO_RAW);
		if (raw[v4] < 0) {
			ret = -errno;
			break;
		}
		dest(ri, v4, dst);
		ret = v4 ? send4(raw[1], ri->protocol, ri->family == AF_INET ? d.addr : d.addr + 12,
				 dst, d.port, ri->lport, payload, d.len, pkt) :
			   send6(raw[0], ri->protocol, d.addr, dst, d.port, ri->lport, payload,
				 d.len, pkt);
		n += d.len > 0;
	}
	/* the loopback delivers them a moment later */
	for (int i = 0; !ret && i < 1000 && count(sk, pkt) < n; i++)
		nanosleep(&tick, NULL);
	if (!ret && count(sk, pkt) != n)
		ret = -ETIMEDOUT;
	for (int i = 0; i < 2; i++)
		if (raw[i] >= 0)
			close(raw[i]);
	free(pkt);
	return ret;
}
