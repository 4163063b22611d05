/* mm_load.c - the address space at restart, before any process exists:
 * each MM, VMA, PAGES and PAGES_REF record checked into the model
 * (struct mm_state, mm.h), pages resolved to where they are in the image
 * (a child's PAGES_REF to its parent's PAGES), and checked against this
 * machine: the executable, the mapped files unchanged, the vdso.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../files.h"
#include "../files/packet.h"
#include "mm.h"
#include "mntns.h"
#include "sysvshm.h"
#include "../page.h"

#define MAX_VMAS	(1 << 20)
#define MAX_RUNS	(1 << 22)

/* ---- load and validate ---- */

static struct mm_state *mm_st(struct rst_task *t)
{
	return kind_state(t, &kind_mm, sizeof(struct mm_state));
}

static int load_mm(struct rst_ctx *c, struct mm_state *s, struct rec *r)
{
	const struct rec_mm *m = r->data;
	int ret = rec_want(c->log, r, sizeof(*m), "MM");

	if (ret)
		return ret;
	if (s->have_mm)
		return log_err(c->log, EBADMSG, "more than one MM record");
	if (m->auxv_len > 1024 || m->auxv_len % 16 ||
	    r->data_len != sizeof(*m) + m->auxv_len + m->exe_len)
		return log_err(c->log, EBADMSG, "MM record: bad auxv/exe lengths");
	s->exe = rec_str(r, sizeof(*m) + m->auxv_len, m->exe_len);
	if (!s->exe || s->exe[0] != '/')
		return log_err(c->log, EBADMSG, "MM record: bad exe path");
	s->mm = *m;
	s->auxv = (const uint8_t *)r->data + sizeof(*m);
	s->have_mm = true;
	return 0;
}

/* The first area of each shared anonymous object (struct shm_first). */
struct shm_table {
	struct shm_first *e;
	int n;
	size_t cap;
	struct id_table ids;	/* index in e, by id */
};

static int shm_note(struct rst_ctx *c, pid_t pid, const struct rec_vma *v)
{
	struct shm_table *st = kind_ctx_state(c, &kind_mm, sizeof(*st));
	long i = st ? id_find(&st->ids, v->shm_id) : -1;

	if (!st)
		return log_err(c->log, ENOMEM, "shared memory table:");
	if (i >= 0) {
		struct shm_first *f = &st->e[i];
		uint64_t end = f->base + f->size, vend = v->pgoff + (v->end - v->start);

		if (v->pgoff > UINT64_MAX - (v->end - v->start))
			return log_err(c->log, EBADMSG, "shared memory %u: bad offset", v->shm_id);
		f->base = v->pgoff < f->base ? v->pgoff : f->base;
		f->size = (vend > end ? vend : end) - f->base;
		f->tasks |= f->pid != pid;
		return 0;
	}
	if (v->pgoff > UINT64_MAX - (v->end - v->start))
		return log_err(c->log, EBADMSG, "shared memory %u: bad offset", v->shm_id);
	if (VEC_ROOM(st->e, st->n, st->cap) || id_add(&st->ids, v->shm_id, st->n))
		return log_err(c->log, ENOMEM, "shared memory table:");
	st->e[st->n++] = (struct shm_first){ v->shm_id, pid, v->start, v->end, v->pgoff,
					     v->pgoff, v->end - v->start, false, false, -1, 0 };
	return 0;
}

static struct shm_first *shm_lookup(const struct rst_ctx *c, uint32_t id)
{
	struct shm_table *st = KCSTATE(c, kind_mm);
	long i = st ? id_find(&st->ids, id) : -1;

	return i < 0 ? NULL : &st->e[i];
}

const struct shm_first *mm_shm_first(const struct rst_ctx *c, uint32_t id)
{
	return shm_lookup(c, id);
}

struct shm_first *mm_shm_first_rw(struct rst_ctx *c, uint32_t id)
{
	return shm_lookup(c, id);
}

