/* mm_restore.c - the address space rebuilt in the puppet: everything it
 * inherited unmapped but the trampoline, the vdso put back, the mm
 * fields set (PR_SET_MM_MAP), then every area mapped again and its pages
 * read straight from the image (pread in the puppet, from its image fd),
 * advised, named, locked and sealed as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../model.h"
#include "../files.h"
#include "mm.h"
#include "mm_place.h"
#include "sysvshm.h"
#include "../progress.h"
#include "../page.h"

/* segs one preadv() reads: IOV_MAX, and 16 KiB of the puppet's scratch */
#define SEG_BATCH		1024

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#ifndef MADV_GUARD_REMOVE
#define MADV_GUARD_REMOVE 103
#endif
#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif

struct prctl_mm_map_ {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t auxv;
	uint32_t auxv_size, exe_fd;
};

int mm_open_file(struct rst_task *t, const char *path, int flags, long *fd)
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

/* The puppet's fd on parent image @k of the chain: ckpt's own, the one
 * it checked, given (files_give(): in any pid namespace), on first use
 * in @pfd. */
static int chain_file(const struct rst_ctx *c, struct rst_task *t, uint32_t k,
		      long *pfd)
{
	return pfd[k] >= 0 ? 0 : files_give(t, c->chain_fd[k - 1], &pfd[k]);
}

/* One seg read into place by remote preads, @step bytes at most each. */
static int read_seg(struct rst_task *t, long fd, const struct page_seg *sg,
		    uint64_t step)
{
	uint64_t a = sg->addr, left = sg->npages * PAGE, off = sg->off;
	int ret = 0;

	while (left && !ret) {
		uint64_t n = left < step ? left : step;
		long got;

		ret = remote_call(&t->rm, &got, SYS_pread64, fd, a, n, off, 0, 0);
		if (!ret && got <= 0)
			ret = log_err(t->rm.log, got < 0 ? (int)-got : ENODATA,
				      "pid %d: reading pages for 0x%llx from the image%s:",
				      t->pid, (unsigned long long)a, sg->file ? "'s parent" : "");
		if (ret)
			break;
		progress_add(t->rm.log, got);
		a += got;
		off += got;
		left -= got;
	}
	return ret;
}

/* How many segs from @i on one preadv() can read: of the same file,
 * back to back in it, none the parent's, at most @max bytes. */
static uint32_t batch_len(const struct rst_vma *v, uint32_t i, bool own_only,
			  uint64_t max)
{
	const struct page_seg *sg = v->segs;
	uint64_t bytes = sg[i].npages * PAGE;
	uint32_t n = 1;

	while (i + n < v->nr_segs && n < SEG_BATCH) {
		const struct page_seg *p = &sg[i + n - 1], *q = &sg[i + n];

		if ((own_only && q->ref) || q->file != p->file ||
		    q->off != p->off + p->npages * PAGE ||
		    bytes + q->npages * PAGE > max)
			break;
		bytes += q->npages * PAGE;
		n++;
	}
	return n;
}

/* @n segs by one remote preadv(), their iovecs in the scratch: a
 * sparse area's runs in one call, not one each.  1: it read less (the
 * caller reads them one by one, which says why). */
static int read_batch(struct rst_task *t, long fd, const struct page_seg *sg,
		      uint32_t n)
{
	struct iovec iov[SEG_BATCH];
	uint64_t at, total = 0;
	long got;
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		iov[i] = (struct iovec){ (void *)(uintptr_t)sg[i].addr,
					 sg[i].npages * PAGE };
		total += iov[i].iov_len;
	}
	ret = rst_scratch_put(t, 0, iov, n * sizeof(*iov), &at);
	if (!ret)
		ret = remote_call(&t->rm, &got, SYS_preadv, fd, at, n, sg[0].off, 0, 0);
	if (ret)
		return ret;
	if (got != (long)total)
		return 1;
	progress_add(t->rm.log, got);
	return 0;
}

