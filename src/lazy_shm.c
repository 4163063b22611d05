/* lazy_shm.c - restart --lazy: the loader's shared anonymous memory.
 *
 * Its pages are the object's, not an area's: MADV_DONTNEED drops a
 * process's view of a page and keeps it, MADV_REMOVE frees it, and a
 * userfaultfd reports both as one REMOVE event.  So the unit is the
 * object, and nothing of it is missing while the process runs: restart
 * allocates every page the image has (fallocate, mm_lazy_shm.c) and
 * registers each of the process's mappings of it MISSING and MINOR.
 * - A touch of a page not yet mapped there is a minor fault: the page,
 *   if still pending, is written with the image's bytes through the
 *   loader's own view of the object, then mapped (UFFDIO_CONTINUE).
 * - A page with none in the object (a hole of the image, or freed by
 *   MADV_REMOVE since) is a missing fault, or a CONTINUE that finds
 *   none (EFAULT): a zero page, and the page is pending no more.
 * - The background fill reads the image into the view, which is
 *   registered on the loader's own userfaultfd, MISSING with
 *   UFFD_FEATURE_SIGBUS: into a page that was freed meanwhile the read
 *   fails (EFAULT) instead of making one again, so a fill racing
 *   MADV_REMOVE either lands first and is freed, or fails.
 * The process's map of each object (where it maps which offsets) is
 * kept true by the fork, remap and unmap events, and read again from
 * /proc/PID/maps where an event does not say (mremap of old size 0).
 * Other processes of the tree that map an object come as restart's
 * requests (struct lazy_ctl): each a userfaultfd of theirs with its
 * maps, served as the first process's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fdpass.h"
#include "fileio.h"
#include "lazy.h"
#include "lazy_int.h"
#include "log.h"
#include "page.h"

#define FAULT_PAGES	64	/* written ahead of a touched page, and mapped: more as read on (lazy_ahead) */

int lazy_shm_start(struct loader *l, struct lazy_mm *m, struct lazy_shm *in)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_SIGBUS };

	l->self_ufd = -1;
	if (!in || !in->nr)
		return 0;
	l->obj = in->obj;
	l->nr_obj = in->nr;
	m->shm = in->maps;	/* (restart's has room for OTHER) */
	m->rescan = true;	/* OTHER: its areas of no object */
	l->self_ufd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (l->self_ufd < 0 || ioctl(l->self_ufd, UFFDIO_API, &api))
		return errno;
	for (size_t k = 0; k < l->nr_obj; k++) {
		struct lazy_obj *ob = &l->obj[k];
		struct uffdio_register reg = {
			.range = { (uintptr_t)ob->view, ob->size },
			.mode = UFFDIO_REGISTER_MODE_MISSING,
		};
		char path[96];

		if (ioctl(l->self_ufd, UFFDIO_REGISTER, &reg))
			return errno;
		snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)ob->view, (unsigned long)(ob->view + ob->size));
		ob->fd = open(path, O_RDWR | O_CLOEXEC);
		if (ob->fd < 0)
			return errno;
	}
	return lazy_shm_rescan(l, m, m->pid) ? ENOMEM : 0;
}

bool lazy_shm_find(const struct loader *l, const struct lazy_mm *m, uint64_t a,
		   size_t *k, uint64_t *o)
{
	for (size_t i = 0; m->shm && i < l->nr_obj; i++) {
		const struct lazy_run *r = lazy_set_find(&m->shm[i], a);

		if (r) {
			*k = i;
			*o = r->off + (a - r->addr);
			return true;
		}
	}
	return false;
}

/* Whether [o, o + len) of @ob was in an area a REMOVE event named. */
static bool touched(const struct lazy_obj *ob, uint64_t o, uint64_t len)
{
	size_t i = lazy_set_lower(&ob->touched, o);

	return i < ob->touched.n && ob->touched.r[i].addr < o + len;
}

/* Through the view: a page freed since fails the read there (EFAULT),
 * which is pending no more then. */
static void write_view(struct loader *l, struct lazy_mm *m, struct lazy_obj *ob,
		       uint64_t o, uint64_t len, uint64_t off)
{
	uint64_t done = 0;

	/* the view's pages mapped at once, not one fault each as the read
	 * meets them (fails at a freed page: the read meets it then) */
	madvise(ob->view + o, len, MADV_POPULATE_WRITE);
	while (done < len) {
		ssize_t n = pread(l->img_fd, ob->view + o + done, len - done, (off_t)(off + done));

		if (n > 0)
			done += (uint64_t)n;
		else if (n < 0 && errno == EFAULT)
			done = (done & ~(PAGE - 1)) + PAGE;
		else if (!(n < 0 && errno == EINTR))
			lazy_fetch_failed(l, m, 0, off + done, n ? errno : ENODATA);
	}
}

