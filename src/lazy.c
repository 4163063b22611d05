/* lazy.c - restart --lazy: the loader, a process of ckpt's (not of the
 * restored tree; one for each process of it) that holds a process's
 * userfaultfd (and those of its forks) and brings each page
 * from the image: at once when the process touches it (UFFDIO_COPY, or
 * UFFDIO_ZEROPAGE where the image has none), the rest in the background,
 * 2 MiB at a time.  Once every page is in, the uffd is closed (its areas
 * fault as any area again) and the loader exits; so it does when the
 * memory is gone (the process ended or ran exec).  A page it cannot read
 * kills the process and its restored tree: never a zero page in its
 * place.
 *
 * Non-cooperative events keep its map true: an area dropped (munmap,
 * MADV_DONTNEED) is no longer loaded, one moved (mremap) is loaded where
 * it went, and a fork gets a uffd of its own whose missing pages are
 * those its parent still missed then (copies fail with EAGAIN until the
 * fork's event is read, so no page falls in between).
 *
 * Shared anonymous memory is served by its object, not by area
 * (lazy_shm.c).
 *
 * With restart --page-server the image is a memfd with holes where the
 * lazy pages' data was (pageserver.c): the loader asks the server for
 * those, and streams every PAGES payload through in order to check its
 * checksum on the way (lazy_net.c; no checker child: nothing here to
 * read twice).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "image.h"
#include "lazy.h"
#include "lazy_int.h"
#include "log.h"
#include "pageserver.h"

#define FAULT_PAGES	16	/* from a touched page on: the next are near */
#define MAX_MSGS	64
/* a page that will not go in, with no event of its mm's read meanwhile:
 * this many tries, over this long */
#define STUCK_TRIES	1000
#define STUCK_NS	1000000000ULL

/* ---- sets of runs ---- */

void lazy_set_free(struct lazy_set *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}

size_t lazy_set_lower(const struct lazy_set *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->r[mid].addr + s->r[mid].npages * PAGE <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int set_insert_at(struct lazy_set *s, size_t i, struct lazy_run r)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct lazy_run *p = realloc(s->r, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->r = p;
		s->cap = cap;
	}
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
	s->r[i] = r;
	s->n++;
	return 0;
}

int lazy_set_add(struct lazy_set *s, uint64_t addr, uint64_t npages, uint64_t off)
{
	struct lazy_run r = { addr, npages, off };

	return npages ? set_insert_at(s, lazy_set_lower(s, addr), r) : 0;
}

const struct lazy_run *lazy_set_find(const struct lazy_set *s, uint64_t addr)
{
	size_t i = lazy_set_lower(s, addr);

	return i < s->n && s->r[i].addr <= addr ? &s->r[i] : NULL;
}

/* [start, end) taken out: the runs it covers whole in one move (a
 * process reading its memory from the bottom has it cut run by run
 * from the front of a set of thousands). */
int lazy_set_cut(struct lazy_set *s, uint64_t start, uint64_t end)
{
	size_t i = lazy_set_lower(s, start), j;
	struct lazy_run *r;

	if (i == s->n || s->r[i].addr >= end)
		return 0;
	r = &s->r[i];
	if (r->addr < start && r->addr + r->npages * PAGE > end) {
		uint64_t b = r->addr + r->npages * PAGE;
		struct lazy_run right = { end, (b - end) / PAGE, r->off + (end - r->addr) };

		r->npages = (start - r->addr) / PAGE;
		return set_insert_at(s, i + 1, right);
	}
	if (r->addr < start) {
		r->npages = (start - r->addr) / PAGE;
		i++;
	}
	for (j = i; j < s->n && s->r[j].addr + s->r[j].npages * PAGE <= end; j++)
		;
	if (j < s->n && s->r[j].addr < end) {
		r = &s->r[j];
		r->npages -= (end - r->addr) / PAGE;
		r->off += end - r->addr;
		r->addr = end;
	}
	memmove(&s->r[i], &s->r[j], (s->n - j) * sizeof(*s->r));
	s->n -= j - i;
	return 0;
}

/* What was at [from, from + len) is now at @to (mremap). */
int lazy_set_move(struct lazy_set *s, uint64_t from, uint64_t to, uint64_t len)
{
	struct lazy_set moved = { 0 };
	int ret = 0;

	for (size_t i = lazy_set_lower(s, from); i < s->n && s->r[i].addr < from + len && !ret; i++) {
		uint64_t a = s->r[i].addr, b = a + s->r[i].npages * PAGE;
		uint64_t lo = a > from ? a : from, hi = b < from + len ? b : from + len;

		ret = lazy_set_add(&moved, lo - from + to, (hi - lo) / PAGE,
				   s->r[i].off + (lo - a));
	}
	if (!ret)
		ret = lazy_set_cut(s, from, from + len);
	if (!ret)
		ret = lazy_set_cut(s, to, to + len);
	for (size_t i = 0; i < moved.n && !ret; i++)
		ret = lazy_set_add(s, moved.r[i].addr, moved.r[i].npages, moved.r[i].off);
	lazy_set_free(&moved);
	return ret;
}

