/* mm_place.c - a restart's private pages placed by ckpt itself, not
 * read by the puppet: from the image, a piece at a time into a buffer of
 * ckpt's, by a thread of ckpt's beside the build.
 *
 * Why: the puppet's reads were half a JVM's restart, one remote call
 * each, one after the other with the calls that map the areas.  Now a
 * thread of ckpt's places an area's pages while ckpt's own thread goes
 * on mapping the next areas by remote calls (the build is pinned to one
 * CPU, pin.h; the thread runs on the caller's others); after the last
 * area ckpt's thread places pages too, until every page is in
 * (placer_end()).  Two ways:
 *
 * - UFFDIO_COPY, for the areas a lazy restart would leave to its loader
 *   (private anonymous, mm_lazy_vma()) without guard pages, registered
 *   on a userfaultfd the puppet made and ckpt took, where transparent
 *   huge pages would not be used (a fault of such an area takes a huge
 *   page; UFFDIO_COPY places small ones).  A page read into fresh memory
 *   is cleared by its fault, then written; one placed by UFFDIO_COPY is
 *   written once: `hwlimit place` (bench/) puts 512 MiB into fresh
 *   memory in two thirds of the time of read(2).  Only in a process
 *   with PLACE_MIN or more of such pages: below that the userfaultfd
 *   costs more than it saves.
 * - pwrite() to /proc/PID/mem, for the other writable areas (a file's
 *   written pages, shared anonymous memory: PostgreSQL's buffers; all of
 *   them where no userfaultfd is made):
 *   as fast as the puppet's own read, but beside the build.  Not an area
 *   protected against writing: that write needs the kernel's FOLL_FORCE,
 *   which proc_mem.force_override may grant the tracing thread alone.
 *
 * The puppet reads the rest as before (mm_restore.c): droppable and
 * mlocked areas, those protected against writing that are not placed by
 * userfaultfd, and pages in a parent image of a chain.
 *
 * An area's boundaries stay as they were: its first page goes in at
 * once, so that it has an anon_vma of its own before it is advised and
 * protected and before the next area is mapped beside it, as it had when
 * the puppet read all its pages there and then: by ckpt's thread after
 * the area's mmap has run, or read by the puppet in the same batch of
 * calls as the mmap (placer_hold(), a small area).
 *
 * Nothing runs in the puppet before placer_end() has every page in and
 * every area unregistered again: its userfaultfd is made in user-mode-only
 * mode, so that no kernel access to a page not yet placed could wait on
 * it (it would fail instead), and it is closed in the puppet at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../crc32c.h"
#include "../fileio.h"
#include "../lazy.h"
#include "../membuf.h"
#include "../model.h"
#include "../page.h"
#include "../pageverify.h"
#include "../pin.h"
#include "../progress.h"
#include "../vec.h"
#include "mm.h"
#include "mm_place.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

#define PLACE_MIN	(1ULL << 20)	/* to make a userfaultfd for */
#define PLACE_THREAD	(256ULL << 10)	/* to start the thread for */
#define PLACE_JOB	PV_CELL		/* a job's most, and where jobs are cut:
					 * the two threads share the last area's
					 * pages, and a job that is one cell of the
					 * page check takes its checksum
					 * (pageverify.h) */

struct place_job {
	uint64_t dst, off, len;
	enum place_how how;
};

/* Whether the areas of this machine's kernel get huge pages on a fault:
 * "always", or with MADV_HUGEPAGE under "madvise". */
static int thp_mode(void)
{
	char buf[64] = "";
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return THP_NEVER;
	buf[n] = '\0';
	return strstr(buf, "[always]") ? THP_ALWAYS :
	       strstr(buf, "[madvise]") ? THP_MADVISE : THP_NEVER;
}

/* Whether @v's pages may be written through /proc/PID/mem from the
 * placer's thread: a write to an area not writable needs the kernel's
 * FOLL_FORCE, which proc_mem.force_override may grant the tracing
 * thread alone; an mlocked one would be faulted in for nothing first. */
