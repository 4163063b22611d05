/* mm_lazy_shm.c - restart --lazy, the restore's side of shared anonymous
 * memory (MAP_SHARED | MAP_ANONYMOUS) left to the loader: which objects
 * qualify, and each one made ready before the process runs: every page
 * the image has allocated in it (fallocate: no page is missing while the
 * process runs, lazy_shm.c says why), and the whole object mapped in
 * ckpt as the loader's view, which the loader inherits.
 *
 * An object is served by the loader of the first process that maps it
 * (its owner, built first); another process's areas of it are registered
 * on a userfaultfd of their own, handed to that loader over a channel
 * restart keeps to it (struct lazy_ctl).  Objects qualify where restart
 * may open them through /proc/PID/map_files (CAP_CHECKPOINT_RESTORE), the
 * kernel has userfaultfd's minor faults on shared memory and gives
 * shared memory no huge pages; not from a page server (its image has
 * the data of private areas only left out).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/falloc.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../fdpass.h"
#include "../lazy.h"
#include "../pageserver.h"
#include "mm.h"
#include "../page.h"

/* Whether shared memory may come in huge pages (a setting of
 * /sys/kernel/mm/transparent_hugepage other than never, deny or, per
 * size, inherit): a hole punched into part of a huge page leaves the
 * page there, zeroed, which the loader would take as a page to write. */
static bool shmem_huge(void)
{
	static const char *const ok[] = { "[never]", "[deny]", "[inherit]" };
	char path[128], buf[256];
	bool huge = false;
	glob_t g = { 0 };

	if (glob("/sys/kernel/mm/transparent_hugepage/hugepages-*/shmem_enabled", 0, NULL, &g))
		g.gl_pathc = 0;
	for (size_t i = 0; i <= g.gl_pathc && !huge; i++) {
		int fd;
		ssize_t n;

		snprintf(path, sizeof(path), "%s", i < g.gl_pathc ? g.gl_pathv[i] :
			 "/sys/kernel/mm/transparent_hugepage/shmem_enabled");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = '\0';
		huge = n > 0;
		for (size_t k = 0; huge && k < sizeof(ok) / sizeof(ok[0]); k++)
			huge = !strstr(buf, ok[k]);
	}
	if (g.gl_pathc)
		globfree(&g);
	return huge;
}

/* Whether the kernel and ckpt's rights allow it: a page of ckpt's own
 * opened as the loader would open the process's, and a userfaultfd
 * with the features the loader and the process's need. */
static bool lazy_shm_possible(void)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_SIGBUS | UFFD_FEATURE_MINOR_SHMEM };
	void *p = shmem_huge() ? MAP_FAILED :
		  mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char path[64];
	int fd = -1, ufd = -1;
	bool ok = false;

	if (p == MAP_FAILED)
		return false;
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)p + (unsigned long)PAGE);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ufd = fd < 0 ? -1 : (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	ok = ufd >= 0 && !ioctl(ufd, UFFDIO_API, &api);
	if (fd >= 0)
		close(fd);
	if (ufd >= 0)
		close(ufd);
	munmap(p, PAGE);
	return ok;
}

/* An area to load whole: its pages from a parent image, or guard
 * pages, or flags that a fault or fork would act on before the loader
 * could (as mm_lazy_area() says of a private one). */
static bool area_eager(const struct rst_vma *v)
{
	for (uint32_t i = 0; i < v->nr_segs; i++)
		if (v->segs[i].file || v->segs[i].ref)
			return true;
	return v->have_refs || v->nr_guards || (v->v.madv & LAZY_EAGER);
}

void mm_lazy_shm_check(struct rst_ctx *c)
{
	c->lazy_shm = (c->flags & CKPT_LAZY) && ps_sock_of(c->img_fd) < 0 &&
		      lazy_shm_possible();
#ifdef CKPT_TEST_HOOKS
	if (getenv("CKPT_TEST_LAZY_SHM_OFF"))
		c->lazy_shm = false;
#endif
	if (c->lazy_shm)
		mm_shm_mark(c, area_eager);
}

bool mm_lazy_shm_area(const struct rst_ctx *c, const struct rst_vma *v)
{
	const struct shm_first *first;

	if (!c->lazy_shm || v->v.kind != VMA_ANON || !(v->v.flags & MAP_SHARED) || !v->v.shm_id)
		return false;
	first = mm_shm_first(c, v->v.shm_id);
	return first && !first->eager;
}

bool mm_lazy_shm_foreign(const struct rst_ctx *c, const struct rst_task *t,
			 const struct rst_vma *v)
{
	return mm_lazy_shm_area(c, v) && mm_shm_first(c, v->v.shm_id)->pid != t->pid;
}

/* The object's offset where @v starts. */
static uint64_t obj_off(const struct rst_ctx *c, const struct rst_vma *v)
{
	return v->v.pgoff - mm_shm_first(c, v->v.shm_id)->base;
}

