/* lazy_copy.c - the loader's background steps, of private memory and
 * of shared memory's objects, on threads of their own, one a CPU (four
 * at most), while its first thread waits in poll() for faults and
 * events.  One thread placed
 * pages at 0.6-0.77 of what one CPU's UFFDIO_COPY can (bench/README.md,
 * session 27): half of its time is the image's read into its buffer.
 *
 * A step is taken out of its mm's pending set under the lock, copied
 * without it, and settled under it again (lazy_step_end(): what did not
 * go in goes back).  The first thread holds the copiers for all it does
 * but wait: it waits until no copy is under way, and none starts until
 * it lets them go.  So every read of a userfaultfd, every event applied
 * and every fault served happens with no copy beside it, as with one
 * thread: an event is done once read (the process's madvise() zaps its
 * pages after that), and a copy still going then could bring them back;
 * a fork's child takes its parent's pending set as it is when the event
 * is applied, which must hold every step not yet in.  A copy that
 * starts after an event is queued fails with EAGAIN (the kernel's
 * mmap_changing) and its pages go back before the event is read.  A
 * shared memory step's pwrite() to its object is never refused so: a
 * page it writes is freed (MADV_REMOVE), if at all, after the event is
 * read, which waits for the write (lazy_shm.c).
 *
 * From a page server they place the pieces of the stream the first
 * thread reads into their buffers (lazy_net.c), and nothing else: the
 * image's holes are the server's, and only the first thread talks to
 * it.  A piece's pages are taken, copied and settled as a step's, so no
 * piece is half placed while the first thread holds them. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lazy_int.h"
#include "membuf.h"

#define MAX_COPIERS	4
/* Less to bring than this, and one thread does it: each copier's buffer
 * is 2 MiB more of memory (a lazy tree has a loader a process). */
#define COPIERS_MIN	(32ULL << 20)
#define IDLE_NS		1000000ULL	/* after a step that placed nothing */
/* The kernel whose UFFDIO_COPY fails while any event is unread: before
 * 5.17 (mmap_changing a flag, not a count) the read of one event let
 * copies through while another, a fork's, still waited, so a copier's
 * pages could miss the fork's child (from the kernel's history; not
 * checked here).  Older kernels: no copiers. */
#define KERNEL_MIN	((5 << 8) | 17)

/* a page server's pieces: two a copier (one placed, one waiting), and
 * two for the first thread to read into meanwhile */
#define NET_BUFS_FOR(n)	(2 * (n) + 2)
#define NET_BUFS	NET_BUFS_FOR(MAX_COPIERS)

struct copier {
	struct loader *l;
	char *buf;		/* CHUNK_PAGES */
	pthread_t th;
	/* a piece's steps, and how each copy went */
	struct lazy_step *st;
	struct placed {
		int got;
		uint64_t done;
	} *res;
	size_t cap;
};

struct net_job {
	char *buf;
	uint64_t off, len;
};

struct lazy_copiers {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* held, busy or stop changed */
	bool held;		/* by the first thread: no step starts */
	bool stop;
	int busy;		/* steps under way */
	int efd;		/* the first thread's wakeup */
	size_t rr;
	uint64_t next;		/* test build: the next step's time */
	uint64_t gen;		/* the first thread's holds, counted */
	int n;
	struct copier c[MAX_COPIERS];
	/* a page server's pieces: buffers free, pieces handed over (a
	 * ring), those being placed */
	char *free_buf[NET_BUFS];
	int nr_free;
	struct net_job job[NET_BUFS];
	int job_head, nr_jobs, running;
	int bfd;		/* the first thread's wakeup: a buffer freed */
};

static bool kernel_counts_events(void)
{
	struct utsname u;
	unsigned int a = 0, b = 0;

	return !uname(&u) && sscanf(u.release, "%u.%u", &a, &b) == 2 &&
	       ((a << 8) | b) >= KERNEL_MIN;
}

static int count_copiers(const struct loader *l)
{
	cpu_set_t set;
	uint64_t bytes = 0;
	int n;

#ifdef CKPT_TEST_HOOKS
	if (getenv("CKPT_TEST_LAZY_COPIERS"))
		return atoi(getenv("CKPT_TEST_LAZY_COPIERS"));
#endif
	for (size_t k = 0; k < l->nr; k++)
		for (size_t i = 0; i < l->mm[k]->pending.n; i++)
			bytes += l->mm[k]->pending.r[i].npages * PAGE;
	for (size_t k = 0; k < l->nr_obj; k++)
		for (size_t i = 0; i < l->obj[k].pending.n; i++)
			bytes += l->obj[k].pending.r[i].npages * PAGE;
	if (bytes < COPIERS_MIN || !kernel_counts_events() ||
	    sched_getaffinity(0, sizeof(set), &set))
		return 0;
	n = CPU_COUNT(&set);
	/* one CPU: a copier would only make faults wait for its steps */
	return n < 2 ? 0 : n > MAX_COPIERS ? MAX_COPIERS : n;
}

