/* guard_threads.c - every thread of a task guarded or held (see
 * guard_threads.h); the ports differ in their frames, not in this. */
#include <errno.h>

#include "arch.h"
#include "guard_threads.h"

static const struct vma *vma_of(const struct vma_list *m, uint64_t addr)
{
	for (int i = 0; i < m->n; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			return &m->v[i];
	return NULL;
}

int guard_threads(struct cpt_ctx *c, struct cpt_task *t, int found, guard_arm_fn *arm,
		  const void *arg, uint64_t *lowest)
{
	*lowest = 0;
	for (int i = 0; i < t->nr_threads; i++) {
		struct remote *rm = t->threads[i].rm;
		const struct vma *v = vma_of(&t->maps, arch_sp(&rm->regs) - 1);
		uint64_t low = 0;
		int r = found || !v ? -ENOENT : arm(c, rm, arg, v->start, &low);

		if (r == -ENOSPC || r == -ENOENT || r == -EPERM) {
			if (!found && r != -EPERM)	/* (-EPERM: @arm said why) */
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