/* @v's object in @out (its index), added with its fd in @fds if new. */
static int obj_of(struct rst_ctx *c, struct rst_task *t, const struct rst_vma *v,
		  struct lazy_shm *out, int *fds, size_t *k)
{
	struct lazy_obj *ob;
	struct stat st;
	char path[128];

	for (*k = 0; *k < out->nr; (*k)++)
		if (out->ids[*k] == v->v.shm_id)
			return 0;
	ob = &out->obj[out->nr];
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", t->pid,
		 (unsigned long long)v->v.start, (unsigned long long)v->v.end);
	fds[*k] = open(path, O_RDWR | O_CLOEXEC);
	if (fds[*k] < 0 || fstat(fds[*k], &st))
		return log_err(c->log, errno, "--lazy: pid %d: the shared memory at 0x%llx:",
			       t->pid, (unsigned long long)v->v.start);
	memset(ob, 0, sizeof(*ob));
	ob->view = MAP_FAILED;
	ob->size = (uint64_t)st.st_size;
	ob->dev = st.st_dev;
	ob->ino = st.st_ino;
	out->ids[out->nr++] = v->v.shm_id;
	return 0;
}

/* @v's pages, pending in object @k: any process's area of it. */
static int add_pages(struct rst_ctx *c, const struct rst_vma *v, struct lazy_obj *ob)
{
	uint64_t base = obj_off(c, v);
	int ret = 0;

	for (uint32_t j = 0; j < v->nr_segs && !ret; j++) {
		const struct page_seg *g = &v->segs[j];
		uint64_t o = base + (g->addr - v->v.start);

		if (o + g->npages * PAGE > ob->size)
			return log_err(c->log, EBADMSG, "--lazy: shared memory %u: pages beyond its size",
				       v->v.shm_id);
		/* (two maps of the same pages: the image has them twice) */
		ret = lazy_set_cut(&ob->pending, o, o + g->npages * PAGE) ?:
		      lazy_set_add(&ob->pending, o, g->npages, g->off);
	}
	return ret ? log_err(c->log, ENOMEM, "--lazy: shared memory %u:", v->v.shm_id) : 0;
}

/* Object @k's pages from the areas of every process that maps it. */
static int obj_pages(struct rst_ctx *c, struct lazy_shm *out, size_t k)
{
	int ret = 0;

	for (int i = 0; i < c->nr_tasks && !ret; i++) {
		const struct mm_state *s = KSTATE(c->tasks[i], kind_mm);

		for (int j = 0; s && j < s->nr && !ret; j++)
			if (s->vmas[j].v.shm_id == out->ids[k] && s->vmas[j].v.kind == VMA_ANON)
				ret = add_pages(c, &s->vmas[j], &out->obj[k]);
	}
	return ret;
}

int mm_lazy_shm_gather(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		       struct lazy_shm *out, int **fds)
{
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->obj = calloc(s->nr + 1, sizeof(*out->obj));
	out->maps = calloc(s->nr + 1, sizeof(*out->maps));
	out->ids = calloc(s->nr + 1, sizeof(*out->ids));
	*fds = calloc(s->nr + 1, sizeof(**fds));
	if (!out->ids || !out->obj || !out->maps || !*fds)
		ret = log_err(c->log, ENOMEM, "--lazy: pid %d: shared memory:", t->pid);
	for (int i = 0; i < s->nr && !ret; i++) {
		const struct rst_vma *v = &s->vmas[i];
		size_t k, nr = out->nr;

		if (!mm_lazy_area(c, v) || !mm_lazy_shm_area(c, v) || mm_lazy_shm_foreign(c, t, v))
			continue;
		ret = obj_of(c, t, v, out, *fds, &k);
		if (!ret && lazy_set_add(&out->maps[k], v->v.start, (v->v.end - v->v.start) / PAGE,
					 obj_off(c, v)))
			ret = log_err(c->log, ENOMEM, "--lazy: pid %d: shared memory:", t->pid);
		if (!ret && out->nr > nr)	/* (new) */
			ret = obj_pages(c, out, k);
	}
	return ret;
}

int mm_lazy_shm_cut(struct rst_ctx *c, const struct rst_vma *v, struct lazy_shm *out,
		    uint64_t addr, uint64_t len)
{
	uint64_t o = obj_off(c, v) + (addr - v->v.start);
	size_t k;

	for (k = 0; k < out->nr; k++)
		if (lazy_set_find(&out->maps[k], v->v.start))
			return lazy_set_cut(&out->obj[k].pending, o, o + len);
	return 0;
}

int mm_lazy_shm_alloc(struct rst_ctx *c, struct rst_task *t, struct lazy_shm *out, int *fds)
{
	for (size_t k = 0; k < out->nr; k++) {
		const struct lazy_obj *ob = &out->obj[k];

		for (size_t i = 0; i < ob->pending.n; i++) {
			const struct lazy_run *r = &ob->pending.r[i];

			if (fallocate(fds[k], 0, (off_t)r->addr, (off_t)(r->npages * PAGE)))
				return log_err(c->log, errno,
					       "--lazy: pid %d: allocating %llu pages of shared memory:",
					       t->pid, (unsigned long long)r->npages);
		}
	}
	return 0;
}

