/* lazy_int.h - the loader's own (lazy.c), shared with its page server
 * part (lazy_net.c). */
#ifndef CKPT_LAZY_INT_H
#define CKPT_LAZY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "image.h"
#include "lazy.h"
#include "log.h"
#include "page.h"

#define CHUNK_PAGES	512	/* a background step: 2 MiB */
#define NET_PIECE	(1024 * 1024)	/* a page server's streamed piece */
#define NET_DEPTH	4		/* its requests in flight */
#define MAX_RETRY	4096

struct lazy_mm {
	int ufd;
	pid_t pid;		/* a process of it, if known */
	struct lazy_set pending;	/* not in yet */
	struct lazy_set valid;	/* the image's, less what it dropped */
	uint64_t retry[MAX_RETRY];	/* faults met while its map changed */
	int nr_retry;
	unsigned int stuck;	/* steps in a row that placed nothing */
	uint64_t stuck_since;	/* since the first of them */
	bool dead;		/* its memory went (ESRCH) */
	bool moved;		/* mremap: offsets no longer grow with addresses */
	/* where it maps each object (lazy_shm.c), and after them (OTHER)
	 * its other areas as last read from /proc */
	struct lazy_set *shm;
	bool rescan;		/* that to be read again from /proc */
	uint64_t next_fault;	/* the page after the last brought on a fault */
	unsigned int ahead;	/* how many pages that fault asked for */
};

struct loader {
	struct ckpt_log log;
	pid_t root;		/* the process it was started for */
	pid_t tree;		/* the restored tree's root: killed on a bad page */
	int img_fd;
	uint64_t img_len;	/* its size when the loader began */
	char *buf;		/* CHUNK_PAGES of the image, read */
	struct lazy_mm **mm;
	size_t nr, cap;
	/* faults: those served (a retry that placed nothing not counted) */
	uint64_t on_fault, faults, in_bg, zero, t0;
	int gone;		/* memories that went before all was in */
	bool root_gone;		/* the root's among them */
	pid_t checker;		/* checking the image's page checksums */
	int check_fd;		/* its pipe: the first bad span */
	const struct ir_span *spans;
	size_t nr_spans;
	unsigned int delay_ms;	/* test build: a pause between steps */
	unsigned int read_delay_ms;	/* test build: before and after a read of faults */
	unsigned int copy_delay_ms;	/* test build: a copier's, between taking a step and its copy */
	struct lazy_net *net;	/* restart --page-server (lazy_net.c) */
	struct lazy_obj *obj;	/* shared memory objects (lazy_shm.c) */
	size_t nr_obj, obj_rr;
	int self_ufd;		/* their views' userfaultfd */
	int ctl;		/* restart's requests (struct lazy_ctl), or -1 */
	struct lazy_copiers *cp;	/* background steps' threads (lazy_copy.c) */
	int copiers;		/* how many it had */
	bool ending;		/* on an error: the first thread to meet one ends it */
};

/* @pid and every process below it, killed. */
void lazy_kill_tree(pid_t pid, int depth);
/* The loader's end on an error, once: a second thread to meet one waits
 * for the first's _exit(). */
void lazy_ending(struct loader *l);
/* A page that cannot be had: the process is killed, the loader exits. */
_Noreturn void lazy_fetch_failed(struct loader *l, struct lazy_mm *m, uint64_t addr,
				 uint64_t off, int err);
/* @len bytes at @src into @m at @addr: 0 (*done: all of them), 1 if
 * its memory is gone, -EAGAIN (*done: those in) while its map changes. */
int lazy_place(struct loader *l, struct lazy_mm *m, uint64_t addr, uint64_t len,
	       const char *src, uint64_t off, uint64_t *done);

/* @n pages at @addr, from image offset @off, into @m, read through @buf
 * (CHUNK_PAGES): as lazy_place(). */
int lazy_copy_in(struct loader *l, struct lazy_mm *m, char *buf, uint64_t addr,
		 uint64_t n, uint64_t off, uint64_t *done);

