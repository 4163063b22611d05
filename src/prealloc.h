/* prealloc.h - a checkpoint into tmpfs: its file's pages allocated ahead,
 * beside the phases that wait on the tree (prealloc.c). */
#ifndef CKPT_PREALLOC_H
#define CKPT_PREALLOC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"

struct prealloc;

/* Where @fd is a tmpfs file: a thread that allocates, from its offset on,
 * about the pages processes @pids will put in it.  NULL where not (and
 * where it cannot start: nothing is lost but the head start). */
struct prealloc *prealloc_start(int fd, const pid_t *pids, int nr);
/* It stopped and joined: at its next step if @now, else once it has made
 * all it meant to.  Before the image's first big write (the page copy's
 * writers would wait for its allocations, and it would take their CPU).
 * NULL, or stopped already: nothing. */
void prealloc_stop(struct prealloc *p, bool now);
/* It stopped, and what it made past the file's end (the image's) freed
 * (said with -v on @log); @p freed.  0 or -errno.  NULL: nothing. */
int prealloc_end(struct prealloc *p, struct ckpt_log *log);

#endif
