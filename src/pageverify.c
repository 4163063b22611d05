/* pageverify.c - the page data of an image checked while restart builds
 * the tree.
 *
 * Restart verifies every record of an image before it makes anything of
 * it, but the PAGES payloads, nearly all of a big image, are read twice
 * that way: once by ckpt for their checksums, once by the restored
 * processes into their memory.  So their checksums are computed by a
 * child of ckpt (a process: ckpt forks puppets meanwhile, which a thread
 * of ours could leave with a lock held) on the other CPU while the tree
 * is built, and restart waits for it before any restored process may run
 * or touch anything outside itself (restore_end): a bad page fails the
 * restart then, and the half-built tree is destroyed as on any failure.
 * A small image is checked at once, as the rest of the records.
 *
 * The pages ckpt places itself (mm_place.c) it reads anyway, to copy
 * them into the process: their checksum is best taken then, from the
 * cache, not in a second pass over memory by the child on a CPU the
 * placing needs (a 1 GiB restart spent a third of its time waiting on
 * the child).  So the spans are cut in cells, PV_CELL of the image each
 * (a span's first and last cells are what of them it holds), and each
 * cell is claimed, in memory shared with the child, by whoever comes
 * first: the placer, for a job that is exactly one cell (pv_claim()),
 * or the child, which takes them from the last back, towards the
 * placer coming from the first.  Each puts its cell's CRC32C there;
 * pv_finish() puts each span's together and compares.
 *
 * The child runs in the idle class (idle.c) until restart waits for it:
 * as a plain process it took half of the CPU a placer ran on, to check
 * cells the placer would have checked from its cache (a 1 GiB restart
 * 281 ms against 245, median of 10 alternating); idle, it checks what
 * a CPU has time for (the pages the puppets read, the cells the placers
 * have not reached), and the rest as soon as it is waited for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include <unistd.h>

#include "crc32c.h"
#include "fileio.h"
#include "idle.h"
#include "image.h"
#include "ctx.h"
#include "pageverify.h"
#include "page.h"

/* CELL_BUSY: the placer's, its CRC not there yet */
enum { CELL_FREE, CELL_CHILD, CELL_PLACER, CELL_BUSY };

struct pv_cell {
	uint32_t who;		/* CELL_x, claimed by compare-and-swap */
	uint32_t crc;		/* of its bytes, once its claimer is done */
};

/* below this, a child costs more than it saves (a fork: 0.3 ms here;
 * checking 4 MiB: 1.2 ms) */
#define DEFER_MIN	(4ULL << 20)

