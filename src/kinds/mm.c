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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../arch/x86/compat.h"
#include "../arch/x86/vdso.h"
#include "../files.h"
#include "mm.h"
#include "../pagecopy.h"
#include "sysvshm.h"

#define PAGE		4096ULL
#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_FILE		(1ULL << 61)
#define TASK_SIZE_64	0x7ffffffff000ULL
#define MAX_VMAS	(1 << 20)
#define MAX_RUNS	(1 << 22)
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

/* ---- checkpoint ---- */

struct runs {
	struct rec_pages_run *r;
	uint32_t n, cap;
	uint64_t npages;
};

static int runs_add(struct runs *rs, uint64_t addr)
{
	struct rec_pages_run *last = rs->n ? &rs->r[rs->n - 1] : NULL;

	rs->npages++;
	if (last && last->addr + last->npages * PAGE == addr) {
		last->npages++;
		return 0;
	}
	if (rs->n == rs->cap) {
		uint32_t cap = rs->cap ? rs->cap * 2 : 64;
		void *p = realloc(rs->r, cap * sizeof(*rs->r));

		if (!p)
			return -ENOMEM;
		rs->r = p;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct rec_pages_run){ addr, 1 };
	return 0;
}

#define PM_PFN		((1ULL << 55) - 1)

/* The parent's side of copy-on-write sharing: a private page still
 * shared with the parent since fork (same frame or swap slot in both
 * pagemaps) is not saved again; the child's PAGES_REF names it. */
struct cow_src {
	int pmfd;		/* the parent's pagemap, -1 if none */
	struct runs refs;	/* the pages found shared, for one area */
};

static bool cow_shared(uint64_t mine, uint64_t theirs)
{
	/* no PFNs without CAP_SYS_ADMIN: then nothing is found shared */
	return (mine & PM_PFN) && (mine & (PM_PFN | PM_SWAP | PM_PRESENT)) ==
				  (theirs & (PM_PFN | PM_SWAP | PM_PRESENT));
}

static int pm_read(int pmfd, uint64_t *pm, uint64_t a, uint64_t n)
{
	ssize_t k = pread(pmfd, pm, n * 8, (a / PAGE) * 8);

	if (k != (ssize_t)(n * 8))
		return k < 0 ? -errno : -EIO;
	return 0;
}

/* Pages of [start, end) that pagemap says exist; with anon_only, only
 * those that are not file pages (written copies in a private mapping).
 * Those @cow says the parent has too go to cow->refs instead. */
static int pagemap_runs(int pmfd, uint64_t start, uint64_t end,
			bool anon_only, struct runs *rs, struct cow_src *cow)
{
	enum { N = 8192 };
	uint64_t *pm = malloc(2 * N * sizeof(*pm)), *ppm = pm + N;
	int ret = 0;

	if (!pm)
		return -ENOMEM;
	for (uint64_t a = start; a < end && !ret;) {
		uint64_t n = (end - a) / PAGE;

		if (n > N)
			n = N;
		ret = pm_read(pmfd, pm, a, n);
		if (!ret && cow && cow->pmfd >= 0)
			ret = pm_read(cow->pmfd, ppm, a, n);
		for (uint64_t i = 0; i < n && !ret; i++) {
			uint64_t e = pm[i];

			if (!(e & (PM_PRESENT | PM_SWAP)))
				continue;
			if (anon_only && (e & PM_FILE) && !(e & PM_SWAP))
				continue;
			if (cow && cow->pmfd >= 0 && cow_shared(e, ppm[i]))
				ret = runs_add(&cow->refs, a + i * PAGE);
			else
				ret = runs_add(rs, a + i * PAGE);
		}
		a += n * PAGE;
	}
	free(pm);
	return ret;
}

/* Pages a shared anonymous area's shmem object holds. */
static int shmem_runs(pid_t pid, const struct vma *v, struct runs *rs)
{
	char path[128];
	uint64_t len = v->end - v->start;
	off_t off = v->pgoff, end = v->pgoff + len;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 pid, v->start, v->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < end && !ret) {
		off_t d = lseek(fd, off, SEEK_DATA), h;

		if (d < 0 || d >= end)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || h > end)
			h = end;
		for (off_t p = d & ~(PAGE - 1); p < h && !ret; p += PAGE)
			ret = runs_add(rs, v->start + (p - v->pgoff));
		off = h;
	}
	close(fd);
	return ret;
}

