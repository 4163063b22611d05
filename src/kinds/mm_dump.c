/* mm_dump.c - the address space at checkpoint: the MM record (the mm
 * fields, auxv, exe link), one VMA record per area, and the pages of each
 * that the image must carry (PAGES), or that it shares with the parent's
 * since fork (PAGES_REF).  Which pages those are: mm.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../files.h"
#include "../files/packet.h"
#include "../pagecopy.h"
#include "mm.h"
#include "../unpriv.h"
#include "sysvshm.h"
#include "../page.h"

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_FILE		(1ULL << 61)
#define PM_GUARD	(1ULL << 58)	/* a guard page: reading it is EIO */

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
	/* from 4: most areas are a run or two, and every area's runs are
	 * held until the last is written (60,000 areas: 30 MiB from 64) */
	if (rs->n == rs->cap) {
		uint32_t cap = rs->cap ? rs->cap * 2 : 4;
		void *p = realloc(rs->r, cap * sizeof(*rs->r));

		if (!p)
			return -ENOMEM;
		rs->r = p;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct rec_pages_run){ addr, 1 };
	return 0;
}

/* @n pages from @addr: one run, or the last one grown */
static int runs_add_range(struct runs *rs, uint64_t addr, uint64_t n)
{
	int ret;

	if (!n)
		return 0;
	ret = runs_add(rs, addr);
	if (!ret) {
		rs->r[rs->n - 1].npages += n - 1;
		rs->npages += n - 1;
	}
	return ret;
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

/* PAGEMAP_SCAN: the kernel walks the page tables and reports only the
 * ranges that have pages, so that a sparse area of terabytes (a
 * sanitizer's shadow, a reserved heap) costs what it holds, not 8 bytes
 * of pagemap per page. */
#define PM_SCAN_REGIONS	512

static int pagemap_range(int pmfd, uint64_t start, uint64_t end,
			 bool anon_only, struct runs *rs, struct cow_src *cow);

/* A region PAGEMAP_SCAN found, its pages all of the same categories.
 * Present pages are saved whole, or none of them (a private file
 * mapping's file pages), without reading their pagemap (a JVM's 59 MB:
 * 2-3 ms of pagemap reads); swapped ones, and those to compare with a
 * parent's, are read page by page (pagemap_range()). */
static int region_runs(int pmfd, const struct pm_region *v, bool anon_only,
		       struct runs *rs, struct cow_src *cow)
{
	if (!(v->categories & PM_IS_PRESENT) || (cow && cow->pmfd >= 0))
		return pagemap_range(pmfd, v->start, v->end, anon_only, rs, cow);
	if (anon_only && (v->categories & PM_IS_FILE))
		return 0;
	return runs_add_range(rs, v->start, (v->end - v->start) / PAGE);
}

/* The same as pagemap_range() over [start, end), but only where the
 * kernel says there are pages; all of it where it cannot say.  With
 * @old (an area tracked since the parent image, mm_track.c), the pages
 * not written since go there: the parent image has them.  A zero page
 * counts as written: a page zapped and read again since is one, and
 * its old content is not its content. */
static int pagemap_runs(int pmfd, uint64_t start, uint64_t end,
			bool anon_only, struct runs *rs, struct cow_src *cow,
			struct runs *old)
{
	struct pm_region *v = malloc(PM_SCAN_REGIONS * sizeof(*v));
	struct pm_scan a = { .size = sizeof(a), .end = end,
			     .vec_len = PM_SCAN_REGIONS,
			     .category_anyof_mask = PM_IS_PRESENT | PM_IS_SWAPPED,
			     .return_mask = PM_IS_PRESENT | PM_IS_SWAPPED | PM_IS_FILE |
					    (old ? PM_IS_WRITTEN | PM_IS_PFNZERO : 0) };
	int ret = 0;

	if (!v)
		return -ENOMEM;
	a.vec = (uintptr_t)v;
	for (uint64_t at = start; at < end && !ret;) {
		long n;

		a.start = at;
		n = ioctl(pmfd, PM_SCAN_IOCTL, &a);
		if (n < 0 && old) {	/* tracked: the kernel can scan */
			ret = -errno;
			break;
		}
		if (n < 0) {	/* an older kernel: every page asked */
			ret = pagemap_range(pmfd, at, end, anon_only, rs, cow);
			break;
		}
		for (long i = 0; i < n && !ret; i++)
			ret = region_runs(pmfd, &v[i], anon_only,
					  old && !(v[i].categories & (PM_IS_WRITTEN | PM_IS_PFNZERO)) ?
					  old : rs, cow);
		if (a.walk_end <= at)
			break;
		at = a.walk_end;
	}
	free(v);
	return ret;
}

/* Pages of [start, end) that pagemap says exist; with anon_only, only
 * those that are not file pages (written copies in a private mapping).
 * Those @cow says the parent has too go to cow->refs instead. */
static int pagemap_range(int pmfd, uint64_t start, uint64_t end,
			 bool anon_only, struct runs *rs, struct cow_src *cow)
{
	enum { N = 8192 };
	/* sized to the range: 128 KiB each time is glibc's mmap threshold,
	 * an mmap, page faults and an munmap per range */
	uint64_t want = (end - start) / PAGE < N ? (end - start) / PAGE : N;
	uint64_t *pm = malloc(2 * (want ? want : 1) * sizeof(*pm)), *ppm = pm + want;
	int ret = 0;

	if (!pm)
		return -ENOMEM;
	for (uint64_t a = start; a < end && !ret;) {
		uint64_t n = (end - a) / PAGE;

		if (n > want)
			n = want;
		ret = pm_read(pmfd, pm, a, n);
		if (!ret && cow && cow->pmfd >= 0)
			ret = pm_read(cow->pmfd, ppm, a, n);
		for (uint64_t i = 0; i < n && !ret; i++) {
			uint64_t e = pm[i];

			if (!(e & (PM_PRESENT | PM_SWAP)) || (e & PM_GUARD))
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

/* The guard pages of [start, end) (MADV_GUARD_INSTALL, Linux 6.13): a
 * kernel that cannot scan for them has none. */
static int guard_runs(int pmfd, uint64_t start, uint64_t end, struct runs *rs)
{
	struct pm_region v[64];
	struct pm_scan a = { .size = sizeof(a), .end = end, .vec = (uintptr_t)v,
			     .vec_len = 64, .category_anyof_mask = PM_IS_GUARD,
			     .return_mask = PM_IS_GUARD };
	int ret = 0;

	for (uint64_t at = start; at < end && !ret;) {
		long n;

		a.start = at;
		n = ioctl(pmfd, PM_SCAN_IOCTL, &a);
		if (n < 0)
			return errno == EINVAL || errno == ENOTTY ? 0 : -errno;
		for (long i = 0; i < n && !ret; i++)
			for (uint64_t p = v[i].start; p < v[i].end && !ret; p += PAGE)
				ret = runs_add(rs, p);
		if (a.walk_end <= at)
			break;
		at = a.walk_end;
	}
	return ret;
}

/* Pages a shared anonymous area's object holds (shmem_runs()); a guard
 * page over one cannot be read (through this area, the only one ckpt
 * reads it by): refused, -ENOTRECOVERABLE. */
static int shmem_runs(pid_t pid, const struct vma *v, struct runs *rs);

static int shmem_unguarded(int pmfd, pid_t pid, const struct vma *v,
			   struct runs *rs)
{
	struct runs all = { 0 }, g = { 0 };
	uint32_t gi = 0;
	int ret = guard_runs(pmfd, v->start, v->end, &g);

	if (ret || !g.npages) {
		free(g.r);
		return ret ? ret : shmem_runs(pid, v, rs);
	}
	ret = shmem_runs(pid, v, &all);
	for (uint32_t i = 0; i < all.n && !ret; i++)
		for (uint64_t k = 0; k < all.r[i].npages && !ret; k++) {
			uint64_t a = all.r[i].addr + k * PAGE;

			while (gi < g.n && g.r[gi].addr + g.r[gi].npages * PAGE <= a)
				gi++;
			if (gi < g.n && g.r[gi].addr <= a)
				ret = -ENOTRECOVERABLE;
			else
				ret = runs_add(rs, a);
		}
	free(all.r);
	free(g.r);
	return ret;
}

static int dump_guards(struct cpt_ctx *c, const struct rec_vma *rv,
		       const struct runs *g)
{
	struct rec_vma_guards h = { .vma_start = rv->start, .npages = g->npages,
				    .nr_runs = g->n };
	int ret = iw_begin(&c->w, REC_VMA_GUARDS, sizeof(h) + g->n * sizeof(*g->r));

	if (!ret)
		ret = iw_write(&c->w, &h, sizeof(h));
	if (!ret)
		ret = iw_write(&c->w, g->r, g->n * sizeof(*g->r));
	return ret ? ret : iw_end(&c->w);
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
		{ "sr", VMA_MADV_SEQUENTIAL }, { "rr", VMA_MADV_RANDOM },
		{ "dp", VMA_DROPPABLE },
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
	if (!strncmp(v->path, "socket:[", 8)) {
		rv->kind = VMA_PACKET;	/* packet.c: its rings, or refused */
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
	if (stat(path, &a)) {
		if (errno != EPERM)
			return log_err(c->log, errno, "pid %d: %s:", pid, path);
		/* map_files denied (an ordinary user): the file at the
		 * path, if it has the device and inode maps gives */
		if (unpriv_vma_stat(v, &a))
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d: area 0x%" PRIx64 " maps %s, but that path now names another file",
				       pid, v->start, v->path);
	}
	/* maps names it as we see it, or (on a mount we do not have: a
	 * container's) from its mount's root, which is where the process
	 * finds it in its own root */
	if ((stat(v->path, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev) &&
	    (proc_root_stat(pid, v->path, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev))
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

static int dump_pages(struct cpt_ctx *c, struct page_stream *ps,
		      const struct rec_vma *rv, const struct runs *rs)
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
		ret = page_stream_write(ps, w, rs->r);
	return ret ? ret : iw_end(w);
}

/* The id of the memory object behind a shared anonymous area: the same
 * for every area of every process that shares it. */
static int shm_id(struct cpt_ctx *c, pid_t pid, const struct vma *v,
		  uint32_t *id)
{
	struct mm_cpt *mc = kind_dump_state(c, &kind_mm);
	char path[128];
	struct cpt_shm *n;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 pid, v->start, v->end);
	if (stat(path, &st))
		return errno == EPERM ? unpriv_map_refused(c->log, pid, v, "shared memory")
				      : log_err(c->log, errno, "pid %d: %s:", pid, path);
	for (int i = 0; i < mc->nr_shm; i++)
		if (mc->shm[i].dev == st.st_dev && mc->shm[i].ino == st.st_ino) {
			*id = mc->shm[i].id;
			return 0;
		}
	n = VEC_PUSH(mc->shm, mc->nr_shm, mc->cap_shm);
	if (!n)
		return log_err(c->log, ENOMEM, "shared memory table:");
	*id = ++c->next_objref;
	*n = (struct cpt_shm){ st.st_dev, st.st_ino, v->start, pid, *id, false };
	return 0;
}

/* A shared anonymous object that is also open as a file or mapped
 * privately is the object fobj.c saved for that (met first: fds are
 * saved before memory): its shared areas map that object too. */
static int shm_as_fobj(struct cpt_ctx *c, struct rec_vma *rv, const char **path)
{
	struct mm_cpt *mc = kind_dump_state(c, &kind_mm);

	for (int i = 0; i < mc->nr_shm; i++) {
		uint32_t id;

		if (mc->shm[i].id != rv->shm_id)
			continue;
		id = fobj_known(c, mc->shm[i].dev, mc->shm[i].ino);
		if (id) {
			mc->shm[i].fobj = true;
			rv->kind = VMA_NONAME;
			rv->shm_id = id;
			*path = "/dev/zero (deleted)";
		}
		return 0;
	}
	return 0;
}

/* Refused: a shared anonymous object saved as shared memory (a process
 * met first mapped it only) and then as a file (a later one had it open
 * or mapped privately): restart would make two objects of it. */
int mm_dump_check(struct cpt_ctx *c)
{
	struct mm_cpt *mc = kind_dump_state(c, &kind_mm);

	for (int i = 0; i < mc->nr_shm; i++)
		if (!mc->shm[i].fobj && fobj_known(c, mc->shm[i].dev, mc->shm[i].ino))
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d: the shared anonymous memory at 0x%llx is open as a file or mapped privately by a process saved after it: not supported",
				       mc->shm[i].pid, (unsigned long long)mc->shm[i].start);
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

/* PAGES_REF or PAGES_PARENT: the same layout. */
static int dump_refs(struct cpt_ctx *c, uint32_t type, const struct rec_vma *rv,
		     const struct runs *refs)
{
	struct rec_pages_ref h = { .vma_start = rv->start, .npages = refs->npages,
				   .nr_runs = refs->n };
	int ret = iw_begin(&c->w, type, sizeof(h) + refs->n * sizeof(*refs->r));

	if (!ret)
		ret = iw_write(&c->w, &h, sizeof(h));
	if (!ret)
		ret = iw_write(&c->w, refs->r, refs->n * sizeof(*refs->r));
	return ret ? ret : iw_end(&c->w);
}

/* What an area's pages are, found for every area before any page is
 * written, so that the page stream can read ahead across areas. */
struct area_pages {
	int cls;		/* vma_classify()'s: 0 skip the area */
	bool aio;		/* an AIO ring: mm_aio.c's */
	uint32_t kind;		/* as classified; rv's may be VMA_NONAME */
	const char *shm_path;	/* shared anonymous memory saved as a file */
	struct rec_vma rv;
	struct runs rs;		/* its PAGES */
	struct runs old;	/* not written since the parent image */
	struct cow_src cow;	/* shared with the parent since fork */
};

/* smaps says every page of private area @v is in memory, its own
 * (anonymous; in a private file mapping, written copies) and none
 * swapped: its pages are the whole area, without a second walk of its
 * page tables after smaps' own (PAGEMAP_SCAN of 1 GiB: 13 ms), nor a
 * third for guard pages.  Not the zero page (smaps does not count it),
 * nor a guard page's marker; a migration or device entry counts as in
 * memory in both.  None freed with MADV_FREE either: reclaim may drop
 * those between smaps and the copy (a stopped process makes no new
 * ones), and the scan would then skip them. */
static bool all_resident(const struct vma *v)
{
	uint64_t size = v->end - v->start;

	return v->rss == size && v->anon == size && !v->lazyfree && !v->swap;
}

/* A private area's pages: all of it where smaps says so (and none is
 * compared with a parent's or tracked since one), else as its page
 * tables say; @anon_only: not a file mapping's own pages. */
static int private_runs(int pmfd, const struct vma *v, bool anon_only,
			struct area_pages *ap, struct runs *oldp)
{
	if (!oldp && ap->cow.pmfd < 0 && all_resident(v))
		return runs_add_range(&ap->rs, v->start, (v->end - v->start) / PAGE);
	return pagemap_runs(pmfd, v->start, v->end, anon_only, &ap->rs, &ap->cow, oldp);
}

static int plan_area(struct cpt_ctx *c, struct cpt_task *t, int pmfd,
		     const struct vma *v, const struct cpt_task *par, int ppmfd,
		     bool tracked, struct area_pages *ap)
{
	struct rec_vma *rv = &ap->rv;
	struct runs *oldp = NULL;
	int ret;

	ap->cow.pmfd = -1;
	ap->aio = mm_aio_area(v);
	if (ap->aio)
		return 0;
	ap->cls = vma_classify(c, t->pid, v, rv);
	if (ap->cls <= 0)
		return ap->cls;
	ap->kind = rv->kind;
	/* which says whether its pages are saved here or as the file's */
	if (rv->kind == VMA_ANON && (rv->flags & MAP_SHARED)) {
		ret = shm_id(c, t->pid, v, &rv->shm_id);
		if (!ret)
			ret = shm_as_fobj(c, rv, &ap->shm_path);
		if (ret)
			return ret;
	}
	if (parent_has_area(par, v))
		ap->cow.pmfd = ppmfd;
	/* registered since the parent image, at this address ("uw": an
	 * mremap or a fork drops it) */
	if (tracked && vmflag(v, "uw") && (rv->flags & MAP_PRIVATE))
		oldp = &ap->old;
	if (rv->madv & VMA_DROPPABLE)
		ret = 0;	/* the kernel may drop its pages at any time: none kept */
	else if (rv->kind == VMA_ANON && (rv->flags & MAP_SHARED))
		ret = shmem_unguarded(pmfd, t->pid, v, &ap->rs);
	else if (rv->kind == VMA_ANON)
		ret = private_runs(pmfd, v, false, ap, oldp);
	else if ((rv->kind == VMA_FILE || rv->kind == VMA_NONAME) &&
		 (rv->flags & MAP_PRIVATE))
		ret = private_runs(pmfd, v, true, ap, oldp);
	else
		ret = 0;
	if (ret == -ENOTRECOVERABLE)
		return log_err(c->log, EOPNOTSUPP, "pid %d: shared area 0x%" PRIx64 "-0x%" PRIx64 ": a guard page over data of its memory object is not supported",
			       t->pid, v->start, v->end);
	if (ret)
		return log_err(c->log, -ret, "pid %d: pages of 0x%" PRIx64 "-0x%" PRIx64 ":",
			       t->pid, v->start, v->end);
	return 0;
}

static void area_pages_free(struct area_pages *ap)
{
	free(ap->rs.r);
	free(ap->old.r);
	free(ap->cow.refs.r);
}

static int dump_vma(struct cpt_ctx *c, struct cpt_task *t, int pmfd,
		    const struct vma *v, struct area_pages *ap,
		    struct page_stream *ps)
{
	struct rec_vma rv = ap->rv;
	const char *path = "";
	int ret;

	if (ap->aio)
		return mm_aio_dump(c, t, v);
	if (ap->cls <= 0)
		return ap->cls;
	if (ap->kind == VMA_FILE) {
		ret = vma_file_id(c, t->pid, v, &rv);
		if (ret)
			return ret;
		path = v->path;
	} else if (ap->kind == VMA_NONAME) {
		char mf[128];

		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 t->pid, v->start, v->end);
		/* map_files denied (an ordinary user): an fd on it, if any */
		if (access(mf, F_OK) && errno == EPERM &&
		    unpriv_vma_fd(c, v, mf, sizeof(mf)))
			return unpriv_map_refused(c->log, t->pid, v, "a file with no name (memfd or deleted) that no fd of the tree has open");
		ret = fobj_ref(c, t->pid, mf, v->path, &rv.shm_id);
		if (!ret)
			ret = future_write_sealed(c, t->pid, mf, &rv);
		if (ret)
			return ret;
		path = v->path;
	} else if (ap->kind == VMA_SYSV) {
		ret = sysv_ref(c, t->pid, v, &rv.shm_id);
		if (ret)
			return ret;
		path = v->path;	/* shown only: the segment has its key */
	} else if (ap->kind == VMA_PACKET) {
		/* no pages: the rings come back empty (packet.c says why) */
		ret = packet_map_ref(c, t->pid, v->path, rv.start, rv.end - rv.start,
				     rv.pgoff, &rv.shm_id);
		if (ret)
			return ret;
		path = v->path;
	} else if (!strncmp(v->path, "[anon:", 6)) {
		path = v->path;	/* the name given with PR_SET_VMA */
	}
	if (ap->shm_path)
		path = ap->shm_path;
	rv.path_len = strlen(path) + 1;
	ret = iw_record_str(&c->w, REC_VMA, &rv, sizeof(rv), path);
	if (!ret && ap->old.npages)
		ret = dump_refs(c, REC_PAGES_PARENT, &rv, &ap->old);
	if (!ret && ap->rs.npages)
		ret = dump_pages(c, ps, &rv, &ap->rs);
	if (!ret && ap->cow.refs.npages)
		ret = dump_refs(c, REC_PAGES_REF, &rv, &ap->cow.refs);
	/* (a guard page is not in memory: none where all of it is) */
	if (!ret && rv.kind != VMA_VDSO && rv.kind != VMA_VVAR && !all_resident(v)) {
		struct runs g = { 0 };

		ret = guard_runs(pmfd, v->start, v->end, &g);
		if (ret)
			ret = log_err(c->log, -ret, "pid %d: guard pages of 0x%" PRIx64 ":",
				      t->pid, v->start);
		else if (g.npages)
			ret = dump_guards(c, &rv, &g);
		free(g.r);
	}
	return ret;
}

/* Every area's pages found first, then the areas written, their pages
 * streamed (pagecopy.c). */
static int dump_areas(struct cpt_ctx *c, struct cpt_task *t, int pmfd,
		      const struct cpt_task *par, int ppmfd, bool tracked)
{
	struct mm_cpt *mc = kind_dump_state(c, &kind_mm);
	int n = t->maps.n, nj = 0, ret = 0;
	struct area_pages *ap = calloc(n ? n : 1, sizeof(*ap));
	struct page_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
	struct page_stream *ps = NULL;

	if (!ap || !jobs)
		ret = log_err(c->log, ENOMEM, "pid %d: %d areas:", t->pid, n);
	for (int i = 0; i < n && !ret; i++) {
		ret = plan_area(c, t, pmfd, &t->maps.v[i], par, ppmfd, tracked, &ap[i]);
		if (!ret && ap[i].rs.npages)
			jobs[nj++] = (struct page_job){ ap[i].rs.r, ap[i].rs.n,
							ap[i].rs.npages };
	}
	if (!ret)
		ret = page_stream_start(&ps, c->log, &t->rm, pmfd, &mc->bufs, jobs, nj,
					iw_inplace_ok(&c->w));
	for (int i = 0; i < n && !ret; i++)
		ret = dump_vma(c, t, pmfd, &t->maps.v[i], &ap[i], ps);
	page_stream_end(ps);
	for (int i = 0; ap && i < n; i++)
		area_pages_free(&ap[i]);
	free(ap);
	free(jobs);
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

int mm_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	const struct cpt_task *par = live_parent(c, t);
	char path[64];
	int pmfd, ppmfd = -1, ret;
	bool tracked;

	if (t->shares_vm)
		return 0;	/* its parent's memory, saved with the parent */
	ret = mm_track_task(c, t, &tracked);
	if (!ret)
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
	ret = dump_areas(c, t, pmfd, par, ppmfd, tracked);
	/* a process about to be killed is tracked no more */
	if (!ret && !(c->flags & CKPT_KILL))
		ret = mm_track_reset(c, t, pmfd);
	close(pmfd);
	if (ppmfd >= 0)
		close(ppmfd);
	return ret;
}

void mm_dump_free(struct cpt_ctx *c, void *state)
{
	struct mm_cpt *mc = state;

	free(mc->shm);
	page_bufs_free(&mc->bufs);
	mm_track_free(&mc->track);
}