int lazy_set_copy(struct lazy_set *to, const struct lazy_set *from)
{
	to->r = malloc((from->n ? from->n : 1) * sizeof(*to->r));
	if (!to->r)
		return -ENOMEM;
	if (from->n)
		memcpy(to->r, from->r, from->n * sizeof(*to->r));
	to->n = to->cap = from->n;
	return 0;
}

/* ---- the end of it all ---- */

/* @pid and every process below it, killed (children found first: they
 * would move to their reaper once their parent is gone). */
void lazy_kill_tree(pid_t pid, int depth)
{
	char path[64], buf[4096];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = depth < 64 ? opendir(path) : NULL;
	while (d && (e = readdir(d))) {
		FILE *f;
		int child;

		if (e->d_name[0] == '.')
			continue;
		snprintf(buf, sizeof(buf), "/proc/%d/task/%s/children", pid, e->d_name);
		f = fopen(buf, "re");
		while (f && fscanf(f, "%d", &child) == 1)
			lazy_kill_tree(child, depth + 1);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	kill(pid, SIGKILL);
}

/* A copier and the first thread may meet an error at the same time. */
void lazy_ending(struct loader *l)
{
	if (__atomic_exchange_n(&l->ending, true, __ATOMIC_ACQ_REL))
		for (;;)
			pause();
}

/* A page that cannot be had: the process must not run on without it. */
_Noreturn void lazy_fetch_failed(struct loader *l, struct lazy_mm *m, uint64_t addr,
				  uint64_t off, int err)
{
	pid_t pid = m->pid ? m->pid : l->root;

	lazy_ending(l);
	log_err(&l->log, err,
		"lazy restart: pid %d: the page at 0x%llx (image offset %llu) cannot be read from the image, so %s %d is killed:",
		pid, (unsigned long long)addr, (unsigned long long)off,
		l->tree == pid ? "pid" : "the restored tree of pid", l->tree);
	if (m->pid)
		kill(m->pid, SIGKILL);
	lazy_kill_tree(l->tree, 0);
	_exit(1);
}

/* ---- the image's checksums ---- */

/* Checked beside the loading, by a child (the loader serves faults
 * meanwhile): a page the process got is trusted once its record is
 * checked, and a bad one kills the process (pageverify.c's verifier,
 * which would hold the process until all is read). */
static void check_start(struct loader *l, const struct ir_span *s, size_t n)
{
	int fds[2];

	l->spans = s;
	if (!n || pipe2(fds, O_CLOEXEC))
		return;
	l->checker = fork();
	if (l->checker == 0) {
		struct ckpt_log quiet = { .fd = -1 };
		struct img_reader r;

		if (ir_init(&r, l->img_fd, &quiet))
			_exit(2);
		for (size_t i = 0; i < n; i++) {
			int ret = ir_check_span(&r, &s[i]);

			if (ret == -EBADMSG)
				_exit(write(fds[1], &i, sizeof(i)) == sizeof(i) ? 1 : 2);
			if (ret)
				_exit(2);
		}
		_exit(0);
	}
	close(fds[1]);
	l->check_fd = fds[0];
	if (l->checker < 0) {
		l->checker = 0;
		log_err(&l->log, errno, "lazy restart: pid %d: checking the image's pages:", l->root);
		lazy_kill_tree(l->tree, 0);
		_exit(1);
	}
}

/* Its verdict, if it has one (waiting for it with @wait); a bad image
 * kills the process. */
static void check_done(struct loader *l, bool wait)
{
	int status = 0;
	size_t bad;

	if (!l->checker || waitpid(l->checker, &status, wait ? 0 : WNOHANG) <= 0)
		return;
	l->checker = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	lazy_ending(l);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
	    read(l->check_fd, &bad, sizeof(bad)) == sizeof(bad))
		log_err(&l->log, EBADMSG,
			"lazy restart: pid %d: record PAGES at offset %llu: checksum mismatch (corrupt image), so pid %d is killed",
			l->root, (unsigned long long)l->spans[bad].rec_pos, l->tree);
	else
		log_err(&l->log, EIO, "lazy restart: pid %d: the image's pages could not be checked, so pid %d is killed",
			l->root, l->tree);
	lazy_kill_tree(l->tree, 0);
	_exit(1);
}

/* ---- copies ---- */