/* The saved pages of @v read into place, from the image or a parent
 * image of its chain; with @own_only not those it shares with its
 * parent (inherited from it, in place already). */
static int fill_pages(const struct rst_ctx *c, struct rst_task *t,
		      const struct rst_vma *v, bool own_only)
{
	/* read(2) moves at most 0x7ffff000 bytes a call; 64 MiB at a time
	 * for a progress line */
	uint64_t max = t->rm.log->progress ? 64 << 20 : 0x40000000;
	long pfd[CKPT_MAX_CHAIN + 1];
	int ret = 0;

	for (int k = 0; k <= c->nr_chain; k++)
		pfd[k] = -1;
	pfd[0] = t->img_fd;
	for (uint32_t i = 0, n; i < v->nr_segs && !ret; i += n) {
		const struct page_seg *sg = &v->segs[i];

		n = 1;
		if (own_only && sg->ref)
			continue;
		ret = chain_file(c, t, sg->file, pfd);
		if (ret)
			break;
		n = batch_len(v, i, own_only, max);
		ret = n > 1 ? read_batch(t, pfd[sg->file], sg, n) : 1;
		if (ret != 1)
			continue;
		ret = 0;
		for (uint32_t k = 0; k < n && !ret; k++)
			ret = read_seg(t, pfd[sg->file], &sg[k], max);
	}
	for (int k = 1; k <= c->nr_chain; k++) {
		long res;

		if (pfd[k] >= 0)
			rcall(&t->rm, &res, SYS_close, pfd[k]);
	}
	return ret;
}

/* The area's madvise() flags: with @thp those that decide how its pages
 * fault in (transparent huge pages), which must come before they are
 * written (a sparse MADV_NOHUGEPAGE area filled under THP "always" would
 * take a huge page for each page it had), else the others. */
static int advise_bits(struct rst_task *t, const struct rst_vma *v, bool thp)
{
	static const struct { uint32_t bit; int advice; } adv[] = {
		{ VMA_MADV_DONTFORK, MADV_DONTFORK },
		{ VMA_MADV_WIPEONFORK, MADV_WIPEONFORK },
		{ VMA_MADV_DONTDUMP, MADV_DONTDUMP },
		{ VMA_MADV_HUGEPAGE, MADV_HUGEPAGE },
		{ VMA_MADV_NOHUGEPAGE, MADV_NOHUGEPAGE },
		{ VMA_MADV_MERGEABLE, MADV_MERGEABLE },
		{ VMA_MADV_SEQUENTIAL, MADV_SEQUENTIAL },
		{ VMA_MADV_RANDOM, MADV_RANDOM },
	};
	const uint32_t thp_bits = VMA_MADV_HUGEPAGE | VMA_MADV_NOHUGEPAGE;
	int ret = 0;

	for (size_t i = 0; i < sizeof(adv) / sizeof(adv[0]) && !ret; i++)
		if ((v->v.madv & adv[i].bit) && !(adv[i].bit & thp_bits) == !thp)
			ret = rcheck(&t->rm, NULL, "madvise", SYS_madvise,
				     v->v.start, v->v.end - v->v.start, adv[i].advice);
	return ret;
}

/* The rest of the area's state, once its pages are in: advice (those of
 * advise_bits(.., true) too, given first), guard pages, mlock, name. */
