/* lazy_shm.c - restart --lazy of shared anonymous memory: an object
 * that one area of the image maps (mm_lazy.c says which), its pages
 * loaded by the loader (lazy.c) as a private area's are, and what makes
 * it harder.
 *
 * A shared area's pages are its object's, not the area's.  MADV_DONTNEED
 * drops the area's view of them and keeps the data; MADV_REMOVE frees
 * the data (a hole: zeros from then on).  userfaultfd tells both as the
 * same UFFD_EVENT_REMOVE, and the caller waits in madvise() until the
 * loader reads the event: the loader must know which it is before it
 * reads it, for once it is read the hole may come at any time, and a
 * page loaded after it would bring the old data back.  So while a shared
 * area is registered, its process's uffd is read one message at a time,
 * and before each the loader reads /proc/PID/task/TID/syscall of each
 * thread: one waiting in madvise() shows its range and advice there
 * (process_madvise() its advice).  A thread's event wakes the loader
 * only once the thread is asleep, so the message read, the oldest, is
 * one whose thread was seen.  A REMOVE event over a shared area is then
 * MADV_REMOVE's (its pages, loaded or not, are no longer the image's: a
 * fault there gets a zero page) or another advice's (nothing changes).
 * One no thread explains (a fault withdrawn between the look and the
 * read, and a new call's event read in its place) over pages of the
 * image kills the process, as a page that cannot be read does: never the
 * wrong data.
 *
 * Once all of a process's shared pages are in, its shared areas are
 * unregistered: their events and faults are the kernel's own again, and
 * its uffd is read in batches.  A fork while some are missing: the child
 * maps the same objects, and its threads are no process the loader knows
 * to read, so the parent's missing shared pages are loaded there and
 * then (the child's faults wait meanwhile), and the areas unregistered
 * in both.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "lazy_int.h"

#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif

bool lazy_shm_on(const struct lazy_mm *m)
{
	return m->shm.n > 0;
}

/* The first pending run that ends above @a (pending is sorted, apart). */
static size_t pending_from(const struct lazy_mm *m, uint64_t a)
{
	size_t lo = 0, hi = m->pending.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lazy_run *r = &m->pending.r[mid];

		if (r->addr + r->npages * PAGE <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first pending page of the shared areas, its run in *@r: 0 if none. */
static uint64_t shm_missing(const struct lazy_mm *m, const struct lazy_run **rp)
{
	for (size_t i = 0; i < m->shm.n; i++) {
		uint64_t a = m->shm.r[i].addr, b = a + m->shm.r[i].npages * PAGE;
		size_t k = pending_from(m, a);

		if (k < m->pending.n && m->pending.r[k].addr < b) {
			*rp = &m->pending.r[k];
			return m->pending.r[k].addr > a ? m->pending.r[k].addr : a;
		}
	}
	return 0;
}

/* Whether [s, e) lies in a shared area. */
static bool in_shm(const struct lazy_mm *m, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < m->shm.n; i++)
		if (s >= m->shm.r[i].addr && e <= m->shm.r[i].addr + m->shm.r[i].npages * PAGE)
			return true;
	return false;
}

/* Whether the image has pages in [s, e) (valid: those not dropped). */
static bool has_valid(const struct lazy_mm *m, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < m->valid.n; i++)
		if (m->valid.r[i].addr < e && m->valid.r[i].addr + m->valid.r[i].npages * PAGE > s)
			return true;
	return false;
}

/* One thread's /proc/PID/task/TID/syscall: a madvise() or
 * process_madvise() it waits in, noted. */
static void scan_thread(struct lazy_mm *m, const char *tid)
{
	unsigned long long a[7];
	char path[300], buf[256];
	ssize_t n;
	long nr;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", m->pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%ld %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2], &a[3]) != 5 ||
	    m->nr_seen == LAZY_MAX_SEEN)
		return;
	if (nr == SYS_madvise)
		m->seen[m->nr_seen++] = (struct madv_seen){ a[0], a[0] + ((a[1] + PAGE - 1) & ~(PAGE - 1)),
							   (int)a[2] };
	else if (nr == SYS_process_madvise)	/* its ranges: in its memory */
		m->seen[m->nr_seen++] = (struct madv_seen){ 0, UINT64_MAX, (int)a[3] };
}