static uint32_t vma_madv(const struct vma *v)
{
	static const struct { const char *f; uint32_t bit; } map[] = {
		{ "dc", VMA_MADV_DONTFORK }, { "wf", VMA_MADV_WIPEONFORK },
		{ "dd", VMA_MADV_DONTDUMP }, { "hg", VMA_MADV_HUGEPAGE },
		{ "nh", VMA_MADV_NOHUGEPAGE }, { "mg", VMA_MADV_MERGEABLE },
		{ "lo", VMA_MLOCKED }, { "sl", VMA_SEALED },
		{ "mw", VMA_MAYWRITE }, { "nr", VMA_NORESERVE },
	};
	uint32_t m = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (vmflag(v, map[i].f))
			m |= map[i].bit;
	return m;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Classify an area; 0 means skip it, <0 refuse (logged). */
static int vma_classify(struct cpt_ctx *c, pid_t pid, const struct vma *v,
			struct rec_vma *rv)
{
	bool shared = v->perms[3] == 's';

	memset(rv, 0, sizeof(*rv));
	rv->start = v->start;
	rv->end = v->end;
	rv->pgoff = v->pgoff;
	rv->prot = (v->perms[0] == 'r' ? PROT_READ : 0) |
		   (v->perms[1] == 'w' ? PROT_WRITE : 0) |
		   (v->perms[2] == 'x' ? PROT_EXEC : 0);
	rv->flags = (shared ? MAP_SHARED : MAP_PRIVATE) |
		    (vmflag(v, "gd") ? MAP_GROWSDOWN : 0);
	rv->madv = vma_madv(v);
	if (!strcmp(v->path, "[vsyscall]"))
		return 0;	/* the kernel's, not the process's */
	if (!strcmp(v->path, "[vdso]")) {
		rv->kind = VMA_VDSO;
		return 1;
	}
	if (!strcmp(v->path, "[vvar]") || !strcmp(v->path, "[vvar_vclock]")) {
		rv->kind = VMA_VVAR;
		return 1;
	}
	if (v->path[0] == '\0' || !strcmp(v->path, "[heap]") ||
	    !strcmp(v->path, "[stack]") || !strncmp(v->path, "[anon:", 6) ||
	    (shared && !strcmp(v->path, "/dev/zero (deleted)"))) {
		if (shared && v->path[0] == '\0')
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d: area 0x%" PRIx64 "-0x%" PRIx64 ": unsupported shared mapping",
				       pid, v->start, v->end);
		rv->kind = VMA_ANON;
		return 1;
	}
	if (v->path[0] == '[')
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: area 0x%" PRIx64 "-0x%" PRIx64 ": unsupported special mapping %s",
			       pid, v->start, v->end, v->path);
	if (!strncmp(v->path, "/SYSV", 5)) {
		rv->kind = VMA_SYSV;
		return 1;
	}
	rv->kind = !strncmp(v->path, "/memfd:", 7) || ends_with(v->path, " (deleted)") ?
		   VMA_NONAME : VMA_FILE;
	return 1;
}

/* Record the identity of a mapped file; the area's own file (via
 * map_files) must be the one at the path. */
static int vma_file_id(struct cpt_ctx *c, pid_t pid, const struct vma *v,
		       struct rec_vma *rv)
{
	char path[128];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 pid, v->start, v->end);
	if (stat(path, &a))
		return log_err(c->log, errno, "pid %d: %s:", pid, path);
	if (stat(v->path, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: area 0x%" PRIx64 " maps %s, but that path now names another file",
			       pid, v->start, v->path);
	if (!S_ISREG(a.st_mode))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: area 0x%" PRIx64 " maps %s, which is not a regular file",
			       pid, v->start, v->path);
	rv->file_size = a.st_size;
	rv->file_mtime_ns = a.st_mtim.tv_sec * 1000000000LL + a.st_mtim.tv_nsec;
	return 0;
}

static int dump_pages(struct cpt_ctx *c, struct cpt_task *t,
		      const struct rec_vma *rv, struct runs *rs)
{
	struct img_writer *w = &c->w;
	struct rec_pages ph = { .vma_start = rv->start, .npages = rs->npages,
				.nr_runs = rs->n };
	uint64_t head = sizeof(ph) + rs->n * sizeof(*rs->r);
	uint64_t data_at = w->pos + sizeof(struct rec_hdr) + head;
	int ret;

	ph.pad_len = (PAGE - (data_at & (PAGE - 1))) & (PAGE - 1);
	ret = iw_begin(w, REC_PAGES, head + ph.pad_len + rs->npages * PAGE);
	if (!ret)
		ret = iw_write(w, &ph, sizeof(ph));
	if (!ret)
		ret = iw_write(w, rs->r, rs->n * sizeof(*rs->r));
	if (!ret)
		ret = iw_zero(w, ph.pad_len);
	if (!ret)
		ret = page_copy(w, &t->rm, rs->r, rs->n);
	return ret ? ret : iw_end(w);
}

