/* mm_lazy.c - restart --lazy, the restore's side: which areas are left
 * empty for the loader (lazy.c), and the userfaultfd it serves them by:
 * made in the restored process (a userfaultfd belongs to the memory of
 * whoever makes it), taken by ckpt (pidfd_getfd) and closed there again,
 * so the process never sees it in its fd table.
 *
 * Lazily loaded: private anonymous areas (heap, stack, malloc's), and
 * shared anonymous memory (mm_lazy_shm.c: an object several processes
 * map is served by the first one's loader).  Loaded as before, whole,
 * before the process runs: memfd and SysV segments, files'
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
#include <sys/socket.h>
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
	/* (every map of a shared object, its pages in another or none) */
	if (mm_lazy_shm_area(c, v))
		return true;
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
	mm_lazy_shm_check(c);
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

/* Whether @v is registered on @t's uffd for the loader of @owner (0:
 * @t's own loader). */
static bool served_by(const struct rst_ctx *c, const struct rst_task *t,
		      const struct rst_vma *v, pid_t owner)
{
	if (!mm_lazy_area(c, v))
		return false;
	if (!owner)
		return !mm_lazy_shm_foreign(c, t, v);
	return mm_lazy_shm_foreign(c, t, v) && mm_shm_first(c, v->v.shm_id)->pid == owner;
}

/* @ufd set up, the areas of @s that @owner's loader serves registered
 * on it (served_by()). */
