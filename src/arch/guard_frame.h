/* guard_frame.h - the guard frame of the ports whose calls return
 * through a register (s390x's r14, ppc64le's LR): each has its
 * <arch>/guard.c for what its gadgets look like and its frame;
 * guard_frame.c reads the code and guards the task.  x86's is
 * src/arch/x86/guard.h. */
#ifndef CKPT_GUARD_FRAME_H
#define CKPT_GUARD_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../proc.h"
#include "../remote.h"

struct guard_gadgets {
	uint64_t call_ip;	/* a system call, register sets, a return */
	uint64_t ret_ip;	/* rt_sigreturn of the frame */
};

/* The port's: the gadgets of @len bytes of code at @b, found at @at,
 * into those of @g still 0 (guard_frame.c reads the code and calls it). */
void guard_scan(const uint8_t *b, size_t len, uint64_t at, struct guard_gadgets *g);

/* PTRACE_GETREGSET of @len bytes, all of them: 0 or -errno. */
int guard_regset(pid_t tid, int type, void *buf, size_t len);

/* The end of each port's guard_arm(), its frame written: the thread
 * parked at @park (the return gadget, the stack pointer @sp at the
 * frame), its calls made at the call gadget with the stack at @sp, and
 * every signal blocked.  *@lowest gets @sp. */
int guard_park(struct remote *r, const struct guard_gadgets *g, const arch_regs_t *park,
	       uint64_t sp, uint64_t *lowest);

/* The frame below @r's stack pointer, which must stay above @stack_lo,
 * and the thread parked at the return gadget with every signal blocked.
 * *@lowest gets the lowest byte the guard uses.  -ENOSPC (nothing
 * changed) if the thread cannot have one. */
int guard_arm(struct remote *r, const struct guard_gadgets *g,
	      uint64_t stack_lo, uint64_t *lowest);

#endif