/* The next mm with pages to bring, round robin. */
static struct lazy_mm *next_mm(struct loader *l)
{
	struct lazy_copiers *cp = l->cp;

	for (size_t i = 0; i < l->nr; i++) {
		size_t k = (cp->rr + i) % l->nr;
		struct lazy_mm *m = l->mm[k];

		if (m->pending.n && !m->dead) {
			cp->rr = k + 1;
			return m;
		}
	}
	return NULL;
}

static void wait_ns(struct lazy_copiers *cp, uint64_t ns)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += (t.tv_nsec + ns) / 1000000000ULL;
	t.tv_nsec = (t.tv_nsec + ns) % 1000000000ULL;
	pthread_cond_timedwait(&cp->cond, &cp->lock, &t);
}

/* Test build: the steps of all copiers CKPT_TEST_LAZY_DELAY_MS apart,
 * as the first thread's were; whether this one must wait (it did). */
static bool paced(struct loader *l)
{
	struct lazy_copiers *cp = l->cp;
	uint64_t now;

	if (!l->delay_ms)
		return false;
	now = log_now();
	if (now >= cp->next) {
		cp->next = now + l->delay_ms * 1000000ULL;
		return false;
	}
	wait_ns(cp, cp->next - now);
	return true;
}

static bool has_shm(const struct loader *l)
{
	for (size_t k = 0; k < l->nr_obj && l->nr; k++)
		if (l->obj[k].pending.n)
			return true;
	return false;
}

/* The copy of a step taken under the lock is made without it, counted
 * as under way (the first thread's hold waits for it). */
static void unlocked(struct lazy_copiers *cp, const struct loader *l)
{
	cp->busy++;
	pthread_mutex_unlock(&cp->lock);
	if (l->copy_delay_ms)
		usleep(l->copy_delay_ms * 1000);
}

static void relocked(struct lazy_copiers *cp)
{
	pthread_mutex_lock(&cp->lock);
	if (!--cp->busy)
		pthread_cond_broadcast(&cp->cond);
}

/* The first thread to end an mm, or to let go of its userfaultfd. */
static void wake_first(struct lazy_copiers *cp)
{
	uint64_t one = 1;

	(void)!write(cp->efd, &one, sizeof(one));
}

/* A step of shared memory (lazy_shm.c), as one of private memory: taken
 * under the lock, written without it.  A page that cannot be read
 * kills the process; there is nothing to put back. */
static void shm_step(struct copier *c)
{
	struct loader *l = c->l;
	struct lazy_shm_step ss;

	if (!lazy_shm_take(l, &l->obj_rr, &ss))
		return;
	unlocked(l->cp, l);
	lazy_shm_write(l, &ss, c->buf);
	relocked(l->cp);
	if (!l->obj[ss.k].pending.n)
		wake_first(l->cp);
}

/* Until the first thread's next hold (it has read the event a copy met),
 * or a while: not for the next copier's broadcast. */
static void wait_hold(struct lazy_copiers *cp)
{
	uint64_t gen = cp->gen, until = log_now() + IDLE_NS, now;

	while (!cp->stop && cp->gen == gen && (now = log_now()) < until)
		wait_ns(cp, until - now);
}

/* A step of @m's private memory.  One that placed nothing waits: an
 * event is on its way, until the first thread has held the copiers
 * (and read it), or a while, not for the next copier's broadcast. */
static void mm_step(struct copier *c, struct lazy_mm *m)
{
	struct loader *l = c->l;
	struct lazy_copiers *cp = l->cp;
	struct lazy_step st = lazy_step_take(l, m);
	uint64_t done;
	int got;

	unlocked(cp, l);
	got = lazy_copy_in(l, m, c->buf, st.addr, st.n, st.off, &done);
	relocked(cp);
	if (lazy_step_end(l, &st, got, done) || !m->pending.n)
		wake_first(cp);
	if (got == -EAGAIN && !done)
		wait_hold(cp);
}

/* A page server's piece's buffer free again: the first thread told (it
 * may wait for one). */
static void buf_free(struct lazy_copiers *cp, char *buf)
{
	uint64_t one = 1;

	cp->free_buf[cp->nr_free++] = buf;
	(void)!write(cp->bfd, &one, sizeof(one));
}

/* A page server's piece (lazy_net.c), the oldest: what of it every
 * memory misses taken, copied from its buffer and settled, as steps;
 * the buffer free again. */