void mm_shm_mark(struct rst_ctx *c, bool (*eager)(const struct rst_vma *v))
{
	struct shm_table *st = KCSTATE(c, kind_mm);

	for (int i = 0; st && i < c->nr_tasks; i++) {
		const struct mm_state *s = mm_st(c->tasks[i]);

		for (int j = 0; s && j < s->nr; j++) {
			const struct rst_vma *v = &s->vmas[j];
			long k = v->v.shm_id && v->v.kind == VMA_ANON ?
				 id_find(&st->ids, v->v.shm_id) : -1;

			if (k >= 0 && eager(v))
				st->e[k].eager = true;
		}
	}
}

void mm_free_ctx(void *state)
{
	struct shm_table *st = state;

	for (int i = 0; i < st->n; i++)
		if (st->e[i].ctl >= 0)
			close(st->e[i].ctl);
	free(st->e);
	id_table_free(&st->ids);
	free(st);
}

/* Shared, inside a segment the image has (bounds before the sum). */
static bool sysv_area_fits(struct rst_ctx *c, const struct rec_vma *v)
{
	uint64_t seglen;

	return (v->flags & MAP_SHARED) && !(v->flags & MAP_GROWSDOWN) &&
	       !sysv_seg_len(c, v->shm_id, &seglen) && v->pgoff <= seglen &&
	       v->end - v->start <= seglen - v->pgoff;
}

static int load_vma(struct rst_ctx *c, struct rst_task *t, struct mm_state *s,
		    struct rec *r)
{
	const struct rec_vma *v = r->data;
	struct rst_vma *nv;
	int ret = rec_want(c->log, r, sizeof(*v), "VMA");

	if (ret)
		return ret;
	if (v->start >= v->end || v->end > TASK_SIZE_64 || v->start % PAGE ||
	    v->end % PAGE || v->pgoff % PAGE || v->prot & ~7u ||
	    v->flags & ~(uint32_t)(MAP_SHARED | MAP_PRIVATE | MAP_GROWSDOWN) ||
	    !!(v->flags & MAP_SHARED) == !!(v->flags & MAP_PRIVATE) ||
	    v->kind < VMA_ANON || (v->kind > VMA_SYSV && v->kind != VMA_PACKET) ||
	    v->madv & ~VMA_MADV_ALL || (v->kind == VMA_PACKET && !v->shm_id) ||
	    ((v->madv & VMA_DROPPABLE) &&
	     (v->kind != VMA_ANON || (v->flags & (MAP_SHARED | MAP_GROWSDOWN)))) ||
	    (v->shm_id && v->kind != VMA_NONAME && v->kind != VMA_SYSV &&
	     v->kind != VMA_PACKET &&
	     (v->kind != VMA_ANON || !(v->flags & MAP_SHARED))) ||
	    (v->kind == VMA_NONAME && fobj_kind(c, v->shm_id) == 0) ||
	    (v->kind == VMA_SYSV && !sysv_area_fits(c, v)) ||
	    r->data_len != sizeof(*v) + v->path_len)
		return log_err(c->log, EBADMSG,
			       "VMA record %llu: bad area 0x%llx-0x%llx",
			       (unsigned long long)r->index,
			       (unsigned long long)v->start,
			       (unsigned long long)v->end);
	if ((s->nr && s->vmas[s->nr - 1].v.end > v->start) || v->start < s->aio_end)
		return log_err(c->log, EBADMSG, "VMA 0x%llx overlaps or is out of order",
			       (unsigned long long)v->start);
	if (s->nr == MAX_VMAS)
		return log_err(c->log, EBADMSG, "too many VMA records");
	if (s->nr == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		nv = realloc(s->vmas, s->cap * sizeof(*nv));
		if (!nv)
			return log_err(c->log, ENOMEM, "VMA table:");
		s->vmas = nv;
	}
	nv = &s->vmas[s->nr];
	memset(nv, 0, sizeof(*nv));
	nv->v = *v;
	if (v->shm_id && v->kind == VMA_ANON) {
		int ret2 = shm_note(c, t->pid, v);

		if (ret2)
			return ret2;
	}
	nv->path = rec_str(r, sizeof(*v), v->path_len);
	if (!nv->path || ((v->kind == VMA_FILE || v->kind == VMA_NONAME) &&
			  nv->path[0] != '/') ||
	    (v->kind == VMA_SYSV && strncmp(nv->path, "/SYSV", 5)) ||
	    (v->kind == VMA_PACKET && strncmp(nv->path, "socket:[", 8)))
		return log_err(c->log, EBADMSG, "VMA 0x%llx: bad path",
			       (unsigned long long)v->start);
	s->nr++;
	return 0;
}

