/* pidns.h - ckpt_restart() with CKPT_PIDNS: in a new pid namespace. */
#ifndef CKPT_PIDNS_H
#define CKPT_PIDNS_H

#include "../include/ckpt.h"

/* What the namespace's init runs to restore the tree: ckpt_restart_r(),
 * handed down by it, so that this file needs nothing of restart.c. */
typedef int (*restart_fn)(pid_t pid, int fd, unsigned long flags, int logfd,
			  struct ckpt_result *res);

int pidns_restart(pid_t pid, int fd, unsigned long flags, int logfd,
		  struct ckpt_result *res, restart_fn restart);

#endif