/* @len bytes at @src into @m at @addr: 0 (*done: all of them), 1 if its
 * memory is gone, -EAGAIN (*done: those in) while its map changes.
 *
 * A copy must lie in one area: where the process split one since
 * (mprotect), the kernel refuses it whole (ENOENT), so it is cut in
 * halves until its parts fit.  A page whose area is not there at all
 * has been unmapped or moved (mremap) by the process, and its event is
 * on its way: that is -EAGAIN too, never a page taken as placed (it
 * would be left out, and read as zeros once the loader is done). */
int lazy_place(struct loader *l, struct lazy_mm *m, uint64_t addr, uint64_t len,
	       const char *src, uint64_t off, uint64_t *done)
{
	uint64_t most = len;

	*done = 0;
	while (*done < len) {
		uint64_t n = len - *done < most ? len - *done : most;
		struct uffdio_copy uc = { .dst = addr + *done,
					  .src = (uintptr_t)src + *done,
					  .len = n };

		if (!ioctl(m->ufd, UFFDIO_COPY, &uc)) {
			*done += n;
			most = len;
		} else if (uc.copy > 0) {
			*done += uc.copy;
		} else if (errno == EEXIST) {
			*done += PAGE;	/* in already */
		} else if (errno == ENOENT && n > PAGE) {
			most = n / 2 & ~(PAGE - 1);
			most = most ? most : PAGE;
		} else if (errno == ESRCH) {
			return 1;
		} else if (errno == EAGAIN || errno == ENOENT) {
			return -EAGAIN;
		} else {	/* (EFAULT: the image cut short under the mapping) */
			lazy_fetch_failed(l, m, addr + *done, off + *done,
				     errno == EFAULT ? ENODATA : errno);
		}
	}
	return 0;
}

/* @n pages at @addr, from image offset @off, into @m through @buf: as
 * lazy_place().  Read into a buffer, not mapped: where the hypervisor
 * shadows page tables (this project's VMs) each page of the image
 * mapped cost more than its copy (mm_place.c says by how much). */
int lazy_copy_in(struct loader *l, struct lazy_mm *m, char *buf, uint64_t addr,
		 uint64_t n, uint64_t off, uint64_t *done)
{
	uint64_t len = n * PAGE;
	size_t got;
	int err = pread_full(l->img_fd, buf, len, off, &got);

	*done = 0;
	if (err)	/* (where it fails, not where the run starts) */
		lazy_fetch_failed(l, m, addr + got, off + got, err);
	return lazy_place(l, m, addr, len, buf, off, done);
}

static int copy_in(struct loader *l, struct lazy_mm *m, uint64_t addr, uint64_t n,
		   uint64_t off, uint64_t *done)
{
	return lazy_copy_in(l, m, l->buf, addr, n, off, done);
}

/* How many pages from @a on to bring for a fault there: @first, or
 * where the process touches the page after the last a fault brought,
 * as a program reading its memory through does, twice as many as then
 * (up to a background step): a fault each 64 KiB cost such a program,
 * and the loader serving it, more than the copies. */
uint64_t lazy_ahead(struct lazy_mm *m, uint64_t a, uint64_t first)
{
	m->ahead = a == m->next_fault && m->ahead ? m->ahead * 2 : first;
	m->ahead = m->ahead < CHUNK_PAGES ? m->ahead : CHUNK_PAGES;
	return m->ahead;
}

/* What @m misses in the @want pages from @a on (@a among them), run by
 * run, up to the first that does not go in whole: as lazy_place(),
 * with *@upto the end of what is in. */
static int bring(struct loader *l, struct lazy_mm *m, uint64_t a, uint64_t want,
		 uint64_t *upto)
{
	const struct lazy_set *s = &m->pending;
	uint64_t end = a + want * PAGE;
	int ret = 0;

	*upto = a;
	for (size_t i = lazy_set_lower(s, a); i < s->n && s->r[i].addr < end; i++) {
		const struct lazy_run *p = &s->r[i];
		uint64_t x = p->addr > a ? p->addr : a, y = p->addr + p->npages * PAGE, done;

		y = y < end ? y : end;
		ret = copy_in(l, m, x, (y - x) / PAGE, p->off + (x - p->addr), &done);
		l->on_fault += done / PAGE;
		*upto = x + done;
		if (ret || x + done < y)
			break;
	}
	return ret == -EAGAIN && *upto > a ? 0 : ret;	/* (@a is in) */
}

