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
#define MAX_RETRY	4096

struct lazy_mm {
	int ufd;
	pid_t pid;		/* a process of it, if known */
	struct lazy_set pending;	/* not in yet */
	struct lazy_set valid;	/* the image's, less what it dropped */
	uint64_t retry[MAX_RETRY];	/* faults met while its map changed */
	int nr_retry;
	unsigned int stuck;	/* steps in a row that placed nothing */
	bool dead;		/* its memory went (ESRCH) */
	bool moved;		/* mremap: offsets no longer grow with addresses */
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
	uint64_t on_fault, in_bg, zero, t0;
	int gone;		/* memories that went before all was in */
	bool root_gone;		/* the root's among them */
	pid_t checker;		/* checking the image's page checksums */
	int check_fd;		/* its pipe: the first bad span */
	const struct ir_span *spans;
	size_t nr_spans;
	unsigned int delay_ms;	/* test build: a pause between steps */
	struct lazy_net *net;	/* restart --page-server (lazy_net.c) */
};

const struct lazy_run *lazy_set_find(const struct lazy_set *s, uint64_t addr);
/* @pid and every process below it, killed. */
void lazy_kill_tree(pid_t pid, int depth);
/* A page that cannot be had: the process is killed, the loader exits. */
_Noreturn void lazy_fetch_failed(struct loader *l, struct lazy_mm *m, uint64_t addr,
				 uint64_t off, int err);
/* @len bytes at @src into @m at @addr: 0 (*done: all of them), 1 if
 * its memory is gone, -EAGAIN (*done: those in) while its map changes. */
int lazy_place(struct loader *l, struct lazy_mm *m, uint64_t addr, uint64_t len,
	       const char *src, uint64_t off, uint64_t *done);

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
/* A step of the stream: asks for more, takes the oldest piece if it is
 * there (@readable: the connection has bytes). */
void lazy_net_step(struct loader *l, bool readable);
int lazy_net_sock(const struct loader *l);
uint64_t lazy_net_bytes(const struct loader *l);

#endif
