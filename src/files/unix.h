/* unix.h - what the parts of the unix socket kind give each other:
 * unix_graph.c (every unix socket and who holds it, from sock_diag),
 * unix.c (the UNIX_SK records written, the file kind) and unix_build.c
 * (the sockets made again at restart). */
#ifndef CKPT_UNIX_H
#define CKPT_UNIX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include "../files.h"

#define K_ESTABLISHED	1	/* the kernel's sk_state values (TCP_*) */
#define K_CLOSE		7
#define K_LISTEN	10
#define UNIX_NAME_MAX	(int)sizeof(((struct sockaddr_un *)0)->sun_path)
#define UNIX_MAX_MSGS	(1U << 20)
#define UNIX_MAX_DATA	(CKPT_REC_MAX_META - sizeof(struct rec_unix_sk) - 4096 - 4 * UNIX_MAX_MSGS)
#define UNIX_MAX_BACKLOG	(1U << 20)

/* ---- checkpoint: the graph (unix_graph.c) ---- */

struct usk_queue {		/* the messages peeked from a socket */
	uint32_t *lens;
	uint32_t nr, cap;
	char *data;
	size_t len, dcap;
	struct rec_unix_scm_msg *scm;	/* those that carry fds */
	uint32_t nr_scm;
	size_t cap_scm;
	int *fds;		/* theirs: ckpt's own copies, in order, open
				 * until the checkpoint ends */
	uint32_t nr_fds;
	size_t cap_fds;
};

struct usk {			/* a socket as sock_diag and the tree show it */
	uint64_t ino, peer_ino, vfs_ino;
	uint32_t vfs_dev;
	uint8_t type, kstate, shutdown;
	bool has_vfs, has_peer;
	uint32_t rq, wq;	/* queued bytes; LISTEN: backlog length, max */
	char name[UNIX_NAME_MAX];
	int name_len;
	uint32_t *icons;	/* LISTEN: inodes of the clients whose
				 * connections wait in its backlog */
	uint32_t nr_icons;
	pid_t pid;		/* its first holder in the tree; 0: outside (in
				 * flight only: the holder of the socket it
				 * waits in) */
	int fd;			/* (in flight only: that socket's fd) */
	bool in_flight;		/* no fd of the tree holds it: only a message
				 * queued in the tree's sockets */
	int flight_fd;		/* then ckpt's copy of it (in its carrier's q) */
	uint32_t id;		/* its UNIX_SK record */
	struct usk *listener;	/* a client waiting in a tree listener's
				 * backlog: that listener */
	bool peeked;		/* its queue is in q */
	int32_t peek_off;	/* its SO_PEEK_OFF, -1 off */
	struct usk_queue q;
};

/* What checkpoint found of unix sockets: the kind's checkpoint state. */
struct unix_cpt {
	bool scanned;		/* unix_scan() was called */
	struct usk *s;		/* every unix socket, sorted by inode */
	size_t n, cap;
	bool written;
};

/* Every unix socket sock_diag knows, and which the tree's fds hold, into
 * the kind's state.  0, or -errno (reported). */
int unix_scan(struct cpt_ctx *c);
void unix_dump_free(struct cpt_ctx *c, void *state);
/* The socket of inode @ino, NULL if none. */
struct usk *usk_find(struct unix_cpt *u, uint64_t ino);
/* Its peer is closed. */
bool unix_peer_gone(const struct usk *s);
/* Connected to a socket that is neither in the tree nor gone. */
bool unix_peer_outside(struct unix_cpt *u, const struct usk *s);

/* unix.c: what a queue holds freed, its fds closed. */
void usk_queue_free(struct usk_queue *q);
/* unix.c: "stream", "dgram", "seqpacket" */
const char *unix_type_name(int type);

/* ---- restart: the builder (unix_build.c) ---- */

/* One UNIX_SCM record (unix_scm.c): the messages of a socket's queue
 * that carry fds, and the files they carry. */
struct rst_scm {
	struct rec_unix_scm r;
	const char *msgs;	/* r.nr_msgs rec_unix_scm_msg, unaligned */
	const char *ids;	/* r.nr_fds FILE ids, unaligned */
	void *rec;
};

/* One UNIX_SK record, and the socket made of it. */
struct rst_usk {
	struct rec_unix_sk r;
	const char *name;
	const char *lens;	/* r.nr_msgs u32s, unaligned */
	const char *data;
	void *rec;
	int fd;			/* ckpt's own, once made */
	int far;		/* PEER_GONE: the end that goes away */
	const struct rst_scm *scm;	/* the fds in flight in its queue */
	bool late;		/* its queue, or its peer's, carries fds: filled
				 * and finished once every process is built */
};

struct unix_table {
	struct rst_usk *e;
	int n;
	size_t cap;
	struct id_table ids;	/* index in e, by id */
	bool made;
};

/* The socket of record @id in @ut, NULL if none. */
struct rst_usk *usk_by_id(struct unix_table *ut, uint32_t id);
/* What the records say of each other; 0, or -EBADMSG (reported). */
int unix_cross_check(struct rst_ctx *c, struct unix_table *ut);
/* Every socket made, in ckpt, with its queued data, options and
 * shutdown state.  0, or -errno (reported). */
int unix_make_all(struct rst_ctx *c, struct unix_table *ut);
/* The length of message @i queued for @e. */
uint32_t usk_msg_len(const struct rst_usk *e, uint32_t i);
/* The messages queued for @e written again, @fds (ckpt's copies, in the
 * order of e->scm's FILE ids) with those that carried some; 0, or
 * -errno (reported). */
int usk_refill(struct rst_ctx *c, struct unix_table *ut, struct rst_usk *e,
	       const int *fds);
/* Options and shutdown state of the late sockets, once their queues are
 * filled; 0, or -errno (reported). */
int unix_finish_late(struct rst_ctx *c, struct unix_table *ut);

#endif
