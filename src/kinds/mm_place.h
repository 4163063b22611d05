/* mm_place.h - a restart's private pages placed by ckpt beside the
 * build of the rest (mm_place.c). */
#ifndef CKPT_MM_PLACE_H
#define CKPT_MM_PLACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mm.h"

enum { THP_NEVER, THP_MADVISE, THP_ALWAYS };

/* How an area's pages go in: the puppet reads them (NONE), or ckpt
 * copies them by userfaultfd or writes them to /proc/PID/mem, beside
 * the build (MEM) or at once, while the area is writable (NOW). */
enum place_how { PLACE_NONE, PLACE_UFFD, PLACE_MEM, PLACE_NOW };

struct lazy_set;
struct place_job;
struct place_held;
struct pin;

/* Where a process's pages are in (its pagemap). */
struct pm_scanner {
	int fd;
	bool no_scan;	/* no PAGEMAP_SCAN here: the pagemap read */
};

/* One process's placing, from placer_begin() to placer_end(). */
struct placer {
	int ufd;		/* the puppet's userfaultfd, taken; -1: none */
	struct pm_scanner scan;	/* its pagemap, with the userfaultfd */
	int memfd;		/* its /proc/PID/mem, ckpt's (remote.h) */
	int thp;		/* THP_x: this kernel's transparent huge pages */
	pid_t pid;
	int img_fd;		/* the image (ckpt's); -1: nothing placed */
	uint64_t img_len;
	void *buf;		/* ckpt's thread's for a job's pages */
	uint64_t buf_len;	/* each thread's: the biggest job */
	struct ckpt_log *log;
	struct rst_ctx *ctx;	/* for pv_claim() alone, from both threads */
	const struct pin *pin;
	const struct rst_vma **areas;	/* registered, to unregister */
	size_t nr_areas, cap_areas;
	struct place_held *held;	/* placer_hold()'s, not yet added */
	size_t nr_held, cap_held;
	uint64_t held_bytes;		/* their pages */
	uint64_t total;		/* bytes to place, as planned */
	uint64_t bytes;		/* queued */
	uint32_t nr_placed;	/* areas queued */
	uint64_t t0;		/* when the first was queued */
	bool started, thread;	/* lock, cond (and thread th) made */
	pthread_t th;
	/* under lock: the jobs, the next to take, the bytes placed,
	 * whether more may come, the first error and where */
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct place_job *jobs;
	size_t nr_jobs, cap_jobs, next;
	uint64_t done, said;	/* bytes placed; of those, shown (progress.h) */
	bool closing;
	int err;
	uint64_t err_at;
};

/* Before @t's areas are mapped (@keep: those inherited at fork): the
 * image mapped, and the userfaultfd taken if enough pages are for it.
 * Nothing placed is no error. */
int placer_begin(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s,
		 const struct rst_vma **keep, struct placer *p);
/* How @v's pages go in (NONE: the puppet reads them). */
enum place_how placer_how(const struct placer *p, const struct rst_ctx *c,
			  const struct rst_vma *v);
/* @v, mapped (writable, as for the puppet's reads): its first page in,
 * the others queued (@how, from placer_how()); 0, an error, or 1 if the
 * puppet is to read them after all (no userfaultfd for this area). */
int placer_add(struct placer *p, const struct rst_vma *v, enum place_how how);
/* @v (@how from placer_how()) held, to be added once the batch of calls
 * that maps it has run, if it is small and writable: 0, and the caller
 * queues the puppet's read of its first page right after its mmap (and
 * runs the queue and adds those held if placer_held_full()); 1 if not
 * held (placer_add() it now); or an error. */
int placer_hold(struct placer *p, const struct rst_vma *v, enum place_how how);
/* The areas held, added, now that the calls that map them have run: 0
 * or an error. */
int placer_add_held(struct placer *p);
/* Whether the areas held have pages enough for the thread to start on. */
bool placer_held_full(const struct placer *p);
/* Every queued page in (ckpt's thread helping), the areas still held
 * added first (the caller ran the batch that maps them), every area
 * unregistered, the userfaultfd closed: @ret, or the first error if
 * @ret was 0.  With @ret set (the build failed), pages not yet copied
 * are left. */
int placer_end(struct placer *p, int ret);
/* The userfaultfd made in @t with @flags, taken into *@ufd, the puppet's
 * own closed: 0, an errno if none could be made or taken, or a remote
 * call's error (said). */
int mm_take_uffd(struct rst_task *t, int flags, int *ufd);
int mm_scanner_open(struct pm_scanner *sc, pid_t pid);	/* 0 or an errno */
void mm_scanner_close(struct pm_scanner *sc);
/* The pages of @v's image already in memory, added to @found (address,
 * pages, image offset): 0 or an errno.  Before an area is registered on
 * a userfaultfd, anyone's read of it (ps reading the process's cmdline,
 * a debugger) maps the zero page there, which a copy would then find
 * in (EEXIST); registered, none comes in but by the copy. */
int mm_pages_present(struct pm_scanner *sc, const struct rst_vma *v, struct lazy_set *found);
/* The test build's CKPT_TEST_PEEK (mm_place.c): @v's pages read through
 * @memfd, as ps or a debugger may, before it is registered. */
#ifdef CKPT_TEST_HOOKS
void mm_test_peek(int memfd, const struct rst_vma *v);
#else
static inline void mm_test_peek(int memfd, const struct rst_vma *v)
{
	(void)memfd;
	(void)v;
}
#endif

#endif
