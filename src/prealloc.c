/* prealloc.c - a checkpoint into tmpfs: the image file's pages allocated
 * ahead, on a thread of their own, while ckpt's own thread waits on the
 * tree's stops.
 *
 * Half of a write into a tmpfs file is the allocation of its fresh pages
 * (64 MiB here: 24 ms into a fresh file, 11 ms into pages fallocated
 * before), and every write and fallocate of one tmpfs file holds its
 * inode lock, so the page copy's writers take turns for all of it.  The
 * phases before the first big write (seizing, /proc, the remote calls of
 * the kinds before mm: 10 ms of a JVM's checkpoint) leave a CPU idle:
 * the pages the image will hold are allocated then, past the file's end
 * (KEEP_SIZE), and the thread is stopped before that first big write
 * (run on beside the page copy, its allocations made the writers wait
 * and it took the readers' CPU: a 1 GiB checkpoint got slower).  What
 * the image did not use is freed at its end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "idle.h"
#include "log.h"
#include "page.h"
#include "prealloc.h"
#include "progress.h"

#define PREALLOC_MIN	(4ull << 20)	/* less: not worth a thread */
/* one fallocate: the stop waits for no more than this one (0.2-0.5 ms) */
#define PREALLOC_STEP	(1ull << 20)

struct prealloc {
	int fd;
	uint64_t from;		/* the file's offset when it began */
	pid_t *pids;
	int nr;
	atomic_bool stop;
	atomic_uint_least64_t end;	/* allocated up to here */
	atomic_int tid;		/* the thread's, once it runs */
	pthread_t thread;
	bool joined;
};

/* At most what the image will hold of pages: the most any one process
 * has of its own (RssAnon) and of shared memory (RssShmem).  Not their
 * sum: a page a child still shares with its parent since fork counts in
 * both, and is saved once; shared memory too.  Less than the image only
 * costs some of the head start; more would be memory held for nothing
 * until the end. */
static uint64_t estimate(const pid_t *pids, int nr)
{
	uint64_t anon = 0, shmem = 0;

	for (int i = 0; i < nr; i++) {
		uint64_t a, s;

		progress_mem_split(pids[i], &a, &s);
		anon = a > anon ? a : anon;
		shmem = s > shmem ? s : shmem;
	}
	return anon + shmem;
}

static void *run(void *arg)
{
	struct prealloc *p = arg;
	uint64_t want, at = p->from & ~(PAGE - 1);

	/* SCHED_IDLE: it runs where a CPU has nothing else to do, never in
	 * the way of ckpt's thread or of the tree's threads making ckpt's
	 * calls (as a plain thread, woken on ckpt's CPU, it held ckpt's
	 * thread off it for 1.4-3 ms of a JVM's checkpoint; kept off that
	 * CPU, it took the one the tree's calls ran on, and gained nothing).
	 * Its tid first: the stop makes it a plain thread again (a boost
	 * that comes before its own change is undone, and it sees the stop
	 * at once). */
	atomic_store(&p->tid, (int)gettid());
	idle_enter(0);
	if (atomic_load(&p->stop))	/* that boost came first: not its
					 * /proc reads at the idle class */
		return NULL;
	want = estimate(p->pids, p->nr);
	if (want < PREALLOC_MIN)
		return NULL;
	while (at < p->from + want && !atomic_load(&p->stop)) {
		/* out of room (a tmpfs's size=): the writes will say so */
		if (fallocate(p->fd, FALLOC_FL_KEEP_SIZE, (off_t)at, PREALLOC_STEP))
			break;
		at += PREALLOC_STEP;
		atomic_store(&p->end, at);
	}
	return NULL;
}

/* A regular tmpfs file written where its offset is: not appended to
 * (the pages would go past an end that is not the image's). */
static bool on_tmpfs(int fd)
{
	struct statfs sf;
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && !(fl & O_APPEND) && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	       !fstatfs(fd, &sf) && sf.f_type == TMPFS_MAGIC;
}

/* A lone process's own memory, cheaply: statm's resident less shared
 * pages (a file's, and shared memory's, which a lone process has few of
 * to save: it is a hint, not the estimate). */
static uint64_t anon_hint(pid_t pid)
{
	char path[32], buf[128];
	unsigned long long size, res, shared;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu %llu", &size, &res, &shared) != 3 || res < shared)
		return 0;
	return (res - shared) * PAGE;
}

static bool start(struct prealloc *p)
{
	sigset_t all, old;
	bool ok;

	/* signals are ckpt's main thread's to take (a cancel) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ok = !pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ok;
}

struct prealloc *prealloc_start(int fd, const pid_t *pids, int nr)
{
	struct prealloc *p;
	off_t from = lseek(fd, 0, SEEK_CUR);

	/* a thread costs a tiny process 0.6 ms: none where there is
	 * clearly nothing to do; none that could not be made plain again
	 * (preempted idle inside a fallocate, it would hold the inode lock
	 * against the writers) */
	if (from < 0 || !nr || !on_tmpfs(fd) || (nr == 1 && anon_hint(pids[0]) < PREALLOC_MIN) ||
	    !idle_can_leave())
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pids = malloc(nr * sizeof(*pids));
	if (!p->pids) {
		free(p);
		return NULL;
	}
	memcpy(p->pids, pids, nr * sizeof(*pids));
	p->nr = nr;
	p->fd = fd;
	p->from = (uint64_t)from;
	atomic_init(&p->stop, false);
	atomic_init(&p->end, 0);
	atomic_init(&p->tid, 0);
	if (!start(p)) {
		free(p->pids);
		free(p);
		return NULL;
	}
#ifdef CKPT_TEST_HOOKS
	/* all of it made before ckpt goes on: what is left past the image's
	 * end is then known (tests/cases/prealloc.sh) */
	if (getenv("CKPT_TEST_PREALLOC_FIRST"))
		prealloc_stop(p, false);
#endif
	return p;
}

void prealloc_stop(struct prealloc *p, bool now)
{
	int tid;

	if (!p || p->joined)
		return;
	if (now)
		atomic_store(&p->stop, true);
	/* a plain thread again: its step done at once, whatever else runs */
	tid = atomic_load(&p->tid);
	if (tid)
		idle_leave(tid);
	pthread_join(p->thread, NULL);
	p->joined = true;
}

int prealloc_end(struct prealloc *p, struct ckpt_log *log)
{
	uint64_t end, size = 0;
	struct stat st;
	int ret = 0;

	if (!p)
		return 0;
	prealloc_stop(p, true);
	end = atomic_load(&p->end);
	if (fstat(p->fd, &st))
		ret = -errno;
	else
		size = ((uint64_t)st.st_size + PAGE - 1) & ~(PAGE - 1);
	/* past the image's end: freed, or its file would hold them unseen
	 * until removed */
	if (!ret && end > size &&
	    fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)size,
		      (off_t)(end - size)))
		ret = -errno;
	if (!ret && end > p->from)
		log_info(log, "image file: %llu KiB of its pages made ahead, %llu KiB past its end freed",
			 (unsigned long long)(end - p->from) >> 10,
			 (unsigned long long)(end > size ? end - size : 0) >> 10);
	free(p->pids);
	free(p);
	return ret;
}