/* Through the object's file, CHUNK_PAGES at most: no page of the view
 * mapped (where the hypervisor shadows page tables, each costs more
 * than its copy). */
static void write_file(struct loader *l, struct lazy_mm *m, struct lazy_obj *ob,
		       uint64_t o, uint64_t len, uint64_t off, char *buf)
{
	size_t got;
	int err = pread_full(l->img_fd, buf, len, (off_t)off, &got);

	if (err)
		lazy_fetch_failed(l, m, 0, off + got, err);
	if (pwrite(ob->fd, buf, len, (off_t)o) != (ssize_t)len)
		lazy_fetch_failed(l, m, 0, off, errno ? errno : EIO);
}

/* [o, o + len) of object @k, in its pending run @r, taken out of the
 * pending set as step @st (@m: the process blamed if a page cannot be
 * read); through the view where a REMOVE event named any of them. */
static void take_pages(struct loader *l, struct lazy_mm *m, size_t k,
		       const struct lazy_run *r, uint64_t o, uint64_t len,
		       struct lazy_shm_step *st)
{
	*st = (struct lazy_shm_step){ .m = m, .k = k, .o = o, .len = len,
				      .off = r->off + (o - r->addr) };
	st->view = len > CHUNK_PAGES * PAGE || touched(&l->obj[k], o, len);
	if (lazy_set_cut(&l->obj[k].pending, o, o + len))
		lazy_fetch_failed(l, m, 0, 0, ENOMEM);
}

/* The pending pages of object @k at [o, o + len), one run of it, read
 * from the image into the object, and pending no more.
 *
 * A page the process frees (MADV_REMOVE) must not be made again by a
 * write after that.  The object's file would make it; but a free in an
 * area registered on a userfaultfd waits until the loader has read its
 * REMOVE event (which MADV_DONTNEED sends as well), and the loader
 * reads none while it writes (its copiers are held while it reads,
 * lazy_copy.c): a page no such event named yet is written to the
 * file, and freed, if at all, after.  Pages an event did name go
 * through the view, where a freed one fails. */
static void write_pages(struct loader *l, struct lazy_mm *m, size_t k,
			const struct lazy_run *r, uint64_t o, uint64_t len)
{
	struct lazy_shm_step st;

	take_pages(l, m, k, r, o, len, &st);
	lazy_shm_write(l, &st, l->buf);
}

void lazy_shm_write(struct loader *l, const struct lazy_shm_step *st, char *buf)
{
	struct lazy_obj *ob = &l->obj[st->k];

	if (st->view)
		write_view(l, st->m, ob, st->o, st->len, st->off);
	else
		write_file(l, st->m, ob, st->o, st->len, st->off, buf);
}

/* Whether [start, end) lies in @m's known areas (its maps of objects,
 * or OTHER). */
static bool covered(const struct loader *l, const struct lazy_mm *m, uint64_t start,
		    uint64_t end)
{
	while (start < end) {
		const struct lazy_run *r = NULL;

		for (size_t k = 0; m->shm && k <= l->nr_obj && !r; k++)
			r = lazy_set_find(&m->shm[k], start);
		if (!r)
			return false;
		start = r->addr + r->npages * PAGE;
	}
	return true;
}

bool lazy_shm_known(const struct loader *l, const struct lazy_mm *m, uint64_t a)
{
	return covered(l, m, a, a + PAGE);
}

/* Every page of every object taken as named by a REMOVE event. */
static int all_touched(const struct loader *l)
{
	for (size_t k = 0; k < l->nr_obj; k++)
		if (lazy_set_cut(&l->obj[k].touched, 0, l->obj[k].size) ||
		    lazy_set_add(&l->obj[k].touched, 0, l->obj[k].size / PAGE, 0))
			return -ENOMEM;
	return 0;
}