static int vma_advise(struct rst_task *t, const struct rst_vma *v)
{
	uint64_t len = v->v.end - v->v.start, addr;
	int ret = advise_bits(t, v, false);
	for (uint32_t i = 0; i < v->nr_guards && !ret; i++)
		ret = rcheck(&t->rm, NULL, "madvise(MADV_GUARD_INSTALL)", SYS_madvise,
			     v->guards[i].addr, v->guards[i].npages * PAGE,
			     MADV_GUARD_INSTALL);
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

/* The first area of a shared anonymous object that other areas map below
 * or beyond it: the whole object is made (anywhere), this area's part of
 * it moved into place, and the rest of the mapping dropped; the object
 * keeps its size for the later areas. */
static int map_shm_whole(struct rst_task *t, const struct rst_vma *v,
			 const struct shm_first *first, int prot, int flags, long *res)
{
	uint64_t len = v->v.end - v->v.start, at = v->v.pgoff - first->base;
	long tmp, r;
	int ret = rcheck(&t->rm, &tmp, "mmap", SYS_mmap, 0, first->size, prot,
			 flags & ~(MAP_FIXED | MAP_GROWSDOWN), -1, 0);

	if (ret)
		return ret;
	ret = rcheck(&t->rm, res, "mremap", SYS_mremap, tmp + at, len, len,
		     MREMAP_MAYMOVE | MREMAP_FIXED, v->v.start);
	if (at)
		rcall(&t->rm, &r, SYS_munmap, tmp, at);
	if (at + len < first->size)
		rcall(&t->rm, &r, SYS_munmap, tmp + at + len, first->size - at - len);
	return ret;
}

/* The files the areas map, opened ahead in the puppet by one run of
 * the batch runner, up to OPEN_AHEAD at a time, and closed (queued)
 * once an area needs one they lack: a python's 30 libraries were an
 * open and a close each, two remote calls of two stops per file. */
#define OPEN_AHEAD	32
#define OPEN_PATHS	(16u << 10)	/* their paths' room in the scratch */

struct open_set {
	int n;
	const char *path[OPEN_AHEAD];
	int flags[OPEN_AHEAD];
	long fd[OPEN_AHEAD];	/* in the puppet */
};

/* How @v's file is opened to be mapped: O_RDONLY or O_RDWR, or -1 if
 * it is not mapped from its path (map_vma()). */
static int open_flags(struct rst_ctx *c, const struct rst_task *t,
		      const struct rst_vma *v)
{
	const struct shm_first *first = v->v.shm_id ? mm_shm_first(c, v->v.shm_id) : NULL;
	/* a shared area that may become writable needs a rw file */
	bool rw = (v->v.flags & MAP_SHARED) &&
		  ((v->v.madv & VMA_MAYWRITE) || (v->v.prot & PROT_WRITE));

	if (v->v.kind != VMA_FILE || (first && (first->pid != t->pid || first->start != v->v.start)))
		return -1;
	return rw ? O_RDWR : O_RDONLY;
}

static int open_set_find(const struct open_set *os, const char *path, int flags)
{
	for (int i = 0; i < os->n; i++)
		if (os->flags[i] == flags && !strcmp(os->path[i], path))
			return i;
	return -1;
}

static void open_set_close(struct rst_task *t, struct open_set *os)
{
	for (int i = 0; i < os->n; i++)	/* (queued in a batch) */
		rcheck(&t->rm, NULL, "close", SYS_close, os->fd[i]);
	os->n = 0;
}

/* The files of the areas from @i on, as many as fit, opened. */
static int open_ahead(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		      const struct rst_vma **keep, int i, struct open_set *os)
{
	long nr[OPEN_AHEAD], a[OPEN_AHEAD][6];
	size_t room = 0;
	int failed, ret;

	open_set_close(t, os);
	for (; i < s->nr && os->n < OPEN_AHEAD; i++) {
		const struct rst_vma *v = &s->vmas[i];
		int fl = keep[i] ? -1 : open_flags(c, t, v);
		size_t len = strlen(v->path) + 1;
		uint64_t at;

		if (fl < 0 || open_set_find(os, v->path, fl) >= 0)
			continue;
		if (room + len > OPEN_PATHS && os->n)
			break;
		ret = rst_scratch_put(t, room, v->path, len, &at);
		if (ret)
			return ret;
		room = (room + len + 7) & ~(size_t)7;
		nr[os->n] = SYS_openat;
		a[os->n][0] = AT_FDCWD;
		a[os->n][1] = (long)at;
		a[os->n][2] = fl | O_CLOEXEC;
		a[os->n][3] = a[os->n][4] = a[os->n][5] = 0;
		os->path[os->n] = v->path;
		os->flags[os->n++] = fl;
	}
	ret = remote_calls_upto(&t->rm, t->tramp + RST_BATCH_OFF, os->n, nr, a, os->fd, &failed);
	if (!ret && failed >= 0)
		ret = log_err(t->rm.log, (int)-os->fd[failed], "pid %d: open %s:", t->pid,
			      os->path[failed]);
	if (ret)	/* those opened before it, closed */
		os->n = failed >= 0 ? failed : 0;
	return ret;
}

/* @v's file, open in the puppet: *@fd. */
static int open_set_get(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
			const struct rst_vma **keep, const struct rst_vma *v,
			struct open_set *os, long *fd)
{
	int fl = open_flags(c, t, v), k = open_set_find(os, v->path, fl);
	int ret = k < 0 ? open_ahead(c, t, s, keep, (int)(v - s->vmas), os) : 0;

	if (!ret && k < 0)
		k = open_set_find(os, v->path, fl);
	if (!ret && k < 0)
		ret = log_err(t->rm.log, EIO, "pid %d: %s not opened", t->pid, v->path);
	if (!ret)
		*fd = os->fd[k];
	return ret;
}

/* A small area protected against writing, whose pages ckpt would write
 * at once (PLACE_NOW, mm_place.c) after a stop for its mmap: a
 * library's relocated data, a stop for each library.  Its pages are
 * read by the puppet instead, queued in the batch that maps it, before
 * its mprotect; their few faults cost less than a stop.  (As for any
 * page the puppet reads, the page check checks them in the image.  A
 * queued call's result is checked only for an error: a short read
 * would need the image cut under us, which the check would find, as it
 * reads every cell of the image's pages before anything runs.) */
#define QUEUED_READ_MAX	(64u << 10)

static int read_queued(struct rst_task *t, const struct rst_vma *v)
{
	int ret = 0;

	for (uint32_t i = 0; i < v->nr_segs && !ret; i++)
		ret = rcheck(&t->rm, NULL, "reading an area's pages", SYS_pread64,
			     t->img_fd, v->segs[i].addr, v->segs[i].npages * PAGE,
			     v->segs[i].off);
	if (!ret)
		progress_add(t->rm.log, v->pages_len);
	return ret;
}

/* @v's pages in, or on their way: the loader brings them (--lazy,
 * mm_lazy.c), ckpt places them (mm_place.c), or the puppet reads them. */
static int area_pages(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		      const struct rst_vma *v, enum place_how how, struct placer *pl)
{
	bool touching;
	int ret;

	if (mm_lazy_area(c, v))
		return 0;
	if (how == PLACE_NOW && v->pages_len <= QUEUED_READ_MAX)
		return read_queued(t, v);
	/* an area a userfaultfd places is registered before a neighbour
	 * is mapped or faulted beside it, as before: not held */
	touching = (v > s->vmas && v[-1].v.end == v->v.start) ||
		   (v + 1 < s->vmas + s->nr && v[1].v.start == v->v.end);
	/* ckpt places them from outside once the batch that maps the area
	 * has run: a small one held, its first page read in that batch,
	 * any other at once */
	ret = how != PLACE_NONE && !(how == PLACE_UFFD && touching) ?
	      placer_hold(pl, v, how) : 1;
	if (!ret) {
		ret = rcheck(&t->rm, NULL, "reading an area's first page", SYS_pread64,
			     t->img_fd, v->segs[0].addr, PAGE, v->segs[0].off);
		/* (enough held for the placer to start on, beside the build) */
		if (!ret && placer_held_full(pl))
			ret = remote_flush(&t->rm) ?: placer_add_held(pl);
		return ret;
	}
	if (ret == 1 && how != PLACE_NONE)
		ret = remote_flush(&t->rm) ?: placer_add_held(pl) ?: placer_add(pl, v, how);
	return ret == 1 ? fill_pages(c, t, v, false) : ret;
}

static int map_vma(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		   const struct rst_vma **keep, const struct rst_vma *v,
		   struct open_set *os, struct placer *pl)
{
	uint64_t len = v->v.end - v->v.start, off = v->v.pgoff;
	enum place_how how = placer_how(pl, c, v);
	int prot = v->v.prot | (v->pages_len ? PROT_WRITE : 0);
	int flags = v->v.flags | MAP_FIXED |
		    (v->v.madv & VMA_NORESERVE ? MAP_NORESERVE : 0);
	const struct shm_first *first = v->v.shm_id ? mm_shm_first(c, v->v.shm_id) : NULL;
	long fd = -1, res = v->v.start;
	bool shared_fd = false;		/* the open set's, kept */
	int ret;

	if (v->v.kind == VMA_SYSV) {
		ret = sysv_attach(c, t, &v->v, &prot);
		if (!ret && prot != (int)v->v.prot)
			ret = rcheck(&t->rm, NULL, "mprotect", SYS_mprotect,
				     v->v.start, len, v->v.prot);
		return ret ? ret : advise_bits(t, v, true) ?: vma_advise(t, v);
	}
	if (first && (first->pid != t->pid || first->start != v->v.start)) {
		char path[128];

		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", first->pid,
			 (unsigned long long)first->start, (unsigned long long)first->end);
		ret = mm_open_file(t, path, O_RDWR, &fd);
		if (ret)
			return ret;
		off = v->v.pgoff - first->base;
	} else if (v->v.kind == VMA_NONAME) {
		/* the object ckpt made, the one its fds and other areas have */
		ret = noname_fd(c, t, v, &fd);
		if (ret)
			return ret;
	} else if (v->v.kind == VMA_FILE) {
		ret = open_set_get(c, t, s, keep, v, os, &fd);
		if (ret)
			return ret;
		shared_fd = true;
	}
	if (fd < 0)
		flags |= MAP_ANONYMOUS;
	if (v->v.madv & VMA_DROPPABLE)	/* a mapping type of its own */
		flags = (flags & ~MAP_PRIVATE) | MAP_DROPPABLE;
	if (first && fd < 0 && (first->base != v->v.pgoff || first->size != len))
		ret = map_shm_whole(t, v, first, prot, flags, &res);
	else	/* (MAP_FIXED: at its place or failed; queued in a batch) */
		ret = rcheck(&t->rm, NULL, "mmap", SYS_mmap, v->v.start, len, prot,
			     flags, fd, fd >= 0 ? off : 0);
	if (fd >= 0 && !shared_fd)
		rcheck(&t->rm, NULL, "close", SYS_close, fd);
	if (ret)
		return log_err(t->rm.log, t->rm.log->err, "pid %d: mapping 0x%llx-0x%llx %s failed",
			       t->pid, (unsigned long long)v->v.start,
			       (unsigned long long)v->v.end, v->path);
	if ((uint64_t)res != v->v.start)
		return log_err(t->rm.log, EFAULT, "pid %d: area 0x%llx landed at 0x%lx",
			       t->pid, (unsigned long long)v->v.start, res);
	ret = advise_bits(t, v, true) ?: area_pages(c, t, s, v, how, pl);
	if (!ret && prot != (int)v->v.prot)
		ret = rcheck(&t->rm, NULL, "mprotect", SYS_mprotect, v->v.start,
			     len, v->v.prot);
	return ret ? ret : vma_advise(t, v);
}