/* A touched page: 0, 1 (memory gone) or -EAGAIN (to be tried again). */
static int serve(struct loader *l, struct lazy_mm *m, uint64_t a)
{
	const struct lazy_run *r = lazy_set_find(&m->valid, a);
	struct uffdio_range wake = { a, PAGE };
	uint64_t done = 0, o;
	size_t k;
	int ret;

	if (lazy_shm_find(l, m, a, &k, &o))
		return lazy_shm_serve(l, m, k, o, a);
	if (r && lazy_net_has(l, r->off + (a - r->addr))) {
		l->on_fault += lazy_net_fault(l, r->off + (a - r->addr));
		ret = m->dead ? 1 : lazy_set_find(&m->pending, a) ? -EAGAIN : 0;
	} else if (r && lazy_set_find(&m->pending, a)) {
		ret = bring(l, m, a, lazy_ahead(m, a, FAULT_PAGES), &done);
		if (lazy_set_cut(&m->pending, a, done))
			lazy_fetch_failed(l, m, a, 0, ENOMEM);
		if (done > a) {	/* (a retry of nothing brought is no read on) */
			m->next_fault = done;
			l->faults++;
		}
	} else if (r) {	/* (in, or left out: brought again if it can be) */
		uint64_t n = (r->addr + r->npages * PAGE - a) / PAGE;

		ret = copy_in(l, m, a, n < FAULT_PAGES ? n : FAULT_PAGES,
			      r->off + (a - r->addr), &done);
		if (lazy_set_cut(&m->pending, a, a + done))
			lazy_fetch_failed(l, m, a, 0, ENOMEM);
	} else {
		struct uffdio_zeropage z = { .range = { a, PAGE } };

		/* (ENOENT: unmapped since the fault; woken, the thread
		 * meets what is there now) */
		ret = 0;
		if (ioctl(m->ufd, UFFDIO_ZEROPAGE, &z) && errno != EEXIST && errno != ENOENT)
			ret = errno == ESRCH ? 1 : errno == EAGAIN ? -EAGAIN : -errno;
		l->zero++;
		if (ret < 0 && ret != -EAGAIN)
			lazy_fetch_failed(l, m, a, 0, -ret);
	}
	if (!ret)	/* (a copy wakes it, but not when the page was in) */
		ioctl(m->ufd, UFFDIO_WAKE, &wake);
	return ret;
}

static void fault(struct loader *l, struct lazy_mm *m, const struct uffd_msg *msg)
{
	uint64_t a = msg->arg.pagefault.address & ~(PAGE - 1), o;
	bool minor = msg->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_MINOR;
	size_t k;

	if (!m->pid)
		m->pid = msg->arg.pagefault.feat.ptid;
	/* An address of no area it knows may be of an object (grown in
	 * place, of which no event says) as well as a private one: its
	 * areas read again first, from the thread waiting here (alive). */
	if (m->shm && (m->rescan || !lazy_shm_known(l, m, a)) &&
	    lazy_shm_rescan(l, m, msg->arg.pagefault.feat.ptid))
		lazy_fetch_failed(l, m, a, 0, ENOMEM);
	if (minor && !lazy_shm_find(l, m, a, &k, &o)) {
		lazy_shm_foreign(m, a);
		return;
	}
	if (serve(l, m, a) == -EAGAIN && m->nr_retry < MAX_RETRY)
		m->retry[m->nr_retry++] = a;
}

static void add_mm(struct loader *l, int ufd, const struct lazy_mm *parent)
{
	struct lazy_mm *m = calloc(1, sizeof(*m));
	void *p = l->nr == l->cap ? realloc(l->mm, (l->cap = l->cap * 2 + 4) * sizeof(m)) : l->mm;

	if (!m || !p || lazy_set_copy(&m->pending, &parent->pending) ||
	    lazy_set_copy(&m->valid, &parent->valid) || lazy_shm_fork(l, m, parent))
		lazy_fetch_failed(l, m ? m : (struct lazy_mm *)parent, 0, 0, ENOMEM);
	l->mm = p;
	m->ufd = ufd;
	m->moved = parent->moved;
	l->mm[l->nr++] = m;
}

struct lazy_mm *lazy_mm_add(struct loader *l, int ufd, pid_t pid)
{
	struct lazy_mm none = { 0 };

	add_mm(l, ufd, &none);
	l->mm[l->nr - 1]->pid = pid;
	return l->mm[l->nr - 1];
}

/* Every message waiting on mm @k; 1 once its uffd is gone.
 *
 * The events of a read first, its faults after: the kernel hands out
 * faults before events, and an event is done once read: the process's
 * madvise() or mremap() goes on while the loader is still at the
 * faults read with it.  A fault served first would copy pages the
 * event has freed back in (a fault brings pages around it), look for a
 * moved page where it was, or place a page in the parent after its
 * fork copied the parent's map of what is missing. */