int lazy_shm_removed(const struct loader *l, struct lazy_mm *m, uint64_t start, uint64_t end)
{
	bool pending = false;

	for (size_t k = 0; k < l->nr_obj; k++)
		pending |= l->obj[k].pending.n;
	if (!m->shm || !pending)
		return 0;
	/* A range its maps do not account for may be of an object still:
	 * one grown in place (mremap without a move says nothing), or
	 * mapped again.  Its maps read again, from any of its threads; if
	 * none can be read, every page is taken as named. */
	if (m->rescan || !covered(l, m, start, end)) {
		int ret;

		m->rescan = true;
		ret = lazy_shm_rescan_any(l, m);

		if (ret || m->rescan)
			return ret ?: all_touched(l);
	}
	for (size_t k = 0; k < l->nr_obj; k++)
		for (size_t i = 0; i < m->shm[k].n; i++) {
			const struct lazy_run *r = &m->shm[k].r[i];
			uint64_t a = r->addr > start ? r->addr : start;
			uint64_t b = r->addr + r->npages * PAGE < end ? r->addr + r->npages * PAGE : end;
			struct lazy_set *t = &l->obj[k].touched;

			if (a < b && (lazy_set_cut(t, r->off + (a - r->addr), r->off + (b - r->addr)) ||
				      lazy_set_add(t, r->off + (a - r->addr), (b - a) / PAGE, 0)))
				return -ENOMEM;
		}
	return 0;
}

/* Up to @most pending pages of object @k from offset @o on: how many
 * were written (0: @o is not pending). */
static uint64_t write_from(struct loader *l, struct lazy_mm *m, size_t k, uint64_t o,
			   uint64_t most)
{
	const struct lazy_run *r = lazy_set_find(&l->obj[k].pending, o);
	uint64_t n;

	if (!r || r->addr > o)
		return 0;
	n = (r->addr + r->npages * PAGE - o) / PAGE;
	n = n < most ? n : most;
	write_pages(l, m, k, r, o, n * PAGE);
	return n;
}

/* How many pages from offset @o on, up to @most, are pending no more
 * (written, or none in the image: those a CONTINUE may map). */
static uint64_t done_from(const struct lazy_obj *ob, uint64_t o, uint64_t most)
{
	const struct lazy_set *p = &ob->pending;
	size_t i = lazy_set_lower(p, o);

	if (i < p->n && p->r[i].addr <= o)
		return 0;
	if (i < p->n && (p->r[i].addr - o) / PAGE < most)
		return (p->r[i].addr - o) / PAGE;
	return most;
}

/* @a mapped in @m from the object's page there (and up to @n pages
 * from it, as far as they are in the object and pending no more), or
 * a zero page where the object has none: 0, 1 (memory gone) or
 * -EAGAIN. */
static int map_page(struct loader *l, struct lazy_mm *m, size_t k, uint64_t o, uint64_t a,
		    uint64_t n)
{
	struct uffdio_continue uc = { .range = { a, n * PAGE } };
	struct uffdio_zeropage z = { .range = { a, PAGE } };
	struct uffdio_range wake = { a, PAGE };

	if (!ioctl(m->ufd, UFFDIO_CONTINUE, &uc) || uc.mapped > 0)
		return 0;	/* (a part: the rest faults again) */
	/* (ENOENT: the range spans two areas since an mprotect split one,
	 * which the kernel refuses whole: the page alone) */
	if (errno == ENOENT && n > 1)
		return map_page(l, m, k, o, a, 1);
	if (errno == EFAULT) {	/* none there: a hole */
		if (lazy_set_cut(&l->obj[k].pending, o, o + PAGE))
			lazy_fetch_failed(l, m, a, 0, ENOMEM);
		l->zero++;
		if (!ioctl(m->ufd, UFFDIO_ZEROPAGE, &z))
			return 0;
		uc.range.len = PAGE;
		/* (EEXIST: another process's touch made it meanwhile) */
		if (errno == EEXIST && !ioctl(m->ufd, UFFDIO_CONTINUE, &uc))
			return 0;
	}
	if (errno == ESRCH)
		return 1;
	if (errno == EAGAIN || errno == ENOENT)
		return -EAGAIN;
	/* (EEXIST: mapped already, by a touch the kernel let through) */
	ioctl(m->ufd, UFFDIO_WAKE, &wake);
	return 0;
}

int lazy_shm_serve(struct loader *l, struct lazy_mm *m, size_t k, uint64_t o, uint64_t a)
{
	const struct lazy_run *r = lazy_set_find(&m->shm[k], a);
	uint64_t left = (r->addr + r->npages * PAGE - a) / PAGE, n;
	uint64_t want = lazy_ahead(m, a, FAULT_PAGES);

	l->on_fault += write_from(l, m, k, o, want);
	l->faults++;
	n = done_from(&l->obj[k], o, left < want ? left : want);
	m->next_fault = a + (n ? n : 1) * PAGE;
	return map_page(l, m, k, o, a, n ? n : 1);
}