static int segs_add(struct rst_vma *v, uint64_t addr, uint64_t npages,
		    uint64_t off, bool ref, uint32_t file)
{
	if (v->nr_segs >= MAX_RUNS * 2)
		return -E2BIG;
	if (VEC_ROOM(v->segs, v->nr_segs, v->cap_segs))
		return -ENOMEM;
	v->segs[v->nr_segs++] = (struct page_seg){ addr, npages, off, ref, file };
	v->pages_len += npages * PAGE;
	return 0;
}

/* Runs sorted, page-aligned, non-empty, inside the area, apart. */
static int check_runs(struct rst_ctx *c, const struct rst_vma *v,
		      const struct rec_pages_run *run, uint32_t n,
		      uint64_t *total)
{
	uint64_t next = 0;

	*total = 0;
	for (uint32_t i = 0; i < n; i++) {
		/* addr < end first: the division below must not wrap */
		if (run[i].addr % PAGE || run[i].addr < v->v.start ||
		    run[i].addr >= v->v.end || run[i].addr < next ||
		    run[i].npages == 0 ||
		    run[i].npages > (v->v.end - run[i].addr) / PAGE)
			return log_err(c->log, EBADMSG,
				       "PAGES 0x%llx: run %u out of its area",
				       (unsigned long long)v->v.start, i);
		next = run[i].addr + run[i].npages * PAGE;
		*total += run[i].npages;
	}
	return 0;
}

static struct rst_vma *last_vma(struct rst_ctx *c, struct mm_state *s,
				const struct rec *r, uint64_t start)
{
	struct rst_vma *v = s->nr ? &s->vmas[s->nr - 1] : NULL;

	/* a shared memfd's or deleted file's pages are its FILE_DATA */
	if (!v || v->have_refs || v->guards || v->v.start != start ||
	    (r->type == REC_PAGES && v->have_pages) ||
	    v->v.kind == VMA_VDSO || v->v.kind == VMA_VVAR || v->v.kind == VMA_SYSV ||
	    v->v.kind == VMA_PACKET ||
	    (v->v.kind == VMA_NONAME && (v->v.flags & MAP_SHARED))) {
		log_err(c->log, EBADMSG, "%s record %llu does not follow its VMA",
			rec_type_name(r->type), (unsigned long long)r->index);
		return NULL;
	}
	return v;
}

static int load_pages(struct rst_ctx *c, struct mm_state *s, struct rec *r)
{
	const struct rec_pages *ph = r->data;
	const struct rec_pages_run *run = (const void *)(ph + 1);
	struct rst_vma *v = last_vma(c, s, r, ph->vma_start);
	uint64_t head = sizeof(*ph) + ph->nr_runs * sizeof(*run), total;
	uint64_t off;
	int ret;

	if (!v)
		return -EBADMSG;
	if (ph->pad_len >= PAGE || ph->nr_runs == 0 || ph->nr_runs > MAX_RUNS)
		return log_err(c->log, EBADMSG, "PAGES 0x%llx: bad header",
			       (unsigned long long)ph->vma_start);
	ret = check_runs(c, v, run, ph->nr_runs, &total);
	if (ret)
		return ret;
	if (total != ph->npages ||
	    r->len != head + ph->pad_len + total * PAGE)
		return log_err(c->log, EBADMSG, "PAGES 0x%llx: sizes do not add up",
			       (unsigned long long)ph->vma_start);
	v->have_pages = true;
	off = r->off + head + ph->pad_len;
	for (uint32_t i = 0; i < ph->nr_runs && !ret; i++) {
		ret = segs_add(v, run[i].addr, run[i].npages, off, false, 0);
		off += run[i].npages * PAGE;
	}
	return ret ? log_err(c->log, -ret, "PAGES 0x%llx:",
			     (unsigned long long)ph->vma_start) : 0;
}