static int drain(struct loader *l, size_t k)
{
	struct uffd_msg msg[MAX_MSGS];
	ssize_t n;
	int bad = 0;

	/* (test build: what comes meanwhile is read with it, and the
	 * process goes on with what an event's read let it do) */
	if (l->read_delay_ms)
		usleep(l->read_delay_ms * 1000);
	n = read(l->mm[k]->ufd, msg, sizeof(msg));
	if (n < 0)
		return errno == EAGAIN ? 0 : 1;
	if (l->read_delay_ms)
		usleep(l->read_delay_ms * 1000);
	for (size_t i = 0; i < n / sizeof(msg[0]); i++) {
		struct lazy_mm *m = l->mm[k];	/* (add_mm may move the table) */
		const struct uffd_msg *e = &msg[i];

		if (e->event != UFFD_EVENT_PAGEFAULT)
			m->stuck = 0;	/* (why its copies failed) */
		switch (e->event) {
		case UFFD_EVENT_FORK:
			add_mm(l, e->arg.fork.ufd, m);
			break;
		case UFFD_EVENT_REMAP:
			m->moved = true;
			bad |= lazy_set_move(&m->pending, e->arg.remap.from, e->arg.remap.to,
					     e->arg.remap.len);
			bad |= lazy_set_move(&m->valid, e->arg.remap.from, e->arg.remap.to,
					     e->arg.remap.len);
			bad |= lazy_shm_move(l, m, e->arg.remap.from, e->arg.remap.len);
			break;
		case UFFD_EVENT_UNMAP:
		case UFFD_EVENT_REMOVE:
			bad |= e->event == UFFD_EVENT_UNMAP ?
			       lazy_shm_unmap(l, m, e->arg.remove.start, e->arg.remove.end) :
			       lazy_shm_removed(l, m, e->arg.remove.start, e->arg.remove.end);
			bad |= lazy_set_cut(&m->pending, e->arg.remove.start, e->arg.remove.end);
			bad |= lazy_set_cut(&m->valid, e->arg.remove.start, e->arg.remove.end);
			break;
		}
	}
	if (bad)
		lazy_fetch_failed(l, l->mm[k], 0, 0, ENOMEM);
	for (size_t i = 0; i < n / sizeof(msg[0]); i++)
		if (msg[i].event == UFFD_EVENT_PAGEFAULT)
			fault(l, l->mm[k], &msg[i]);
	return 0;
}

/* A background step's pages: the top 2 MiB of what @m misses, taken
 * out of its pending set while they are copied (lazy_step_end() puts
 * back what did not go in). */
struct lazy_step lazy_step_take(struct loader *l, struct lazy_mm *m)
{
	const struct lazy_run *r = &m->pending.r[m->pending.n - 1];
	uint64_t n = r->npages < CHUNK_PAGES ? r->npages : CHUNK_PAGES;
	struct lazy_step st = { .m = m, .n = n, .addr = r->addr + (r->npages - n) * PAGE };

	st.off = r->off + (st.addr - r->addr);
	/* (the top of the last run: a cut that needs no memory) */
	if (lazy_set_cut(&m->pending, st.addr, st.addr + n * PAGE))
		lazy_fetch_failed(l, m, st.addr, 0, ENOMEM);
	return st;
}

/* @n pages at @a (image offset @off) pending again: the run they were
 * taken from grown back where they join it (a step that placed nothing
 * needs no memory to undo). */
static void put_back(struct loader *l, struct lazy_mm *m, uint64_t a, uint64_t n,
		     uint64_t off)
{
	struct lazy_set *s = &m->pending;
	size_t i = lazy_set_lower(s, a);
	struct lazy_run *r = i ? &s->r[i - 1] : NULL;

	if (r && r->addr + r->npages * PAGE == a && r->off + r->npages * PAGE == off &&
	    (i == s->n || s->r[i].addr >= a + n * PAGE))
		r->npages += n;
	else if (lazy_set_add(s, a, n, off))
		lazy_fetch_failed(l, m, a, 0, ENOMEM);
}

/* The end of step @st, whose copy gave @ret with @done bytes in: 1 once
 * the memory is gone.  A page the kernel says has no area, and no event
 * of the process's to say why, for a second: taken as gone, not loaded
 * without end (never seen; a safeguard). */
int lazy_step_end(struct loader *l, const struct lazy_step *st, int ret, uint64_t done)
{
	struct lazy_mm *m = st->m;

	l->in_bg += done / PAGE;
	if (ret == 1) {
		m->dead = true;
		return 1;
	}
	if (ret != -EAGAIN || done) {
		m->stuck = 0;
	} else if (!m->stuck++) {
		m->stuck_since = log_now();
	} else if (m->stuck > STUCK_TRIES && log_now() - m->stuck_since > STUCK_NS) {
		log_info(&l->log, "lazy restart: pid %d: no area at 0x%llx, and no event of why: left out",
			 m->pid, (unsigned long long)st->addr);
		done = PAGE;
		m->stuck = 0;
	}
	if (done < st->n * PAGE)
		put_back(l, m, st->addr + done, st->n - done / PAGE, st->off + done);
	return 0;
}