int mm_lazy_shm_views(struct rst_ctx *c, struct rst_task *t, struct lazy_shm *out, int *fds)
{
	for (size_t k = 0; k < out->nr; k++) {
		struct lazy_obj *ob = &out->obj[k];

		ob->view = mmap(NULL, ob->size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[k], 0);
		if (ob->view == MAP_FAILED)
			return log_err(c->log, errno, "--lazy: pid %d: mapping its shared memory:",
				       t->pid);
	}
	return 0;
}

bool mm_lazy_shm_shared(struct rst_ctx *c, const struct lazy_shm *out)
{
	for (size_t k = 0; k < out->nr; k++)
		if (mm_shm_first(c, out->ids[k])->tasks)
			return true;
	return false;
}

int mm_lazy_shm_owned(struct rst_ctx *c, const struct lazy_shm *out, int ctl)
{
	for (size_t k = 0; k < out->nr; k++) {
		struct shm_first *f = mm_shm_first_rw(c, out->ids[k]);

		if (!f->tasks)
			continue;
		f->ctl = fcntl(ctl, F_DUPFD_CLOEXEC, 3);
		f->obj = (uint32_t)k;
		if (f->ctl < 0)
			return log_err(c->log, errno, "--lazy: its loader's channel:");
	}
	return 0;
}

/* @q (and @len bytes of maps, and @fd) to the loader at @ctl, and its
 * answer: 0, or an errno.  A loader that is gone is done: every page of
 * its objects is in (it exits no sooner), nothing to tell it. */
static int tell(int ctl, const struct lazy_ctl *q, const void *maps, size_t len, int fd)
{
	struct iovec iov[2] = { { (void *)q, sizeof(*q) }, { (void *)maps, len } };
	struct pollfd p = { .fd = ctl, .events = POLLIN };
	ssize_t n;
	char ok;

	if (fd_sendv(ctl, iov, len ? 2 : 1, &fd, fd >= 0, MSG_NOSIGNAL) < 0)
		return errno == EPIPE || errno == ECONNRESET ? 0 : errno;
	if (poll(&p, 1, 10000) != 1)
		return ETIMEDOUT;
	n = recv(ctl, &ok, 1, 0);
	return n == 1 || n == 0 || (n < 0 && errno == ECONNRESET) ? 0 : n < 0 ? errno : EPROTO;
}

int mm_lazy_shm_tell_cut(struct rst_ctx *c, const struct rst_vma *v, uint64_t addr,
			 uint64_t len)
{
	const struct shm_first *f = mm_shm_first(c, v->v.shm_id);
	struct lazy_ctl q = { .type = LAZY_CTL_CUT, .obj = f->obj,
			      .off = obj_off(c, v) + (addr - v->v.start), .len = len };
	int err = f->ctl < 0 ? EBADF : tell(f->ctl, &q, NULL, 0, -1);

	return err ? log_err(c->log, err, "--lazy: shared memory %u: telling its loader:",
			     v->v.shm_id) : 0;
}

int mm_lazy_shm_tell_add(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
			 pid_t owner, int ufd)
{
	struct lazy_ctl_map *mp = calloc(LAZY_CTL_MAPS, sizeof(*mp));
	struct lazy_ctl q = { .type = LAZY_CTL_ADD, .pid = t->pid };
	int ctl = -1, err = mp ? 0 : ENOMEM;

	for (int i = 0; i < s->nr && !err; i++) {
		const struct rst_vma *v = &s->vmas[i];
		const struct shm_first *f = mm_shm_first(c, v->v.shm_id);

		if (!mm_lazy_shm_foreign(c, t, v) || f->pid != owner)
			continue;
		if (q.nr == LAZY_CTL_MAPS)
			err = E2BIG;
		else
			mp[q.nr++] = (struct lazy_ctl_map){ v->v.start, (v->v.end - v->v.start) / PAGE,
							    obj_off(c, v), f->obj, 0 };
		ctl = f->ctl;
	}
	if (!err)
		err = ctl < 0 ? EBADF : tell(ctl, &q, mp, q.nr * sizeof(*mp), ufd);
	free(mp);
	return err ? log_err(c->log, err, "--lazy: pid %d: its shared memory to pid %d's loader:",
			     t->pid, owner) : 0;
}

void mm_lazy_shm_free(struct lazy_shm *out, int *fds)
{
	for (size_t k = 0; k < out->nr; k++) {
		if (out->obj[k].view != MAP_FAILED)
			munmap(out->obj[k].view, out->obj[k].size);
		if (fds && fds[k] >= 0)
			close(fds[k]);
		lazy_set_free(&out->obj[k].pending);
		lazy_set_free(&out->maps[k]);
	}
	free(out->obj);
	free(out->maps);
	free(out->ids);
	free(fds);
	memset(out, 0, sizeof(*out));
}