/* The id of the memory object behind a shared anonymous area: the same
 * for every area of every process that shares it. */
static int shm_id(struct cpt_ctx *c, pid_t pid, const struct vma *v,
		  uint32_t *id)
{
	char path[128];
	struct cpt_shm *n;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 pid, v->start, v->end);
	if (stat(path, &st))
		return log_err(c->log, errno, "pid %d: %s:", pid, path);
	for (int i = 0; i < c->nr_shm; i++)
		if (c->shm[i].dev == st.st_dev && c->shm[i].ino == st.st_ino &&
		    !c->shm[i].file_kind) {
			*id = c->shm[i].id;
			return 0;
		}
	n = realloc(c->shm, (c->nr_shm + 1) * sizeof(*n));
	if (!n)
		return log_err(c->log, ENOMEM, "shared memory table:");
	c->shm = n;
	*id = ++c->next_objref;
	n[c->nr_shm++] = (struct cpt_shm){ st.st_dev, st.st_ino, *id, 0 };
	return 0;
}

/* A memfd is sealed as it is made at restart, before it is mapped: an
 * area that could write to it past F_SEAL_FUTURE_WRITE cannot be made. */
static int future_write_sealed(struct cpt_ctx *c, pid_t pid, const char *mf,
			       const struct rec_vma *rv)
{
	int fd, seals;

	if (!(rv->flags & MAP_SHARED) ||
	    !((rv->madv & VMA_MAYWRITE) || (rv->prot & PROT_WRITE)))
		return 0;
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	seals = fd < 0 ? 0 : fcntl(fd, F_GET_SEALS);
	if (fd >= 0)
		close(fd);
	if (seals > 0 && (seals & F_SEAL_FUTURE_WRITE))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: area 0x%" PRIx64 ": a writable mapping of a memfd sealed with F_SEAL_FUTURE_WRITE is not supported yet",
			       pid, rv->start);
	return 0;
}

/* Whether the parent has the very same private area, so that a page
 * both map from one frame is a copy-on-write page from fork. */
static bool parent_has_area(const struct cpt_task *par, const struct vma *v)
{
	int lo = 0, hi = par ? par->maps.n : 0;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		const struct vma *p = &par->maps.v[mid];

		if (p->end <= v->start)
			lo = mid + 1;
		else if (p->start > v->start)
			hi = mid;
		else
			return p->start == v->start && p->end == v->end &&
			       p->perms[3] == 'p';
	}
	return false;
}

static int dump_refs(struct cpt_ctx *c, const struct rec_vma *rv,
		     const struct runs *refs)
{
	struct rec_pages_ref h = { .vma_start = rv->start, .npages = refs->npages,
				   .nr_runs = refs->n };
	int ret = iw_begin(&c->w, REC_PAGES_REF, sizeof(h) + refs->n * sizeof(*refs->r));

	if (!ret)
		ret = iw_write(&c->w, &h, sizeof(h));
	if (!ret)
		ret = iw_write(&c->w, refs->r, refs->n * sizeof(*refs->r));
	return ret ? ret : iw_end(&c->w);
}

static int dump_vma(struct cpt_ctx *c, struct cpt_task *t, int pmfd,
		    const struct vma *v, const struct cpt_task *par, int ppmfd)
{
	struct rec_vma rv;
	struct runs rs = { 0 };
	struct cow_src cow = { .pmfd = -1 };
	const char *path = "";
	int ret = vma_classify(c, t->pid, v, &rv);

	if (ret <= 0)
		return ret;
	if (rv.kind == VMA_FILE) {
		ret = vma_file_id(c, t->pid, v, &rv);
		if (ret)
			return ret;
		path = v->path;
	} else if (rv.kind == VMA_NONAME) {
		char mf[128];

		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 t->pid, v->start, v->end);
		ret = fobj_ref(c, t->pid, mf, v->path, &rv.shm_id);
		if (!ret)
			ret = future_write_sealed(c, t->pid, mf, &rv);
		if (ret)
			return ret;
		path = v->path;
	} else if (rv.kind == VMA_SYSV) {
		ret = sysv_ref(c, t->pid, v, &rv.shm_id);
		if (ret)
			return ret;
		path = v->path;	/* shown only: the segment has its key */
	} else if (!strncmp(v->path, "[anon:", 6)) {
		path = v->path;	/* the name given with PR_SET_VMA */
	}
	if (rv.kind == VMA_ANON && (rv.flags & MAP_SHARED)) {
		ret = shm_id(c, t->pid, v, &rv.shm_id);
		if (ret)
			return ret;
	}
	rv.path_len = strlen(path) + 1;
	ret = iw_record_str(&c->w, REC_VMA, &rv, sizeof(rv), path);
	if (ret)
		return ret;
	if (parent_has_area(par, v))
		cow.pmfd = ppmfd;
	if (rv.kind == VMA_ANON && (rv.flags & MAP_SHARED))
		ret = shmem_runs(t->pid, v, &rs);
	else if (rv.kind == VMA_ANON)
		ret = pagemap_runs(pmfd, v->start, v->end, false, &rs, &cow);
	else if ((rv.kind == VMA_FILE || rv.kind == VMA_NONAME) &&
		 (rv.flags & MAP_PRIVATE))
		ret = pagemap_runs(pmfd, v->start, v->end, true, &rs, &cow);
	if (ret)
		ret = log_err(c->log, -ret, "pid %d: pages of 0x%" PRIx64 "-0x%" PRIx64 ":",
			      t->pid, v->start, v->end);
	else if (rs.npages)
		ret = dump_pages(c, t, &rv, &rs);
	if (!ret && cow.refs.npages)
		ret = dump_refs(c, &rv, &cow.refs);
	free(rs.r);
	free(cow.refs.r);
	return ret;
}