static int uffd_setup(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		      int ufd, pid_t owner)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_EVENT_REMAP |
			    UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_UNMAP |
			    UFFD_FEATURE_THREAD_ID |
			    (c->lazy_shm ? UFFD_FEATURE_MINOR_SHMEM : 0),
	};

	if (ioctl(ufd, UFFDIO_API, &api))
		return log_err(c->log, errno, "--lazy: pid %d: UFFDIO_API:", t->pid);
	for (int i = 0; i < s->nr; i++) {
		const struct rst_vma *v = &s->vmas[i];
		struct uffdio_register reg = {
			.range = { v->v.start, v->v.end - v->v.start },
			/* (shared memory: a page not mapped yet is a
			 * minor fault, lazy_shm.c) */
			.mode = UFFDIO_REGISTER_MODE_MISSING |
				(mm_lazy_shm_area(c, v) ? UFFDIO_REGISTER_MODE_MINOR : 0),
		};

		if (served_by(c, t, v, owner) && ioctl(ufd, UFFDIO_REGISTER, &reg))
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

/* @len bytes of the image at @off into @buf: 0 or an errno (@why: what
 * went wrong, if the page server's).  From a page server, what its copy
 * of the image has as a hole is asked of it and written there, where
 * the loader's stream checks it with the rest (the loader takes the
 * holes after this); the rest is in the copy already. */
static int image_bytes(struct rst_ctx *c, int sock, char *buf, uint64_t len, uint64_t off,
		       char *why)
{
	if (sock < 0)
		return pread_full(c->img_fd, buf, len, off, NULL);
	for (uint64_t at = off, next; at < off + len; at = next) {
		off_t d = lseek(c->img_fd, (off_t)at, SEEK_DATA), h;
		int err;

		if (d == (off_t)at) {	/* in the copy */
			h = lseek(c->img_fd, d, SEEK_HOLE);
			next = h < 0 || (uint64_t)h > off + len ? off + len : (uint64_t)h;
			err = pread_full(c->img_fd, buf + (at - off), next - at, at, NULL);
			if (err)
				return err;
			continue;
		}
		next = d < 0 || (uint64_t)d > off + len ? off + len : (uint64_t)d;
		err = ps_get(sock, at, next - at);
		if (!err)
			err = ps_reply(sock, at, next - at, buf + (at - off), why, 128);
		if (err)
			return -err;
		if (pwrite(c->img_fd, buf + (at - off), next - at, (off_t)at) != (ssize_t)(next - at))
			return EIO;
	}
	return 0;
}

/* The pages of @r written into @t from the image. */
static int fill(struct rst_ctx *c, struct rst_task *t, int sock, const struct lazy_run *r,
		char *buf)
{
	for (uint64_t done = 0, n; done < r->npages * PAGE; done += n) {
		char why[128] = "";
		ssize_t k = 0;
		int err;

		n = r->npages * PAGE - done < FILL_BUF ? r->npages * PAGE - done : FILL_BUF;
		err = image_bytes(c, sock, buf, n, r->off + done, why);
		if (!err && (k = pwrite(t->rm.memfd, buf, n, (off_t)(r->addr + done))) != (ssize_t)n)
			err = k < 0 ? errno : EIO;
		if (err)
			return log_err(c->log, err, "--lazy: pid %d: the pages at 0x%llx-0x%llx (image offset %llu)%s%s:",
				       t->pid, (unsigned long long)(r->addr + done),
				       (unsigned long long)(r->addr + done + n),
				       (unsigned long long)(r->off + done), *why ? ": " : "", why);
	}
	return 0;
}

/* Pages in before the areas were registered: anyone's read of the
 * process's memory while it was built (ps or pgrep reading its cmdline,
 * a debugger) maps the zero page there, and the loader's copy, finding
 * a page in (EEXIST), would leave it so: argv's strings and the stack's
 * top read as zeros.  Registered, no page comes in but by the loader;
 * those in are found now (mm_pages_present()) and written with their
 * image's bytes (through /proc/PID/mem: the zero page is copied first),
 * and are no longer the loader's. */
static int fill_present(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
			pid_t owner, struct lazy_set *pages, struct lazy_shm *shm)
{
	struct pm_scanner sc;
	int sock = ps_sock_of(c->img_fd), ret = mm_scanner_open(&sc, t->pid);
	char *buf = NULL;

	if (ret)
		return log_err(c->log, ret, "--lazy: pid %d: its pagemap:", t->pid);
	for (int i = 0; i < s->nr && !ret; i++) {
		const struct rst_vma *v = &s->vmas[i];
		struct lazy_set found = { 0 };

		if (!served_by(c, t, v, owner))
			continue;
		if ((ret = mm_pages_present(&sc, v, &found)))
			ret = log_err(c->log, ret, "--lazy: pid %d: the pages in at 0x%llx-0x%llx:",
				      t->pid, (unsigned long long)v->v.start,
				      (unsigned long long)v->v.end);
		if (!ret && found.n && !buf && !(buf = malloc(FILL_BUF)))
			ret = log_err(c->log, ENOMEM, "--lazy: pid %d:", t->pid);
		for (size_t k = 0; k < found.n && !ret; k++) {
			const struct lazy_run *r = &found.r[k];
			uint64_t len = r->npages * PAGE;

			ret = fill(c, t, sock, r, buf);
			if (!ret && owner)	/* (its loader's to know) */
				ret = mm_lazy_shm_tell_cut(c, v, r->addr, len);
			else if (!ret && (mm_lazy_shm_area(c, v) ?
					  mm_lazy_shm_cut(c, v, shm, r->addr, len) :
					  lazy_set_cut(pages, r->addr, r->addr + len)))
				ret = log_err(c->log, ENOMEM, "--lazy: pid %d:", t->pid);
		}
		lazy_set_free(&found);
	}
	free(buf);
	mm_scanner_close(&sc);
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

/* The loader's channel for requests (struct lazy_ctl), if another
 * process maps an object it serves: both ends, or -1s. */
static int ctl_open(struct rst_ctx *c, const struct lazy_shm *shm, int ctl[2])
{
	ctl[0] = ctl[1] = -1;
	if (mm_lazy_shm_shared(c, shm) &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl))
		return log_err(c->log, errno, "--lazy: a channel to the loader:");
	return 0;
}

/* @t's own loader: its private areas, and the shared memory objects it
 * maps first of the tree. */
static int lazy_own(struct rst_ctx *c, struct rst_task *t, struct mm_state *s)
{
	struct lazy_set pages = { 0 };
	struct lazy_shm shm = { 0 };
	int ufd = -1, ret = 0, *fds = NULL, ctl[2] = { -1, -1 };
	pid_t loader;

	for (int i = 0; i < s->nr && !ret; i++)
		for (uint32_t j = 0; mm_lazy_area(c, &s->vmas[i]) && mm_lazy_vma(&s->vmas[i].v) &&
				     j < s->vmas[i].nr_segs && !ret; j++)
			ret = lazy_set_add(&pages, s->vmas[i].segs[j].addr,
					   s->vmas[i].segs[j].npages, s->vmas[i].segs[j].off);
	if (ret)
		ret = log_err(c->log, -ret, "--lazy: pid %d: page table:", t->pid);
	if (!ret)
		ret = server_holes_lazy(c, t, s);
	if (!ret)
		ret = mm_lazy_shm_gather(c, t, s, &shm, &fds);
	if (!ret && !pages.n && !shm.nr) {	/* no loader: a page server is done */
		if ((c->flags & CKPT_LAZY) && ps_sock_of(c->img_fd) >= 0)
			ps_bye(ps_sock_of(c->img_fd));
		goto out;
	}
	if (!ret)
		ret = mm_lazy_shm_alloc(c, t, &shm, fds);
	if (!ret)
		ret = take_uffd(c, t, &ufd);
	test_peek(t, s, c);
	if (!ret)
		ret = uffd_setup(c, t, s, ufd, 0);
	if (!ret)
		ret = fill_present(c, t, s, 0, &pages, &shm);
	if (!ret)
		ret = mm_lazy_shm_views(c, t, &shm, fds);
	if (!ret)
		ret = ctl_open(c, &shm, ctl);
	if (!ret) {
		/* the first loader checks the image's checksums */
		loader = lazy_loader_start(c->log, t->pid, c->tasks[0]->pid, ufd, c->img_fd,
					   &pages, &shm, ctl[1], c->spans,
					   c->lazy_checks ? 0 : c->pv_nr, &c->pin);
		c->lazy_checks = true;
		ret = loader < 0 ? loader : 0;
		if (!ret && ctl[0] >= 0)
			ret = mm_lazy_shm_owned(c, &shm, ctl[0]);
		if (!ret)
			log_info(c->log, "pid %d: %zu runs of pages and %zu shared memory objects left to the loader, pid %d",
				 t->pid, pages.n, shm.nr, loader);
	}
out:
	for (int i = 0; i < 2; i++)
		if (ctl[i] >= 0)
			close(ctl[i]);
	if (ufd >= 0)
		close(ufd);
	lazy_set_free(&pages);
	mm_lazy_shm_free(&shm, fds);
	return ret;
}

/* @t's areas of objects @owner's loader serves: registered on a
 * userfaultfd of their own, which goes to that loader. */
static int lazy_foreign(struct rst_ctx *c, struct rst_task *t, struct mm_state *s, pid_t owner)
{
	int ufd = -1, ret = take_uffd(c, t, &ufd);

	if (!ret)
		ret = uffd_setup(c, t, s, ufd, owner);
	if (!ret)
		ret = fill_present(c, t, s, owner, NULL, NULL);
	if (!ret)
		ret = mm_lazy_shm_tell_add(c, t, s, owner, ufd);
	if (!ret)
		log_info(c->log, "pid %d: its maps of pid %d's shared memory left to that one's loader",
			 t->pid, owner);
	if (ufd >= 0)
		close(ufd);
	return ret;
}

int mm_lazy_start(struct rst_ctx *c, struct rst_task *t, struct mm_state *s)
{
	int ret = lazy_own(c, t, s);

	/* (each owner once: the first of its areas found) */
	for (int i = 0; i < s->nr && !ret; i++) {
		const struct rst_vma *v = &s->vmas[i];
		pid_t owner = mm_lazy_area(c, v) && mm_lazy_shm_foreign(c, t, v) ?
			      mm_shm_first(c, v->v.shm_id)->pid : 0;
		bool seen = false;

		for (int j = 0; owner && j < i && !seen; j++)
			seen = mm_lazy_area(c, &s->vmas[j]) && mm_lazy_shm_foreign(c, t, &s->vmas[j]) &&
			       mm_shm_first(c, s->vmas[j].v.shm_id)->pid == owner;
		if (owner && !seen)
			ret = lazy_foreign(c, t, s, owner);
	}
	return ret;
}
