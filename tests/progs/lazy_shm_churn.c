/* lazy_shm_churn - shared anonymous memory (MAP_SHARED | MAP_ANONYMOUS) that
 * the process churns from the moment it runs again, while restart --lazy
 * still loads it (src/lazy_shm.c), keeping an exact model of what every
 * page of the object must hold.
 *
 *   lazy_shm_churn GOFILE MIB [SEED]
 *
 * Before READY: MIB MiB mapped shared, every page written with words of
 * its index and a version, but one in 16 never touched (a hole: zeros)
 * and one in 16 only read (a page of zeros); address space reserved
 * (PROT_NONE) for the moves below.  After GOFILE, at once: THREADS
 * regions of the object, each with its own map of where its pages are
 * (a primary address, and aliases), churned by random operations:
 * reads checked against the model, writes (a new version), MADV_DONTNEED
 * (the data stays), MADV_REMOVE (zeros), a write after a remove, mremap
 * moves of a run (MREMAP_FIXED into a reserved slot), second maps by
 * mremap of old size 0, MREMAP_DONTUNMAP (the old map stays), munmap
 * (or mmap MAP_FIXED over) of a run, madvise hints and mprotect that
 * split the areas without any event (MADV_RANDOM, MADV_SEQUENTIAL,
 * MADV_NORMAL, PROT_EXEC added or taken away), a run cut short and grown
 * again in place (munmap, mremap without MREMAP_MAYMOVE: no event says
 * it grew) and part of it freed or written at once, and
 * forks: the child checks and changes pages of the region (and moves
 * them in its own memory, forks a grandchild), tells its writes through
 * a pipe, and exits.  First the main thread alone, then THREADS threads
 * at once on their own regions, then the main thread again; between the
 * phases, maybe (by the seed) a fork whose parent exits at once, the
 * child going on.  At the end every page that is still mapped is
 * checked through every map of it.  The same seed makes the same
 * operations (threads each have their own generator).
 *
 * SHM_CHURN_OPS (hex mask of 1 << OP, the OP_ list below) picks the
 * operations (default: all but the OPT_ ones); SHM_CHURN_N scales the
 * number of operations (default 300 a phase, twice that for each thread).
 */
#include "tp.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define PAGE		4096UL
#define WORDS		(PAGE / 8)
#define BLK		32	/* pages of a block: a run moves within one, to a slot */
#define THREADS		4
#define MAX_ALIAS	16
#define MAX_FAILS	40

enum {
	OP_READ, OP_WRITE, OP_DONTNEED, OP_REMOVE, OP_REMOVE_WRITE, OP_MOVE, OP_DUP,
	OP_DONTUNMAP, OP_MUNMAP, OP_FORK, OP_SPLIT, OP_ORPHAN, OP_GRANDCHILD,
	OP_CHILD_THREAD, OP_LEADER_EXIT, OP_GROW, NR_OPS
};
static const char *const op_name[NR_OPS] = {
	"read", "write", "dontneed", "remove", "remove_write", "move", "dup",
	"dontunmap", "munmap", "fork", "split", "orphan", "grandchild",
	"child_thread", "leader_exit", "grow",
};
/* relative weights of the operations a step picks among */
static const int op_weight[NR_OPS] = {
	[OP_READ] = 30, [OP_WRITE] = 20, [OP_DONTNEED] = 8, [OP_REMOVE] = 8,
	[OP_REMOVE_WRITE] = 6, [OP_MOVE] = 8, [OP_DUP] = 4, [OP_DONTUNMAP] = 4,
	[OP_MUNMAP] = 3, [OP_FORK] = 1, [OP_SPLIT] = 6, [OP_GROW] = 4,
};
/* (not in the default mask: exotic ways to use the loader's pid) */
#define OPT_OPS	((1u << OP_CHILD_THREAD) | (1u << OP_LEADER_EXIT))

