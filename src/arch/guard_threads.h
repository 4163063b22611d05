/* guard_threads.h - the loop every port's arch_guard_task() ends in:
 * each thread of a task given its guard frame by the port's @arm, or
 * held unguarded where it cannot have one. */
#ifndef CKPT_GUARD_THREADS_H
#define CKPT_GUARD_THREADS_H

#include <stdint.h>

#include "../ctx.h"

/* The port's frame for one thread (@arg: its gadgets), which must stay
 * above @stack_lo; *@low gets the lowest byte it uses.  -ENOSPC,
 * -ENOENT or -EPERM: this thread is held unguarded instead (the port
 * logs why, where it is not just room). */
typedef int guard_arm_fn(struct cpt_ctx *c, struct remote *rm, const void *arg,
			 uint64_t stack_lo, uint64_t *low);

/* Every thread of @t guarded by @arm (@found: 0 if the gadgets were
 * found, else every thread is held unguarded) and requeued; the remote
 * calls' scratch goes below the main thread's frame where there is
 * room: *@lowest is where that frame starts (0: none). */
int guard_threads(struct cpt_ctx *c, struct cpt_task *t, int found, guard_arm_fn *arm,
		  const void *arg, uint64_t *lowest);

#endif