/* One background step on @m, by this thread: 1 once its memory is
 * gone. */
static int step(struct loader *l, struct lazy_mm *m)
{
	const struct lazy_run *r = &m->pending.r[m->pending.n - 1];
	uint64_t n = r->npages < CHUNK_PAGES ? r->npages : CHUNK_PAGES, done;
	uint64_t a = r->addr + (r->npages - n) * PAGE;
	struct lazy_step st;
	int ret;

	if (lazy_net_has(l, r->off + (a - r->addr))) {	/* (after the stream) */
		l->in_bg += lazy_net_fault(l, r->off + (a - r->addr));
		return m->dead;
	}
	st = lazy_step_take(l, m);
	ret = copy_in(l, m, st.addr, st.n, st.off, &done);
	return lazy_step_end(l, &st, ret, done);
}

static void drop_mm(struct loader *l, size_t k)
{
	struct lazy_mm *m = l->mm[k];

	close(m->ufd);	/* its areas are plain ones again */
	lazy_shm_drop(l, m);
	lazy_set_free(&m->pending);
	lazy_set_free(&m->valid);
	free(m);
	l->mm[k] = l->mm[--l->nr];
}

/* Memory @k went (its process ended or ran exec) before all was in. */
static void lost(struct loader *l, size_t k)
{
	l->gone++;
	l->root_gone |= l->mm[k]->pid == l->root;
	drop_mm(l, k);
}

static void retry(struct loader *l, struct lazy_mm *m)
{
	int n = m->nr_retry, ret;

	m->nr_retry = 0;
	if (n && m->rescan && lazy_shm_rescan_any(l, m))
		lazy_fetch_failed(l, m, 0, 0, ENOMEM);
	for (int i = 0; i < n; i++) {
		ret = serve(l, m, m->retry[i]);
		if (ret == -EAGAIN)
			m->retry[m->nr_retry++] = m->retry[i];
	}
}

/* Whether the page server's stream goes on: pieces to ask for, to
 * read, or handed to the copiers and not all placed. */
static bool streaming(struct loader *l)
{
	return l->net && (lazy_net_streaming(l) || lazy_copiers_placing(l));
}

/* How long to wait for a fault (ms, -1: for one or the server's reply). */
static int wait_ms(const struct loader *l, uint64_t now, uint64_t next)
{
	if (now < next)
		return (int)((next - now) / 1000000) + 1;
	if (!lazy_net_waits(l))
		return 0;
	for (size_t k = 0; k < l->nr; k++)
		if (l->mm[k]->nr_retry)
			return 1;
	return -1;
}

/* One step of the background work: a streamed piece, or (the stream
 * done, or none) 2 MiB of what an mm misses. */
static void background(struct loader *l, size_t *rr, bool readable)
{
	if (l->net && lazy_net_streaming(l)) {
		lazy_net_step(l, readable);
		return;
	}
	if (!l->nr)
		return;
	/* shared memory first: every process mapping it waits for it */
	if (lazy_shm_step(l, &l->obj_rr))
		return;
	*rr = (*rr + 1) % l->nr;
	if (l->mm[*rr]->pending.n && step(l, l->mm[*rr]))
		lost(l, *rr);
}

/* With copiers, how long to wait: 1 ms while faults wait to be tried
 * again, else until something comes. */
static int idle_ms(const struct loader *l)
{
	for (size_t k = 0; k < l->nr; k++)
		if (l->mm[k]->nr_retry)
			return 1;
	return -1;
}

/* The poll table's fds for the page server's stream read beside the
 * copiers (lazy_net_pump()): their word of a buffer freed, and the
 * connection while a reply is awaited and a buffer is free; @tmo
 * lowered to 0 where a piece can be read at once (the memfd's).  How
 * many. */
static size_t pump_fds(struct loader *l, struct pollfd *fds, int *tmo, uint64_t now,
		       uint64_t next)
{
	bool paced = now < next, room = lazy_copiers_has_buf(l);
	bool local = !paced && lazy_net_ask(l);	/* (paced: not even asked) */
	int t = -1;
	size_t n = 0;

	fds[n++] = (struct pollfd){ .fd = lazy_copiers_buf_fd(l), .events = POLLIN };
	if (room && paced)		/* (test build) */
		t = (int)((next - now) / 1000000) + 1;
	else if (room && local)
		t = 0;
	else if (room && lazy_net_streaming(l))
		fds[n++] = (struct pollfd){ .fd = lazy_net_sock(l), .events = POLLIN };
	if (t >= 0 && (*tmo < 0 || t < *tmo))
		*tmo = t;
	return n;
}

