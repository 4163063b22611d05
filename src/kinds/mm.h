/* mm.h - what the mm kind keeps of an image, shared with restart.c. */
#ifndef CKPT_MM_H
#define CKPT_MM_H

#include "../kinds.h"

struct rst_vma {
	struct rec_vma v;
	const char *path;
	const struct rec_pages_run *runs;
	uint32_t nr_runs;
	uint64_t data_off;	/* image offset of the page data */
	uint64_t pages_len;
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
