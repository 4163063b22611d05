/* progress.h - the line a long checkpoint or restart draws on a terminal:
 * bytes done and total, rate, time left, redrawn in place. */
#ifndef CKPT_PROGRESS_H
#define CKPT_PROGRESS_H

#include <stdint.h>
#include <sys/types.h>

#include "log.h"

/* From now on @what (a word) moves @total bytes, if @flags has
 * CKPT_PROGRESS and the log is a terminal; else nothing is drawn. */
void progress_begin(struct ckpt_log *log, unsigned long flags, const char *what,
		    uint64_t total);
/* @n more bytes done: the line is drawn once 1 s has gone, then at most
 * every 100 ms. */
void progress_add(struct ckpt_log *log, uint64_t n);
/* The line wiped (before a message, and at the end). */
void progress_clear(struct ckpt_log *log);
void progress_end(struct ckpt_log *log);
/* The memory of process @pid a checkpoint copies: its anonymous and
 * shared resident bytes (0 if unknown). */
uint64_t progress_mem_of(pid_t pid);
/* The same, apart: anonymous (RssAnon) and shared (RssShmem). */
void progress_mem_split(pid_t pid, uint64_t *anon, uint64_t *shmem);

#endif