static unsigned int ops_mask;
static size_t npages;
static char *base;			/* where the object was mapped first */
static uint32_t *ver;			/* the model: each page's version, 0: zeros */
static uint32_t *prev_ver;		/* (the one before, for the report) */
static uint8_t *known;			/* 0: a failed check left it unknown */
static uint64_t seed;
static int nops;
static bool dontunmap_ok;
static atomic_int fails;
static int report_fd = -1;		/* in a child: where its model changes go */
static int depth;			/* 0: the process, 1: a child, 2: a grandchild */
static atomic_ulong count[NR_OPS], refused[NR_OPS];

struct alias {
	char *at;
	size_t p, n;		/* of the region */
};

struct region {
	int id;
	size_t p0, np;		/* object pages [p0, p0 + np) */
	char **prim;		/* each page's primary address, NULL: unmapped */
	struct alias al[MAX_ALIAS];
	int nal;
	char *arena;		/* nslots slots of BLK pages, PROT_NONE when free */
	size_t nslots;
	int *slot_used;		/* pages mapped there; -1: lost to another map */
	uint64_t rnd;
	long step;		/* for the reports */
	const char *phase;
	pthread_t th;
};

static struct region reg[THREADS];

static void fail(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (atomic_fetch_add(&fails, 1) >= MAX_FAILS)
		return;
	n = snprintf(buf, sizeof(buf), "FAIL: [pid %d depth %d] ", getpid(), depth);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		_exit(3);
}

static uint64_t rnd_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Word @i of object page @p at version @v (never 0). */
static inline uint64_t word(size_t p, uint32_t v, size_t i)
{
	return (mix((uint64_t)p << 32 | v) + i * 0x9e3779b97f4a7c15ULL) | 1;
}

static uint32_t first_ver(size_t p)
{
	return (uint32_t)mix(seed * 1000003 + p) | 1;
}

static uint32_t new_ver(struct region *r)
{
	return (uint32_t)rnd_next(&r->rnd) | 1;
}

static size_t rnd_below(struct region *r, size_t n)
{
	return n ? rnd_next(&r->rnd) % n : 0;
}

/* A child's changes of the model, for its parent (at its end, or when
 * this is full). */
static uint32_t rbuf[2 * 1024];
static size_t rlen;

static void report_flush(void)
{
	size_t done = 0;

	while (done < rlen * sizeof(rbuf[0])) {
		ssize_t n = write(report_fd, (char *)rbuf + done, rlen * sizeof(rbuf[0]) - done);

		if (n <= 0) {
			fail("reporting writes to the parent: %s", strerror(errno));
			break;
		}
		done += n;
	}
	rlen = 0;
}

/* The model changed: in a child, its parent is told too. */
static void set_ver(size_t p, uint32_t v)
{
	prev_ver[p] = ver[p];
	ver[p] = v;
	known[p] = 1;
	if (report_fd >= 0) {
		if (rlen + 2 > sizeof(rbuf) / sizeof(rbuf[0]))
			report_flush();
		rbuf[rlen++] = (uint32_t)p;
		rbuf[rlen++] = v;
	}
}

static void write_page(char *at, size_t p, uint32_t v)
{
	uint64_t *w = (uint64_t *)at, b = mix((uint64_t)p << 32 | v);

	for (size_t i = 0; i < WORDS; i++)
		w[i] = (b + i * 0x9e3779b97f4a7c15ULL) | 1;
}

/* What a wrong word looks like: which version of the page, if any. */
static const char *what(size_t p, uint64_t got, size_t i)
{
	if (!got)
		return "zero";
	if (got == word(p, first_ver(p), i))
		return "the image's (first) version";
	if (prev_ver[p] && got == word(p, prev_ver[p], i))
		return "the previous version";
	return "something else";
}