/* A packet socket's rings, mapped again from the restored socket (its
 * fd in the process, which files restored before). */
static int map_packet(struct rst_ctx *c, struct rst_task *t, const struct rst_vma *v)
{
	uint64_t len = v->v.end - v->v.start;
	int fd = files_fd_of(c, t, v->v.shm_id);
	long res;
	int ret = rcheck(&t->rm, &res, "mmap", SYS_mmap, v->v.start, len, v->v.prot,
			 v->v.flags | MAP_FIXED, fd, 0);

	if (ret)
		return log_err(t->rm.log, t->rm.log->err, "pid %d: mapping 0x%llx-0x%llx %s failed",
			       t->pid, (unsigned long long)v->v.start,
			       (unsigned long long)v->v.end, v->path);
	if ((uint64_t)res != v->v.start)
		return log_err(t->rm.log, EFAULT, "pid %d: area 0x%llx landed at 0x%lx",
			       t->pid, (unsigned long long)v->v.start, res);
	return advise_bits(t, v, true) ?: vma_advise(t, v);
}

/* @same_exe: the exe link inherited from the parent is the one to set;
 * it is left as it is (it could not change while the child keeps an
 * inherited mapping of it). */
static int set_mm_fields(struct rst_task *t, const struct mm_state *s,
			 bool same_exe)
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

	exe_fd = -1;
	ret = same_exe ? 0 : mm_open_file(t, s->exe, O_RDONLY, &exe_fd);
	if (ret)
		return ret;
	map.exe_fd = exe_fd;
	ret = rst_scratch_put(t, 4096, s->auxv, m->auxv_len, &map.auxv);
	if (!ret)
		ret = rst_scratch_put(t, 0, &map, sizeof(map), &addr);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "prctl(PR_SET_MM_MAP)", SYS_prctl,
			     PR_SET_MM, PR_SET_MM_MAP, addr, sizeof(map));
	if (exe_fd >= 0)	/* (queued, in the stop of the next calls) */
		ret = rcheck(&t->rm, NULL, "close exe", SYS_close, exe_fd) ?: ret;
	return ret;
}