static bool mem_ok(const struct rst_vma *v)
{
	return (v->v.prot & PROT_WRITE) && !(v->v.madv & VMA_MLOCKED);
}

/* How @v's pages are written to /proc/PID/mem, if they may be: beside
 * the build, or at once by ckpt's thread while the area is mapped
 * writable for them (one the process may not write, a library's
 * relocated data made read-only again).  At once, not by the puppet's
 * read: the puppet's pread() writes each page through the puppet's
 * own address, a fault of the guest and one of the host's shadow
 * tables a page, where ckpt's write copies to the page from the
 * kernel's side (python: 504 such pages, 3.7 ms by 24 remote preads).
 * (A small one the puppet reads after all, in the batch that maps it,
 * where that costs no stop: mm_restore.c read_queued().) */
static enum place_how by_write(const struct rst_vma *v)
{
	return mem_ok(v) ? PLACE_MEM : (v->v.madv & VMA_MLOCKED) ? PLACE_NONE : PLACE_NOW;
}

/* How @v's pages would be placed, a userfaultfd or not. */
static enum place_how how_for(const struct placer *p, const struct rst_ctx *c,
			      const struct rst_vma *v)
{
	bool thp = (p->thp == THP_ALWAYS && !(v->v.madv & VMA_MADV_NOHUGEPAGE)) ||
		   (p->thp == THP_MADVISE && (v->v.madv & VMA_MADV_HUGEPAGE));

	if (p->img_fd < 0 || !v->pages_len || mm_lazy_area(c, v) || (v->v.madv & VMA_DROPPABLE) ||
	    (v->v.kind != VMA_ANON && v->v.kind != VMA_FILE && v->v.kind != VMA_NONAME))
		return PLACE_NONE;
	for (uint32_t i = 0; i < v->nr_segs; i++)
		if (v->segs[i].file || v->segs[i].off > p->img_len ||
		    v->segs[i].npages * PAGE > p->img_len - v->segs[i].off)
			return PLACE_NONE;
	if (mm_lazy_vma(&v->v) && !thp && !v->nr_guards && !v->have_refs)
		return PLACE_UFFD;
	return by_write(v);
}

enum place_how placer_how(const struct placer *p, const struct rst_ctx *c,
			  const struct rst_vma *v)
{
	enum place_how how = how_for(p, c, v);

	if (how != PLACE_UFFD || p->ufd >= 0)
		return how;
	return by_write(v);
}

int mm_take_uffd(struct rst_task *t, int flags, int *ufd)
{
	long rfd;
	int pidfd, err = 0, ret = rcall(&t->rm, &rfd, SYS_userfaultfd, flags);

	*ufd = -1;
	if (ret)
		return ret;
	if (rfd < 0)
		return (int)-rfd;
	pidfd = syscall(SYS_pidfd_open, t->pid, 0);
	*ufd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, (int)rfd, 0);
	if (*ufd < 0)
		err = errno;
	if (pidfd >= 0)
		close(pidfd);
	ret = rcheck(&t->rm, NULL, "close(userfaultfd)", SYS_close, rfd);
	if (ret && *ufd >= 0) {
		close(*ufd);
		*ufd = -1;
	}
	return ret ? ret : err;
}

int mm_scanner_open(struct pm_scanner *sc, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	sc->no_scan = false;
#ifdef CKPT_TEST_HOOKS
	/* the way of a kernel without PAGEMAP_SCAN (before 6.7) */
	sc->no_scan = getenv("CKPT_TEST_PAGEMAP_READ") != NULL;
#endif
	sc->fd = open(path, O_RDONLY | O_CLOEXEC);
	return sc->fd < 0 ? errno : 0;
}

void mm_scanner_close(struct pm_scanner *sc)
{
	if (sc->fd >= 0)
		close(sc->fd);
	sc->fd = -1;
}