static void net_job(struct copier *c)
{
	struct loader *l = c->l;
	struct lazy_copiers *cp = l->cp;
	struct net_job j = cp->job[cp->job_head];
	size_t n, cap = c->cap;
	bool wake = false, again = false;

	cp->job_head = (cp->job_head + 1) % NET_BUFS;
	cp->nr_jobs--;
	cp->running++;
	n = lazy_net_take(l, j.off, j.len, &c->st, &c->cap);
	if (c->cap != cap) {
		void *p = realloc(c->res, c->cap * sizeof(*c->res));

		if (!p)
			lazy_fetch_failed(l, c->st[0].m, c->st[0].addr, c->st[0].off, ENOMEM);
		c->res = p;
	}
	unlocked(cp, l);
	for (size_t i = 0; i < n; i++)
		c->res[i].got = lazy_place(l, c->st[i].m, c->st[i].addr, c->st[i].n * PAGE,
					   j.buf + (c->st[i].off - j.off), c->st[i].off,
					   &c->res[i].done);
	relocked(cp);
	for (size_t i = 0; i < n; i++) {
		again |= c->res[i].got == -EAGAIN;
		if (lazy_step_end(l, &c->st[i], c->res[i].got, c->res[i].done) ||
		    !c->st[i].m->pending.n)
			wake = true;
	}
	cp->running--;
	if (again) {
		/* An event is queued: the piece, whose bytes the stream has
		 * checked, is kept (first in line) until the first thread
		 * has read it.  Its pages put back would be asked for again
		 * after the stream, unchecked against it. */
		cp->job_head = (cp->job_head + NET_BUFS - 1) % NET_BUFS;
		cp->job[cp->job_head] = j;
		cp->nr_jobs++;
		wake_first(cp);
		wait_hold(cp);
		return;
	}
	buf_free(cp, j.buf);
	if (wake)
		wake_first(cp);
}

static void *copier(void *arg)
{
	struct copier *c = arg;
	struct loader *l = c->l;
	struct lazy_copiers *cp = l->cp;
	sigset_t all;

	/* signals are the first thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&cp->lock);
	for (;;) {
		struct lazy_mm *m = NULL;
		bool shm = false;

		/* shared memory first: every process mapping it waits */
		while (!cp->stop && (cp->held || !(cp->nr_jobs ||
			(!l->net && ((shm = has_shm(l)) || (m = next_mm(l)))))))
			pthread_cond_wait(&cp->cond, &cp->lock);
		if (cp->stop)
			break;
		if (cp->nr_jobs)	/* (paced as it is read) */
			net_job(c);
		else if (paced(l))
			continue;
		else if (shm)
			shm_step(c);
		else
			mm_step(c, m);
	}
	pthread_mutex_unlock(&cp->lock);
	return NULL;
}

static void free_copiers(struct lazy_copiers *cp)
{
	for (int i = 0; i < MAX_COPIERS; i++) {
		if (cp->c[i].buf)
			membuf_put(cp->c[i].buf, CHUNK_PAGES * PAGE);
		free(cp->c[i].st);
		free(cp->c[i].res);
	}
	/* (all free once the copiers are stopped: the stream ended, or
	 * the loader with it) */
	for (int i = 0; i < cp->nr_free; i++)
		membuf_put(cp->free_buf[i], NET_PIECE);
	for (int i = 0; i < cp->nr_jobs; i++)
		membuf_put(cp->job[(cp->job_head + i) % NET_BUFS].buf, NET_PIECE);
	if (cp->efd >= 0)
		close(cp->efd);
	if (cp->bfd >= 0)
		close(cp->bfd);
	pthread_cond_destroy(&cp->cond);
	pthread_mutex_destroy(&cp->lock);
	free(cp);
}

/* A page server's pieces' buffers, for @n copiers: 0 or -ENOMEM. */
static int net_bufs(struct lazy_copiers *cp, int n)
{
	for (int i = 0; i < NET_BUFS_FOR(n); i++) {
		char *b = membuf_get(NET_PIECE);

		if (!b)
			return -ENOMEM;
		cp->free_buf[cp->nr_free++] = b;
	}
	return 0;
}