/* Object page @p (of region @r) as seen at @at: as the model says. */
static int check_page(struct region *r, size_t p, const char *at, const char *why)
{
	const uint64_t *w = (const uint64_t *)at;
	uint32_t v = ver[p];
	uint64_t b = mix((uint64_t)p << 32 | v);

	if (!known[p])
		return 0;
	for (size_t i = 0; i < WORDS; i++) {
		uint64_t want = v ? (b + i * 0x9e3779b97f4a7c15ULL) | 1 : 0;

		if (w[i] != want) {
			fail("%s: region %d step %ld (%s): object page %zu (%s at %p) word %zu is %#llx (%s), want %#llx (version %#x%s)",
			     r->phase, r->id, r->step, why, p, at == r->prim[p - r->p0] ? "primary" : "alias",
			     (void *)at, i, (unsigned long long)w[i], what(p, w[i], i),
			     (unsigned long long)want, v, v ? "" : ": zeros");
			known[p] = 0;
			return 1;
		}
	}
	return 0;
}

/* ---- the maps of a region ---- */

static int slot_of(const struct region *r, const char *at)
{
	if (at < r->arena || at >= r->arena + r->nslots * BLK * PAGE)
		return -1;
	return (int)((size_t)(at - r->arena) / (BLK * PAGE));
}

static void slot_add(struct region *r, const char *at, long n)
{
	int s = slot_of(r, at);

	if (s >= 0 && r->slot_used[s] >= 0)
		r->slot_used[s] += (int)n;
}

/* A free slot (none: -1). */
static int free_slot(struct region *r)
{
	size_t s0 = rnd_below(r, r->nslots);

	for (size_t i = 0; i < r->nslots; i++) {
		size_t s = (s0 + i) % r->nslots;

		if (r->slot_used[s] == 0)
			return (int)s;
	}
	return -1;
}

/* [at, at + len), just vacated, held again (PROT_NONE), so that nothing
 * else is mapped there; a slot something else took meanwhile is lost. */
static void reserve(struct region *r, char *at, size_t len)
{
	void *p = mmap(at, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == at)
		return;
	if (p != MAP_FAILED)
		munmap(p, len);
	for (char *a = at; a < at + len; a += BLK * PAGE) {
		int s = slot_of(r, a);

		if (s >= 0)
			r->slot_used[s] = -1;
	}
}

/* A run of primary pages: [*p, *p + *n) of the region at consecutive
 * addresses, within a block, @most at most. */
static bool prim_run(struct region *r, size_t most, size_t *p, size_t *n)
{
	for (int tries = 0; tries < 8; tries++) {
		size_t q = rnd_below(r, r->np), k = 1 + rnd_below(r, most), lim = BLK - q % BLK;

		if (!r->prim[q])
			continue;
		if (k > lim)
			k = lim;
		for (size_t i = 1; i < k; i++)
			if (r->prim[q + i] != r->prim[q] + i * PAGE) {
				k = i;
				break;
			}
		*p = q;
		*n = k;
		return true;
	}
	return false;
}

/* A run of pages, primary or an alias's: its address in *at. */
static bool any_run(struct region *r, size_t most, char **at, size_t *p, size_t *n)
{
	if (r->nal && rnd_below(r, 4) == 0) {
		struct alias *a = &r->al[rnd_below(r, r->nal)];
		size_t q = rnd_below(r, a->n), k = 1 + rnd_below(r, most);

		if (k > a->n - q)
			k = a->n - q;
		*at = a->at + q * PAGE;
		*p = a->p + q;
		*n = k;
		return true;
	}
	if (!prim_run(r, most, p, n))
		return false;
	*at = r->prim[*p];
	return true;
}

static void drop_alias(struct region *r, int i)
{
	r->al[i] = r->al[--r->nal];
}

/* ---- the operations ---- */

