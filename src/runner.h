/* runner.h - a checkpoint's calls in batches of one stop (runner.c). */
#ifndef CKPT_RUNNER_H
#define CKPT_RUNNER_H

#include "remote.h"

/* A guarded task given a page of our code (arch_runner_map()) whose
 * runs stop on a signal the process ignores, chosen here: from then on
 * its batches (remote_batch_begin()) are made there.  1: none for it
 * (its calls go one by one), 0, or an error.  The page goes with the
 * guard (arch_unguard()). */
int runner_open(struct remote *r);

#endif