/* A background step: @n pages at @addr of @m, from image offset @off. */
struct lazy_step {
	struct lazy_mm *m;
	uint64_t addr, n, off;
};
/* The top of what @m (with pages pending) misses, out of its pending
 * set while it is copied. */
struct lazy_step lazy_step_take(struct loader *l, struct lazy_mm *m);
/* Its copy gave @ret (as lazy_place()) with @done bytes in: what is not
 * in goes back to the pending set; 1 if the memory is gone (m->dead). */
int lazy_step_end(struct loader *l, const struct lazy_step *st, int ret, uint64_t done);

/* lazy_copy.c: the background steps (private memory's and shared
 * memory's, or a page server's stream's pieces) on threads of their
 * own, one a CPU, while the loader's
 * first thread serves faults and events.  That thread holds them (lazy_copiers_hold()) for all it
 * does but wait in poll(): no copy is under way, and none starts, while
 * it reads a userfaultfd and applies what it read (an event is done
 * once read: a copy still going then could bring back pages it frees,
 * or miss a fork).  0, or -errno: then there are none, and the first
 * thread makes the steps itself. */
int lazy_copiers_start(struct loader *l);
/* Readable when a copier wants the first thread: an mm gone or with
 * nothing pending, an object with nothing pending (-1: no copiers). */
int lazy_copiers_fd(const struct loader *l);
void lazy_copiers_hold(struct loader *l);
void lazy_copiers_go(struct loader *l);
void lazy_copiers_stop(struct loader *l);
/* restart --page-server: the first thread reads the stream's pieces
 * into the copiers' buffers (NET_PIECE each; NULL: none free, or no
 * copiers) and hands them over, with no hold (they place the pieces
 * meanwhile: lazy_net_take()).  Without a hold they take the copiers'
 * lock; with one, they are the holder's. */
char *lazy_copiers_buf(struct loader *l);
void lazy_copiers_push(struct loader *l, char *buf, uint64_t off, uint64_t len);
bool lazy_copiers_has_buf(struct loader *l);
/* Whether pieces are handed over and not all placed yet. */
bool lazy_copiers_placing(struct loader *l);
/* Readable when a copier freed a buffer (-1: no copiers); its word read. */
int lazy_copiers_buf_fd(const struct loader *l);
void lazy_copiers_buf_ack(struct loader *l);
/* With the copiers held: the @i-th piece handed over and not taken yet
 * (false past the last), which the first thread may place itself (the
 * copier that takes it then finds less, or nothing, missing). */
bool lazy_copiers_queued(struct loader *l, int i, char **buf, uint64_t *off, uint64_t *len);

/* How many pages to bring from @a on for a fault there: @first, more
 * where the process reads on from the last fault (m->next_fault). */
uint64_t lazy_ahead(struct lazy_mm *m, uint64_t a, uint64_t first);

/* A memory served by a userfaultfd @ufd that restart gave (no pages of
 * its own): added to the loader's. */
struct lazy_mm *lazy_mm_add(struct loader *l, int ufd, pid_t pid);
/* lazy_shm.c: restart's request on l->ctl handled (answered); 1 once
 * restart closed its end. */
int lazy_shm_ctl(struct loader *l);

/* lazy_shm.c: the shared memory objects of @in, @m's, taken over (the
 * views registered on the loader's own userfaultfd): 0 or an errno. */
int lazy_shm_start(struct loader *l, struct lazy_mm *m, struct lazy_shm *in);
/* Whether @a is in an area @m is known to have (an object's, or OTHER). */
bool lazy_shm_known(const struct loader *l, const struct lazy_mm *m, uint64_t a);
/* Whether @a is in an object @m maps: its index and offset there. */
bool lazy_shm_find(const struct loader *l, const struct lazy_mm *m, uint64_t a,
		   size_t *k, uint64_t *o);