/* Fields 26-28 and 45-51 of /proc/PID/stat. */
static int stat_mm_fields(pid_t pid, struct rec_mm *m)
{
	unsigned long long f[PROC_STAT_FIELDS];
	int ret = proc_stat(pid, NULL, f);

	if (ret)
		return ret;
	m->start_code = f[26];
	m->end_code = f[27];
	m->start_stack = f[28];
	m->start_data = f[45];
	m->end_data = f[46];
	m->start_brk = f[47];
	m->arg_start = f[48];
	m->arg_end = f[49];
	m->env_start = f[50];
	m->env_end = f[51];
	return 0;
}

static int dump_mm_fields(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_mm m = { 0 };
	char exe[CKPT_PATH_MAX], *auxv = NULL;
	size_t auxv_len;
	long brk;
	int ret;

	ret = stat_mm_fields(t->pid, &m);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading stat:", t->pid);
	ret = remote_call(&t->rm, &brk, SYS_brk, 0, 0, 0, 0, 0, 0);
	if (ret)
		return ret;
	m.brk = brk;
	ret = proc_readlink(t->pid, "exe", exe, sizeof(exe));
	if (ret)
		return log_err(c->log, -ret, "pid %d: exe link:", t->pid);
	if (ends_with(exe, " (deleted)"))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: its executable %s was deleted", t->pid, exe);
	ret = proc_read(t->pid, "auxv", &auxv, &auxv_len);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading auxv:", t->pid);
	m.auxv_len = auxv_len;
	m.exe_len = strlen(exe) + 1;
	ret = iw_begin(&c->w, REC_MM, sizeof(m) + m.auxv_len + m.exe_len);
	if (!ret)
		ret = iw_write(&c->w, &m, sizeof(m));
	if (!ret)
		ret = iw_write(&c->w, auxv, auxv_len);
	if (!ret)
		ret = iw_write(&c->w, exe, m.exe_len);
	free(auxv);
	return ret ? ret : iw_end(&c->w);
}

static const struct cpt_task *live_parent(struct cpt_ctx *c,
					  const struct cpt_task *t)
{
	for (int i = 0; t->ppid && i < c->nr_tasks; i++)
		if (c->tasks[i]->pid == t->ppid && !c->tasks[i]->zombie)
			return c->tasks[i];
	return NULL;
}

static int mm_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	const struct cpt_task *par = live_parent(c, t);
	char path[64];
	int pmfd, ppmfd = -1, ret;

	if (t->shares_vm)
		return 0;	/* its parent's memory, saved with the parent */
	ret = dump_mm_fields(c, t);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
	pmfd = open(path, O_RDONLY | O_CLOEXEC);
	if (pmfd < 0)
		return log_err(c->log, errno, "open %s:", path);
	if (par) {
		/* without it pages are saved twice, which is only slower */
		snprintf(path, sizeof(path), "/proc/%d/pagemap", par->pid);
		ppmfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	for (int i = 0; i < t->maps.n && !ret; i++)
		ret = dump_vma(c, t, pmfd, &t->maps.v[i], par, ppmfd);
	close(pmfd);
	if (ppmfd >= 0)
		close(ppmfd);
	return ret;
}

/* ---- restart: load and validate ---- */

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

/* Shared anonymous memory across the tree: the first area of an object
 * is mapped fresh; every later one maps the same object, which it opens
 * through the first one's /proc/PID/map_files. */