int lazy_copiers_start(struct loader *l)
{
	int n = count_copiers(l);
	struct lazy_copiers *cp;
	pthread_condattr_t ca;

	if (n <= 0)
		return -EOPNOTSUPP;
	cp = calloc(1, sizeof(*cp));
	if (!cp)
		return -ENOMEM;
	cp->efd = cp->bfd = -1;
	pthread_mutex_init(&cp->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cp->cond, &ca);
	pthread_condattr_destroy(&ca);
	cp->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cp->bfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cp->efd < 0 || cp->bfd < 0 || (l->net && net_bufs(cp, n < MAX_COPIERS ? n : MAX_COPIERS))) {
		int err = cp->efd < 0 || cp->bfd < 0 ? -errno : -ENOMEM;

		free_copiers(cp);
		return err;
	}
	l->cp = cp;
	pthread_mutex_lock(&cp->lock);
	for (int i = 0; i < n && i < MAX_COPIERS; i++) {
		struct copier *c = &cp->c[i];

		c->l = l;
		/* (a page server's copiers place from its pieces' buffers) */
		c->buf = l->net ? NULL : membuf_get(CHUNK_PAGES * PAGE);
		if ((!l->net && !c->buf) || pthread_create(&c->th, NULL, copier, c))
			break;
		cp->n++;
	}
	pthread_mutex_unlock(&cp->lock);
	l->copiers = cp->n;
	if (cp->n)
		return 0;
	l->cp = NULL;
	free_copiers(cp);
	return -ENOMEM;
}

int lazy_copiers_fd(const struct loader *l)
{
	return l->cp ? l->cp->efd : -1;
}

void lazy_copiers_hold(struct loader *l)
{
	struct lazy_copiers *cp = l->cp;
	uint64_t v;

	if (!cp)
		return;
	pthread_mutex_lock(&cp->lock);
	cp->held = true;
	while (cp->busy)
		pthread_cond_wait(&cp->cond, &cp->lock);
	(void)!read(cp->efd, &v, sizeof(v));
}

void lazy_copiers_go(struct loader *l)
{
	struct lazy_copiers *cp = l->cp;

	if (!cp)
		return;
	cp->held = false;
	cp->gen++;
	pthread_cond_broadcast(&cp->cond);
	pthread_mutex_unlock(&cp->lock);
}

void lazy_copiers_stop(struct loader *l)
{
	struct lazy_copiers *cp = l->cp;

	if (!cp)
		return;
	pthread_mutex_lock(&cp->lock);
	cp->stop = true;
	pthread_cond_broadcast(&cp->cond);
	pthread_mutex_unlock(&cp->lock);
	for (int i = 0; i < cp->n; i++)
		pthread_join(cp->c[i].th, NULL);
	l->cp = NULL;
	free_copiers(cp);
}

/* The first thread's, held or not: with its hold it has the lock. */
static void lock_q(struct lazy_copiers *cp)
{
	if (!cp->held)
		pthread_mutex_lock(&cp->lock);
}

static void unlock_q(struct lazy_copiers *cp)
{
	if (!cp->held)
		pthread_mutex_unlock(&cp->lock);
}

char *lazy_copiers_buf(struct loader *l)
{
	struct lazy_copiers *cp = l->cp;
	char *b = NULL;

	if (!cp)
		return NULL;
	lock_q(cp);
	if (cp->nr_free)
		b = cp->free_buf[--cp->nr_free];
	unlock_q(cp);
	return b;
}

void lazy_copiers_push(struct loader *l, char *buf, uint64_t off, uint64_t len)
{
	struct lazy_copiers *cp = l->cp;

	lock_q(cp);
	cp->job[(cp->job_head + cp->nr_jobs++) % NET_BUFS] = (struct net_job){ buf, off, len };
	pthread_cond_broadcast(&cp->cond);
	unlock_q(cp);
}

bool lazy_copiers_has_buf(struct loader *l)
{
	struct lazy_copiers *cp = l->cp;
	bool any;

	if (!cp)
		return false;
	lock_q(cp);
	any = cp->nr_free > 0;
	unlock_q(cp);
	return any;
}

bool lazy_copiers_placing(struct loader *l)
{
	struct lazy_copiers *cp = l->cp;
	bool busy;

	if (!cp)
		return false;
	lock_q(cp);
	busy = cp->nr_jobs || cp->running;
	unlock_q(cp);
	return busy;
}

int lazy_copiers_buf_fd(const struct loader *l)
{
	return l->cp ? l->cp->bfd : -1;
}

void lazy_copiers_buf_ack(struct loader *l)
{
	uint64_t v;

	if (l->cp)
		(void)!read(l->cp->bfd, &v, sizeof(v));
}

bool lazy_copiers_queued(struct loader *l, int i, char **buf, uint64_t *off, uint64_t *len)
{
	struct lazy_copiers *cp = l->cp;
	const struct net_job *j;

	if (!cp || i >= cp->nr_jobs)
		return false;
	j = &cp->job[(cp->job_head + i) % NET_BUFS];
	*buf = j->buf;
	*off = j->off;
	*len = j->len;
	return true;
}
