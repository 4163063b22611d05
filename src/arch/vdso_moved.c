/* vdso_moved.c - the vdso and its data pages (vvar) at restart, for the
 * ports without a call that maps a vdso where asked (s390x, ppc64le:
 * ARCH_VDSO_MOVED): the puppet's own (ours, this kernel's) is moved where
 * the image had it, before the rest of what it inherited is unmapped.
 * x86 maps it where asked (src/arch/x86/vdso.c): nothing here. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kinds/mm.h"
#include "arch.h"

#if ARCH_VDSO_MOVED

static const char *area_name(uint32_t kind)
{
	return kind == VMA_VDSO ? "[vdso]" : "[vvar]";
}

static const struct vma *find_area(const struct vma_list *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].path, name))
			return &l->v[i];
	return NULL;
}

/* Each vdso and vvar area of the image is as big as ours. */
int vdso_check(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s)
{
	struct vma_list own = { 0 };
	int ret = proc_maps(getpid(), &own);

	if (ret)
		return log_err(c->log, -ret, "reading own maps:");
	for (int i = 0; i < s->nr && !ret; i++) {
		const struct rec_vma *v = &s->vmas[i].v;
		const struct vma *o;

		if (v->kind != VMA_VDSO && v->kind != VMA_VVAR)
			continue;
		o = find_area(&own, area_name(v->kind));
		if (!o || o->end - o->start != v->end - v->start)
			ret = log_err(c->log, ENOEXEC,
				      "the image's vdso layout differs from this kernel's (taken on another kernel?)");
	}
	vma_list_free(&own);
	return ret;
}

/* The puppet's vvar, then vdso, moved over where the image had them. */
int vdso_map(struct rst_task *t, const struct mm_state *s)
{
	struct vma_list now;
	int ret = remote_flush(&t->rm) ?: proc_maps(t->pid, &now);

	if (ret)
		return ret < 0 ? log_err(t->rm.log, -ret, "pid %d: reading maps:", t->pid) : ret;
	for (int k = 0; k < 2 && !ret; k++)
		for (int i = 0; i < s->nr && !ret; i++) {
			const struct rec_vma *v = &s->vmas[i].v;
			uint32_t kind = k ? VMA_VDSO : VMA_VVAR;
			const struct vma *o;

			if (v->kind != kind)
				continue;
			o = find_area(&now, area_name(kind));
			if (!o)
				ret = log_err(t->rm.log, ENOEXEC, "pid %d: the puppet has no %s",
					      t->pid, area_name(kind));
			else if (o->start != v->start)
				ret = rcheck(&t->rm, NULL, "mremap vdso", SYS_mremap, o->start,
					     v->end - v->start, v->end - v->start,
					     MREMAP_MAYMOVE | MREMAP_FIXED, v->start);
		}
	vma_list_free(&now);
	return ret;
}

#endif