struct shm_first {
	uint32_t id;
	pid_t pid;
	uint64_t start, end, pgoff;
};

struct shm_table {
	struct shm_first *e;
	int n;
};

static int shm_note(struct rst_ctx *c, pid_t pid, const struct rec_vma *v)
{
	struct shm_table *st = kind_ctx_state(c, &kind_mm, sizeof(*st));
	struct shm_first *n;

	if (!st)
		return log_err(c->log, ENOMEM, "shared memory table:");
	for (int i = 0; i < st->n; i++)
		if (st->e[i].id == v->shm_id)
			return v->pgoff < st->e[i].pgoff ?
			       log_err(c->log, EOPNOTSUPP,
				       "shared memory %u: an area below the first one's offset (not supported yet)",
				       v->shm_id) : 0;
	n = realloc(st->e, (st->n + 1) * sizeof(*n));
	if (!n)
		return log_err(c->log, ENOMEM, "shared memory table:");
	st->e = n;
	n[st->n++] = (struct shm_first){ v->shm_id, pid, v->start, v->end, v->pgoff };
	return 0;
}

static const struct shm_first *shm_first(struct rst_ctx *c, uint32_t id)
{
	struct shm_table *st = KCSTATE(c, kind_mm);

	for (int i = 0; st && i < st->n; i++)
		if (st->e[i].id == id)
			return &st->e[i];
	return NULL;
}

static void mm_free_ctx(void *state)
{
	struct shm_table *st = state;

	free(st->e);
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
	    v->kind < VMA_ANON || v->kind > VMA_SYSV || v->madv & ~VMA_MADV_ALL ||
	    (v->shm_id && v->kind != VMA_NONAME && v->kind != VMA_SYSV &&
	     (v->kind != VMA_ANON || !(v->flags & MAP_SHARED))) ||
	    (v->kind == VMA_NONAME && fobj_kind(c, v->shm_id) == 0) ||
	    (v->kind == VMA_SYSV && !sysv_area_fits(c, v)) ||
	    r->data_len != sizeof(*v) + v->path_len)
		return log_err(c->log, EBADMSG,
			       "VMA record %llu: bad area 0x%llx-0x%llx",
			       (unsigned long long)r->index,
			       (unsigned long long)v->start,
			       (unsigned long long)v->end);
	if (s->nr && s->vmas[s->nr - 1].v.end > v->start)
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
	    (v->kind == VMA_SYSV && strncmp(nv->path, "/SYSV", 5)))
		return log_err(c->log, EBADMSG, "VMA 0x%llx: bad path",
			       (unsigned long long)v->start);
	s->nr++;
	return 0;
}

