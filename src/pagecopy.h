#ifndef CKPT_PAGECOPY_H
#define CKPT_PAGECOPY_H
#include <stdbool.h>

#include "image.h"
#include "remote.h"

#define PAGECOPY_NBUF 3

/* The copy buffers, kept from one area to the next: fresh ones for each
 * area cost a page fault per page (a third of a JVM's page copy). */
struct page_bufs {
	char *buf[PAGECOPY_NBUF];
	bool huge[PAGECOPY_NBUF];	/* asked for huge pages */
};

void page_bufs_free(struct page_bufs *b);

/* Write the pages of @runs of the task held by @rm into the open record
 * of @w; @pmfd: its pagemap (-1: none, /proc/PID/mem only). */
int page_copy(struct img_writer *w, struct remote *rm, int pmfd,
	      struct page_bufs *b, const struct rec_pages_run *runs,
	      uint32_t nr_runs);
#endif
