/* guard.h - a checkpoint that dies leaves its target as it was.
 *
 * Before ckpt changes anything in a task it is checkpointing, it writes
 * below the task's stack an rt_sigframe holding the task's own context:
 * registers, FPU state and signal mask.  From then on, whenever ckpt
 * lets go of the task for any reason (it crashes, is SIGKILLed, is
 * chosen by the OOM killer), the next thing the task executes is an
 * rt_sigreturn through that frame, back to exactly where it was.
 *
 * Two pieces of the task's own code make that so, neither written by us:
 *   - a "call" gadget: a syscall instruction followed only by register
 *     clears and pops, then ret (the vdso and libc have them); a remote
 *     call runs there, and its ret lands on
 *   - a "return" gadget: mov $15,%rax; syscall (libc's __restore_rt, the
 *     signal trampoline every program that has a handler has).
 * Between remote calls the task waits at the return gadget.
 */
#ifndef CKPT_GUARD_H
#define CKPT_GUARD_H

#include <stdint.h>
#include <sys/types.h>

#include "../../proc.h"
#include "../../remote.h"

struct guard_gadgets {
	uint64_t call_ip;	/* syscall; ...; ret */
	uint32_t call_adj;	/* bytes popped off the stack before that ret */
	uint64_t ret_ip;	/* mov $15,%rax; syscall */
};

/* Find both gadgets in the executable mappings of @maps (read through
 * @memfd, /proc/PID/mem).  -ENOENT if the task lacks one. */
int guard_find(int memfd, const struct vma_list *maps, struct arch_cpt_cache *cache,
	       struct guard_gadgets *g);

/* Write the frame below the red zone of @r's stack, which must stay
 * above @stack_lo, and park the thread at the return gadget with every
 * signal blocked.  *@lowest gets the lowest byte the frame uses.
 * -ENOSPC (nothing changed) if the stack has no room for it. */
int guard_arm(struct remote *r, const struct guard_gadgets *g,
	      uint64_t stack_lo, uint64_t *lowest);

/* The same for a 32-bit task (guard32.c): its calls run at a page of
 * our code mapped for each thread as it is armed, unmapped by
 * guard32_unpage() before its release, or by itself if we die. */
struct guard32_gadgets {
	uint64_t int80_ip;	/* int $0x80; pop; pop; pop; ret */
	uint64_t ret_ip;	/* mov $173,%eax; int $0x80 */
};

int guard32_find(int memfd, const struct vma_list *maps, struct guard32_gadgets *g);
int guard32_arm(struct remote *r, const struct guard32_gadgets *g,
		uint64_t stack_lo, uint64_t *lowest);
int guard32_unpage(struct remote *r);

/* The page of arch_runner_map() (runner.c) unmapped, the task's way
 * back its frame's again; nothing if it has none. */
int arch_runner_unmap(struct remote *r);

/* Shared by both: the registers a frame returns to, with the kernel's
 * syscall restart applied to @ip and @ax; the FPU state as a signal
 * frame holds it, into @x (XSTATE_MAX bytes and more), *@size long. */
void guard_restart_fixup(const struct user_regs_struct *r, uint64_t *ip, uint64_t *ax);
int guard_fpstate(struct remote *r, uint8_t *x, uint32_t *size);

#endif
