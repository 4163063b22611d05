/* kinds.c - the table of resource kinds, in dump and restore order. */
#include <errno.h>
#include <stdlib.h>

#include "kinds.h"

/* Order matters.  Dump: files before memory, so that an fd ckpt cannot
 * save fails the checkpoint before gigabytes are written.  Restore:
 * files and memory while the image fd is open in the puppet (phase
 * IMAGE), credentials after everything that needs privilege, registers
 * last of all. */
const struct kind_ops *const ckpt_kinds[] = {
	&kind_task,
	&kind_files,
	&kind_mm,
	&kind_fs,
	&kind_rlimits,
	&kind_timers,
	&kind_signals,
	&kind_creds,
	&kind_regs,
};
const int ckpt_nr_kinds = sizeof(ckpt_kinds) / sizeof(ckpt_kinds[0]);

int kind_index(const struct kind_ops *k)
{
	for (int i = 0; i < ckpt_nr_kinds; i++)
		if (ckpt_kinds[i] == k)
			return i;
	return -1;
}

const struct kind_ops *kind_for_type(uint32_t type)
{
	for (int i = 0; i < ckpt_nr_kinds; i++)
		for (int j = 0; ckpt_kinds[i]->types[j]; j++)
			if (ckpt_kinds[i]->types[j] == type)
				return ckpt_kinds[i];
	return NULL;
}

void *kind_state(struct rst_task *t, const struct kind_ops *k, size_t size)
{
	int i = kind_index(k);

	if (!t->kind_state[i])
		t->kind_state[i] = calloc(1, size);
	return t->kind_state[i];
}

int cpt_scratch_put(struct cpt_task *t, const void *p, size_t n, uint64_t *addr)
{
	if (n > t->scratch_len)
		return -E2BIG;
	*addr = t->scratch;
	return p ? remote_write(&t->rm, t->scratch, p, n) : 0;
}

int rst_scratch_put(struct rst_task *t, size_t off, const void *p, size_t n,
		    uint64_t *addr)
{
	if (off > t->scratch_len || n > t->scratch_len - off)
		return log_err(t->rm.log, E2BIG, "scratch area overflow");
	*addr = t->scratch + off;
	return p ? remote_write(&t->rm, *addr, p, n) : 0;
}