/* A touched page @a of object @k at offset @o: as serve() (lazy.c). */
int lazy_shm_serve(struct loader *l, struct lazy_mm *m, size_t k, uint64_t o, uint64_t a);
/* One background step on an object with pages still pending: whether
 * there was one. */
bool lazy_shm_step(struct loader *l, size_t *rr);
/* The same in two: its pages taken out of the object's pending set
 * (@st: which, for which process), then written (@buf: CHUNK_PAGES),
 * with no lock, by a copier (lazy_copy.c). */
struct lazy_shm_step {
	struct lazy_mm *m;	/* the process blamed if a page cannot be read */
	size_t k;
	uint64_t o, len, off;
	bool view;		/* through the view: a REMOVE event named them */
};
bool lazy_shm_take(struct loader *l, size_t *rr, struct lazy_shm_step *st);
void lazy_shm_write(struct loader *l, const struct lazy_shm_step *st, char *buf);
/* Whether @m maps an object with pages still pending. */
bool lazy_shm_busy(const struct loader *l, const struct lazy_mm *m);
/* @m's map kept true: a fork's copy and a move (read again from /proc
 * at the next fault, from its thread @tid), an unmap (cut).  0 or
 * -ENOMEM. */
int lazy_shm_fork(const struct loader *l, struct lazy_mm *to, const struct lazy_mm *from);
int lazy_shm_unmap(const struct loader *l, struct lazy_mm *m, uint64_t start, uint64_t end);
int lazy_shm_move(const struct loader *l, struct lazy_mm *m, uint64_t from, uint64_t len);
int lazy_shm_rescan(const struct loader *l, struct lazy_mm *m, pid_t tid);
/* The same from any of its threads (none: m->rescan stays). */
int lazy_shm_rescan_any(const struct loader *l, struct lazy_mm *m);
void lazy_shm_foreign(struct lazy_mm *m, uint64_t a);
/* A REMOVE event of @m's (MADV_DONTNEED or MADV_REMOVE): its pages of
 * objects noted.  0 or -ENOMEM. */
int lazy_shm_removed(const struct loader *l, struct lazy_mm *m, uint64_t start, uint64_t end);
void lazy_shm_drop(const struct loader *l, struct lazy_mm *m);

/* lazy_net.c: the pages of a page server's image (restart --page-server).
 * Its connection @sock: 0 or -ENOMEM. */
int lazy_net_start(struct loader *l, int sock);
/* Whether image offset @off is the server's (a hole of the memfd). */
bool lazy_net_has(const struct loader *l, uint64_t off);
/* A touched page at @off, the server's: its block, placed wherever it
 * is missing.  Pages placed. */
uint64_t lazy_net_fault(struct loader *l, uint64_t off);
/* Whether the stream of PAGES payloads is still going, and whether it
 * waits for the server now. */
bool lazy_net_streaming(const struct loader *l);
bool lazy_net_waits(const struct loader *l);
/* Requests sent, up to NET_DEPTH in flight: whether the oldest piece is
 * at hand (the memfd's, no reply to wait for). */
bool lazy_net_ask(struct loader *l);
/* With copiers, outside their hold: the oldest piece, if it is there
 * (@readable: the connection has bytes), read into a free buffer of
 * theirs, checked and handed over. */
void lazy_net_pump(struct loader *l, bool readable);
/* A copier's piece [off, off + len), under the copiers' lock: the runs
 * of every memory's missing pages in it, taken out of their pending
 * sets, into *@st (grown, *@cap): how many.  Each is settled as a
 * background step (lazy_step_end()). */
size_t lazy_net_take(struct loader *l, uint64_t off, uint64_t len, struct lazy_step **st,
		     size_t *cap);
/* A step of the stream: asks for more, takes the oldest piece if it is
 * there (@readable: the connection has bytes). */
void lazy_net_step(struct loader *l, bool readable);
int lazy_net_sock(const struct loader *l);
uint64_t lazy_net_bytes(const struct loader *l);

#endif
