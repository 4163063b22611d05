/* pidns.h - ckpt_restart() with CKPT_PIDNS: in a new pid namespace. */
#ifndef CKPT_PIDNS_H
#define CKPT_PIDNS_H

#include "../include/ckpt.h"

int pidns_restart(pid_t pid, int fd, unsigned long flags, int logfd,
		  struct ckpt_result *res);

#endif
