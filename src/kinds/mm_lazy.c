/* mm_lazy.c - restart --lazy, the restore's side: which areas are left
 * empty for the loader (lazy.c), and the userfaultfd it serves them by:
 * made in the restored process (a userfaultfd belongs to the memory of
 * whoever makes it), taken by ckpt (pidfd_getfd) and closed there again,
 * so the process never sees it in its fd table.
 *
 * Lazily loaded: private anonymous areas (heap, stack, malloc's).  Loaded
 * as before, whole, before the process runs: shared memory, files'
 * areas (userfaultfd's missing mode is for anonymous memory), and areas
 * whose flags would fault or copy them before the process runs or at a
 * fork the loader could not follow (mlocked, sealed, droppable,
 * dontfork, wipeonfork, guard pages), and those with pages in a parent
 * image.  A compressed image is expanded into a copy before restart
 * (image_expand.c): the loader reads that copy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../fileio.h"
#include "../lazy.h"
#include "../pageserver.h"
#include "mm.h"
#include "mm_place.h"
#include "../page.h"

#define FILL_BUF	(256 * 1024)	/* bytes written at a time */

/* Pages in a parent image of an incremental chain (chain.c) are read
 * from it as before: the loader has the image alone. */
static bool in_image(const struct rst_vma *v)
{
	for (uint32_t i = 0; i < v->nr_segs; i++)
		if (v->segs[i].file)
			return false;
	return true;
}

bool mm_lazy_area(const struct rst_ctx *c, const struct rst_vma *v)
{
	return (c->flags & CKPT_LAZY) && mm_lazy_vma(&v->v) && !v->have_refs &&
	       v->pages_len && !v->nr_guards && in_image(v);
}

/* What --lazy takes: a process and its threads, or a tree.  Each
 * process of a tree gets a loader of its own once its memory is built;
 * a child forked from a parent whose memory is built already gets the
 * pages it shares with it from the parent's loader (the fork's
 * userfaultfd, lazy.c): each gets its own copy then, not one shared
 * copy-on-write.  A page server's connection serves one loader: a tree
 * from a page server is refused. */
int mm_lazy_check(struct rst_ctx *c)
{
	if (!(c->flags & CKPT_LAZY) || c->nr_tasks == 1 || ps_sock_of(c->img_fd) < 0)
		return 0;
	return log_err(c->log, EINVAL,
		       "--lazy --page-server: the image holds %d processes (pid %d and its children); a page server serves a lone process (its threads too): restart the tree from an image file",
		       c->nr_tasks, c->tasks[0]->pid);
}

/* @t's uffd, in ckpt, the process's own copy closed. */
static int take_uffd(struct rst_ctx *c, struct rst_task *t, int *ufd)
{
	int ret = mm_take_uffd(t, O_CLOEXEC | O_NONBLOCK, ufd);

	if (ret > 0)
		ret = log_err(c->log, ret, "--lazy: pid %d: its userfaultfd:", t->pid);
	return ret;
}

static int uffd_setup(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		      int ufd)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_EVENT_REMAP |
			    UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_UNMAP |
			    UFFD_FEATURE_THREAD_ID,
	};

	if (ioctl(ufd, UFFDIO_API, &api))
		return log_err(c->log, errno, "--lazy: pid %d: UFFDIO_API:", t->pid);
	for (int i = 0; i < s->nr; i++) {
		const struct rst_vma *v = &s->vmas[i];
		struct uffdio_register reg = {
			.range = { v->v.start, v->v.end - v->v.start },
			.mode = UFFDIO_REGISTER_MODE_MISSING,
		};

		if (mm_lazy_area(c, v) && ioctl(ufd, UFFDIO_REGISTER, &reg))
			return log_err(c->log, errno,
				       "--lazy: pid %d: registering area 0x%llx-0x%llx:",
				       t->pid, (unsigned long long)v->v.start,
				       (unsigned long long)v->v.end);
	}
	return 0;
}

/* An image from a page server (pageserver.c) lacks the data of the
 * areas it expects the loader to bring: one restored whole here instead
 * would have read zeros from its holes.  Refused before it runs. */