static const struct page_seg *seg_at(const struct rst_vma *v, uint64_t addr)
{
	uint32_t lo = 0, hi = v ? v->nr_segs : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct page_seg *g = &v->segs[mid];

		if (g->addr + g->npages * PAGE <= addr)
			lo = mid + 1;
		else if (g->addr > addr)
			hi = mid;
		else
			return g;
	}
	return NULL;
}

static const struct rst_vma *vma_starting_at(const struct mm_state *s,
					     uint64_t start)
{
	for (int i = 0; s && i < s->nr; i++)
		if (s->vmas[i].v.start == start)
			return &s->vmas[i];
	return NULL;
}

/* Each run of the parent's pages, resolved to where the parent's own
 * copy is in the image (which may itself be its parent's). */
static int resolve_refs(struct rst_ctx *c, struct rst_vma *v,
			const struct rst_vma *pv, const struct rec_pages_run *run,
			uint32_t n)
{
	int ret = 0;

	for (uint32_t i = 0; i < n && !ret; i++) {
		uint64_t a = run[i].addr, end = a + run[i].npages * PAGE;

		while (a < end && !ret) {
			const struct page_seg *g = seg_at(pv, a);
			uint64_t gend, k;

			if (!g)
				return log_err(c->log, EBADMSG,
					       "PAGES_REF: page 0x%llx is not in the parent's image",
					       (unsigned long long)a);
			gend = g->addr + g->npages * PAGE;
			k = ((gend < end ? gend : end) - a) / PAGE;
			ret = segs_add(v, a, k, g->off + (a - g->addr), true, g->file);
			a += k * PAGE;
		}
	}
	return ret ? log_err(c->log, -ret, "PAGES_REF:") : 0;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct page_seg *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_pages_ref(struct rst_ctx *c, struct rst_task *t,
			  struct mm_state *s, struct rec *r)
{
	const struct rec_pages_ref *h = r->data;
	const struct rec_pages_run *run = (const void *)(h + 1);
	struct rst_task *par = NULL;
	const struct rst_vma *pv;
	struct rst_vma *v;
	uint64_t total;
	int ret = rec_want(c->log, r, sizeof(*h), "PAGES_REF");

	if (ret)
		return ret;
	v = last_vma(c, s, r, h->vma_start);
	if (!v)
		return -EBADMSG;
	if (h->reserved || h->nr_runs == 0 || h->nr_runs > MAX_RUNS ||
	    r->data_len != sizeof(*h) + (uint64_t)h->nr_runs * sizeof(*run) ||
	    (v->v.flags & MAP_SHARED))
		return log_err(c->log, EBADMSG, "PAGES_REF 0x%llx: bad header",
			       (unsigned long long)h->vma_start);
	ret = check_runs(c, v, run, h->nr_runs, &total);
	if (ret)
		return ret;
	if (total != h->npages)
		return log_err(c->log, EBADMSG, "PAGES_REF 0x%llx: sizes do not add up",
			       (unsigned long long)h->vma_start);
	for (int i = 0; i < c->nr_tasks && !par; i++)
		if (c->tasks[i]->pid == (pid_t)t->t.ppid && c->tasks[i] != t)
			par = c->tasks[i];
	pv = par ? vma_starting_at(KSTATE(par, kind_mm), v->v.start) : NULL;
	ret = resolve_refs(c, v, pv, run, h->nr_runs);
	if (ret)
		return ret;
	v->have_refs = true;
	if (v->nr_segs)
		qsort(v->segs, v->nr_segs, sizeof(*v->segs), seg_cmp);
	for (uint32_t i = 1; i < v->nr_segs; i++)
		if (v->segs[i].addr < v->segs[i - 1].addr + v->segs[i - 1].npages * PAGE)
			return log_err(c->log, EBADMSG,
				       "PAGES_REF 0x%llx: pages saved twice",
				       (unsigned long long)h->vma_start);
	return 0;
}

/* The guard pages of the last VMA: after its pages, once. */
static int load_guards(struct rst_ctx *c, struct mm_state *s, struct rec *r)
{
	const struct rec_vma_guards *h = r->data;
	const struct rec_pages_run *run = (const void *)(h + 1);
	struct rst_vma *v = s->nr ? &s->vmas[s->nr - 1] : NULL;
	uint64_t total;
	int ret = rec_want(c->log, r, sizeof(*h), "VMA_GUARDS");

	if (ret)
		return ret;
	if (!v || v->v.start != h->vma_start || v->guards ||
	    v->v.kind == VMA_VDSO || v->v.kind == VMA_VVAR)
		return log_err(c->log, EBADMSG, "VMA_GUARDS record %llu does not follow its VMA",
			       (unsigned long long)r->index);
	if (h->reserved || h->nr_runs == 0 || h->nr_runs > MAX_RUNS ||
	    r->data_len != sizeof(*h) + (uint64_t)h->nr_runs * sizeof(*run))
		return log_err(c->log, EBADMSG, "VMA_GUARDS 0x%llx: bad header",
			       (unsigned long long)h->vma_start);
	ret = check_runs(c, v, run, h->nr_runs, &total);
	if (ret)
		return ret;
	if (total != h->npages)
		return log_err(c->log, EBADMSG, "VMA_GUARDS 0x%llx: sizes do not add up",
			       (unsigned long long)h->vma_start);
	v->guards = run;
	v->nr_guards = h->nr_runs;
	return 0;
}

/* An incremental image's own records.  Restart reads the chain
 * assembled (chain.c), without them: one here is `ckpt info`'s, or a
 * forged image's. */
static int load_parent(struct rst_ctx *c, struct mm_state *s, struct rec *r)
{
	const struct rec_parent *p = r->data;
	int ret = rec_want(c->log, r, sizeof(*p), "PARENT");

	if (ret)
		return ret;
	if (!(c->head.flags & CKPT_PARENT) || s->have_mm ||
	    p->path_len < 2 ||
	    p->path_len > 4096 || r->data_len != sizeof(*p) + p->path_len ||
	    !rec_str(r, sizeof(*p), p->path_len) || p->size == 0)
		return log_err(c->log, EBADMSG, "PARENT record %llu: bad",
			       (unsigned long long)r->index);
	if (c->here)
		return log_err(c->log, EBADMSG, "PARENT record %llu in an image read without its chain",
			       (unsigned long long)r->index);
	s->parent_rec = true;
	return 0;
}

static int load_pages_parent(struct rst_ctx *c, struct mm_state *s, struct rec *r)
{
	const struct rec_pages_ref *h = r->data;
	const struct rec_pages_run *run = (const void *)(h + 1);
	struct rst_vma *v;
	uint64_t total;
	int ret = rec_want(c->log, r, sizeof(*h), "PAGES_PARENT");

	if (ret)
		return ret;
	v = last_vma(c, s, r, h->vma_start);
	if (!v)
		return -EBADMSG;
	if (!(c->head.flags & CKPT_PARENT) || h->reserved || h->nr_runs == 0 ||
	    h->nr_runs > MAX_RUNS || v->have_pages ||
	    r->data_len != sizeof(*h) + (uint64_t)h->nr_runs * sizeof(*run) ||
	    (v->v.flags & MAP_SHARED))
		return log_err(c->log, EBADMSG, "PAGES_PARENT 0x%llx: bad header",
			       (unsigned long long)h->vma_start);
	ret = check_runs(c, v, run, h->nr_runs, &total);
	if (ret)
		return ret;
	if (total != h->npages)
		return log_err(c->log, EBADMSG, "PAGES_PARENT 0x%llx: sizes do not add up",
			       (unsigned long long)h->vma_start);
	if (c->here)
		return log_err(c->log, EBADMSG, "PAGES_PARENT 0x%llx in an image read without its chain",
			       (unsigned long long)h->vma_start);
	return 0;
}

static int seg_cmp(const void *a, const void *b);

/* Sorted by address, apart. */
static int segs_sort(struct rst_ctx *c, struct rst_vma *v, const char *what)
{
	if (v->nr_segs)
		qsort(v->segs, v->nr_segs, sizeof(*v->segs), seg_cmp);
	for (uint32_t i = 1; i < v->nr_segs; i++)
		if (v->segs[i].addr < v->segs[i - 1].addr + v->segs[i - 1].npages * PAGE)
			return log_err(c->log, EBADMSG, "%s 0x%llx: pages saved twice", what,
				       (unsigned long long)v->v.start);
	return 0;
}

/* Each run's pages inside its parent image's file. */
static int check_at(struct rst_ctx *c, const struct rst_vma *v,
		    const struct rec_pages_at *at, uint32_t n, uint64_t *total)
{
	uint64_t next = 0;

	*total = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct stat st;

		if (at[i].addr % PAGE || at[i].addr < v->v.start || at[i].addr >= v->v.end ||
		    at[i].addr < next || at[i].npages == 0 ||
		    at[i].npages > (v->v.end - at[i].addr) / PAGE || at[i].reserved ||
		    at[i].file == 0 || at[i].file > (uint32_t)c->nr_chain ||
		    fstat(c->chain_fd[at[i].file - 1], &st) ||
		    at[i].off > (uint64_t)st.st_size ||
		    at[i].npages > ((uint64_t)st.st_size - at[i].off) / PAGE)
			return log_err(c->log, EBADMSG, "PAGES_AT 0x%llx: run %u out of its area or file",
				       (unsigned long long)v->v.start, i);
		next = at[i].addr + at[i].npages * PAGE;
		*total += at[i].npages;
	}
	return 0;
}

