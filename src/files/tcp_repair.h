/* tcp_repair.h - what tcp_repair.c (a connection in repair mode) and
 * tcp_fin.c (the FINs and resets of its peer, replayed at restart)
 * share. */
#ifndef CKPT_TCP_REPAIR_H
#define CKPT_TCP_REPAIR_H

#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>

struct rec_inet;

/* Our FIN is sent (the last sequence number of the send queue). */
static inline bool fin_sent(int state)
{
	return state == TCP_FIN_WAIT1 || state == TCP_FIN_WAIT2 ||
	       state == TCP_LAST_ACK || state == TCP_CLOSING;
}

/* ... and not yet acknowledged. */
static inline bool fin_unacked(int state)
{
	return state == TCP_FIN_WAIT1 || state == TCP_LAST_ACK || state == TCP_CLOSING;
}

/* The peer's FIN came in (after the receive queue). */
static inline bool fin_rcvd(int state)
{
	return state == TCP_CLOSE_WAIT || state == TCP_LAST_ACK || state == TCP_CLOSING;
}

/* Fill one queue (TCP_RECV_QUEUE, TCP_SEND_QUEUE) in repair mode: the
 * receive queue as if received, the send queue as if sent and not yet
 * acknowledged.  0 or -errno. */
int tcp_fill_queue(int sk, int q, const char *data, uint32_t len);
/* The FINs of a half-closed connection @ri, ours queued and the peer's
 * replayed (tcp_fin.c).  0 or -errno. */
int tcp_replay_fins(int sk, const struct rec_inet *ri);

#endif
