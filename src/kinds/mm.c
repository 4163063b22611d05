/* mm.c - the address space: every memory area (VMA), the pages that
 * exist in it, the vdso, and the mm fields (code/data/brk/stack/args/env
 * bounds, auxv, exe link).
 *
 * Which pages are saved: private anonymous areas, the pages that exist
 * (present or swapped, per /proc/PID/pagemap); private file areas, only
 * pages that were written (anonymous copies), the rest comes from the
 * file, which must be unchanged at restart; shared anonymous areas, the
 * pages the shmem object holds (SEEK_DATA on /proc/PID/map_files);
 * shared file areas, nothing: their content is the file.  A memfd or a
 * deleted file has its content saved as an object of its own
 * (src/files/fobj.c, found through map_files if no fd has it): its areas
 * name it and map it again, shared areas saving nothing more, private
 * ones their written pages.  A SysV shared memory area names its
 * segment (src/kinds/sysvshm.c), which holds the content.
 *
 * The kind's parts: mm_dump.c (checkpoint), mm_load.c (restart: the
 * records checked into the model, and against this machine),
 * mm_restore.c (the puppet's address space rebuilt), the vdso in
 * arch/x86/vdso.c; here the table, `ckpt info`, and the saved layout
 * that restart's own mappings keep clear of (areas()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "../model.h"
#include "mm.h"

/* The saved layout, which restart's own mappings keep clear of. */
static int mm_areas(struct rst_ctx *c, struct rst_task *t, struct spans *l)
{
	struct mm_state *s = KSTATE(t, kind_mm);
	int ret = 0;

	for (int i = 0; s && i < s->nr && !ret; i++)
		ret = spans_add(l, s->vmas[i].v.start, s->vmas[i].v.end);
	for (int i = 0; s && i < s->nr_aio && !ret; i++)
		ret = spans_add(l, s->aio[i]->addr, s->aio[i]->addr + s->aio[i]->len);
	return ret;
}

static void mm_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_MM) {
		const struct rec_mm *m = r->data;

		info_hex(o, "start_code", m->start_code);
		info_hex(o, "end_code", m->end_code);
		info_hex(o, "start_brk", m->start_brk);
		info_hex(o, "brk", m->brk);
		info_hex(o, "start_stack", m->start_stack);
		info_u64(o, "auxv_bytes", m->auxv_len);
		if (m->exe_len && r->data_len >= sizeof(*m) + m->auxv_len + m->exe_len)
			info_str(o, "exe", rec_str(r, sizeof(*m) + m->auxv_len,
						   m->exe_len) ?: "?");
	} else if (r->type == REC_VMA) {
		const struct rec_vma *v = r->data;
		static const char *kinds[] = { "?", "anon", "file", "vdso", "vvar",
					       "noname", "sysv" };
		char prot[5] = "---p";

		prot[0] = v->prot & PROT_READ ? 'r' : '-';
		prot[1] = v->prot & PROT_WRITE ? 'w' : '-';
		prot[2] = v->prot & PROT_EXEC ? 'x' : '-';
		prot[3] = v->flags & MAP_SHARED ? 's' : 'p';
		info_hex(o, "start", v->start);
		info_hex(o, "end", v->end);
		info_str(o, "prot", prot);
		info_str(o, "kind", v->kind == VMA_PACKET ? "packet" :
				    kinds[v->kind < 7 ? v->kind : 0]);
		if (v->shm_id)
			info_u64(o, "object", v->shm_id);
		info_hex(o, "pgoff", v->pgoff);
		if (v->path_len > 1 && r->data_len >= sizeof(*v) + v->path_len)
			info_str(o, "path", rec_str(r, sizeof(*v), v->path_len) ?: "?");
	} else if (r->type == REC_PARENT) {
		const struct rec_parent *p = r->data;

		info_str(o, "path", rec_str(r, sizeof(*p), p->path_len) ?: "?");
		info_u64(o, "size", p->size);
		info_u64(o, "records", p->nr_records);
		info_hex(o, "chain", p->chain);
		info_u64(o, "time_ns", p->time_ns);
	} else if (r->type == REC_MM_TRACK) {
		const struct rec_mm_track *m = r->data;

		info_u64(o, "fd", m->fd);
		info_u64(o, "ino", m->ino);
	} else if (r->type == REC_PAGES_REF || r->type == REC_PAGES_PARENT ||
		   r->type == REC_PAGES_AT) {
		const struct rec_pages_ref *p = r->data;

		info_hex(o, "vma", p->vma_start);
		info_u64(o, "parent_pages", p->npages);
		info_u64(o, "runs", p->nr_runs);
	} else if (r->type == REC_AIO) {
		const struct rec_aio *a = r->data;

		info_hex(o, "ring", a->addr);
		info_u64(o, "bytes", a->len);
		info_u64(o, "events", a->nr);
		info_u64(o, "head", a->head);
		info_u64(o, "tail", a->tail);
	} else if (r->type == REC_VMA_GUARDS) {
		const struct rec_vma_guards *g = r->data;

		info_hex(o, "vma", g->vma_start);
		info_u64(o, "guard_pages", g->npages);
		info_u64(o, "runs", g->nr_runs);
	} else {
		const struct rec_pages *p = r->data;

		info_hex(o, "vma", p->vma_start);
		info_u64(o, "pages", p->npages);
		info_u64(o, "runs", p->nr_runs);
		info_u64(o, "data_offset", r->off + sizeof(*p) +
			 p->nr_runs * sizeof(struct rec_pages_run) + p->pad_len);
	}
}

static const struct rec_desc mm_recs[] = {
	{ REC_MM, "MM", sizeof(struct rec_mm) },
	{ REC_VMA, "VMA", sizeof(struct rec_vma) },
	{ REC_PAGES, "PAGES", sizeof(struct rec_pages) },
	{ REC_PAGES_REF, "PAGES_REF", sizeof(struct rec_pages_ref) },
	{ REC_VMA_GUARDS, "VMA_GUARDS", sizeof(struct rec_vma_guards) },
	{ REC_AIO, "AIO", sizeof(struct rec_aio) },
	{ REC_PARENT, "PARENT", sizeof(struct rec_parent) },
	{ REC_PAGES_PARENT, "PAGES_PARENT", sizeof(struct rec_pages_ref) },
	{ REC_MM_TRACK, "MM_TRACK", sizeof(struct rec_mm_track) },
	{ REC_PAGES_AT, "PAGES_AT", sizeof(struct rec_pages_ref) },
	{ 0 }
};

const struct kind_ops kind_mm = {
	.name = "mm",
	.recs = mm_recs,
	.phase = PHASE_IMAGE,
	.dump = mm_dump,		/* mm_dump.c */
	.dump_begin = mm_track_begin,	/* mm_track.c */
	.hold = mm_track_hold,
	.dump_end = mm_track_end,
	.dump_check = mm_dump_check,
	.dump_size = sizeof(struct mm_cpt),
	.dump_free = mm_dump_free,
	.load = mm_load,		/* mm_load.c */
	.check = mm_check,
	.restore = mm_restore,		/* mm_restore.c */
	.fork_prepare = mm_fork_prepare,
	.areas = mm_areas,
	.free = mm_free,
	.free_ctx = mm_free_ctx,
	.show = mm_show,
};