static int load_pages_at(struct rst_ctx *c, struct mm_state *s, struct rec *r)
{
	const struct rec_pages_ref *h = r->data;
	const struct rec_pages_at *at = (const void *)(h + 1);
	struct rst_vma *v;
	uint64_t total;
	int ret = rec_want(c->log, r, sizeof(*h), "PAGES_AT");

	if (ret)
		return ret;
	if (!c->nr_chain)
		return log_err(c->log, EBADMSG, "PAGES_AT record %llu in an image that is no chain",
			       (unsigned long long)r->index);
	v = last_vma(c, s, r, h->vma_start);
	if (!v)
		return -EBADMSG;
	if (h->reserved || h->nr_runs == 0 || h->nr_runs > MAX_RUNS ||
	    r->data_len != sizeof(*h) + (uint64_t)h->nr_runs * sizeof(*at) ||
	    (v->v.flags & MAP_SHARED))
		return log_err(c->log, EBADMSG, "PAGES_AT 0x%llx: bad header",
			       (unsigned long long)h->vma_start);
	ret = check_at(c, v, at, h->nr_runs, &total);
	if (ret)
		return ret;
	if (total != h->npages)
		return log_err(c->log, EBADMSG, "PAGES_AT 0x%llx: sizes do not add up",
			       (unsigned long long)h->vma_start);
	for (uint32_t i = 0; i < h->nr_runs && !ret; i++)
		ret = segs_add(v, at[i].addr, at[i].npages, at[i].off, false, at[i].file);
	if (ret)
		return log_err(c->log, -ret, "PAGES_AT 0x%llx:", (unsigned long long)h->vma_start);
	v->have_pages = true;	/* no PAGES after it: chain.c puts them first */
	return segs_sort(c, v, "PAGES_AT");
}

