#ifndef CKPT_PAGECOPY_H
#define CKPT_PAGECOPY_H
#include <stdbool.h>

#include "image.h"
#include "remote.h"

#define PAGECOPY_NBUF 4
#define PAGECOPY_MAXW 8

/* The copy buffers, kept from one process to the next: fresh ones cost
 * a page fault per page (membuf.c).  Each set is one block. */
struct page_bufs {
	char *buf[PAGECOPY_NBUF];
	char *wbuf[PAGECOPY_MAXW];	/* write_inplace()'s workers' */
	int nbuf, nwbuf;		/* how many each block holds */
	size_t len;			/* the size of each of buf[] */
};

void page_bufs_free(struct page_bufs *b);

/* The pages one PAGES record carries. */
struct page_job {
	const struct rec_pages_run *runs;
	uint32_t nr_runs;
	uint64_t npages;	/* over all its runs */
};

/* The pages of @jobs of the task held by @rm, read in that order, ahead
 * of the writer when there are many; @pmfd: its pagemap (-1: none,
 * /proc/PID/mem only); @inplace: the image takes iw_inplace_begin(), so
 * the pages of a big job go straight to their place in it from several
 * threads.  @jobs must outlive the stream.  *@sp is NULL when there are
 * no jobs; page_stream_end() it in any case. */
struct page_stream;
int page_stream_start(struct page_stream **sp, struct ckpt_log *log,
		      struct remote *rm, int pmfd, struct page_bufs *b,
		      const struct page_job *jobs, uint32_t nr_jobs, bool inplace);
/* The next job's pages (@runs: its runs, checked) into the open record
 * of @w. */
int page_stream_write(struct page_stream *s, struct img_writer *w,
		      const struct rec_pages_run *runs);
void page_stream_end(struct page_stream *s);
#endif