bool lazy_shm_take(struct loader *l, size_t *rr, struct lazy_shm_step *st)
{
	for (size_t i = 0; i < l->nr_obj && l->nr; i++) {
		struct lazy_obj *ob = &l->obj[(*rr + i) % l->nr_obj];
		const struct lazy_run *r;
		uint64_t n;

		if (!ob->pending.n)
			continue;
		*rr = (*rr + i + 1) % l->nr_obj;
		r = &ob->pending.r[ob->pending.n - 1];
		n = r->npages < CHUNK_PAGES ? r->npages : CHUNK_PAGES;
		/* (no process to blame: the first one's) */
		take_pages(l, l->mm[0], ob - l->obj, r, r->addr + (r->npages - n) * PAGE,
			   n * PAGE, st);
		l->in_bg += n;
		return true;
	}
	return false;
}

bool lazy_shm_step(struct loader *l, size_t *rr)
{
	struct lazy_shm_step st;

	if (!lazy_shm_take(l, rr, &st))
		return false;
	lazy_shm_write(l, &st, l->buf);
	return true;
}

bool lazy_shm_busy(const struct loader *l, const struct lazy_mm *m)
{
	bool any = false;

	for (size_t k = 0; m->shm && k < l->nr_obj; k++) {
		if (m->shm[k].n && l->obj[k].pending.n)
			return true;
		any |= l->obj[k].pending.n;
	}
	/* (a map it made that is not read yet may be of one) */
	return any && m->rescan;
}

int lazy_shm_fork(const struct loader *l, struct lazy_mm *to, const struct lazy_mm *from)
{
	/* (read again at its first fault: another thread's change made
	 * before the fork may come as an event after it, to the parent) */
	to->rescan = true;
	if (!from->shm)
		return 0;
	to->shm = calloc(l->nr_obj + 1, sizeof(*to->shm));
	if (!to->shm)
		return -ENOMEM;
	for (size_t k = 0; k <= l->nr_obj; k++)
		if (lazy_set_copy(&to->shm[k], &from->shm[k]))
			return -ENOMEM;
	return 0;
}

int lazy_shm_unmap(const struct loader *l, struct lazy_mm *m, uint64_t start, uint64_t end)
{
	int ret = 0;

	for (size_t k = 0; m->shm && k <= l->nr_obj; k++)
		ret |= lazy_set_cut(&m->shm[k], start, end);
	return ret;
}

/* Whether [from, from + len) (@len 0: the page at @from) holds a page
 * of an object @m maps. */
static bool maps_some(const struct loader *l, const struct lazy_mm *m, uint64_t from,
		      uint64_t len)
{
	uint64_t end = from + (len ? len : PAGE);

	for (size_t k = 0; k < l->nr_obj; k++)
		for (size_t i = 0; i < m->shm[k].n; i++) {
			const struct lazy_run *r = &m->shm[k].r[i];

			if (r->addr < end && r->addr + r->npages * PAGE > from)
				return true;
		}
	return false;
}

/* A move of a map of an object: read again from /proc at the next
 * fault, not moved as the event says: a reading since may have seen the
 * move already (and another map put where it was), which the event
 * would then move again. */
int lazy_shm_move(const struct loader *l, struct lazy_mm *m, uint64_t from, uint64_t len)
{
	if (m->shm && maps_some(l, m, from, len))
		m->rescan = true;
	return 0;
}

/* A minor fault at @a of no object the loader knows, even from the
 * faulting thread's maps just read: a map gone since (every map of
 * shared memory registered is of one of the objects).  Woken only: a
 * page mapped here without being written could be one still pending. */
void lazy_shm_foreign(struct lazy_mm *m, uint64_t a)
{
	struct uffdio_range wake = { a, PAGE };

	ioctl(m->ufd, UFFDIO_WAKE, &wake);
}