static int load_track(struct rst_ctx *c, struct mm_state *s, struct rec *r)
{
	const struct rec_mm_track *m = r->data;
	int ret = rec_want(c->log, r, sizeof(*m), "MM_TRACK");

	if (ret)
		return ret;
	if (!s->have_mm || m->reserved || m->fd > (1u << 20) || !m->ino ||
	    r->data_len != sizeof(*m))
		return log_err(c->log, EBADMSG, "MM_TRACK record %llu: bad",
			       (unsigned long long)r->index);
	return 0;
}

int mm_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct mm_state *s = mm_st(t);
	int ret;

	if (!s)
		return log_err(c->log, ENOMEM, "mm state:");
	if (t->t.flags & TASK_SHARES_VM)
		return log_err(c->log, EBADMSG, "pid %d: %s record, but it shares its parent's memory",
			       t->pid, rec_type_name(r->type));
	switch (r->type) {
	case REC_MM:
		ret = load_mm(c, s, r);
		break;
	case REC_VMA:
		ret = load_vma(c, t, s, r);
		break;
	case REC_PAGES_REF:
		ret = load_pages_ref(c, t, s, r);
		break;
	case REC_VMA_GUARDS:
		ret = load_guards(c, s, r);
		break;
	case REC_AIO:
		ret = mm_aio_load(c, s, r);
		break;
	case REC_PARENT:
		ret = load_parent(c, s, r);
		break;
	case REC_PAGES_PARENT:
		ret = load_pages_parent(c, s, r);
		break;
	case REC_MM_TRACK:
		ret = load_track(c, s, r);
		break;
	case REC_PAGES_AT:
		ret = load_pages_at(c, s, r);
		break;
	default:
		ret = load_pages(c, s, r);
		break;
	}
	if (!ret) {
		/* the model points into the record: keep it */
		if (s->nr_recs == s->cap_recs) {
			void *p;

			s->cap_recs = s->cap_recs ? s->cap_recs * 2 : 64;
			p = realloc(s->recs, s->cap_recs * sizeof(void *));
			if (!p)
				return log_err(c->log, ENOMEM, "mm records:");
			s->recs = p;
		}
		s->recs[s->nr_recs++] = r->data;
		r->data = NULL;
	}
	return ret;
}