/* Every page of [lo, hi) of the region through every map of it. */
static int check_range(struct region *r, size_t lo, size_t hi, const char *why)
{
	int bad = 0;

	for (size_t q = lo; q < hi; q++)
		if (r->prim[q])
			bad += check_page(r, r->p0 + q, r->prim[q], why);
	for (int i = 0; i < r->nal; i++)
		for (size_t q = 0; q < r->al[i].n; q++)
			if (r->al[i].p + q >= lo && r->al[i].p + q < hi)
				bad += check_page(r, r->p0 + r->al[i].p + q,
						  r->al[i].at + q * PAGE, why);
	return bad;
}

static int check_all(struct region *r, const char *why)
{
	return check_range(r, 0, r->np, why);
}

static void op_read(struct region *r)
{
	char *at;
	size_t p, n;

	if (!any_run(r, 4, &at, &p, &n))
		return;
	for (size_t i = 0; i < n; i++)
		check_page(r, r->p0 + p + i, at + i * PAGE, "read");
}

static void op_write(struct region *r)
{
	char *at;
	size_t p, n;

	if (!any_run(r, 8, &at, &p, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t v = new_ver(r);

		write_page(at + i * PAGE, r->p0 + p + i, v);
		set_ver(r->p0 + p + i, v);
	}
}

static void op_advise(struct region *r, int op)
{
	char *at;
	size_t p, n;
	int advice = op == OP_DONTNEED ? MADV_DONTNEED : MADV_REMOVE;

	if (!any_run(r, op == OP_REMOVE_WRITE ? 16 : 32, &at, &p, &n))
		return;
	if (madvise(at, n * PAGE, advice)) {
		fail("%s: region %d step %ld: madvise(%p, %zu pages, %s): %s", r->phase, r->id,
		     r->step, (void *)at, n, op_name[op], strerror(errno));
		return;
	}
	if (advice == MADV_REMOVE)
		for (size_t i = 0; i < n; i++)
			set_ver(r->p0 + p + i, 0);
	/* one page of it at once (DONTNEED: the data must be there) */
	check_page(r, r->p0 + p, at, op_name[op]);
	if (op == OP_REMOVE_WRITE)
		for (size_t i = rnd_below(r, 2); i < n; i += 2) {
			uint32_t v = new_ver(r);

			write_page(at + i * PAGE, r->p0 + p + i, v);
			set_ver(r->p0 + p + i, v);
		}
}

/* A run moved to a free slot (mremap MREMAP_FIXED), an alias's whole or
 * a primary one; @op OP_DONTUNMAP: the old map stays, an alias then. */
static void op_move(struct region *r, int op)
{
	int s = free_slot(r), ai = -1;
	size_t p, n;
	char *from, *to, *got;
	int flags = MREMAP_MAYMOVE | MREMAP_FIXED;

	if (s < 0)
		return;
	if (op == OP_MOVE && r->nal && rnd_below(r, 3) == 0) {
		ai = (int)rnd_below(r, r->nal);
		p = r->al[ai].p;
		n = r->al[ai].n;
		from = r->al[ai].at;
	} else {
		if ((op == OP_DONTUNMAP && r->nal >= MAX_ALIAS) || !prim_run(r, BLK, &p, &n))
			return;
		from = r->prim[p];
	}
	if (op == OP_DONTUNMAP)
		flags |= MREMAP_DONTUNMAP;
	to = r->arena + (size_t)s * BLK * PAGE + (p % BLK) * PAGE;
	got = mremap(from, n * PAGE, n * PAGE, flags, to);
	if (got != to) {
		atomic_fetch_add(&refused[op], 1);
		/* (a run over areas a hint split: refused whole, or not?) */
		if (got == MAP_FAILED && mincore(from, n * PAGE, (unsigned char[BLK]){ 0 }))
			fail("%s: region %d step %ld: mremap %p -> %p (%zu pages) failed (%s), and left the source unmapped",
			     r->phase, r->id, r->step, (void *)from, (void *)to, n, strerror(errno));
		return;
	}
	slot_add(r, to, (long)n);
	if (ai >= 0) {
		slot_add(r, from, -(long)n);
		r->al[ai].at = to;
		reserve(r, from, n * PAGE);
		return;
	}
	for (size_t i = 0; i < n; i++)
		r->prim[p + i] = to + i * PAGE;
	if (op == OP_DONTUNMAP) {
		r->al[r->nal++] = (struct alias){ from, p, n };
		return;
	}
	slot_add(r, from, -(long)n);
	reserve(r, from, n * PAGE);
}

/* A second map of a primary run (mremap of old size 0), an alias. */
static void op_dup(struct region *r)
{
	int s = free_slot(r);
	size_t p, n;
	char *to;

	if (s < 0 || r->nal >= MAX_ALIAS || !prim_run(r, BLK, &p, &n))
		return;
	to = r->arena + (size_t)s * BLK * PAGE + (p % BLK) * PAGE;
	if (mremap(r->prim[p], 0, n * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, to) != to) {
		fail("%s: region %d step %ld: mremap(%p, 0, %zu pages): %s", r->phase, r->id,
		     r->step, (void *)r->prim[p], n, strerror(errno));
		return;
	}
	slot_add(r, to, (long)n);
	r->al[r->nal++] = (struct alias){ to, p, n };
	check_page(r, r->p0 + p, to, "dup");
}

/* An alias, or a run of primary pages, unmapped: munmap, or a mmap
 * MAP_FIXED over it. */
static void op_munmap(struct region *r)
{
	bool over = rnd_below(r, 2);
	size_t p, n;
	char *at;

	if (r->nal && rnd_below(r, 2)) {
		int i = (int)rnd_below(r, r->nal);

		at = r->al[i].at;
		n = r->al[i].n;
		drop_alias(r, i);
	} else {
		if (!prim_run(r, 8, &p, &n))
			return;
		at = r->prim[p];
		for (size_t i = 0; i < n; i++)
			r->prim[p + i] = NULL;
	}
	slot_add(r, at, -(long)n);
	if (over) {
		if (mmap(at, n * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
			 -1, 0) != at)
			fail("%s: mmap over %p: %s", r->phase, (void *)at, strerror(errno));
	} else {
		if (munmap(at, n * PAGE))
			fail("%s: munmap %p: %s", r->phase, (void *)at, strerror(errno));
		reserve(r, at, n * PAGE);
	}
}

/* A hint or a protection on a run (MADV_RANDOM, MADV_SEQUENTIAL,
 * MADV_NORMAL, or mprotect to PROT_EXEC added or taken away: it may
 * still be read and written): its area split, or merged again, with no
 * event of it. */
static void op_split(struct region *r)
{
	static const int hint[] = { MADV_RANDOM, MADV_SEQUENTIAL, MADV_NORMAL };
	char *at;
	size_t p, n, how;

	if (!any_run(r, 16, &at, &p, &n))
		return;
	how = rnd_below(r, 5);
	if (how < 3 ? madvise(at, n * PAGE, hint[how]) :
	    mprotect(at, n * PAGE, PROT_READ | PROT_WRITE | (how == 3 ? PROT_EXEC : 0)))
		fail("%s: %s %p: %s", r->phase, how < 3 ? "madvise hint" : "mprotect", (void *)at,
		     strerror(errno));
}

/* A run's map cut short and grown again in place (munmap of its tail,
 * mremap without MREMAP_MAYMOVE: the same pages there again, with no
 * event of the growth), then part of what grew freed at once
 * (MADV_REMOVE) or written. */
static void op_grow(struct region *r)
{
	size_t p, n, m, k;
	char *at;

	if (!prim_run(r, BLK, &p, &n) || n < 2)
		return;
	at = r->prim[p];
	m = 1 + rnd_below(r, n - 1);
	if (munmap(at + m * PAGE, (n - m) * PAGE)) {
		fail("%s: munmap %p: %s", r->phase, (void *)(at + m * PAGE), strerror(errno));
		return;
	}
	if (mremap(at, m * PAGE, n * PAGE, 0) != at) {
		atomic_fetch_add(&refused[OP_GROW], 1);
		for (size_t i = m; i < n; i++)
			r->prim[p + i] = NULL;
		slot_add(r, at + m * PAGE, -(long)(n - m));
		reserve(r, at + m * PAGE, (n - m) * PAGE);
		return;
	}
	/* [p + m, p + n) mapped again where they were */
	k = m + rnd_below(r, n - m);
	if (rnd_below(r, 4)) {
		if (madvise(at + k * PAGE, (n - k) * PAGE, MADV_REMOVE))
			fail("%s: MADV_REMOVE %p: %s", r->phase, (void *)(at + k * PAGE),
			     strerror(errno));
		for (size_t i = k; i < n; i++)
			set_ver(r->p0 + p + i, 0);
	} else {
		uint32_t v = new_ver(r);

		write_page(at + k * PAGE, r->p0 + p + k, v);
		set_ver(r->p0 + p + k, v);
	}
}

static void run_ops(struct region *r, int n, const char *phase);

static void *first_touch(void *arg)
{
	struct region *r = arg;

	for (size_t q = 0; q < r->np; q++)
		if (r->prim[q]) {
			check_page(r, r->p0 + q, r->prim[q], "child thread");
			break;
		}
	return NULL;
}

/* A child (or grandchild) that checks and changes the region, its
 * writes told through a pipe; the forking thread waits for it. */
static void op_fork(struct region *r)
{
	int fds[2], status;
	uint64_t child_rnd = rnd_next(&r->rnd);
	uint32_t rec[2 * 1024];
	size_t have = 0;
	ssize_t got;
	pid_t pid;

	if (depth >= 2 || pipe2(fds, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		fail("fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		char phase[64];
		int before = atomic_load(&fails);

		/* (none of the pipes other threads' children write to) */
		if (fds[1] > 3)
			syscall(SYS_close_range, 3, fds[1] - 1, 0);
		syscall(SYS_close_range, fds[1] + 1, ~0U, 0);
		report_fd = fds[1];
		depth++;
		r->rnd = child_rnd;
		snprintf(phase, sizeof(phase), "%s/child%d", r->phase, depth);
		/* its mm's first fault from a thread that is gone after */
		if ((ops_mask & (1u << OP_CHILD_THREAD)) && depth == 1) {
			pthread_t t;

			if (!pthread_create(&t, NULL, first_touch, r))
				pthread_join(t, NULL);
			atomic_fetch_add(&count[OP_CHILD_THREAD], 1);
		}
		run_ops(r, 40, phase);
		{	/* a quarter of the region, from a block on */
			size_t lo = rnd_below(r, r->np / BLK) * BLK, hi = lo + r->np / 4;

			check_range(r, lo, hi < r->np ? hi : r->np, "child's end");
			if (hi > r->np)
				check_range(r, 0, hi - r->np, "child's end");
		}
		report_flush();
		_exit(atomic_load(&fails) > before ? 1 : 0);
	}
	close(fds[1]);
	if (depth == 1)
		report_flush();		/* (the child's own first) */
	while ((got = read(fds[0], (char *)rec + have, sizeof(rec) - have)) > 0 ||
	       (got < 0 && errno == EINTR)) {
		size_t i;

		have += got > 0 ? (size_t)got : 0;
		for (i = 0; i + 2 <= have / sizeof(rec[0]); i += 2)
			if (rec[i] == UINT32_MAX)
				atomic_fetch_add(&count[OP_GRANDCHILD], 1);
			else
				set_ver(rec[i], rec[i + 1]);
		memmove(rec, rec + i, have - i * sizeof(rec[0]));
		have -= i * sizeof(rec[0]);
	}
	close(fds[0]);
	if (depth == 1) {		/* (counted by the process) */
		if (rlen + 2 > sizeof(rbuf) / sizeof(rbuf[0]))
			report_flush();
		rbuf[rlen++] = UINT32_MAX;
		rbuf[rlen++] = 0;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		fail("%s: region %d step %ld: child %d: status %#x", r->phase, r->id, r->step, pid,
		     status);
}

static int pick_op(struct region *r)
{
	int total = 0, x;

	for (int op = 0; op < NR_OPS; op++)
		if (ops_mask & (1u << op))
			total += op_weight[op];
	if (!total)
		return OP_READ;
	x = (int)rnd_below(r, (size_t)total);
	for (int op = 0; op < NR_OPS; op++)
		if (ops_mask & (1u << op)) {
			if (x < op_weight[op])
				return op;
			x -= op_weight[op];
		}
	return OP_READ;
}

static void run_ops(struct region *r, int n, const char *phase)
{
	r->phase = phase;
	for (int i = 0; i < n && atomic_load(&fails) < MAX_FAILS; i++) {
		int op = pick_op(r);

		r->step++;
		switch (op) {
		case OP_READ:
			op_read(r);
			break;
		case OP_WRITE:
			op_write(r);
			break;
		case OP_DONTNEED:
		case OP_REMOVE:
		case OP_REMOVE_WRITE:
			op_advise(r, op);
			break;
		case OP_MOVE:
			op_move(r, op);
			break;
		case OP_DONTUNMAP:
			if (dontunmap_ok)
				op_move(r, op);
			break;
		case OP_DUP:
			op_dup(r);
			break;
		case OP_MUNMAP:
			op_munmap(r);
			break;
		case OP_FORK:
			if (depth == 0 || (ops_mask & (1u << OP_GRANDCHILD)))
				op_fork(r);
			else
				op_read(r);
			break;
		case OP_SPLIT:
			op_split(r);
			break;
		case OP_GROW:
			op_grow(r);
			break;
		}
		if (depth == 0)
			atomic_fetch_add(&count[op], 1);
	}
}

/* The main thread's phase: its steps spread over the regions. */
static void single(uint64_t *rnd, int n, const char *phase)
{
	for (int i = 0; i < n; i++) {
		struct region *r = &reg[rnd_next(rnd) % THREADS];

		run_ops(r, 1, phase);
	}
}

/* A fork whose parent exits at once: the child goes on. */
static void maybe_orphan(uint64_t *rnd)
{
	pid_t pid;

	if (!(ops_mask & (1u << OP_ORPHAN)) || rnd_next(rnd) % 4)
		return;
	atomic_fetch_add(&count[OP_ORPHAN], 1);
	pid = fork();
	if (pid < 0)
		fail("orphan fork: %s", strerror(errno));
	if (pid > 0)
		_exit(0);
}

static atomic_int live;
static uint64_t main_rnd;
static double t_go, t_p1, t_p2;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static _Noreturn void finish(void)
{
	int unmapped = 0;
	char line[1024];
	int n;

	t_p2 = now_ms();
	single(&main_rnd, nops, "phase 3");
	for (int t = 0; t < THREADS; t++) {
		check_all(&reg[t], "the end");
		for (size_t q = 0; q < reg[t].np; q++) {
			bool any = reg[t].prim[q];

			for (int i = 0; i < reg[t].nal; i++)
				any |= q >= reg[t].al[i].p && q < reg[t].al[i].p + reg[t].al[i].n;
			unmapped += !any;
		}
	}
	n = snprintf(line, sizeof(line), "STATS seed %llu unmapped %d", (unsigned long long)seed,
		     unmapped);
	for (int op = 0; op < NR_OPS; op++)
		n += snprintf(line + n, sizeof(line) - n, " %s=%lu/%lu", op_name[op],
			      atomic_load(&count[op]), atomic_load(&refused[op]));
	printf("%s\n", line);
	printf("TIMES phase 1 %.1f ms, phase 2 %.1f ms, phase 3 and the check %.1f ms\n",
	       t_p1 - t_go, t_p2 - t_p1, now_ms() - t_p2);
	if (atomic_load(&fails))
		exit(1);
	exit(tp_done());
}

static void *worker(void *arg)
{
	struct region *r = arg;

	run_ops(r, nops * 2, "phase 2");
	if ((ops_mask & (1u << OP_LEADER_EXIT)) && atomic_fetch_sub(&live, 1) == 1)
		finish();
	return NULL;
}

/* Whether MREMAP_DONTUNMAP works on shared memory here (an object of
 * its own, gone before the checkpoint). */
static bool try_dontunmap(void)
{
	char *a = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *b = mmap(NULL, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;

	a[0] = 1;
	ok = mremap(a, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, b) == b;
	ok = ok && a[0] == 1 && b[0] == 1;
	munmap(a, 2 * PAGE);
	munmap(b, 2 * PAGE);
	return ok;
}

int main(int argc, char **argv)
{
	const char *e;

	tp_init(argc, argv);
	npages = (argc > 2 ? strtoul(argv[2], NULL, 0) : 32) * (1024 * 1024 / PAGE);
	seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	e = getenv("SHM_CHURN_OPS");
	ops_mask = e ? (unsigned int)strtoul(e, NULL, 16) : ((1u << NR_OPS) - 1) & ~OPT_OPS;
	e = getenv("SHM_CHURN_N");
	nops = e ? atoi(e) : 300;
	npages -= npages % (THREADS * BLK);
	if (!npages)
		return fprintf(stderr, "too small\n"), 2;
	dontunmap_ok = try_dontunmap();
	ver = calloc(npages, sizeof(*ver));
	prev_ver = calloc(npages, sizeof(*prev_ver));
	known = malloc(npages);
	base = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ver || !prev_ver || !known || base == MAP_FAILED)
		return perror("mmap"), 2;
	memset(known, 1, npages);
	for (size_t p = 0; p < npages; p++) {
		volatile uint64_t *w = (uint64_t *)(base + p * PAGE);

		if (p % 16 == 7)
			continue;		/* never touched: a hole */
		if (p % 16 == 11) {
			(void)w[0];		/* read: a page of zeros */
			continue;
		}
		ver[p] = first_ver(p);
		write_page(base + p * PAGE, p, ver[p]);
	}
	for (int t = 0; t < THREADS; t++) {
		struct region *r = &reg[t];

		r->id = t;
		r->np = npages / THREADS;
		r->p0 = t * r->np;
		r->rnd = mix(seed * 7919 + t + 1) | 1;
		r->prim = calloc(r->np, sizeof(*r->prim));
		r->nslots = 2 * (r->np / BLK) + MAX_ALIAS;
		r->slot_used = calloc(r->nslots, sizeof(*r->slot_used));
		r->arena = mmap(NULL, r->nslots * BLK * PAGE, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (!r->prim || !r->slot_used || r->arena == MAP_FAILED)
			return perror("mmap"), 2;
		for (size_t q = 0; q < r->np; q++)
			r->prim[q] = base + (r->p0 + q) * PAGE;
	}
	main_rnd = mix(seed) | 1;
	printf("dontunmap %s, ops %#x, %d a phase\n", dontunmap_ok ? "works" : "refused", ops_mask,
	       nops);
	tp_ready();
	tp_wait_go();
	/* at once, racing the loader */
	t_go = now_ms();
	single(&main_rnd, nops, "phase 1");
	maybe_orphan(&main_rnd);
	t_p1 = now_ms();
	atomic_store(&live, THREADS);
	for (int t = 0; t < THREADS; t++)
		if (pthread_create(&reg[t].th, NULL, worker, &reg[t]))
			return fail("pthread_create"), 1;
	if (ops_mask & (1u << OP_LEADER_EXIT)) {
		atomic_fetch_add(&count[OP_LEADER_EXIT], 1);
		pthread_exit(NULL);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(reg[t].th, NULL);
	maybe_orphan(&main_rnd);
	finish();
}
