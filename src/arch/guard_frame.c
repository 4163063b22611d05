/* guard_frame.c - every thread of a task guarded, for the ports whose
 * calls return through a register (ARCH_GUARD_FRAME: s390x, ppc64le;
 * guard_frame.h).  x86's is its prepare.c, with its 32-bit tasks. */
#define _GNU_SOURCE
#include <errno.h>

#include "../ctx.h"
#include "arch.h"

#if ARCH_GUARD_FRAME
#include "guard_frame.h"

static const struct vma *vma_of(const struct vma_list *m, uint64_t addr)
{
	for (int i = 0; i < m->n; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			return &m->v[i];
	return NULL;
}

/* Before anything of the task is changed: every thread gets its guard
 * frame and has its signals blocked; the signals we caught in delivery
 * go back to the kernel.  The remote calls' scratch goes below the main
 * thread's frame where there is room; *@lowest is where that frame
 * starts (0: none).  A thread with no room for one, or a task without
 * the gadgets, is held unguarded, as -v says. */
int arch_guard_task(struct cpt_ctx *c, struct cpt_task *t, uint64_t *lowest)
{
	struct guard_gadgets g;
	int ret = guard_find(t->rm.memfd, &t->maps, &g);

	*lowest = 0;
	if (ret == -ENOMEM)
		return log_err(c->log, ENOMEM, "pid %d: finding gadgets:", t->pid);
	if (ret)
		log_info(c->log, "pid %d: unguarded (no call/rt_sigreturn gadgets): a ckpt killed now could harm it",
			 t->pid);
	else
		log_info(c->log, "pid %d: guarded: calls at 0x%llx, rt_sigreturn at 0x%llx",
			 t->pid, (unsigned long long)g.call_ip, (unsigned long long)g.ret_ip);
	for (int i = 0; i < t->nr_threads; i++) {
		struct remote *rm = t->threads[i].rm;
		const struct vma *v = vma_of(&t->maps, arch_sp(&rm->regs) - 1);
		uint64_t low = 0;
		int r = ret || !v ? -ENOENT : guard_arm(rm, &g, v->start, &low);

		if (r == -ENOSPC || r == -ENOENT) {
			if (!ret)
				log_info(c->log, "tid %d: no room for a guard frame: unguarded",
					 rm->pid);
			r = remote_block(rm);
		}
		if (!r && i == 0 && rm->guarded && low - SCRATCH_LEN >= v->start + 4096)
			*lowest = low;
		if (!r)
			r = remote_requeue(rm);
		if (r)
			return r;
	}
	return 0;
}

int arch_unguard(struct remote *rm)
{
	(void)rm;
	return 0;
}

void arch_cpt_cache_free(struct arch_cpt_cache *cache)
{
	(void)cache;
}

#endif