static int segs_add(struct rst_vma *v, uint64_t addr, uint64_t npages,
		    uint64_t off)
{
	struct page_seg *n;

	if (v->nr_segs >= MAX_RUNS * 2)
		return -E2BIG;
	n = realloc(v->segs, (v->nr_segs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	v->segs = n;
	n[v->nr_segs++] = (struct page_seg){ addr, npages, off };
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
	if (!v || v->have_refs || v->v.start != start ||
	    (r->type == REC_PAGES && v->have_pages) ||
	    v->v.kind == VMA_VDSO || v->v.kind == VMA_VVAR || v->v.kind == VMA_SYSV ||
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
		ret = segs_add(v, run[i].addr, run[i].npages, off);
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

static const struct rst_vma *vma_of(const struct mm_state *s, uint64_t start)
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
			ret = segs_add(v, a, k, g->off + (a - g->addr));
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
	ret = resolve_refs(c, v, par ? vma_of(KSTATE(par, kind_mm), v->v.start) : NULL,
			   run, h->nr_runs);
	if (ret)
		return ret;
	v->have_refs = true;
	qsort(v->segs, v->nr_segs, sizeof(*v->segs), seg_cmp);
	for (uint32_t i = 1; i < v->nr_segs; i++)
		if (v->segs[i].addr < v->segs[i - 1].addr + v->segs[i - 1].npages * PAGE)
			return log_err(c->log, EBADMSG,
				       "PAGES_REF 0x%llx: pages saved twice",
				       (unsigned long long)h->vma_start);
	return 0;
}

static int mm_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
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

static void mm_free(struct rst_task *t, void *state)
{
	struct mm_state *s = state;

	(void)t;
	for (size_t i = 0; i < s->nr_recs; i++)
		free(s->recs[i]);
	free(s->recs);
	for (int i = 0; i < s->nr; i++)
		free(s->vmas[i].segs);
	free(s->vmas);
	free(s);
}


/* ---- restart: pre-flight checks ---- */

static int check_file(struct rst_ctx *c, const struct rst_vma *v)
{
	struct stat st;
	int64_t mtime;

	if (stat(v->path, &st))
		return log_err(c->log, errno, "mapped file %s:", v->path);
	mtime = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != v->v.file_size ||
	    mtime != v->v.file_mtime_ns)
		return log_err(c->log, ESTALE,
			       "mapped file %s changed since the checkpoint (size %llu, was %llu)",
			       v->path, (unsigned long long)st.st_size,
			       (unsigned long long)v->v.file_size);
	return 0;
}

static int mm_check(struct rst_ctx *c, struct rst_task *t)
{
	struct mm_state *s = t->kind_state[kind_index(&kind_mm)];
	struct stat st;
	int ret = 0;

	if (t->t.flags & TASK_SHARES_VM)
		return 0;
	if (!s || !s->have_mm)
		return log_err(c->log, EBADMSG, "pid %d: image has no MM record",
			       t->pid);
	if (!c->here)
		return 0;
	if (stat(s->exe, &st) || !S_ISREG(st.st_mode))
		return log_err(c->log, errno ? errno : ENOEXEC,
			       "executable %s:", s->exe);
	for (int i = 0; i < s->nr && !ret; i++)
		if (s->vmas[i].v.kind == VMA_FILE)
			ret = check_file(c, &s->vmas[i]);
	return ret ? ret : vdso_check(c, t, s);
}

/* ---- restart: rebuild the address space in the puppet ---- */

struct prctl_mm_map_ {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t auxv;
	uint32_t auxv_size, exe_fd;
};

static int remote_open(struct rst_task *t, const char *path, int flags,
		       long *fd)
{
	uint64_t addr;
	int ret = rst_scratch_put(t, 0, path, strlen(path) + 1, &addr);

	if (ret)
		return ret;
	ret = remote_call(&t->rm, fd, SYS_openat, AT_FDCWD, addr,
			  flags | O_CLOEXEC, 0, 0, 0);
	if (!ret && *fd < 0)
		ret = log_err(t->rm.log, (int)-*fd, "pid %d: open %s:", t->pid, path);
	return ret;
}

static int fill_pages(struct rst_task *t, const struct rst_vma *v)
{
	for (uint32_t i = 0; i < v->nr_segs; i++) {
		uint64_t a = v->segs[i].addr, left = v->segs[i].npages * PAGE;
		uint64_t off = v->segs[i].off;

		while (left) {
			/* read(2) moves at most 0x7ffff000 bytes a call */
			uint64_t n = left < 0x40000000 ? left : 0x40000000;
			long got;
			int ret = remote_call(&t->rm, &got, SYS_pread64, t->img_fd,
					      a, n, off, 0, 0);

			if (ret)
				return ret;
			if (got <= 0)
				return log_err(t->rm.log, got < 0 ? (int)-got : ENODATA,
					       "pid %d: reading pages for 0x%llx from the image:",
					       t->pid, (unsigned long long)a);
			a += got;
			off += got;
			left -= got;
		}
	}
	return 0;
}

static int vma_advise(struct rst_task *t, const struct rst_vma *v)
{
	static const struct { uint32_t bit; int advice; } adv[] = {
		{ VMA_MADV_DONTFORK, MADV_DONTFORK },
		{ VMA_MADV_WIPEONFORK, MADV_WIPEONFORK },
		{ VMA_MADV_DONTDUMP, MADV_DONTDUMP },
		{ VMA_MADV_HUGEPAGE, MADV_HUGEPAGE },
		{ VMA_MADV_NOHUGEPAGE, MADV_NOHUGEPAGE },
		{ VMA_MADV_MERGEABLE, MADV_MERGEABLE },
	};
	uint64_t len = v->v.end - v->v.start, addr;
	int ret = 0;

	for (size_t i = 0; i < sizeof(adv) / sizeof(adv[0]) && !ret; i++)
		if (v->v.madv & adv[i].bit)
			ret = rcheck(&t->rm, NULL, "madvise", SYS_madvise,
				     v->v.start, len, adv[i].advice);
	if (!ret && (v->v.madv & VMA_MLOCKED))
		ret = rcheck(&t->rm, NULL, "mlock", SYS_mlock, v->v.start, len);
	if (!ret && !strncmp(v->path, "[anon:", 6)) {
		char name[256];

		snprintf(name, sizeof(name), "%.*s", (int)strlen(v->path) - 7,
			 v->path + 6);
		ret = rst_scratch_put(t, 0, name, strlen(name) + 1, &addr);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "naming an area", SYS_prctl,
				     PR_SET_VMA, PR_SET_VMA_ANON_NAME,
				     v->v.start, len, addr);
	}
	return ret;
}

/* The object ckpt made for a memfd or deleted file, the one its fds and
 * other areas have; read-only for a shared area that could never be
 * made writable, as it was. */
static int noname_fd(struct rst_ctx *c, struct rst_task *t,
		     const struct rst_vma *v, long *fd)
{
	int obj = fobj_fd(c, v->v.shm_id), ro;
	char path[64];

	if (obj < 0)
		return obj;
	if (!(v->v.flags & MAP_SHARED) || (v->v.madv & VMA_MAYWRITE) ||
	    (v->v.prot & PROT_WRITE))
		return files_give(t, obj, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", obj);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		return log_err(c->log, errno, "reopening %s:", v->path);
	obj = files_give(t, ro, fd);
	close(ro);
	return obj;
}

static int map_vma(struct rst_ctx *c, struct rst_task *t, const struct rst_vma *v)
{
	uint64_t len = v->v.end - v->v.start, off = v->v.pgoff;
	int prot = v->v.prot | (v->pages_len ? PROT_WRITE : 0);
	int flags = v->v.flags | MAP_FIXED |
		    (v->v.madv & VMA_NORESERVE ? MAP_NORESERVE : 0);
	const struct shm_first *first = v->v.shm_id ? shm_first(c, v->v.shm_id) : NULL;
	long fd = -1, res;
	int ret;

	if (v->v.kind == VMA_SYSV) {
		ret = sysv_attach(c, t, &v->v, &prot);
		if (!ret && prot != (int)v->v.prot)
			ret = rcheck(&t->rm, NULL, "mprotect", SYS_mprotect,
				     v->v.start, len, v->v.prot);
		return ret ? ret : vma_advise(t, v);
	}
	if (first && (first->pid != t->pid || first->start != v->v.start)) {
		char path[128];

		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", first->pid,
			 (unsigned long long)first->start, (unsigned long long)first->end);
		ret = remote_open(t, path, O_RDWR, &fd);
		if (ret)
			return ret;
		off = v->v.pgoff - first->pgoff;
	} else if (v->v.kind == VMA_NONAME) {
		/* the object ckpt made, the one its fds and other areas have */
		ret = noname_fd(c, t, v, &fd);
		if (ret)
			return ret;
	} else if (v->v.kind == VMA_FILE) {
		/* a shared area that may become writable needs a rw file */
		bool rw = (v->v.flags & MAP_SHARED) &&
			  ((v->v.madv & VMA_MAYWRITE) || (v->v.prot & PROT_WRITE));

		ret = remote_open(t, v->path, rw ? O_RDWR : O_RDONLY, &fd);
		if (ret)
			return ret;
	}
	if (fd < 0)
		flags |= MAP_ANONYMOUS;
	ret = rcheck(&t->rm, &res, "mmap", SYS_mmap, v->v.start, len, prot,
		     flags, fd, fd >= 0 ? off : 0);
	if (fd >= 0)
		rcall(&t->rm, &fd, SYS_close, fd);
	if (ret)
		return log_err(t->rm.log, t->rm.log->err, "pid %d: mapping 0x%llx-0x%llx %s failed",
			       t->pid, (unsigned long long)v->v.start,
			       (unsigned long long)v->v.end, v->path);
	if ((uint64_t)res != v->v.start)
		return log_err(t->rm.log, EFAULT, "pid %d: area 0x%llx landed at 0x%lx",
			       t->pid, (unsigned long long)v->v.start, res);
	ret = fill_pages(t, v);
	if (!ret && prot != (int)v->v.prot)
		ret = rcheck(&t->rm, NULL, "mprotect", SYS_mprotect, v->v.start,
			     len, v->v.prot);
	return ret ? ret : vma_advise(t, v);
}

static int set_mm_fields(struct rst_task *t, const struct mm_state *s)
{
	const struct rec_mm *m = &s->mm;
	struct prctl_mm_map_ map = {
		.start_code = m->start_code, .end_code = m->end_code,
		.start_data = m->start_data, .end_data = m->end_data,
		.start_brk = m->start_brk, .brk = m->brk,
		.start_stack = m->start_stack,
		.arg_start = m->arg_start, .arg_end = m->arg_end,
		.env_start = m->env_start, .env_end = m->env_end,
		.auxv_size = m->auxv_len,
	};
	uint64_t addr;
	long exe_fd;
	int ret;

	ret = remote_open(t, s->exe, O_RDONLY, &exe_fd);
	if (ret)
		return ret;
	map.exe_fd = exe_fd;
	ret = rst_scratch_put(t, 4096, s->auxv, m->auxv_len, &map.auxv);
	if (!ret)
		ret = rst_scratch_put(t, 0, &map, sizeof(map), &addr);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "prctl(PR_SET_MM_MAP)", SYS_prctl,
			     PR_SET_MM, PR_SET_MM_MAP, addr, sizeof(map));
	rcall(&t->rm, &exe_fd, SYS_close, exe_fd);
	return ret;
}