static int server_holes_lazy(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s)
{
	if (!(c->flags & CKPT_LAZY) || ps_sock_of(c->img_fd) < 0)
		return 0;
	for (int i = 0; i < s->nr; i++) {
		const struct rst_vma *v = &s->vmas[i];

		for (uint32_t j = 0; !mm_lazy_area(c, v) && j < v->nr_segs; j++) {
			off_t end = v->segs[j].off + v->segs[j].npages * PAGE;

			if (!v->segs[j].file && !v->segs[j].ref && v->segs[j].npages &&
			    lseek(c->img_fd, v->segs[j].off, SEEK_HOLE) < end)
				return log_err(c->log, EPROTO,
					       "--page-server: pid %d: the server left out the pages of area 0x%llx-0x%llx, which restart loads whole",
					       t->pid, (unsigned long long)v->v.start,
					       (unsigned long long)v->v.end);
		}
	}
	return 0;
}

/* Up to @max runs of [*at, end) with pages in (present or swapped) into
 * @v, *at moved past what was looked at: how many, or -errno. */
static long pages_in(int pm, uint64_t *at, uint64_t end, struct pm_region *v, long max)
{
	struct pm_scan a = { .size = sizeof(a), .start = *at, .end = end,
			     .vec = (uintptr_t)v, .vec_len = max,
			     .category_anyof_mask = PM_IS_PRESENT | PM_IS_SWAPPED,
			     .return_mask = PM_IS_PRESENT | PM_IS_SWAPPED };
	uint64_t e[64], to = end - *at > sizeof(e) / 8 * PAGE ? *at + sizeof(e) / 8 * PAGE : end;
	long n = ioctl(pm, PM_SCAN_IOCTL, &a);
	ssize_t k;

	if (n >= 0) {
		*at = a.walk_end > *at ? a.walk_end : end;
		return n;
	}
	/* an older kernel (no PAGEMAP_SCAN): its pagemap, 64 pages a time */
	k = pread(pm, e, (to - *at) / PAGE * 8, (off_t)(*at / PAGE * 8));
	if (k < 0)
		return -errno;
	n = 0;
	for (ssize_t i = 0; i < k / 8; i++) {
		uint64_t a0 = *at + i * PAGE;

		if (!(e[i] >> 62))		/* neither present nor swapped */
			continue;
		if (n && v[n - 1].end == a0)
			v[n - 1].end += PAGE;
		else if (n < max)
			v[n++] = (struct pm_region){ a0, a0 + PAGE, 0 };
	}
	*at = to;
	return n;
}

/* @len bytes of the image at @off into @buf: 0 or an errno (@why: what
 * went wrong, if the page server's).  From the page server where it
 * serves the image, and into its copy, whose holes the loader streams
 * and checks: these bytes, a hole no more, are checked there too. */