/* Up to @max runs of [*at, end) with pages in (present or swapped) into
 * @v, *at moved past what was looked at: how many, or -errno. */
static long pages_in(struct pm_scanner *sc, uint64_t *at, uint64_t end, struct pm_region *v,
		     long max)
{
	struct pm_scan a = { .size = sizeof(a), .start = *at, .end = end,
			     .vec = (uintptr_t)v, .vec_len = max,
			     .category_anyof_mask = PM_IS_PRESENT | PM_IS_SWAPPED,
			     .return_mask = PM_IS_PRESENT | PM_IS_SWAPPED };
	uint64_t e[512], to = end - *at > sizeof(e) / 8 * PAGE ? *at + sizeof(e) / 8 * PAGE : end;
	long n = sc->no_scan ? -1 : ioctl(sc->fd, PM_SCAN_IOCTL, &a);
	ssize_t k;

	if (n >= 0) {
		*at = a.walk_end > *at ? a.walk_end : end;
		return n;
	}
	/* an older kernel (no PAGEMAP_SCAN): its pagemap, 512 pages a read */
	sc->no_scan = true;
	k = pread(sc->fd, e, (to - *at) / PAGE * 8, (off_t)(*at / PAGE * 8));
	if (k < 0)
		return -errno;
	n = 0;
	to = *at + k / 8 * PAGE;
	for (ssize_t i = 0; i < k / 8; i++) {
		uint64_t a0 = *at + i * PAGE;

		if (!(e[i] >> 62))		/* neither present nor swapped */
			continue;
		if (n && v[n - 1].end == a0) {
			v[n - 1].end += PAGE;
		} else if (n == max) {		/* the rest next time */
			to = a0;
			break;
		} else {
			v[n++] = (struct pm_region){ a0, a0 + PAGE, 0 };
		}
	}
	*at = k > 0 ? to : end;
	return n;
}

int mm_pages_present(struct pm_scanner *sc, const struct rst_vma *v, struct lazy_set *found)
{
	struct pm_region r[64];

	for (uint32_t i = 0; i < v->nr_segs; i++) {
		const struct page_seg *g = &v->segs[i];
		uint64_t end = g->addr + g->npages * PAGE;

		for (uint64_t at = g->addr; at < end;) {
			long n = pages_in(sc, &at, end, r, 64);

			if (n < 0)
				return (int)-n;
			for (long k = 0; k < n; k++)
				if (lazy_set_add(found, r[k].start, (r[k].end - r[k].start) / PAGE,
						 g->off + (r[k].start - g->addr)))
					return ENOMEM;
		}
	}
	return 0;
}

#ifdef CKPT_TEST_HOOKS
/* CKPT_TEST_PEEK=1: @v read as someone else may read a process's memory
 * while it is built (ps, a debugger), a word of every 16th page of its
 * image's, before it is registered on a userfaultfd: each such page is
 * the zero page then, not missing. */
void mm_test_peek(int memfd, const struct rst_vma *v)
{
	uint64_t w;

	if (!getenv("CKPT_TEST_PEEK"))
		return;
	for (uint32_t i = 0; i < v->nr_segs; i++)
		for (uint64_t k = 0; k < v->segs[i].npages; k += 16)
			if (pread(memfd, &w, sizeof(w), (off_t)(v->segs[i].addr + k * PAGE)) < 0)
				return;
}
#endif

/* A buffer for a job's pages: each thread has one, as big as the
 * biggest job (its pages are made at once, membuf.c). */
static void *job_buffer(const struct placer *p)
{
	return membuf_get(p->buf_len);
}

/* The image, for one process's placing: a file (a pipe's image is read
 * by the puppet). */
