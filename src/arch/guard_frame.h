/* guard_frame.h - the guard frame of the ports whose calls return
 * through a register (s390x's r14, ppc64le's LR): each has its
 * <arch>/guard.c for the gadgets and the frame, guard_frame.c holds the
 * task's part.  x86's is src/arch/x86/guard.h. */
#ifndef CKPT_GUARD_FRAME_H
#define CKPT_GUARD_FRAME_H

#include <stdint.h>

#include "../proc.h"
#include "../remote.h"

struct guard_gadgets {
	uint64_t call_ip;	/* a system call, register sets, a return */
	uint64_t ret_ip;	/* rt_sigreturn of the frame */
};

/* Both gadgets in the executable mappings of @maps (read through
 * @memfd): 0, -ENOENT if the task lacks one, -ENOMEM. */
int guard_find(int memfd, const struct vma_list *maps, struct guard_gadgets *g);

/* The frame below @r's stack pointer, which must stay above @stack_lo,
 * and the thread parked at the return gadget with every signal blocked.
 * *@lowest gets the lowest byte the guard uses.  -ENOSPC (nothing
 * changed) if the thread cannot have one. */
int guard_arm(struct remote *r, const struct guard_gadgets *g,
	      uint64_t stack_lo, uint64_t *lowest);

#endif
