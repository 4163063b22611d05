/* tcp_fin.c - the closing of a TCP connection, rebuilt at restart: the
 * peer's FIN (or reset) replayed as a packet it sends (a raw socket on
 * the loopback, with its checksum), our own FIN queued, and a closed
 * socket with bytes still to read made by a reset from a made-up peer.
 * The rest of a connection is tcp_repair.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../files.h"
#include "inet.h"
#include "netlock.h"
#include "sockopt.h"
#include "tcp_repair.h"

/* The Internet checksum's running sum over @n bytes (big-endian words). */
static uint32_t csum_add(uint32_t sum, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (n & 1)
		sum += (uint32_t)b[n - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* The peer's FIN (with its ACK of all we had sent then), or its RST
 * (@rst), as the peer would send it: IPv4 for an IPv6 socket talking
 * IPv4. */
static size_t peer_packet(const struct rec_inet *ri, bool rst, uint8_t *pkt,
			  struct sockaddr_storage *to, socklen_t *tolen)
{
	const uint8_t *src = ri->raddr, *dst = ri->laddr;
	bool v4 = ri->family == AF_INET;
	uint32_t sum, win = ri->snd_wnd;
	size_t ip_len;
	struct tcphdr *th;
	/* the pseudo-header's protocol and length (as words, the same
	 * sum for IPv4 and IPv6) */
	const uint8_t pseudo[4] = { 0, IPPROTO_TCP, 0, sizeof(struct tcphdr) };

	if (!v4 && IN6_IS_ADDR_V4MAPPED((const void *)src) &&
	    IN6_IS_ADDR_V4MAPPED((const void *)dst)) {
		v4 = true;
		src += 12;
		dst += 12;
	}
	memset(to, 0, sizeof(*to));
	if (v4) {
		struct sockaddr_in *a = (void *)to;

		ip_len = 20;
		pkt[0] = 0x45;
		pkt[3] = ip_len + sizeof(*th);
		pkt[8] = 64;
		pkt[9] = IPPROTO_TCP;
		memcpy(pkt + 12, src, 4);
		memcpy(pkt + 16, dst, 4);
		a->sin_family = AF_INET;
		memcpy(&a->sin_addr, dst, 4);
		*tolen = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (void *)to;

		ip_len = 40;
		pkt[0] = 0x60;
		pkt[5] = sizeof(*th);
		pkt[6] = IPPROTO_TCP;
		pkt[7] = 64;
		memcpy(pkt + 8, src, 16);
		memcpy(pkt + 24, dst, 16);
		a->sin6_family = AF_INET6;
		memcpy(&a->sin6_addr, dst, 16);
		a->sin6_scope_id = ri->scope_id;
		*tolen = sizeof(*a);
	}
	th = (struct tcphdr *)(pkt + ip_len);
	th->source = htons(ri->rport);
	th->dest = htons(ri->lport);
	th->seq = htonl(ri->rcv_seq + ri->rcv_len);
	th->doff = sizeof(*th) / 4;
	th->rst = rst;
	if (!rst) {
		th->ack_seq = htonl(ri->snd_seq);
		th->fin = 1;
		th->ack = 1;
		/* the window it offers us, scaled as it scales it */
		if (ri->tcpi_opts & TCPI_OPT_WSCALE)
			win >>= ri->snd_wscale;
		th->window = htons(win > 0xffff ? 0xffff : win);
	}
	sum = csum_add(0, v4 ? pkt + 12 : pkt + 8, v4 ? 8 : 32);
	sum = csum_add(sum, pseudo, sizeof(pseudo));
	th->check = csum_fold(csum_add(sum, th, sizeof(*th)));
	return ip_len + sizeof(*th);
}

static int wait_state(int sk, int want)
{
	struct timespec pause = { 0, 1000000 };
	struct tcp_info ti;

	for (int i = 0; i < 200; i++) {
		socklen_t len = sizeof(ti);

		if (getsockopt(sk, IPPROTO_TCP, TCP_INFO, &ti, &len))
			return -errno;
		if (ti.tcpi_state == want)
			return 0;
		nanosleep(&pause, NULL);
	}
	return -ETIMEDOUT;
}

/* The peer's FIN cannot be had again (it has our ACK of it): it is sent
 * to the socket once more, from a raw socket, marked to pass the network
 * lock, as CRIU does.  The socket, in repair mode, takes it as received
 * (and ACKs it, which the peer takes for a duplicate) and goes to @want.
 * Likewise a RST (@rst). */
static int replay(int sk, const struct rec_inet *ri, bool rst, int want)
{
	uint8_t pkt[80] = { 0 };
	struct sockaddr_storage to;
	socklen_t tolen;
	size_t n = peer_packet(ri, rst, pkt, &to, &tolen);
	int raw = socket(to.ss_family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW), ret = 0;
	bool pass;
	char why[160];

	if (raw < 0)
		return -errno;
	/* fails without a lock chain: then nothing is dropped */
	pass = !netlock_pass_marked(ri, true, why, sizeof(why));
	if (sock_set_int(raw, SOL_SOCKET, SO_MARK, NETLOCK_MARK) ||
	    sendto(raw, pkt, n, 0, (void *)&to, tolen) != (ssize_t)n)
		ret = -errno;
	close(raw);
	if (!ret)
		ret = wait_state(sk, want);
	if (pass)
		netlock_pass_marked(ri, false, why, sizeof(why));
	return ret;
}

/* Our FIN, put after the send queue (as sent: it is retransmitted, and
 * the peer's ACK of it moves the state on). */
static int queue_fin(int sk)
{
	int ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE);

	if (!ret && shutdown(sk, SHUT_WR))
		ret = -errno;
	return ret;
}

/* The FINs in the order that leads to the saved state: CLOSING has ours
 * first (FIN_WAIT1, then theirs), LAST_ACK theirs first (CLOSE_WAIT,
 * then ours).  FIN_WAIT2 comes back FIN_WAIT1, until the peer ACKs our
 * FIN again. */
int tcp_replay_fins(int sk, const struct rec_inet *ri)
{
	int ret = 0;

	if (ri->state == TCP_CLOSING || (fin_sent(ri->state) && !fin_rcvd(ri->state)))
		ret = queue_fin(sk);
	if (!ret && fin_rcvd(ri->state))
		ret = replay(sk, ri, false, ri->state == TCP_CLOSING ? TCP_CLOSING : TCP_CLOSE_WAIT);
	if (!ret && ri->state == TCP_LAST_ACK)
		ret = queue_fin(sk);
	return ret;
}

/* A connection that ended with bytes not read yet: rebuilt in repair
 * mode to a made-up peer on the loopback (discard port), its receive
 * queue filled, then reset by that peer: CLOSE, its port released, the
 * bytes readable, then ECONNRESET once (whether it had been reset or
 * closed, which cannot be told apart). */
static int closed_with_bytes(int sk, const struct rec_inet *ri)
{
	struct rec_inet peer = { .family = ri->family, .rport = 9, .rcv_len = ri->rcv_len };
	struct sockaddr_storage ss;
	socklen_t len;
	int ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON);

	if (ri->family == AF_INET)
		memcpy(peer.raddr, (uint8_t[]){ 127, 0, 0, 1 }, 4);
	else
		peer.raddr[15] = 1;
	memcpy(peer.laddr, peer.raddr, sizeof(peer.laddr));
	len = inet_addr_out(&peer, false, &ss);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_QUEUE_SEQ, 0);
	if (!ret && connect(sk, (void *)&ss, len))	/* no SYN in repair mode */
		ret = -errno;
	len = sizeof(ss);
	if (!ret && getsockname(sk, (void *)&ss, &len))
		ret = -errno;
	peer.lport = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
						     ((struct sockaddr_in6 *)&ss)->sin6_port);
	if (!ret)
		ret = tcp_fill_queue(sk, TCP_RECV_QUEUE, (const char *)(ri + 1), ri->rcv_len);
	if (!ret)
		ret = replay(sk, &peer, true, TCP_CLOSE);
	if (!ret)
		ret = sock_set_int(sk, IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP);
	return ret;
}

int tcp_rebuild_closed(int sk, const struct rec_inet *ri,
		       int (*bind)(int sk, const struct rec_inet *ri))
{
	int ret = ri->lport ? bind(sk, ri) : 0;

	if (!ret && ri->rcv_len)
		return closed_with_bytes(sk, ri);
	/* 1, 2, 3: SHUT_RD, SHUT_WR, SHUT_RDWR.  Not connected: ENOTCONN,
	 * the flags set all the same */
	if (!ret && ri->shutdown && shutdown(sk, ri->shutdown - 1) && errno != ENOTCONN)
		ret = -errno;
	return ret;
}