int lazy_shm_rescan(const struct loader *l, struct lazy_mm *m, pid_t tid)
{
	struct lazy_set *fresh;
	char path[64], line[512];
	bool any = false;
	int ret = 0;
	FILE *f;

	if (!m->shm)
		return 0;
	/* (a thread waiting on its fault: alive, its memory's maps to
	 * read, which its process's first thread, if it has exited, has
	 * not) */
	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	f = fopen(path, "re");
	fresh = f ? calloc(l->nr_obj + 1, sizeof(*fresh)) : NULL;
	while (fresh && !ret && fgets(line, sizeof(line), f)) {
		uint64_t start, end, off, ino;
		unsigned int maj, min;
		size_t k = 0;

		any = true;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64,
			   &start, &end, &off, &maj, &min, &ino) != 6)
			continue;
		while (k < l->nr_obj && !(l->obj[k].ino == ino && l->obj[k].dev == makedev(maj, min)))
			k++;	/* (k == nr_obj: no object's, OTHER) */
		ret = lazy_set_add(&fresh[k], start, (end - start) / PAGE, off);
	}
	if (f)
		fclose(f);
	if (!fresh)
		return f ? -ENOMEM : 0;
	/* (none read, the thread gone meanwhile: kept as they were, for
	 * the next fault to read) */
	for (size_t k = 0; k <= l->nr_obj; k++) {
		if (ret || !any) {
			lazy_set_free(&fresh[k]);
			continue;
		}
		lazy_set_free(&m->shm[k]);
		m->shm[k] = fresh[k];
	}
	free(fresh);
	if (!ret && any)
		m->rescan = false;
	return ret;
}

int lazy_shm_rescan_any(const struct loader *l, struct lazy_mm *m)
{
	char path[64];
	struct dirent *e;
	int ret = 0;
	DIR *d;

	if (!m->pid)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", m->pid);
	d = opendir(path);
	while (d && m->rescan && !ret && (e = readdir(d)))
		if (e->d_name[0] != '.')
			ret = lazy_shm_rescan(l, m, atoi(e->d_name));
	if (d)
		closedir(d);
	return ret;
}

void lazy_shm_drop(const struct loader *l, struct lazy_mm *m)
{
	for (size_t k = 0; m->shm && k <= l->nr_obj; k++)
		lazy_set_free(&m->shm[k]);
	free(m->shm);
	m->shm = NULL;
}

/* LAZY_CTL_ADD: another process's maps of the objects, served from now. */
static int ctl_add(struct loader *l, const struct lazy_ctl *q, int ufd, size_t len)
{
	const struct lazy_ctl_map *mp = (const void *)(q + 1);
	struct lazy_mm *m;

	if (ufd < 0 || q->nr > LAZY_CTL_MAPS || len != sizeof(*q) + q->nr * sizeof(*mp))
		return EPROTO;
	m = lazy_mm_add(l, ufd, q->pid);
	m->shm = calloc(l->nr_obj + 1, sizeof(*m->shm));
	if (!m->shm)
		return ENOMEM;
	m->rescan = true;	/* (its other areas: at its first fault) */
	for (uint32_t i = 0; i < q->nr; i++)
		if (mp[i].obj >= l->nr_obj ||
		    lazy_set_add(&m->shm[mp[i].obj], mp[i].start, mp[i].npages, mp[i].off))
			return mp[i].obj >= l->nr_obj ? EPROTO : ENOMEM;
	return 0;
}

int lazy_shm_ctl(struct loader *l)
{
	union {
		struct lazy_ctl q;
		char b[sizeof(struct lazy_ctl) + LAZY_CTL_MAPS * sizeof(struct lazy_ctl_map)];
	} u = { .q = { 0 } };
	unsigned int nfd = 1;
	int ufd = -1, err;
	ssize_t n = fd_recv(l->ctl, u.b, sizeof(u.b), MSG_DONTWAIT, &ufd, &nfd);
	char ok = 1;

	if (n == -EAGAIN)
		return 0;
	if (n <= 0)
		return 1;	/* restart is done with it */
	if ((size_t)n < sizeof(u.q))
		err = EPROTO;
	else if (u.q.type == LAZY_CTL_ADD)
		err = ctl_add(l, &u.q, ufd, (size_t)n);
	else if (u.q.type == LAZY_CTL_CUT && u.q.obj < l->nr_obj && ufd < 0)
		err = lazy_set_cut(&l->obj[u.q.obj].pending, u.q.off, u.q.off + u.q.len) ? ENOMEM : 0;
	else
		err = EPROTO;
	if (err) {	/* (restart takes no answer as all done: never that) */
		log_err(&l->log, err, "lazy restart: pid %d: restart's request for pid %d, so pid %d is killed:",
			l->root, u.q.pid, l->tree);
		lazy_kill_tree(l->tree, 0);
		_exit(1);
	}
	return send(l->ctl, &ok, 1, MSG_NOSIGNAL) == 1 ? 0 : 1;
}