void lazy_shm_scan(struct loader *l, struct lazy_mm *m)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	(void)l;
	m->nr_seen = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", m->pid);
	d = opendir(path);
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			scan_thread(m, e->d_name);
	if (d)
		closedir(d);
}

/* Shared memory dropped by a call the loader could not read. */
static _Noreturn void unexplained(struct loader *l, struct lazy_mm *m, uint64_t s, uint64_t e)
{
	log_err(&l->log, EPROTO,
		"lazy restart: pid %d: shared memory 0x%llx-0x%llx was dropped (madvise) while it loaded, by a call whose advice could not be read (MADV_DONTNEED keeps its data, MADV_REMOVE frees it), so %s %d is killed rather than given wrong pages",
		m->pid, (unsigned long long)s, (unsigned long long)e,
		l->tree == m->pid ? "pid" : "the restored tree of pid", l->tree);
	kill(m->pid, SIGKILL);
	lazy_kill_tree(l->tree, 0);
	_exit(1);
}

bool lazy_shm_keeps(struct loader *l, struct lazy_mm *m, uint64_t s, uint64_t e)
{
	bool seen = false;

	if (!lazy_shm_on(m) || !in_shm(m, s, e))
		return false;
	for (int i = 0; i < m->nr_seen; i++) {
		if (m->seen[i].start > s || m->seen[i].end < e)
			continue;
		if (m->seen[i].advice == MADV_REMOVE)
			return false;	/* freed: its pages are the image's no more */
		seen = true;
	}
	if (!seen && has_valid(m, s, e))
		unexplained(l, m, s, e);
	return seen;
}

/* @m's shared areas unregistered in its uffd @ufd. */
static void unregister(struct loader *l, const struct lazy_mm *m, int ufd)
{
	for (size_t i = 0; i < m->shm.n; i++) {
		struct uffdio_range r = { m->shm.r[i].addr, m->shm.r[i].npages * PAGE };

		/* (gone already: nothing of it is registered either) */
		if (ioctl(ufd, UFFDIO_UNREGISTER, &r) && errno != ENOENT && errno != ESRCH &&
		    errno != EINVAL)
			log_info(&l->log, "lazy restart: pid %d: unregistering 0x%llx: %m",
				 m->pid, (unsigned long long)r.start);
	}
}

void lazy_shm_settle(struct loader *l, struct lazy_mm *m)
{
	const struct lazy_run *r;

	if (!lazy_shm_on(m) || shm_missing(m, &r))
		return;
	unregister(l, m, m->ufd);
	lazy_set_free(&m->shm);
}

/* Every missing shared page of @m in now: the uffd's messages read
 * (one at a time, as always while it has shared areas) where a copy
 * must wait for one.  0, or 1 if its memory went. */
static int load_all(struct loader *l, struct lazy_mm *m, size_t k)
{
	const struct lazy_run *r;
	uint64_t a, n, done;
	int ret;

	while ((a = shm_missing(m, &r))) {
		n = (r->addr + r->npages * PAGE - a) / PAGE;
		n = n < CHUNK_PAGES ? n : CHUNK_PAGES;
		ret = lazy_copy_in(l, m, a, n, r->off + (a - r->addr), &done);
		if (ret == 1)
			return 1;
		if (lazy_set_cut(&m->pending, a, a + done))
			lazy_fetch_failed(l, m, a, 0, ENOMEM);
		l->in_bg += done / PAGE;
		if (ret == -EAGAIN && !done && lazy_drain(l, k) == 1)
			return 1;
		if (ret == -EAGAIN && !done)
			sched_yield();	/* (the fork's parent not yet on) */
	}
	return 0;
}

void lazy_shm_fork(struct loader *l, size_t k)
{
	struct lazy_mm *m = l->mm[k];
	size_t from = l->nr - 1;	/* the child, just added */

	if (l->shm_loading)
		return;		/* a fork of that fork: unregistered below */
	l->shm_loading = true;
	log_info(&l->log, "lazy restart: pid %d forked: its shared memory loaded now",
		 m->pid);
	if (load_all(l, m, k))
		m->dead = true;
	l->shm_loading = false;
	for (size_t i = from; i < l->nr; i++) {
		unregister(l, l->mm[i], l->mm[i]->ufd);
		lazy_set_free(&l->mm[i]->shm);
	}
	unregister(l, m, m->ufd);
	lazy_set_free(&m->shm);
}