static int image_bytes(struct rst_ctx *c, void *buf, uint64_t len, uint64_t off, char *why)
{
	int sock = ps_sock_of(c->img_fd);
	int err;

	if (sock < 0)
		return pread_full(c->img_fd, buf, len, off, NULL);
	err = ps_get(sock, off, len);
	if (!err)
		err = ps_reply(sock, off, len, buf, why, 128);
	if (err)
		return -err;
	return pwrite(c->img_fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : errno ? errno : EIO;
}

/* The pages of @pages within [a, b) written into @t from the image, and
 * no longer the loader's. */
static int fill(struct rst_ctx *c, struct rst_task *t, struct lazy_set *pages, uint64_t a,
		uint64_t b, char *buf)
{
	for (size_t i = 0; i < pages->n; i++) {
		const struct lazy_run *r = &pages->r[i];
		uint64_t from = a > r->addr ? a : r->addr;
		uint64_t to = b < r->addr + r->npages * PAGE ? b : r->addr + r->npages * PAGE;

		for (uint64_t n; from < to; from += n) {
			char why[128] = "";
			int err;

			n = to - from < FILL_BUF ? to - from : FILL_BUF;
			err = image_bytes(c, buf, n, r->off + (from - r->addr), why);
			if (!err && pwrite(t->rm.memfd, buf, n, (off_t)from) != (ssize_t)n)
				err = errno ? errno : EIO;
			if (err)
				return log_err(c->log, err, "--lazy: pid %d: the page at 0x%llx (image offset %llu)%s%s:",
					       t->pid, (unsigned long long)from,
					       (unsigned long long)(r->off + (from - r->addr)),
					       *why ? ": " : "", why);
		}
	}
	return lazy_set_cut(pages, a, b) ? log_err(c->log, ENOMEM, "--lazy: pid %d:", t->pid) : 0;
}

/* Pages in before the areas were registered: anyone's read of the
 * process's memory while it was built (ps or pgrep reading its cmdline,
 * a debugger) maps the zero page there, and the loader's copy, finding
 * a page in (EEXIST), would leave it so: argv's strings and the stack's
 * top read as zeros.  Registered, no page comes in but by the loader;
 * those in are found now and written with their image's bytes
 * (through /proc/PID/mem: the zero page is copied first). */
static int fill_present(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
			struct lazy_set *pages)
{
	struct pm_region v[64];
	char path[64], *buf = NULL;
	int pm, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	if (pm < 0)
		return log_err(c->log, errno, "--lazy: pid %d: %s:", t->pid, path);
	for (int i = 0; i < s->nr && !ret; i++) {
		const struct rst_vma *a = &s->vmas[i];

		for (uint64_t at = a->v.start; mm_lazy_area(c, a) && at < a->v.end && !ret;) {
			long n = pages_in(pm, &at, a->v.end, v, 64);

			if (n < 0)
				ret = log_err(c->log, (int)-n, "--lazy: pid %d: %s:", t->pid, path);
			if (n > 0 && !buf && !(buf = malloc(FILL_BUF)))
				ret = log_err(c->log, ENOMEM, "--lazy: pid %d:", t->pid);
			for (long k = 0; k < n && !ret; k++)
				ret = fill(c, t, pages, v[k].start, v[k].end, buf);
		}
	}
	free(buf);
	close(pm);
	return ret;
}

#ifdef CKPT_TEST_HOOKS
/* CKPT_TEST_PEEK=1: the areas left to the loader read before they are
 * registered, as ps reads a process's cmdline (mm_test_peek()). */
static void test_peek(struct rst_task *t, const struct mm_state *s, const struct rst_ctx *c)
{
	char path[64], buf[256];
	int fd;

	if (!getenv("CKPT_TEST_PEEK"))
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			buf[0] = '\0';
		close(fd);
	}
	for (int i = 0; i < s->nr; i++)
		if (mm_lazy_area(c, &s->vmas[i]))
			mm_test_peek(t->rm.memfd, &s->vmas[i]);
}
#else
#define test_peek(t, s, c) ((void)0)
#endif

int mm_lazy_start(struct rst_ctx *c, struct rst_task *t, struct mm_state *s)
{
	struct lazy_set pages = { 0 };
	int ufd = -1, ret = 0;
	pid_t loader;

	for (int i = 0; i < s->nr && !ret; i++)
		for (uint32_t j = 0; mm_lazy_area(c, &s->vmas[i]) &&
				     j < s->vmas[i].nr_segs && !ret; j++)
			ret = lazy_set_add(&pages, s->vmas[i].segs[j].addr,
					   s->vmas[i].segs[j].npages, s->vmas[i].segs[j].off);
	if (ret)
		ret = log_err(c->log, -ret, "--lazy: pid %d: page table:", t->pid);
	if (!ret)
		ret = server_holes_lazy(c, t, s);
	if (!ret && !pages.n) {	/* no loader: a page server is done */
		if ((c->flags & CKPT_LAZY) && ps_sock_of(c->img_fd) >= 0)
			ps_bye(ps_sock_of(c->img_fd));
		goto out;
	}
	if (!ret)
		ret = take_uffd(c, t, &ufd);
	test_peek(t, s, c);
	if (!ret)
		ret = uffd_setup(c, t, s, ufd);
	if (!ret)
		ret = fill_present(c, t, s, &pages);
	if (!ret) {
		/* the first loader checks the image's checksums */
		loader = lazy_loader_start(c->log, t->pid, c->tasks[0]->pid, ufd, c->img_fd,
					   &pages, c->spans, c->lazy_checks ? 0 : c->pv_nr,
					   &c->pin);
		c->lazy_checks = true;
		ret = loader < 0 ? loader : 0;
		if (!ret)
			log_info(c->log, "pid %d: %zu runs of pages left to the loader, pid %d",
				 t->pid, pages.n, loader);
	}
out:
	if (ufd >= 0)
		close(ufd);
	lazy_set_free(&pages);
	return ret;
}