static int check_here(struct rst_ctx *c, const struct ir_span *s, size_t n)
{
	struct img_reader r;
	int ret = ir_init(&r, c->img_fd, c->log);

	for (size_t i = 0; i < n && !ret; i++)
		ret = ir_check_span(&r, &s[i]);
	ir_free(&r);
	return ret;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Cell @k of the image's grid, as much of it as @s holds. */
static void cell_range(const struct ir_span *s, uint64_t k, uint64_t *off, uint64_t *len)
{
	uint64_t lo = k * PV_CELL > s->off ? k * PV_CELL : s->off;

	*off = lo;
	*len = min64((k + 1) * PV_CELL, s->off + s->len) - lo;
}

static uint64_t first_cell(const struct ir_span *s)
{
	return s->off / PV_CELL;
}

static uint64_t nr_cells(const struct ir_span *s)
{
	return s->len ? (s->off + s->len - 1) / PV_CELL - first_cell(s) + 1 : 0;
}

static bool claim(struct pv_cell *cell, uint32_t who)
{
	uint32_t free = CELL_FREE;

	return __atomic_compare_exchange_n(&cell->who, &free, who, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* The child's cells, each read into one buffer, not mapped: a page of
 * the image mapped costs more than its copy where the hypervisor
 * shadows page tables (this project's VMs: the whole check of 1 GiB
 * took 2.5 times as long from the mapping), and ckpt's memory stays
 * bounded whatever the image's size.  0, or -errno. */
static int check_cells(int img, const struct ir_span *s, size_t n,
		       struct pv_cell *cells, const uint64_t *cell0)
{
	void *buf = malloc(PV_CELL);
	int ret = buf ? 0 : -ENOMEM;

	for (size_t i = n; i-- > 0 && !ret;) {
		for (uint64_t k = nr_cells(&s[i]); k-- > 0 && !ret;) {
			struct pv_cell *cell = &cells[cell0[i] + k];
			uint64_t off, len;

			if (!claim(cell, CELL_CHILD))
				continue;
			cell_range(&s[i], first_cell(&s[i]) + k, &off, &len);
			ret = -pread_full(img, buf, len, off, NULL);
			if (!ret)
				cell->crc = crc32c(0, buf, len);
		}
	}
	free(buf);
	return ret;
}

/* The child: exit 0 once every cell it claimed has its CRC, 2 if it
 * could not (a span past the image's end is told by the parent, in its
 * own words). */
static void __attribute__((noreturn)) verifier(int img, const struct ir_span *s,
						size_t n, struct pv_cell *cells,
						const uint64_t *cell0)
{
#ifdef CKPT_TEST_HOOKS
	/* the test build only: a late child, so that the placer's share of
	 * the check is seen (tests/cases/restart.sh restart_bad_pages) */
	if (getenv("CKPT_TEST_PV_DELAY_MS"))
		usleep(1000 * atoi(getenv("CKPT_TEST_PV_DELAY_MS")));
#endif
	_exit(check_cells(img, s, n, cells, cell0) ? 2 : 0);
}

/* The shared cells of @n spans, each span's first in @cell0. */
static int cells_make(struct rst_ctx *c, const struct ir_span *s, size_t n)
{
	size_t total = 0;
	void *m;

	c->pv_cell0 = malloc((n ? n : 1) * sizeof(*c->pv_cell0));
	if (!c->pv_cell0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		c->pv_cell0[i] = total;
		total += nr_cells(&s[i]);
	}
	/* populated: the idle child must not hold a page fault of it
	 * that a placer then waits for */
	m = mmap(NULL, (total ? total : 1) * sizeof(struct pv_cell), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (m == MAP_FAILED) {
		free(c->pv_cell0);
		c->pv_cell0 = NULL;
		return -errno;
	}
	c->pv_cells = m;
	c->pv_ncells = total;
	return 0;
}

static void cells_free(struct rst_ctx *c)
{
	if (c->pv_cells)
		munmap(c->pv_cells, (c->pv_ncells ? c->pv_ncells : 1) * sizeof(struct pv_cell));
	free(c->pv_cell0);
	c->pv_cells = NULL;
	c->pv_cell0 = NULL;
	c->pv_ncells = 0;
}

struct pv_cell *pv_claim(struct rst_ctx *c, uint64_t off, uint64_t len)
{
	const struct ir_span *s = c->pv_spans;
	size_t lo = 0, hi = c->pv_nr;
	uint64_t k, coff, clen;

	if (!c->pv_cells || !len)
		return NULL;
	while (lo < hi) {	/* the first span that ends after off */
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].off + s[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->pv_nr || s[lo].off > off)
		return NULL;
	k = off / PV_CELL;
	cell_range(&s[lo], k, &coff, &clen);
	if (coff != off || clen != len)
		return NULL;
	if (!claim(&c->pv_cells[c->pv_cell0[lo] + k - first_cell(&s[lo])], CELL_BUSY))
		return NULL;
	return &c->pv_cells[c->pv_cell0[lo] + k - first_cell(&s[lo])];
}

void pv_cell_done(struct pv_cell *cell, uint32_t crc)
{
	cell->crc = crc;
	__atomic_store_n(&cell->who, CELL_PLACER, __ATOMIC_RELEASE);
}

/* In a container's engine, pids are the container's: the verifier,
 * which lives until every process is made, takes the one below ours
 * (the top of the namespace's), not the next free one, which the image
 * may well hold. */
static pid_t fork_verifier(const struct rst_ctx *c)
{
	pid_t want = getpid() - 1;
	struct clone_args ca = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&want,
		.set_tid_size = 1,
	};

	if (!c->root_made)
		return fork();
	return syscall(SYS_clone3, &ca, sizeof(ca));
}

int pv_start(struct rst_ctx *c, const struct ir_span *s, size_t n, uint64_t bytes)
{
	pid_t pid;

	if (bytes < DEFER_MIN || cells_make(c, s, n))
		return check_here(c, s, n);
	c->pv_spans = s;
	c->pv_nr = n;
	pid = fork_verifier(c);
	if (pid < 0) {
		cells_free(c);
		return check_here(c, s, n);
	}
	if (pid == 0)
		verifier(c->img_fd, s, n, c->pv_cells, c->pv_cell0);
	c->pv_pid = pid;
	c->pv_idle = idle_can_leave() && !idle_enter(pid);
	return 0;
}

/* The child waited for: a plain process again first (idle.c), or, if
 * the kernel says no after all, killed (its cells are then checked
 * here): never waited for in the idle class. */
static int reap(struct rst_ctx *c, int *status)
{
	int left = c->pv_idle ? idle_leave(c->pv_pid) : 0;
	pid_t got;

	if (left && left != -ESRCH)
		kill(c->pv_pid, SIGKILL);
	c->pv_idle = false;
	while ((got = waitpid(c->pv_pid, status, 0)) < 0 && errno == EINTR)
		;
	c->pv_pid = 0;
	return got < 0 ? -errno : 0;
}

/* Each span's cells put together: 0 if all agree, else the error,
 * said; 1 if a cell has no CRC (the placer claimed it, then stopped). */
static int check_cells_done(struct rst_ctx *c)
{
	uint64_t by[4] = { 0 };

	for (size_t i = 0; i < c->pv_nr; i++) {
		const struct ir_span *s = &c->pv_spans[i];
		uint32_t crc = 0;

		for (uint64_t k = 0; k < nr_cells(s); k++) {
			const struct pv_cell *cell = &c->pv_cells[c->pv_cell0[i] + k];
			uint64_t off, len;

			uint32_t who = __atomic_load_n(&cell->who, __ATOMIC_ACQUIRE);

			if (who == CELL_FREE || who == CELL_BUSY)
				return 1;
			cell_range(s, first_cell(s) + k, &off, &len);
			crc = crc32c_combine(crc, cell->crc, len);
			by[cell->who] += len;
		}
		if (crc != s->crc)
			return log_err(c->log, EBADMSG,
				       "record PAGES at offset %llu: checksum mismatch (corrupt image)",
				       (unsigned long long)s->rec_pos);
	}
	log_info(c->log, "pages checked: %.1f MB as they were placed, %.1f MB by the checker",
		 by[CELL_PLACER] / 1e6, by[CELL_CHILD] / 1e6);
	return 0;
}

int pv_finish(struct rst_ctx *c)
{
	int status = 0, ret;

	if (!c->pv_pid)
		return 0;
	ret = reap(c, &status);
	if (ret) {
		cells_free(c);
		return log_err(c->log, -ret, "waiting for the check of the image's pages:");
	}
	ret = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? check_cells_done(c) : 1;
	cells_free(c);
	/* it could not tell: tell here */
	return ret == 1 ? check_here(c, c->pv_spans, c->pv_nr) : ret;
}

void pv_abort(struct rst_ctx *c)
{
	int status;

	if (c->pv_pid) {
		kill(c->pv_pid, SIGKILL);
		reap(c, &status);
	}
	cells_free(c);
}