/* After the poll, with the stream read beside the copiers: their word
 * read, and a piece read and handed over, unless something else wants
 * this thread (a fault first: a piece is a few ms); whether nothing
 * did (no need of a hold). */
static bool pumped(struct loader *l, const struct pollfd *fds, size_t nfd, size_t at,
		   size_t n, uint64_t *now, uint64_t *next)
{
	bool readable = false, other = false;

	for (size_t i = 0; i < nfd; i++) {
		if (!fds[i].revents)
			continue;
		if (i == at)
			lazy_copiers_buf_ack(l);
		else if (i > at && i < at + n)
			readable = true;
		else
			other = true;
	}
	for (size_t k = 0; k < l->nr; k++)
		other |= l->mm[k]->nr_retry > 0;
	if (other)
		return false;
	if (!l->delay_ms) {
		lazy_net_pump(l, readable);
	} else if ((*now = log_now()) >= *next) {
		*next = *now + l->delay_ms * 1000000ULL;
		lazy_net_pump(l, readable);
	}
	return true;
}

static _Noreturn void run(struct loader *l)
{
	struct pollfd *fds = NULL;
	size_t rr = 0;
	uint64_t next = 0, now = 0;	/* the next background step's time */

	lazy_copiers_start(l);	/* (none: this thread makes every step) */
	/* (with a server, the stream goes on to check every checksum) */
	while (l->nr || (streaming(l) && !l->root_gone)) {
		void *p = realloc(fds, (l->nr + 6) * sizeof(*fds));
		size_t nr = l->nr, nfd = nr, ctl, pump0 = 0, npump = 0;
		bool net = streaming(l);
		/* the stream read beside the copiers' copies, not under
		 * their hold; the rest of it (after the stream: a hole's
		 * pages put back) by this thread */
		bool pump = net && l->cp, mine = !l->cp || (l->net && !net);
		int tmo;

		check_done(l, false);
		if (!p) {
			log_err(&l->log, ENOMEM, "lazy restart: pid %d: poll table:", l->root);
			lazy_kill_tree(l->tree, 0);
			_exit(1);
		}
		fds = p;
		for (size_t k = 0; k < nr; k++)
			fds[k] = (struct pollfd){ .fd = l->mm[k]->ufd, .events = POLLIN };
		if (l->delay_ms)
			now = log_now();
		tmo = mine ? wait_ms(l, now, next) : idle_ms(l);
		if (net && !pump)
			fds[nfd++] = (struct pollfd){ .fd = lazy_net_sock(l), .events = POLLIN };
		ctl = nfd;
		if (l->ctl >= 0)
			fds[nfd++] = (struct pollfd){ .fd = l->ctl, .events = POLLIN };
		/* (the copiers' word, and the checker's verdict: this
		 * thread may sleep in poll for long) */
		if (l->cp)
			fds[nfd++] = (struct pollfd){ .fd = lazy_copiers_fd(l), .events = POLLIN };
		if (l->checker)
			fds[nfd++] = (struct pollfd){ .fd = l->check_fd, .events = POLLIN };
		if (pump) {
			pump0 = nfd;
			npump = pump_fds(l, fds + nfd, &tmo, now, next);
			nfd += npump;
		}
		/* faults served at once, whatever the pace of the steps */
		poll(fds, nfd, tmo);
		if (pump && pumped(l, fds, nfd, pump0, npump, &now, &next))
			continue;
		lazy_copiers_hold(l);
		if (ctl < nfd && fds[ctl].fd == l->ctl && fds[ctl].revents && lazy_shm_ctl(l)) {
			close(l->ctl);
			l->ctl = -1;
		}
		for (size_t k = nr; k-- > 0;) {
			if ((fds[k].revents & POLLIN) && drain(l, k)) {
				lost(l, k);
				continue;
			}
			retry(l, l->mm[k]);
		}
		for (size_t k = l->nr; k-- > 0;)
			if (l->mm[k]->dead)
				lost(l, k);
		for (size_t k = 0; k < l->nr; k++)
			if (!l->mm[k]->pending.n && !l->mm[k]->nr_retry &&
			    !lazy_shm_busy(l, l->mm[k]))
				drop_mm(l, k--);
		if (!l->nr && !streaming(l)) {
			lazy_copiers_go(l);
			break;
		}
		/* (with copiers, every step is theirs but a page server's
		 * after its stream) */
		if (mine && !pump && (!l->delay_ms || (now = log_now()) >= next)) {
			next = now + l->delay_ms * 1000000ULL;
			background(l, &rr, net && (fds[nr].revents & (POLLIN | POLLHUP | POLLERR)));
		}
		lazy_copiers_go(l);
	}
	lazy_copiers_stop(l);
	/* nothing left to guard (in a tree, the others may run on) */
	if (l->root_gone && l->tree == l->root && l->checker) {
		kill(l->checker, SIGKILL);
		waitpid(l->checker, NULL, 0);
		l->checker = 0;
	}
	check_done(l, true);
	if (l->net)
		ps_bye(lazy_net_sock(l));
	log_info(&l->log, "lazy restart: pid %d: loader %s in %.1f ms: %llu pages on touch (%llu faults), %llu in the background (%d copier%s), %llu zero pages%s",
		 l->root, l->gone ? "ended with the memory it served" : "done",
		 (log_now() - l->t0) / 1e6, (unsigned long long)l->on_fault,
		 (unsigned long long)l->faults, (unsigned long long)l->in_bg, l->copiers,
		 l->copiers == 1 ? "" : "s", (unsigned long long)l->zero,
		 l->net ? ", from the page server" : "");
	if (l->net)
		log_info(&l->log, "lazy restart: pid %d: %llu bytes from the page server, %.0f MB/s",
			 l->root, (unsigned long long)lazy_net_bytes(l),
			 lazy_net_bytes(l) / 1e6 / ((log_now() - l->t0) / 1e9));
	_exit(0);
}