static int mm_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct mm_state *s = t->kind_state[kind_index(&kind_mm)];
	uint64_t lo = t->tramp, hi = t->tramp + t->tramp_len;
	int ret = 0;

	if (t->t.flags & TASK_SHARES_VM)
		return 0;	/* its parent's, which its parent restores */
	/* Everything the puppet inherited goes, but the trampoline. */
	if (lo)
		ret = rcheck(&t->rm, NULL, "munmap", SYS_munmap, 0, lo);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "munmap", SYS_munmap, hi,
			     TASK_SIZE_64 - hi);
	if (!ret)
		ret = vdso_map(t, s);
	/* The exe link can change only while the old exe (our own binary,
	 * perhaps the very file the saved process runs) is not mapped: now. */
	if (!ret)
		ret = set_mm_fields(t, s);
	for (int i = 0; i < s->nr && !ret; i++)
		if (s->vmas[i].v.kind == VMA_ANON || s->vmas[i].v.kind == VMA_FILE ||
		    s->vmas[i].v.kind == VMA_NONAME || s->vmas[i].v.kind == VMA_SYSV)
			ret = map_vma(c, t, &s->vmas[i]);
	for (int i = 0; i < s->nr && !ret; i++)
		if (s->vmas[i].v.madv & VMA_SEALED)
			ret = rcheck(&t->rm, NULL, "mseal", 462, s->vmas[i].v.start,
				     s->vmas[i].v.end - s->vmas[i].v.start, 0);
	return ret;
}