/* Copy-on-write sharing with the parent since fork: a parent's memory
 * is built before its children are forked (mm_fork_prepare()), and a
 * child keeps a private area it inherited if the parent's is the very
 * same area and the child shares pages of it with the parent (PAGES_REF):
 * those pages stay the parent's frames, as they were.  The child's own
 * pages are written over them, the pages it did not have dropped. */
static const struct mm_state *premapped_parent(struct rst_ctx *c,
					       const struct rst_task *t)
{
	struct rst_task *p = t->t.ppid ? rst_task_by_pid(c, t->t.ppid) : NULL;
	const struct mm_state *ps = p && p != t ? KSTATE(p, kind_mm) : NULL;

	return ps && ps->premapped ? ps : NULL;
}

/* The parent's area @v inherited as it is, NULL if none. */
static const struct rst_vma *inherited(const struct mm_state *ps,
				       const struct rst_vma *v)
{
	int lo = 0, hi = ps ? ps->nr : 0;

	if (!v->have_refs || !(v->v.flags & MAP_PRIVATE) ||
	    (v->v.kind != VMA_ANON && v->v.kind != VMA_FILE) ||
	    (v->v.madv & (VMA_MADV_DONTFORK | VMA_MADV_WIPEONFORK | VMA_DROPPABLE)))
		return NULL;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		const struct rst_vma *p = &ps->vmas[mid];

		if (p->v.start < v->v.start)
			lo = mid + 1;
		else if (p->v.start > v->v.start)
			hi = mid;
		else
			return !memcmp(&p->v, &v->v, sizeof(v->v)) &&
			       !strcmp(p->path, v->path) ? p : NULL;
	}
	return NULL;
}