/* Nothing of ckpt's but the @n fds of @keep (sorted here; -1 for none)
 * that the loader needs: no fd of a pipe someone waits to see closed
 * (the caller's stdout, the keeper's). */
static void keep_fds(int *keep, int n)
{
	int from = 0;

	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && keep[j] < keep[j - 1]; j--) {
			int x = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = x;
		}
	for (int i = 0; i < n; i++) {
		if (keep[i] < from)
			continue;
		if (keep[i] > from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

pid_t lazy_loader_start(struct ckpt_log *log, pid_t pid, pid_t tree, int ufd, int img_fd,
			struct lazy_set *pages, struct lazy_shm *shm, int ctl,
			const struct ir_span *spans, size_t nr_spans, const struct pin *pin)
{
	struct loader l = { .log = *log, .root = pid, .tree = tree, .img_fd = img_fd,
			    .ctl = ctl, .t0 = log_now() };
	struct lazy_mm m = { .ufd = ufd, .pid = pid, .pending = *pages };
	struct stat st;
	pid_t child;
	int sock, err;

	child = fork();
	if (child < 0)
		return log_err(log, errno, "lazy restart: starting the loader:");
	if (child)
		return child;
	/* it loads beside the process, on any CPU ckpt's caller may use */
	pin_undo_here(pin);
	/* its own session: a ^C or hangup for the tree must not end it,
	 * which would leave the pages it has not brought in as zeros */
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "ckpt-lazy");
	sock = ps_sock_of(img_fd);
	keep_fds((int[]){ ufd, img_fd, log->fd, sock, ctl }, 5);
	l.log.err = 0;
	l.log.pid = 0;
#ifdef CKPT_TEST_HOOKS
	if (getenv("CKPT_TEST_LAZY_DELAY_MS"))
		l.delay_ms = atoi(getenv("CKPT_TEST_LAZY_DELAY_MS"));
	if (getenv("CKPT_TEST_LAZY_READ_DELAY_MS"))
		l.read_delay_ms = atoi(getenv("CKPT_TEST_LAZY_READ_DELAY_MS"));
	if (getenv("CKPT_TEST_LAZY_COPY_DELAY_MS"))
		l.copy_delay_ms = atoi(getenv("CKPT_TEST_LAZY_COPY_DELAY_MS"));
#endif
	l.buf = malloc(CHUNK_PAGES * PAGE);
	if (!fstat(img_fd, &st) && st.st_size > 0)
		l.img_len = st.st_size;
	if (!l.buf || lazy_set_copy(&m.valid, pages))
		lazy_fetch_failed(&l, &m, 0, 0, ENOMEM);
	add_mm(&l, ufd, &m);
	l.mm[0]->pid = pid;
	if ((err = lazy_shm_start(&l, l.mm[0], shm))) {
		log_err(&l.log, err, "lazy restart: pid %d: its shared memory:", pid);
		lazy_kill_tree(tree, 0);
		_exit(1);
	}
	l.spans = spans;
	l.nr_spans = nr_spans;
	if (sock < 0)
		check_start(&l, spans, nr_spans);
	else if (lazy_net_start(&l, sock))
		lazy_fetch_failed(&l, &m, 0, 0, ENOMEM);
	run(&l);
}