static int open_image(struct rst_ctx *c, struct placer *p)
{
	struct stat st;

	if (fstat(c->img_fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return 1;
	p->img_fd = c->img_fd;
	p->img_len = st.st_size;
	return 0;
}

int placer_begin(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		 const struct rst_vma **keep, struct placer *p)
{
	struct uffdio_api api = { .api = UFFD_API };
	uint64_t uffd_bytes = 0;
	int ret;

	*p = (struct placer){ .ufd = -1, .img_fd = -1, .thp = thp_mode(), .log = c->log,
			      .pin = &c->pin, .pid = t->pid, .memfd = t->rm.memfd, .ctx = c,
			      .scan = { .fd = -1 } };
	if (open_image(c, p))
		return 0;
	for (int i = 0; i < s->nr; i++) {
		const struct rst_vma *v = &s->vmas[i];
		enum place_how how = keep[i] ? PLACE_NONE : how_for(p, c, v);

		uffd_bytes += how == PLACE_UFFD ? v->pages_len : 0;
		p->total += how && how != PLACE_NOW ? v->pages_len : 0;
		for (uint32_t k = 0; how && k < v->nr_segs; k++)
			if (v->segs[k].npages * PAGE > p->buf_len)
				p->buf_len = v->segs[k].npages * PAGE;
	}
	p->buf_len = p->buf_len < PLACE_JOB ? p->buf_len : PLACE_JOB;
	p->buf = p->buf_len ? job_buffer(p) : NULL;
	if (!p->buf) {		/* nothing to place, or no buffer for it */
		p->img_fd = -1;
		return 0;
	}
	if (uffd_bytes < PLACE_MIN)
		return 0;
	ret = mm_take_uffd(t, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY, &p->ufd);
	if (ret < 0)
		return ret;
	if (ret || ioctl(p->ufd, UFFDIO_API, &api) || (ret = mm_scanner_open(&p->scan, t->pid))) {
		log_info(c->log, "pid %d: no userfaultfd for its pages (%s): the others' way",
			 t->pid, strerror(ret ? ret : errno));
		if (p->ufd >= 0)
			close(p->ufd);
		p->ufd = -1;
	}
	return 0;
}

/* The job's pages, read to @src, into place. */
static int place_from(const struct placer *p, const struct place_job *j, uintptr_t src)
{
	uint64_t done = 0;

	while (done < j->len) {
		struct uffdio_copy k = {
			.dst = j->dst + done,
			.src = src + done,
			.len = j->len - done,
		};
		ssize_t n;

		if (j->how == PLACE_MEM) {
			n = pwrite(p->memfd, (void *)(src + done), j->len - done,
				   (off_t)(j->dst + done));
			if (n <= 0)
				return n < 0 ? errno : EIO;
			done += n;
		} else if (!ioctl(p->ufd, UFFDIO_COPY, &k)) {
			done += k.len;
		} else if (errno == EEXIST) {
			done += PAGE;	/* in before the area was registered:
					 * written then (write_present()) */
		} else {
			if (errno != EAGAIN || k.copy <= 0)
				return errno ? errno : EIO;
			done += k.copy;
		}
	}
	return 0;
}

/* One job's pages in, through @buf (PLACE_JOB bytes); 0 or an errno.
 * Read, not mapped: where the hypervisor shadows page tables (this
 * project's VMs) each page of the image mapped in ckpt cost more than
 * copying it; `hwlimit place uffdbuf` placed 1 GiB in 0.21-0.27 s on one
 * CPU where `uffd`, from the file mapped, took 0.55-0.59.  The buffer,
 * reused, stays in the cache for the copy; so does the checksum of a
 * job that is a cell of the page check, taken between the two. */
static int copy_job(const struct placer *p, const struct place_job *j, void *buf)
{
	struct pv_cell *cell;
	int err = pread_full(p->img_fd, buf, j->len, j->off, NULL);

	if (err)
		return err;
	cell = pv_claim(p->ctx, j->off, j->len);
	if (cell)
		pv_cell_done(cell, crc32c(0, buf, j->len));
	return place_from(p, j, (uintptr_t)buf);
}

/* What was placed since last said, said (a progress line, progress.h);
 * ckpt's own thread only.  Under p->lock, which it drops to say it. */
static void say_done(struct placer *p)
{
	uint64_t n = p->done - p->said;

	p->said = p->done;
	pthread_mutex_unlock(&p->lock);
	progress_add(p->log, n);
	pthread_mutex_lock(&p->lock);
}

/* Take and do jobs until there are none (and, for the helper, no more
 * to come).  Under p->lock, which it drops while copying. */
static void work(struct placer *p, bool helper, void *buf)
{
	for (;;) {
		struct place_job j;
		int err;

		while (p->next == p->nr_jobs && helper && !p->closing)
			pthread_cond_wait(&p->more, &p->lock);
		if (p->next == p->nr_jobs)
			return;
		j = p->jobs[p->next++];
		if (p->err)
			continue;
		if (!helper)
			say_done(p);
		pthread_mutex_unlock(&p->lock);
		err = copy_job(p, &j, buf);
		pthread_mutex_lock(&p->lock);
		p->done += j.len;
		if (err && !p->err) {
			p->err = err;
			p->err_at = j.dst;
		}
	}
}

/* The second thread: on the CPUs restart's caller has but the one the
 * build is pinned to (pin.h), whose calls it would slow. */
static void *helper(void *arg)
{
	struct placer *p = arg;
	void *buf = job_buffer(p);
	sigset_t all;

	if (!buf)	/* ckpt's own thread does it all */
		return NULL;
	/* signals are ckpt's main thread's to take */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pin_beside(p->pin);
	pthread_mutex_lock(&p->lock);
	work(p, true, buf);
	pthread_mutex_unlock(&p->lock);
	membuf_put(buf, p->buf_len);
	return NULL;
}

/* The job at image offset @off, of @left bytes to place: up to the next
 * cell of the page check, PLACE_JOB at most. */
static uint64_t job_len(uint64_t off, uint64_t left)
{
	uint64_t n = PLACE_JOB - off % PLACE_JOB;	/* to the next cell */

	if (n % PAGE)	/* pages not on page boundaries in the image (an
			 * expanded compressed one): no cells */
		n = PLACE_JOB;
	return n < left ? n : left;
}

static int queue(struct placer *p, uint64_t dst, uint64_t off, uint64_t len,
		 enum place_how how)
{
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	for (uint64_t at = 0, n; at < len && !ret; at += n) {
		n = job_len(off + at, len - at);
		if (VEC_ROOM(p->jobs, p->nr_jobs, p->cap_jobs)) {
			ret = -ENOMEM;
			break;
		}
		p->jobs[p->nr_jobs++] = (struct place_job){ dst + at, off + at, n, how };
	}
	pthread_cond_signal(&p->more);
	say_done(p);
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* [dst, dst + len) from image offset @off, written to /proc/PID/mem by
 * ckpt's thread now, in jobs as the queue cuts them (a job that is a
 * cell of the page check takes its checksum). */
static int write_now(struct placer *p, uint64_t dst, uint64_t off, uint64_t len)
{
	for (uint64_t at = 0, n; at < len; at += n) {
		struct place_job j;
		int err;

		n = job_len(off + at, len - at);
		j = (struct place_job){ dst + at, off + at, n, PLACE_MEM };
		err = copy_job(p, &j, p->buf);
		if (err)
			return log_err(p->log, err, "pid %d: placing pages at 0x%llx:",
				       p->pid, (unsigned long long)j.dst);
	}
	return 0;
}

/* @v's pages in now, by ckpt's thread (PLACE_NOW), in the jobs
 * queue() would cut. */
static int place_now(struct placer *p, const struct rst_vma *v)
{
	for (uint32_t i = 0; i < v->nr_segs; i++) {
		uint64_t len = v->segs[i].npages * PAGE;
		int err = write_now(p, v->segs[i].addr, v->segs[i].off, len);

		if (err)
			return err;
		progress_add(p->log, len);
	}
	p->bytes += v->pages_len;
	p->nr_placed++;
	return 0;
}

/* The first page of @v in now, by ckpt's thread: its anon_vma made
 * before it is advised and protected again (above), and before the next
 * area is mapped beside it. */
static int first_page(struct placer *p, const struct rst_vma *v, enum place_how how)
{
	struct place_job j = { v->segs[0].addr, v->segs[0].off, PAGE, how };
	int err = copy_job(p, &j, p->buf);

	if (err)
		return log_err(p->log, err, "pid %d: placing pages at 0x%llx:", p->pid,
			       (unsigned long long)j.dst);
	return 0;
}

/* The lock, and the thread if there is enough to place for it. */
static void start(struct placer *p)
{
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->more, NULL);
	p->started = true;
	p->t0 = log_now();
	/* without the thread, ckpt's own does it all at the end */
	p->thread = p->total >= PLACE_THREAD && !pthread_create(&p->th, NULL, helper, p);
}

/* The first error of the copies', said: at each area, so that the build
 * stops at it, and at the end. */
static int thread_error(struct placer *p)
{
	uint64_t at;
	int err;

	pthread_mutex_lock(&p->lock);
	err = p->err;
	at = p->err_at;
	pthread_mutex_unlock(&p->lock);
	if (!err)
		return 0;
	return log_err(p->log, err, "pid %d: placing pages at 0x%llx:", p->pid,
		       (unsigned long long)at);
}

/* @v, just registered: the pages someone's read put in before (the
 * zero page: mm_pages_present()) written now, by ckpt's thread while
 * the area is writable, where the copies will find them in. */
static int write_present(struct placer *p, const struct rst_vma *v)
{
	struct lazy_set found = { 0 };
	int err = mm_pages_present(&p->scan, v, &found);

	if (err)
		err = log_err(p->log, err, "pid %d: the pages already in area 0x%llx-0x%llx:",
			      p->pid, (unsigned long long)v->v.start, (unsigned long long)v->v.end);
	for (size_t k = 0; k < found.n && !err; k++)
		err = write_now(p, found.r[k].addr, found.r[k].off, found.r[k].npages * PAGE);
	lazy_set_free(&found);
	return err;
}

/* @v's pages queued; with @first_in, its first page is in already,
 * read by the puppet (placer_hold()): written again from here with the
 * others, not first on its own. */
static int add(struct placer *p, const struct rst_vma *v, enum place_how how,
	       bool first_in)
{
	struct uffdio_register reg = {
		.range = { v->v.start, v->v.end - v->v.start },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int ret = 0;

	mm_test_peek(p->memfd, v);
	if (how == PLACE_UFFD && ioctl(p->ufd, UFFDIO_REGISTER, &reg)) {
		how = by_write(v);
		if (how == PLACE_NONE)
			return 1;	/* the puppet reads it */
	}
	if (how == PLACE_UFFD) {
		if (VEC_ROOM(p->areas, p->nr_areas, p->cap_areas)) {
			ioctl(p->ufd, UFFDIO_UNREGISTER, &reg.range);
			return log_err(p->log, ENOMEM, "pid %d: placing pages:", p->pid);
		}
		p->areas[p->nr_areas++] = v;
		ret = write_present(p, v);
		if (ret)
			return ret;
	}
	if (!p->started)
		start(p);
	if (how == PLACE_NOW)
		return place_now(p, v);
	ret = first_in ? 0 : first_page(p, v, how);
	for (uint32_t i = 0; i < v->nr_segs && !ret; i++) {
		uint64_t skip = i || first_in ? 0 : PAGE;	/* the first, in already */

		ret = queue(p, v->segs[i].addr + skip, v->segs[i].off + skip,
			    v->segs[i].npages * PAGE - skip, how);
		if (ret)
			ret = log_err(p->log, -ret, "pid %d: placing pages:", p->pid);
	}
	if (ret)
		return ret;
	p->bytes += v->pages_len;
	p->nr_placed++;
	return thread_error(p);
}

int placer_add(struct placer *p, const struct rst_vma *v, enum place_how how)
{
	return add(p, v, how, false);
}

/* An area held: its first page the puppet's read gives it in the same
 * batch of calls as its mmap, where ckpt's own write of it (placer_add())
 * needs the batch run first, a stop of the puppet for each area.  That
 * read makes the area's anon_vma as the write would, before the area is
 * advised and before the next is mapped beside it (above); its page is
 * written again with the others, from the image as ckpt reads it.  Only
 * areas ckpt may write to from outside at any time (mem_ok(): the
 * userfaultfd's pages already in are written so, write_present()), and
 * small ones: a big area's copy starts at once, beside the build. */
struct place_held {
	const struct rst_vma *v;
	enum place_how how;
};

int placer_hold(struct placer *p, const struct rst_vma *v, enum place_how how)
{
	if ((how != PLACE_UFFD && how != PLACE_MEM) || !mem_ok(v) ||
	    v->pages_len >= PLACE_THREAD)
		return 1;
	if (VEC_ROOM(p->held, p->nr_held, p->cap_held))
		return log_err(p->log, ENOMEM, "pid %d: placing pages:", p->pid);
	p->held[p->nr_held++] = (struct place_held){ v, how };
	p->held_bytes += v->pages_len;
	return 0;
}

bool placer_held_full(const struct placer *p)
{
	return p->held_bytes >= PLACE_THREAD;
}

int placer_add_held(struct placer *p)
{
	int ret = 0;

	for (size_t i = 0; i < p->nr_held && !ret; i++)
		ret = add(p, p->held[i].v, p->held[i].how, true);
	p->nr_held = 0;
	p->held_bytes = 0;
	return ret;
}

int placer_end(struct placer *p, int ret)
{
	uint64_t t0 = log_now();

	if (!ret)
		ret = placer_add_held(p);

	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->closing = true;
		if (ret)	/* failed: no more pages to copy */
			p->next = p->nr_jobs;
		pthread_cond_broadcast(&p->more);
		work(p, false, p->buf);
		pthread_mutex_unlock(&p->lock);
		if (p->thread)
			pthread_join(p->th, NULL);
		progress_add(p->log, p->done - p->said);
		if (!ret)
			ret = thread_error(p);
	}
	for (size_t i = 0; i < p->nr_areas; i++) {
		const struct rst_vma *v = p->areas[i];
		struct uffdio_range r = { v->v.start, v->v.end - v->v.start };

		if (ioctl(p->ufd, UFFDIO_UNREGISTER, &r) && !ret)
			ret = log_err(p->log, errno, "pid %d: unregistering area 0x%llx-0x%llx:",
				      p->pid, (unsigned long long)v->v.start,
				      (unsigned long long)v->v.end);
	}
	if (p->started) {
		p->log->times.ns[LP_PAGES] += log_now() - t0;
		p->log->times.n[LP_PAGES] += p->nr_placed;
		p->log->times.bytes += p->bytes;
		log_info(p->log, "pid %d: %.1f MB of pages of %u areas placed "
			 "(%zu by userfaultfd), %.1f ms after the first (%.1f ms waited for)",
			 p->pid, p->bytes / 1e6, p->nr_placed, p->nr_areas,
			 (log_now() - p->t0) / 1e6, (log_now() - t0) / 1e6);
		pthread_cond_destroy(&p->more);
		pthread_mutex_destroy(&p->lock);
	}
	if (p->ufd >= 0)
		close(p->ufd);
	mm_scanner_close(&p->scan);
	if (p->buf)
		membuf_put(p->buf, p->buf_len);
	free(p->jobs);
	free(p->areas);
	free(p->held);
	*p = (struct placer){ .ufd = -1, .memfd = -1, .img_fd = -1, .scan = { .fd = -1 } };
	return ret;
}