struct span {
	uint64_t start, end;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int mm_find_gap(struct rst_ctx *c, const struct vma_list *busy,
		uint64_t len, uint64_t *addr)
{
	int n = 0, total = busy->n;
	struct span *sp;
	uint64_t cand = 1ULL << 20;

	for (int j = 0; j < c->nr_tasks; j++) {
		struct mm_state *s = KSTATE(c->tasks[j], kind_mm);

		total += s ? s->nr : 0;
	}
	sp = malloc((total + 1) * sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	for (int j = 0; j < c->nr_tasks; j++) {
		struct mm_state *s = KSTATE(c->tasks[j], kind_mm);

		for (int i = 0; s && i < s->nr; i++)
			sp[n++] = (struct span){ s->vmas[i].v.start, s->vmas[i].v.end };
	}
	for (int i = 0; i < busy->n; i++)
		sp[n++] = (struct span){ busy->v[i].start, busy->v[i].end };
	qsort(sp, n, sizeof(*sp), span_cmp);
	for (int i = 0; i < n; i++) {
		/* a guard page either side keeps the kernel from merging */
		if (sp[i].end + PAGE <= cand)
			continue;
		if (sp[i].start >= cand + len + PAGE)
			break;
		cand = sp[i].end + PAGE;
	}
	free(sp);
	if (cand + len > TASK_SIZE_64)
		return -ENOMEM;
	*addr = cand;
	return 0;
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
		info_str(o, "kind", kinds[v->kind < 7 ? v->kind : 0]);
		if (v->shm_id)
			info_u64(o, "object", v->shm_id);
		info_hex(o, "pgoff", v->pgoff);
		if (v->path_len > 1 && r->data_len >= sizeof(*v) + v->path_len)
			info_str(o, "path", rec_str(r, sizeof(*v), v->path_len) ?: "?");
	} else if (r->type == REC_PAGES_REF) {
		const struct rec_pages_ref *p = r->data;

		info_hex(o, "vma", p->vma_start);
		info_u64(o, "parent_pages", p->npages);
		info_u64(o, "runs", p->nr_runs);
	} else {
		const struct rec_pages *p = r->data;

		info_hex(o, "vma", p->vma_start);
		info_u64(o, "pages", p->npages);
		info_u64(o, "runs", p->nr_runs);
		info_u64(o, "data_offset", r->off + sizeof(*p) +
			 p->nr_runs * sizeof(struct rec_pages_run) + p->pad_len);
	}
}

const struct kind_ops kind_mm = {
	.name = "mm",
	.types = { REC_MM, REC_VMA, REC_PAGES, REC_PAGES_REF },
	.phase = PHASE_IMAGE,
	.dump = mm_dump,
	.load = mm_load,
	.check = mm_check,
	.restore = mm_restore,
	.free = mm_free,
	.free_ctx = mm_free_ctx,
	.show = mm_show,
};