static int unmap_upto(struct rst_task *t, uint64_t *at, uint64_t to)
{
	int ret = 0;

	if (*at < to) {
		ret = rcheck(&t->rm, NULL, "munmap", SYS_munmap, *at, to - *at);
		*at = to;
	}
	return ret;
}

/* Where the vdso is the puppet's own, moved (ARCH_VDSO_MOVED): kept. */
static bool vdso_moved(const struct rst_vma *v)
{
	return ARCH_VDSO_MOVED && (v->v.kind == VMA_VDSO || v->v.kind == VMA_VVAR);
}

/* The end of the puppet's highest area below ARCH_TASK_SIZE, the top of
 * what there is to unmap: munmap() past this kernel's own top is EINVAL,
 * and that top can be lower than the architecture's (ppc64 with 4 KiB
 * pages: 64 TiB, not 128).  ARCH_TASK_SIZE if its maps cannot be read. */
static uint64_t puppet_top(pid_t pid)
{
	char path[64], line[512];
	uint64_t top = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return TASK_SIZE_64;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && b <= TASK_SIZE_64 && b > top)
			top = b;
	}
	fclose(f);
	return top ? top : TASK_SIZE_64;
}

/* Everything the puppet has goes, but the trampoline and @keep. */
static int unmap_all_but(struct rst_task *t, const struct mm_state *s,
			 const struct rst_vma **keep)
{
	uint64_t at = 0, lo = t->tramp, hi = t->tramp + t->tramp_len;
	int ret = remote_flush(&t->rm);	/* (its maps read as they are) */
	uint64_t top = puppet_top(t->pid);
	bool tramp_done = !lo;

	for (int i = 0; i <= s->nr && !ret; i++) {
		uint64_t start = i < s->nr && s->vmas[i].v.start < top ?
				 s->vmas[i].v.start : top;

		if (!tramp_done && lo <= start) {
			ret = unmap_upto(t, &at, lo);
			at = hi > at ? hi : at;
			tramp_done = true;
		}
		if (!ret && i < s->nr && (keep[i] || vdso_moved(&s->vmas[i]))) {
			ret = unmap_upto(t, &at, start);
			at = s->vmas[i].v.end > at ? s->vmas[i].v.end : at;
		}
	}
	return ret ? ret : unmap_upto(t, &at, top);
}

