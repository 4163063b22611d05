/* vdso.c - the vdso and its data pages (vvar) at restart.  They are not
 * saved: the kernel maps its own (ARCH_MAP_VDSO_*), which must be laid
 * out as the image's were, since the process holds pointers into them
 * (its libc found its functions there, its signal frames return there).
 * The areas themselves are VMA records of kind VMA_VDSO and VMA_VVAR
 * (src/kinds/mm_dump.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"
#include "../../kinds/mm.h"
#include "../arch.h"

#define ARCH_MAP_VDSO_64	0x2003
#define ARCH_MAP_VDSO_32	0x2002

/* The vdso and its data pages come from this kernel: their layout here
 * (ours, or a 32-bit process's for one) must be the one the image had. */
int vdso_check(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s)
{
	struct vma_list own = { 0 };
	const struct vma_list *ref = &own;
	int i = 0, j = 0, ret;

	while (i < s->nr && s->vmas[i].v.kind != VMA_VVAR &&
	       s->vmas[i].v.kind != VMA_VDSO)
		i++;
	if (i == s->nr)
		return 0;
	ret = task_ia32(t) ? ia32_vdso_layout(c, &ref) : proc_maps(getpid(), &own);
	if (ret)
		return task_ia32(t) ? ret : log_err(c->log, -ret, "reading own maps:");
	while (j < ref->n && strcmp(ref->v[j].path, "[vvar]") &&
	       strcmp(ref->v[j].path, "[vdso]"))
		j++;
	for (; i < s->nr && (s->vmas[i].v.kind == VMA_VVAR ||
			     s->vmas[i].v.kind == VMA_VDSO); i++, j++) {
		const struct rst_vma *v = &s->vmas[i];

		if (j >= ref->n || ref->v[j].end - ref->v[j].start !=
				   v->v.end - v->v.start ||
		    (i && s->vmas[i - 1].v.end != v->v.start &&
		     s->vmas[i - 1].v.kind >= VMA_VDSO)) {
			ret = log_err(c->log, ENOEXEC,
				      "the image's vdso layout differs from this kernel's (taken on another kernel?)");
			break;
		}
	}
	vma_list_free(&own);
	return ret;
}

/* Every vvar and vdso area of the image is where, and as big as, the
 * kernel put it. */
static bool vdso_placed(const struct mm_state *s, const struct vma_list *now)
{
	for (int i = 0; i < s->nr; i++) {
		const struct rec_vma *v = &s->vmas[i].v;
		bool found = false;

		if (v->kind != VMA_VVAR && v->kind != VMA_VDSO)
			continue;
		for (int j = 0; j < now->n && !found; j++)
			found = now->v[j].start == v->start && now->v[j].end == v->end;
		if (!found)
			return false;
	}
	return true;
}

/* A 32-bit process gets the 32-bit vdso: its signal return code, its
 * int $0x80. */
int vdso_map(struct rst_task *t, const struct mm_state *s)
{
	bool ia32 = task_ia32(t);
	struct vma_list now;
	uint64_t base = 0, vdso = 0;
	bool placed;
	int ret;

	for (int i = 0; i < s->nr; i++) {
		if (s->vmas[i].v.kind == VMA_VVAR && !base)
			base = s->vmas[i].v.start;
		if (s->vmas[i].v.kind == VMA_VDSO)
			vdso = s->vmas[i].v.start;
	}
	if (!vdso)
		return 0;
	ret = rcheck(&t->rm, NULL, ia32 ? "arch_prctl(ARCH_MAP_VDSO_32)"
					: "arch_prctl(ARCH_MAP_VDSO_64)",
		     SYS_arch_prctl, ia32 ? ARCH_MAP_VDSO_32 : ARCH_MAP_VDSO_64,
		     base ? base : vdso);
	/* (made, if queued in a batch, before its maps are read) */
	ret = ret ?: remote_flush(&t->rm);
	if (ret)
		return ret;
	ret = proc_maps(t->pid, &now);
	if (ret)
		return log_err(t->rm.log, -ret, "pid %d: reading maps:", t->pid);
	placed = vdso_placed(s, &now);
	vma_list_free(&now);
	if (!placed)
		return log_err(t->rm.log, ENOEXEC,
			       "pid %d: the vdso could not be placed at 0x%llx as saved",
			       t->pid, (unsigned long long)vdso);
	return 0;
}
