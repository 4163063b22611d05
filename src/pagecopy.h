#ifndef CKPT_PAGECOPY_H
#define CKPT_PAGECOPY_H
#include <stdbool.h>

#include "image.h"
#include "remote.h"

/* Write the pages of @runs of the task held by @rm into the open record
 * of @w. */
int page_copy(struct img_writer *w, struct remote *rm,
	      const struct rec_pages_run *runs, uint32_t nr_runs);
#endif