void mm_free(struct rst_task *t, void *state)
{
	struct mm_state *s = state;

	(void)t;
	for (size_t i = 0; i < s->nr_recs; i++)
		free(s->recs[i]);
	free(s->recs);
	for (int i = 0; i < s->nr; i++)
		free(s->vmas[i].segs);
	free(s->vmas);
	free(s->aio);
	free(s);
}


/* ---- pre-flight checks ---- */

/* stat() of @path as the restored tree will see it: in a container's
 * own mounts, as they will be made; 1: not to be told before. */
static int tree_stat(struct rst_ctx *c, const char *path, struct stat *st)
{
	int ret = mntns_stat(c, path, true, st);

	if (ret == -EINVAL)	/* no mounts of its own: ours */
		ret = stat(path, st) ? -errno : 0;
	return ret;
}

static int check_file(struct rst_ctx *c, const struct rst_vma *v)
{
	struct stat st;
	int64_t mtime;
	int ret = tree_stat(c, v->path, &st);

	if (ret == 1)
		return 0;
	if (ret)
		return log_err(c->log, -ret, "mapped file %s:", v->path);
	mtime = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != v->v.file_size ||
	    mtime != v->v.file_mtime_ns)
		return log_err(c->log, ESTALE,
			       "mapped file %s changed since the checkpoint (size %llu, was %llu)",
			       v->path, (unsigned long long)st.st_size,
			       (unsigned long long)v->v.file_size);
	return 0;
}

int mm_check(struct rst_ctx *c, struct rst_task *t)
{
	struct mm_state *s = t->kind_state[kind_index(&kind_mm)];
	struct stat st;
	int ret = 0;

	if (t->t.flags & TASK_SHARES_VM)
		return 0;
	if (!s || !s->have_mm)
		return log_err(c->log, EBADMSG, "pid %d: image has no MM record",
			       t->pid);
	if (s->parent_rec && t != c->tasks[0])
		return log_err(c->log, EBADMSG, "pid %d: a PARENT record, but not in the first process",
			       t->pid);
	if (t == c->tasks[0] && !!(c->head.flags & CKPT_PARENT) != s->parent_rec)
		return log_err(c->log, EBADMSG, "HEAD says the image is %s, but it has %s PARENT record",
			       s->parent_rec ? "whole" : "incremental", s->parent_rec ? "a" : "no");
	for (int i = 0; i < s->nr && !ret; i++)
		if (s->vmas[i].v.kind == VMA_PACKET)
			ret = packet_map_check(c, t, s->vmas[i].v.shm_id,
					       s->vmas[i].v.end - s->vmas[i].v.start,
					       s->vmas[i].v.pgoff);
	if (ret)
		return ret;
	if (!c->here)
		return 0;
	ret = tree_stat(c, s->exe, &st);
	if (ret < 0 || (!ret && !S_ISREG(st.st_mode)))
		return log_err(c->log, ret < 0 ? -ret : ENOEXEC, "executable %s:", s->exe);
	ret = 0;
	for (int i = 0; i < s->nr && !ret; i++)
		if (s->vmas[i].v.kind == VMA_FILE)
			ret = check_file(c, &s->vmas[i]);
	return ret ? ret : vdso_check(c, t, s);
}