/* An inherited area made the child's: the parent's guard pages
 * removed, pages it did not have dropped (MADV_DONTNEED: zeros, or the
 * file's page), its own written, its own guards installed. */
static int fill_inherited(const struct rst_ctx *c, struct rst_task *t,
			  const struct rst_vma *v, const struct rst_vma *pv)
{
	uint64_t at = v->v.start, len = v->v.end - v->v.start;
	bool own = false;
	int ret = 0;

	if (pv->nr_guards)
		ret = rcheck(&t->rm, NULL, "madvise(MADV_GUARD_REMOVE)", SYS_madvise,
			     v->v.start, len, MADV_GUARD_REMOVE);

	for (uint32_t i = 0; i <= v->nr_segs && !ret; i++) {
		uint64_t a = i < v->nr_segs ? v->segs[i].addr : v->v.end;

		if (a > at)
			ret = rcheck(&t->rm, NULL, "madvise(MADV_DONTNEED)", SYS_madvise,
				     at, a - at, MADV_DONTNEED);
		if (i < v->nr_segs) {
			at = a + v->segs[i].npages * PAGE;
			own |= !v->segs[i].ref;
		}
	}
	if (!ret && own && !(v->v.prot & PROT_WRITE))
		ret = rcheck(&t->rm, NULL, "mprotect", SYS_mprotect, v->v.start, len,
			     v->v.prot | PROT_WRITE);
	if (!ret && own)
		ret = fill_pages(c, t, v, true);
	if (!ret && own && !(v->v.prot & PROT_WRITE))
		ret = rcheck(&t->rm, NULL, "mprotect", SYS_mprotect, v->v.start, len,
			     v->v.prot);
	return ret ? ret : vma_advise(t, v);
}

