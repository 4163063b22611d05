/* pagecopy.c - page data from a held task into the image.  For a large
 * area, a second thread reads the pages and checksums them while this
 * one writes the previous chunk: reading, checksumming and writing
 * overlap instead of adding up.
 *
 * A chunk whose pages are all mapped by this process alone (pagemap's
 * exclusive bit) is read with process_vm_readv(), the fast way; any other
 * through /proc/PID/mem.  process_vm_readv() pins pages, and pinning a
 * page still copy-on-write shared after fork makes the kernel give the
 * target its own copy: a checkpoint would double the memory of a forked
 * tree it leaves running (and hide the sharing from the PAGES_REF
 * dedup).  /proc/PID/mem does not pin, but copies twice. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crc32c.h"
#include "page.h"
#include "pagecopy.h"
#include "progress.h"

#define CHUNK		(4u << 20)
#define NBUF		PAGECOPY_NBUF
#define PIPELINE_MIN	(2ULL * CHUNK)
#define HUGE_MIN	(1ULL << 20)
#define PM_PRESENT	(1ULL << 63)
#define PM_EXCLUSIVE	(1ULL << 56)

struct slot {
	char *buf;
	size_t len;
	uint32_t crc;
	bool full;
};

struct copier {
	struct remote *rm;
	int pmfd;		/* its pagemap, -1: always /proc/PID/mem */
	uint64_t pm[CHUNK / PAGE_MIN];
	const struct rec_pages_run *runs;
	uint32_t nr_runs;
	struct slot s[NBUF];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;		/* the writer gave up */
	int err;		/* the reader's errno */
	uint64_t err_addr;
};

/* No logging here: the log is the writer's; errors go back in c->err. */
static bool all_exclusive(struct copier *c, uint64_t addr, size_t n)
{
	size_t np = n / PAGE;

	if (c->pmfd < 0 || np > CHUNK / PAGE_MIN ||
	    pread(c->pmfd, c->pm, np * 8, (off_t)(addr / PAGE * 8)) != (ssize_t)(np * 8))
		return false;
	for (size_t i = 0; i < np; i++)
		if ((c->pm[i] & (PM_PRESENT | PM_EXCLUSIVE)) != (PM_PRESENT | PM_EXCLUSIVE))
			return false;
	return true;
}

static int read_pages(struct copier *c, uint64_t addr, char *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)addr, n };

	if (all_exclusive(c, addr, n) &&
	    process_vm_readv(c->rm->pid, &local, 1, &remote, 1, 0) == (ssize_t)n)
		return 0;
	if (pread(c->rm->memfd, buf, n, (off_t)addr) == (ssize_t)n)
		return 0;
	return errno ? errno : EIO;
}

static void *reader(void *arg)
{
	struct copier *c = arg;
	int k = 0;

	for (uint32_t i = 0; i < c->nr_runs; i++) {
		uint64_t a = c->runs[i].addr, left = c->runs[i].npages * PAGE;

		while (left) {
			struct slot *s = &c->s[k];
			size_t n = left < CHUNK ? left : CHUNK;
			int err;

			pthread_mutex_lock(&c->lock);
			while (s->full && !c->stop)
				pthread_cond_wait(&c->cond, &c->lock);
			pthread_mutex_unlock(&c->lock);
			if (c->stop)
				return NULL;
			err = read_pages(c, a, s->buf, n);
			pthread_mutex_lock(&c->lock);
			if (err) {
				c->err = err;
				c->err_addr = a;
				pthread_cond_broadcast(&c->cond);
				pthread_mutex_unlock(&c->lock);
				return NULL;
			}
			pthread_mutex_unlock(&c->lock);
			s->crc = crc32c(0, s->buf, n);
			s->len = n;
			pthread_mutex_lock(&c->lock);
			s->full = true;
			pthread_cond_broadcast(&c->cond);
			pthread_mutex_unlock(&c->lock);
			a += n;
			left -= n;
			k = (k + 1) % NBUF;
		}
	}
	return NULL;
}

static int copy_pipelined(struct img_writer *w, struct copier *c, uint64_t total)
{
	pthread_t th;
	int ret = 0, k = 0;

	if (pthread_create(&th, NULL, reader, c))
		return log_err(w->log, EAGAIN, "page reader thread:");
	for (uint64_t done = 0; done < total && !ret; k = (k + 1) % NBUF) {
		struct slot *s = &c->s[k];

		pthread_mutex_lock(&c->lock);
		while (!s->full && !c->err)
			pthread_cond_wait(&c->cond, &c->lock);
		pthread_mutex_unlock(&c->lock);
		if (!s->full) {
			ret = log_err(w->log, c->err, "pid %d: reading pages at 0x%llx:",
				      c->rm->pid, (unsigned long long)c->err_addr);
			break;
		}
		ret = iw_write_crc(w, s->buf, s->len, s->crc);
		progress_add(w->log, s->len);
		done += s->len;
		pthread_mutex_lock(&c->lock);
		s->full = false;
		pthread_cond_broadcast(&c->cond);
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(th, NULL);
	return ret;
}

static int copy_simple(struct img_writer *w, struct copier *c)
{
	int ret = 0;

	for (uint32_t i = 0; i < c->nr_runs && !ret; i++) {
		uint64_t a = c->runs[i].addr, left = c->runs[i].npages * PAGE;

		while (left && !ret) {
			size_t n = left < CHUNK ? left : CHUNK;
			int err = read_pages(c, a, c->s[0].buf, n);

			if (err)
				return log_err(w->log, err, "pid %d: reading pages at 0x%llx:",
					       c->rm->pid, (unsigned long long)a);
			ret = iw_write(w, c->s[0].buf, n);
			progress_add(w->log, n);
			a += n;
			left -= n;
		}
	}
	return ret;
}

void page_bufs_free(struct page_bufs *b)
{
	for (int i = 0; i < NBUF; i++) {
		free(b->buf[i]);
		b->buf[i] = NULL;
	}
}

int page_copy(struct img_writer *w, struct remote *rm, int pmfd,
	      struct page_bufs *b, const struct rec_pages_run *runs,
	      uint32_t nr_runs)
{
	struct copier c = {
		.rm = rm, .pmfd = pmfd, .runs = runs, .nr_runs = nr_runs,
		.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	};
	uint64_t total = 0, t0 = log_now();
	int nbuf, ret;

	for (uint32_t i = 0; i < nr_runs; i++)
		total += runs[i].npages * PAGE;
	nbuf = total >= PIPELINE_MIN ? NBUF : 1;
	for (int i = 0; i < nbuf; i++) {
		/* huge pages where the kernel gives them: 2 faults and TLB
		 * entries per buffer, not 1024; but not for a few pages (a
		 * tiny process's areas): a huge page is 2 MiB to clear, and
		 * on a VM whose host backs memory lazily 512 host faults */
		bool huge = total >= HUGE_MIN;

		if (b->buf[i] && huge && !b->huge[i]) {
			free(b->buf[i]);
			b->buf[i] = NULL;
		}
		if (!b->buf[i]) {
			b->buf[i] = aligned_alloc(2u << 20, CHUNK);
			b->huge[i] = huge;
			if (b->buf[i] && huge)
				madvise(b->buf[i], CHUNK, MADV_HUGEPAGE);
		}
		if (!b->buf[i])
			return log_err(w->log, ENOMEM, "page buffer:");
		c.s[i].buf = b->buf[i];
	}
	ret = nbuf > 1 ? copy_pipelined(w, &c, total) : copy_simple(w, &c);
	log_took(w->log, LP_PAGES, t0);
	w->log->times.bytes += total;
	return ret;
}
