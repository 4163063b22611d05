#ifndef CKPT_PUPPET_H
#define CKPT_PUPPET_H
#include <linux/sched.h>
#include <stddef.h>

/* Returns the child's pid or -errno; the child never returns. */
long ckpt_puppet_clone(struct clone_args *args, size_t size);
extern char ckpt_puppet_syscall[];
#endif