static int mm_build(struct rst_ctx *c, struct rst_task *t, struct mm_state *s)
{
	const struct mm_state *ps = premapped_parent(c, t);
	const struct rst_vma **keep = calloc(s->nr + 1, sizeof(*keep));
	struct open_set os = { 0 };
	struct placer pl = { .ufd = -1, .memfd = -1, .img_fd = -1, .scan = { .fd = -1 } };
	int ret = keep ? 0 : log_err(c->log, ENOMEM, "mm:"), end;

	/* the areas' mmap, mprotect, madvise: in as few stops as can be */
	if (!ret)
		ret = rst_batch_begin(t, &t->rm);

	for (int i = 0; i < s->nr && !ret; i++)
		keep[i] = inherited(ps, &s->vmas[i]);
	if (!ret && ARCH_VDSO_MOVED)
		ret = vdso_map(t, s);
	if (!ret)
		ret = unmap_all_but(t, s, keep);
	if (!ret && !ARCH_VDSO_MOVED)
		ret = vdso_map(t, s);
	/* The exe link can change only while the old exe (our own binary,
	 * perhaps the very file the saved process runs) is not mapped: now. */
	if (!ret)
		ret = set_mm_fields(t, s, ps && !strcmp(ps->exe, s->exe));
	if (!ret)
		ret = placer_begin(c, t, s, keep, &pl);
	for (int i = 0; i < s->nr && !ret; i++)
		if (keep[i])
			ret = fill_inherited(c, t, &s->vmas[i], keep[i]);
		else if (s->vmas[i].v.kind == VMA_ANON || s->vmas[i].v.kind == VMA_FILE ||
			 s->vmas[i].v.kind == VMA_NONAME || s->vmas[i].v.kind == VMA_SYSV)
			ret = map_vma(c, t, s, keep, &s->vmas[i], &os, &pl);
		else if (s->vmas[i].v.kind == VMA_PACKET)
			ret = map_packet(c, t, &s->vmas[i]);
	open_set_close(t, &os);
	end = rst_batch_end(t, &t->rm, !ret);
	ret = placer_end(&pl, ret ?: end);
	free((void *)keep);
	if (!ret)
		ret = mm_aio_restore(t, s);
	for (int i = 0; i < s->nr && !ret; i++)
		if (s->vmas[i].v.madv & VMA_SEALED)
			ret = rcheck(&t->rm, NULL, "mseal", 462, s->vmas[i].v.start,
				     s->vmas[i].v.end - s->vmas[i].v.start, 0);
	return ret ? ret : mm_lazy_start(c, t, s);
}

/* Whether @t's memory can be built before its children are forked: not
 * with what would bind them (sealed areas, which they could not unmap;
 * SysV attaches, counted per attach), nor what must wait for the tree
 * (files under /proc) or for its fds (packet rings, mapped from their
 * socket). */
static bool premappable(const struct mm_state *s)
{
	for (int i = 0; i < s->nr; i++)
		if ((s->vmas[i].v.madv & VMA_SEALED) || s->vmas[i].v.kind == VMA_SYSV ||
		    s->vmas[i].v.kind == VMA_PACKET ||
		    !strncmp(s->vmas[i].path, "/proc/", 6))
			return false;
	return true;
}

int mm_fork_prepare(struct rst_ctx *c, struct rst_task *t)
{
	struct mm_state *s = t->kind_state[kind_index(&kind_mm)];
	int ret;

	if (!s || s->premapped || (t->t.flags & TASK_SHARES_VM) || !premappable(s))
		return 0;
	ret = mm_build(c, t, s);
	s->premapped = !ret;
	return ret;
}

int mm_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct mm_state *s = t->kind_state[kind_index(&kind_mm)];

	if (t->t.flags & TASK_SHARES_VM)
		return 0;	/* its parent's, which its parent restores */
	return s->premapped ? 0 : mm_build(c, t, s);
}
