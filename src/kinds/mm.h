/* mm.h - what the mm kind keeps of an image, shared with restart.c. */
#ifndef CKPT_MM_H
#define CKPT_MM_H

#include "../kinds.h"

/* Pages to read from the image into an area: its own (PAGES) and those
 * it shares with its parent (PAGES_REF, found in the parent's). */
struct page_seg {
	uint64_t addr, npages;
	uint64_t off;		/* image offset of the first page */
};

struct rst_vma {
	struct rec_vma v;
	const char *path;
	struct page_seg *segs;	/* by address, not overlapping */
	uint32_t nr_segs;
	bool have_pages, have_refs;
	uint64_t pages_len;	/* bytes over all segs */
};

struct mm_state {
	bool have_mm;
	struct rec_mm mm;
	const uint8_t *auxv;
	const char *exe;
	struct rst_vma *vmas;
	int nr, cap;
	void **recs;		/* record payloads the above point into */
	size_t nr_recs, cap_recs;
};

extern const struct kind_ops kind_mm;
/* A free range of len bytes, in no process's layout of the image nor in
 * @busy. */
int mm_find_gap(struct rst_ctx *c, const struct vma_list *busy,
		uint64_t len, uint64_t *addr);

#endif
