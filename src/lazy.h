/* lazy.h - restart --lazy: the loader that brings a process's pages from
 * the image while it runs (lazy.c), and what mm_lazy.c gives it. */
#ifndef CKPT_LAZY_H
#define CKPT_LAZY_H

#include "image_format.h"
#include "pin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

/* Pages of the image: @npages at @addr, from image offset @off. */
struct lazy_run {
	uint64_t addr, npages, off;
};

/* Sorted by address, apart. */
struct lazy_set {
	struct lazy_run *r;
	size_t n, cap;
};

int lazy_set_add(struct lazy_set *s, uint64_t addr, uint64_t npages, uint64_t off);
void lazy_set_free(struct lazy_set *s);
/* [start, end) out of @s: 0 or -ENOMEM. */
int lazy_set_cut(struct lazy_set *s, uint64_t start, uint64_t end);
/* The index of the first run that ends after @addr (n: none). */
size_t lazy_set_lower(const struct lazy_set *s, uint64_t addr);
/* The run holding @addr, or NULL. */
const struct lazy_run *lazy_set_find(const struct lazy_set *s, uint64_t addr);
/* What was at [from, from + len) is now at @to: 0 or -ENOMEM. */
int lazy_set_move(struct lazy_set *s, uint64_t from, uint64_t to, uint64_t len);
/* @to made a copy of @from: 0 or -ENOMEM. */
int lazy_set_copy(struct lazy_set *to, const struct lazy_set *from);

/* A shared anonymous memory object left to the loader (mm_lazy_shm.c
 * makes it ready, lazy_shm.c serves it): mapped whole at @view in ckpt
 * (the loader inherits the mapping), every page of the image's there
 * allocated but not yet written; those in @pending by object offset
 * (addr: the offset in the object, off: the image's). */
struct lazy_obj {
	char *view;
	uint64_t size;
	uint64_t dev, ino;	/* as /proc/PID/maps shows them */
	struct lazy_set pending;
	/* the loader's: the object's file, and the offsets a REMOVE
	 * event named (lazy_shm.c) */
	int fd;
	struct lazy_set touched;
};

/* A process's objects, and where it maps each: @maps[k] the areas of
 * object k (addr: where, off: the object's offset there). */
struct lazy_shm {
	struct lazy_obj *obj;
	struct lazy_set *maps;
	size_t nr;
	uint32_t *ids;		/* restart's: the objects' ids in the image */
};

/* Restart's requests to the loader of shared memory that other
 * processes of the tree map too (a SOCK_SEQPACKET pair, each request
 * answered by one byte): LAZY_CTL_ADD brings an fd, another process's
 * userfaultfd with its areas of the loader's objects registered, and
 * @nr lazy_ctl_map after it; LAZY_CTL_CUT says restart wrote the pages
 * of object @obj at [off, off + len). */
enum { LAZY_CTL_ADD = 1, LAZY_CTL_CUT = 2 };
#define LAZY_CTL_MAPS	1024	/* at most, a request */

struct lazy_ctl {
	uint32_t type, nr;
	int32_t pid;
	uint32_t obj;
	uint64_t off, len;
};

struct lazy_ctl_map {
	uint64_t start, npages, off;	/* off: the object's offset there */
	uint32_t obj, reserved;
};

/* Fork the loader, which serves @ufd (a userfaultfd of @pid's memory, its
 * areas registered) from @img_fd until every page of @pages is in, then
 * exits; @logfd gets its errors.  A page it cannot have, or a bad
 * checksum, kills the restored tree of @tree.  Its pid, or an error
 * (said). */
struct ckpt_log;
struct ir_span;
/* @spans: the image's PAGES checksums, for the loader to check. */
/* @shm: its shared memory objects (the loader takes them over); @ctl:
 * the loader's end of the requests' channel, or -1. */
pid_t lazy_loader_start(struct ckpt_log *log, pid_t pid, pid_t tree, int ufd, int img_fd,
			struct lazy_set *pages, struct lazy_shm *shm, int ctl,
			const struct ir_span *spans, size_t nr_spans, const struct pin *pin);

/* Whether the pages of an area like @v may be left to the loader
 * (restart adds conditions, mm_lazy.c; a page server, pageserver.c, sees
 * them too).  Inline: both the mm kind and the page server below it
 * ask, and neither may call the other. */
#define LAZY_EAGER	(VMA_MLOCKED | VMA_SEALED | VMA_DROPPABLE | VMA_MADV_DONTFORK | \
			 VMA_MADV_WIPEONFORK)
static inline bool mm_lazy_vma(const struct rec_vma *v)
{
	return v->kind == VMA_ANON && (v->flags & MAP_PRIVATE) && !v->shm_id &&
	       !(v->madv & LAZY_EAGER);
}

#endif
