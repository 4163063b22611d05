/* inet.h - what inet.c (TCP, UDP, raw... sockets, FILE_INET) and
 * tcp_repair.c (the TCP connections ckpt holds, in repair mode) give each
 * other. */
#ifndef CKPT_INET_H
#define CKPT_INET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../files.h"

/* The most bytes of one queue a FILE's state carries, which leaves room
 * for the options after them: a queue is bounded by its buffer, which
 * tcp_rmem and SO_RCVBUFFORCE can take to tens of MiB. */
#define INET_OPTS_ROOM	(64u << 10)
#define INET_MAX_QUEUE	((uint32_t)(MAX_FILE_STATE - sizeof(struct rec_inet) - INET_OPTS_ROOM) / 2)

/* inet.c */
/* A TCP connection, whole or half closed, that ckpt rebuilds. */
bool inet_is_conn(const struct rec_inet *ri);
const char *inet_state_name(int st);
/* @ri's local or remote address as a sockaddr; its length. */
socklen_t inet_addr_out(const struct rec_inet *ri, bool local,
			struct sockaddr_storage *ss);
/* "addr:port" for messages, in @buf. */
const char *inet_addr_str(const struct rec_inet *ri, bool local, char *buf,
			  size_t n);
/* bind() to @ri's local address: 0 or -errno. */
int inet_bind(int sk, const struct rec_inet *ri);
/* Socket option @i (INET_OPT_*) set as @ri has it: 0 or -errno. */
int inet_set_opt(int sk, const struct rec_inet *ri, int i);

/* tcp_repair.c */
/* A TCP connection taken into repair mode to be read: ckpt's own copy of
 * it, and what was read, checked again at the end. */
struct cpt_sock {
	int sk;
	pid_t pid;
	int fd;
	int reuse;		/* SO_REUSEADDR, which repair mode overrides */
	uint32_t rcv_nxt, write_seq;
	int unsent;		/* SIOCOUTQNSD, as read_conn() read it */
	bool locked;		/* its network lock made (netlock.c) */
	bool opening;		/* SYN_SENT: held only to be checked, not in
				 * repair mode, not locked */
	bool to_queued;		/* its other end waits in an accept queue */
	struct rec_inet conn;	/* its addresses, for the lock */
};

/* Checkpoint: the connection @p holds (@sk, our copy) held in repair mode
 * to the end of the checkpoint, and read into @ri and *data (its send
 * then receive queue, malloc()ed).  0, or -errno (reported). */
int tcp_dump_conn(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		  struct rec_inet *ri, char **data);
/* Checkpoint: a connection being opened, held to the end, which fails if
 * it is opened meanwhile.  0, or -errno (reported). */
int tcp_hold_opening(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		     const struct rec_inet *ri);
/* Checkpoint: listener @ri has @n connections waiting to be accepted:
 * dropped with --skip-in-flight, else the end of the checkpoint checks
 * that each one's client is in the tree (to connect again at restart).
 * 0, or -errno (reported). */
int tcp_note_accept_queue(struct cpt_ctx *c, const struct fd_probe *p,
			  const struct rec_inet *ri, uint32_t n);
/* Checkpoint: a TCP socket in CLOSE (@ri): shut down, or a connection
 * that ended (its port released), and the bytes it still has to read in
 * *data (malloc()ed).  0, or -errno (reported). */
int tcp_dump_closed(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    struct rec_inet *ri, char **data);
/* Restart (--tcp-close): the connection @ri as a closed socket, in
 * *@closed (its network lock removed, so the peer gets a RST).  @closed. */
const struct rec_inet *tcp_as_closed(struct rst_ctx *c, const struct rec_inet *ri,
				     struct rec_inet *closed);
/* Restart: the CLOSE socket @ri on @sk: bound with @bind if it was,
 * shut down as it was.  0 or -errno. */
int tcp_rebuild_closed(int sk, const struct rec_inet *ri,
		       int (*bind)(int sk, const struct rec_inet *ri));
/* Restart: @ri's connection rebuilt on @sk, left in repair mode, with
 * TCP timestamps going on from @ts.  0 or -errno. */
int tcp_rebuild_conn(int sk, const struct rec_inet *ri, uint32_t ts);
/* Restart: our copy @sk of @f's rebuilt connection, kept to leave repair
 * mode once every process is built.  0 or -ENOMEM. */
int tcp_keep_pending(struct rst_ctx *c, int sk, const struct rst_file *f);

#endif
