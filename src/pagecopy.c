/* pagecopy.c - page data from a held task into the image.
 *
 * The pages of all of a process's areas are one stream, read in the
 * order their PAGES records are written.  When there are enough of them,
 * a second thread reads them ahead (and checksums them) into a few
 * buffers while this one writes: reading, checksumming and writing
 * overlap instead of adding up, for a JVM's two hundred small areas as
 * for one big one.  Small areas share a buffer: it goes to the writer
 * once it holds half a MiB, so a hand-over (a wakeup on the other CPU)
 * is per half MiB, not per area.  Each buffer is a list of pieces, each
 * the part of one area's pages it holds, with its checksum.
 *
 * A read whose pages are all mapped by this process alone (pagemap's
 * exclusive bit) is made with process_vm_readv(), the fast way; any
 * other through /proc/PID/mem.  process_vm_readv() pins pages, and
 * pinning a page still copy-on-write shared after fork makes the kernel
 * give the target its own copy: a checkpoint would double the memory of
 * a forked tree it leaves running (and hide the sharing from the
 * PAGES_REF dedup).  /proc/PID/mem does not pin, but copies twice. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crc32c.h"
#include "fileio.h"
#include "membuf.h"
#include "page.h"
#include "pagecopy.h"
#include "progress.h"
#include "testpoint.h"

/* A buffer is 1 MiB: each is fresh memory for every checkpoint, and on
 * a VM whose host backs memory lazily the first touch of 12 MiB of
 * 4 MiB buffers (huge pages, zeroed) cost more than a python's 11 MB
 * of pages took to copy. */
#define CHUNK		(1u << 20)
#define FILL		(512u << 10)	/* handed over once this full */
#define NBUF		PAGECOPY_NBUF
#define PIPELINE_MIN	(4ULL * CHUNK)
#define INPLACE_MIN	(8ULL * CHUNK)	/* a job this big is write_inplace()'s */
#define MAXW		PAGECOPY_MAXW
#define SPIN_NS		50000		/* before sleeping for the other side */
#define PM_PRESENT	(1ULL << 63)
#define PM_EXCLUSIVE	(1ULL << 56)

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax()	__builtin_ia32_pause()
#else
#define cpu_relax()	__asm__ __volatile__("" ::: "memory")
#endif

struct piece {
	uint32_t len, crc;
};

struct slot {
	char *buf;
	size_t used;
	uint32_t npc;
	bool full;		/* the writer's, until it gives it back */
	struct piece pc[CHUNK / PAGE_MIN];	/* none spans two jobs */
};

struct page_stream {
	struct remote *rm;
	int pmfd;		/* its pagemap, -1: always /proc/PID/mem */
	const struct page_job *jobs;
	uint32_t nr_jobs;
	int nbuf;		/* 1: no thread, the writer fills it */
	size_t chunk;		/* a slot's size: CHUNK, less for a few pages */
	const bool *inplace;	/* per job: write_inplace()'s, not the reader's */
	int nworkers;		/* for write_inplace() */
	struct page_bufs *bufs;
	/* the reader's place */
	uint32_t j, r;
	uint64_t off;
	uint64_t pm[CHUNK / PAGE_MIN];
	/* the writer's */
	uint32_t wj, wpc;
	int wk;
	bool have;		/* slot wk is the writer's */
	size_t woff;
	bool threaded;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;		/* the writer gave up */
	int err;		/* the reader's errno */
	uint64_t err_addr;
	struct slot s[NBUF];
};

/* No logging on the reader's side: the log is the writer's; errors go
 * back in s->err. */
static bool all_exclusive(const struct page_stream *s, uint64_t *pm,
			  uint64_t addr, size_t n)
{
	size_t np = n / PAGE;

	if (s->pmfd < 0 || np > CHUNK / PAGE_MIN ||
	    pread(s->pmfd, pm, np * 8, (off_t)(addr / PAGE * 8)) != (ssize_t)(np * 8))
		return false;
	for (size_t i = 0; i < np; i++)
		if ((pm[i] & (PM_PRESENT | PM_EXCLUSIVE)) != (PM_PRESENT | PM_EXCLUSIVE))
			return false;
	return true;
}

/* @n bytes at @addr, at most CHUNK; @pm: room for their pagemap. */
static int read_pages(const struct page_stream *s, uint64_t *pm, uint64_t addr,
		      char *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)addr, n };

	if (all_exclusive(s, pm, addr, n) &&
	    process_vm_readv(s->rm->pid, &local, 1, &remote, 1, 0) == (ssize_t)n)
		return 0;
	if (pread(s->rm->memfd, buf, n, (off_t)addr) == (ssize_t)n)
		return 0;
	return errno ? errno : EIO;
}

static void piece_close(struct slot *sl, size_t start)
{
	struct piece *p = &sl->pc[sl->npc - 1];

	p->crc = crc32c(0, sl->buf + start, p->len);
}

/* Read from the reader's place on into the slot: up to CHUNK, but a
 * slot holding FILL bytes goes at the next area's start, and an area
 * of CHUNK bytes or more starts a slot (its chunks then fall on the
 * record's MiB boundaries, whole pieces for --compress to gather). */
static int fill_slot(struct page_stream *s, struct slot *sl)
{
	size_t start = 0;
	bool open = false;

	sl->used = 0;
	sl->npc = 0;
	while (s->j < s->nr_jobs && sl->used < s->chunk) {
		const struct page_job *jb = &s->jobs[s->j];
		const struct rec_pages_run *run = &jb->runs[s->r];
		uint64_t left = run->npages * PAGE - s->off;
		size_t n = s->chunk - sl->used < left ? s->chunk - sl->used : left;
		int err;

		if (!s->r && !s->off && s->inplace[s->j]) {
			s->j++;		/* the writer's own (write_inplace()) */
			continue;
		}
		if (!s->r && !s->off &&
		    (sl->used >= FILL || (sl->used && jb->npages * PAGE >= CHUNK)))
			break;
		err = read_pages(s, s->pm, run->addr + s->off, sl->buf + sl->used, n);
		if (err) {
			s->err_addr = run->addr + s->off;
			return err;
		}
		if (!open) {
			sl->pc[sl->npc++] = (struct piece){ 0, 0 };
			start = sl->used;
			open = true;
		}
		sl->pc[sl->npc - 1].len += n;
		sl->used += n;
		s->off += n;
		if (s->off < run->npages * PAGE)
			continue;
		s->off = 0;
		if (++s->r < jb->nr_runs)
			continue;
		s->r = 0;
		s->j++;
		piece_close(sl, start);
		open = false;
	}
	if (open)
		piece_close(sl, start);
	return 0;
}

static bool slot_full(struct slot *sl)
{
	return __atomic_load_n(&sl->full, __ATOMIC_ACQUIRE);
}

static void slot_set(struct page_stream *s, struct slot *sl, bool full)
{
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&sl->full, full, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Until the slot is @full (or the other side gave up): a short spin
 * first, since both sides are busy and a sleeping thread's wakeup on a
 * VM's idle vCPU costs 50-150 us. */
static void slot_wait(struct page_stream *s, struct slot *sl, bool full)
{
	uint64_t t0 = log_now();

	while (slot_full(sl) != full && !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&s->err, __ATOMIC_ACQUIRE) && log_now() - t0 < SPIN_NS)
		cpu_relax();
	pthread_mutex_lock(&s->lock);
	while (slot_full(sl) != full && !s->stop && !s->err)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static void *reader(void *arg)
{
	struct page_stream *s = arg;

	for (int k = 0; s->j < s->nr_jobs; k = (k + 1) % s->nbuf) {
		struct slot *sl = &s->s[k];
		int err;

		slot_wait(s, sl, false);
		if (s->stop)
			return NULL;
		err = fill_slot(s, sl);
		if (err) {
			pthread_mutex_lock(&s->lock);
			__atomic_store_n(&s->err, err, __ATOMIC_RELEASE);
			pthread_cond_broadcast(&s->cond);
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		slot_set(s, sl, true);
	}
	return NULL;
}

/* At least @n buffers of @len (*@len_had) in @buf, one block of them
 * (*@have).  No bigger than what is to be read: the block's pages are
 * all made at once (membuf.c), and a tiny process's 100 KB of pages
 * would not pay for a MiB of them. */
static int bufs_get(char **buf, int *have, size_t *len_had, int n, size_t len)
{
	char *m;

	if (*have >= n && *len_had >= len)
		return 0;
	m = membuf_get(n * len);
	if (!m)
		return ENOMEM;
	membuf_put(buf[0], *have * *len_had);
	for (int i = 0; i < n; i++)
		buf[i] = m + i * len;
	*have = n;
	*len_had = len;
	return 0;
}

/* @n workers' buffers (write_inplace(), write_through()): a big job's,
 * used whole. */
static int wbufs_get(struct page_bufs *b, int n)
{
	size_t len = CHUNK;

	return bufs_get(b->wbuf, &b->nwbuf, &len, n, CHUNK);
}

/* write_inplace()'s threads, this one among them: one a CPU we may run
 * on, up to MAXW. */
static int count_workers(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > MAXW ? MAXW : n;
}

int page_stream_start(struct page_stream **sp, struct ckpt_log *log,
		      struct remote *rm, int pmfd, struct page_bufs *b,
		      const struct page_job *jobs, uint32_t nr_jobs, bool inplace)
{
	struct page_stream *s;
	uint64_t rest = 0;
	bool *inpl;
	int err;

	*sp = NULL;
	if (!nr_jobs)
		return 0;
	s = calloc(1, sizeof(*s) + nr_jobs * sizeof(*inpl));
	if (!s)
		return log_err(log, ENOMEM, "page stream:");
	inpl = (bool *)(s + 1);
	for (uint32_t i = 0; i < nr_jobs; i++) {
		inpl[i] = inplace && jobs[i].npages * PAGE >= INPLACE_MIN;
		if (!inpl[i])
			rest += jobs[i].npages * PAGE;
	}
	*s = (struct page_stream){
		.rm = rm, .pmfd = pmfd, .jobs = jobs, .nr_jobs = nr_jobs,
		.nbuf = rest >= PIPELINE_MIN ? NBUF : 1, .inplace = inpl,
		.nworkers = count_workers(), .bufs = b,
		.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	};
	*sp = s;
	s->chunk = s->nbuf > 1 || rest > CHUNK ? CHUNK : (rest + PAGE_MIN - 1) & ~(PAGE_MIN - 1);
	if (!rest)	/* write_inplace()'s all */
		return 0;
	err = bufs_get(b->buf, &b->nbuf, &b->len, s->nbuf, s->chunk);
	if (err)
		return log_err(log, err, "page buffer:");
	for (int i = 0; i < s->nbuf; i++)
		s->s[i].buf = b->buf[i];
	if (s->nbuf > 1) {
		if (pthread_create(&s->th, NULL, reader, s))
			return log_err(log, EAGAIN, "page reader thread:");
		s->threaded = true;
	}
	return 0;
}

/* The next slot for the writer, read by the thread or, without one,
 * here. */
static int next_slot(struct page_stream *s)
{
	struct slot *sl;
	int err;

	if (s->have && s->threaded)
		slot_set(s, &s->s[s->wk], false);
	if (s->have)
		s->wk = (s->wk + 1) % s->nbuf;
	s->have = false;
	s->wpc = 0;
	s->woff = 0;
	sl = &s->s[s->wk];
	if (!s->threaded) {
		err = fill_slot(s, sl);
		if (err)
			return err;
	} else {
		slot_wait(s, sl, true);
		if (!slot_full(sl))
			return s->err ? s->err : EIO;
	}
	s->have = true;
	return 0;
}

/* write_inplace(): the data of one big job, in CHUNKs that its workers
 * take in turn, each read, checksummed and written to its place in the
 * image.  Reading and writing on every CPU at once: a 1 GiB process
 * went to a tmpfs in 0.6-0.9 s through the one reader and one writer,
 * in 0.37 s by two threads doing both (`hwlimit take vmread`, bench/). */
struct inplace {
	const struct page_stream *s;
	const struct page_job *jb;
	uint64_t *runat;	/* each run's offset in the job's data */
	uint64_t total, nchunks;
	uint64_t at;		/* the data's offset in the image file */
	int fd;
	uint32_t *crc;		/* per chunk */
	uint64_t next;		/* the next chunk to take */
	uint64_t done;		/* bytes written */
	int err;
	bool in_image;		/* err is the image's, not the task's */
	uint64_t err_at;	/* the task's address or the image's offset */
};

struct worker {
	struct inplace *ip;
	char *buf;
	struct ckpt_log *log;	/* the writer's own: it shows progress */
	uint64_t told;
	pthread_t th;
};

/* [off, off + n) of the job's data into @buf, across its runs. */
static int read_span(struct inplace *ip, uint64_t *pm, uint64_t off,
		     char *buf, size_t n, uint64_t *bad)
{
	const struct page_job *jb = ip->jb;
	uint32_t lo = 0, hi = jb->nr_runs - 1;

	while (lo < hi) {	/* the last run that starts at or before off */
		uint32_t mid = (lo + hi + 1) / 2;

		if (ip->runat[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	for (uint32_t r = lo; n && r < jb->nr_runs; r++) {
		uint64_t in = off - ip->runat[r];
		uint64_t k = jb->runs[r].npages * PAGE - in;
		int err;

		k = k < n ? k : n;
		err = read_pages(ip->s, pm, jb->runs[r].addr + in, buf, k);
		if (err) {
			*bad = jb->runs[r].addr + in;
			return err;
		}
		buf += k;
		off += k;
		n -= k;
	}
	return n ? EPROTO : 0;
}

static void fail(struct inplace *ip, int err, bool in_image, uint64_t at)
{
	int none = 0;

	if (__atomic_compare_exchange_n(&ip->err, &none, err, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		ip->in_image = in_image;
		ip->err_at = at;
	}
}

static void *work(void *arg)
{
	struct worker *wk = arg;
	struct inplace *ip = wk->ip;
	uint64_t pm[CHUNK / PAGE_MIN], k;

	while ((k = __atomic_fetch_add(&ip->next, 1, __ATOMIC_RELAXED)) < ip->nchunks &&
	       !__atomic_load_n(&ip->err, __ATOMIC_ACQUIRE)) {
		uint64_t off = k * CHUNK, bad = 0, d;
		size_t n = ip->total - off < CHUNK ? ip->total - off : CHUNK;
		int err = read_span(ip, pm, off, wk->buf, n, &bad);

		if (err) {
			fail(ip, err, false, bad);
			break;
		}
		ip->crc[k] = crc32c(0, wk->buf, n);
		err = pwrite_full(ip->fd, wk->buf, n, ip->at + off);
		if (err) {
			fail(ip, err, true, ip->at + off);
			break;
		}
		d = __atomic_add_fetch(&ip->done, n, __ATOMIC_RELAXED);
		if (wk->log) {
			progress_add(wk->log, d - wk->told);
			wk->told = d;
		}
	}
	return NULL;
}

/* A worker of our own: signals are ckpt's main thread's to take. */
static void *work_thread(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return work(arg);
}

/* Workers: this thread and up to nworkers - 1 more, as many as get
 * their buffer and start; 0 when not even this one has a buffer. */
static int run_workers(struct page_stream *s, struct inplace *ip,
		       struct worker *wk, struct ckpt_log *log)
{
	struct page_bufs *b = s->bufs;
	int n = 1;

	if (wbufs_get(b, s->nworkers) && wbufs_get(b, 1))
		return 0;
	wk[0] = (struct worker){ .ip = ip, .buf = s->bufs->wbuf[0], .log = log };
	for (; n < s->nworkers && n < b->nwbuf; n++) {
		wk[n] = (struct worker){ .ip = ip, .buf = s->bufs->wbuf[n] };
		if (pthread_create(&wk[n].th, NULL, work_thread, &wk[n]))
			break;
	}
	work(&wk[0]);
	for (int i = 1; i < n; i++)
		pthread_join(wk[i].th, NULL);
	progress_add(log, ip->done - wk[0].told);
	return n;
}

/* Where the image cannot take its place (iw_inplace_begin()): the job
 * read here, a chunk at a time, into the stream. */
static int write_through(struct img_writer *w, struct inplace *ip)
{
	uint64_t pm[CHUNK / PAGE_MIN];
	struct page_bufs *b = ip->s->bufs;
	int ret = wbufs_get(b, 1);

	if (ret)
		return log_err(w->log, ret, "page buffer:");
	for (uint64_t off = 0; off < ip->total && !ret; off += CHUNK) {
		size_t n = ip->total - off < CHUNK ? ip->total - off : CHUNK;
		char *buf = ip->s->bufs->wbuf[0];
		uint64_t bad = 0;

		ret = read_span(ip, pm, off, buf, n, &bad);
		if (ret)
			return log_err(w->log, ret, "pid %d: reading pages at 0x%llx:",
				       ip->s->rm->pid, (unsigned long long)bad);
		ret = iw_write_crc(w, buf, n, crc32c(0, buf, n));
		progress_add(w->log, n);
	}
	return ret;
}

static int inplace_end(struct img_writer *w, struct inplace *ip)
{
	uint32_t crc = 0;

	if (ip->err && ip->in_image)
		return log_err(w->log, ip->err, "writing image fd %d at %llu:",
			       w->fd, (unsigned long long)ip->err_at);
	if (ip->err)
		return log_err(w->log, ip->err, "pid %d: reading pages at 0x%llx:",
			       ip->s->rm->pid, (unsigned long long)ip->err_at);
	for (uint64_t k = 0; k < ip->nchunks; k++) {
		uint64_t left = ip->total - k * CHUNK;

		crc = crc32c_combine(crc, ip->crc[k], left < CHUNK ? left : CHUNK);
	}
	return iw_inplace_end(w, ip->at, ip->total, crc);
}

static int write_inplace(struct page_stream *s, struct img_writer *w,
			 const struct page_job *jb)
{
	struct inplace ip = { .s = s, .jb = jb, .total = jb->npages * PAGE, .fd = w->fd };
	struct worker wk[MAXW];
	uint64_t at = 0;
	int ret, n;

	ip.nchunks = (ip.total + CHUNK - 1) / CHUNK;
	ip.runat = malloc(jb->nr_runs * sizeof(*ip.runat));
	ip.crc = malloc(ip.nchunks * sizeof(*ip.crc));
	if (!ip.runat || !ip.crc) {
		ret = log_err(w->log, ENOMEM, "page stream:");
		goto out;
	}
	for (uint32_t r = 0; r < jb->nr_runs; r++) {
		ip.runat[r] = at;
		at += jb->runs[r].npages * PAGE;
	}
	ret = iw_inplace_begin(w, ip.total, &ip.at);
	if (ret == -EOPNOTSUPP) {
		ret = write_through(w, &ip);
		goto out;
	}
	if (ret)
		goto out;
	n = run_workers(s, &ip, wk, w->log);
	if (!n)
		ret = log_err(w->log, ENOMEM, "page buffer:");
	else
		ret = test_fail_point(w->log, "pages_inplace", inplace_end(w, &ip));
	log_info(w->log, "pid %d: %llu KiB of pages at 0x%llx written in place by %d thread%s",
		 s->rm->pid, (unsigned long long)(ip.total >> 10),
		 (unsigned long long)jb->runs[0].addr, n, n == 1 ? "" : "s");
out:
	free(ip.runat);
	free(ip.crc);
	return ret;
}

int page_stream_write(struct page_stream *s, struct img_writer *w,
		      const struct rec_pages_run *runs)
{
	const struct page_job *jb = s && s->wj < s->nr_jobs ? &s->jobs[s->wj] : NULL;
	uint64_t need, total, t0 = log_now();
	int ret = 0;

	if (!jb || jb->runs != runs)
		return log_err(w->log, EPROTO, "page stream out of step");
	need = total = jb->npages * PAGE;
	if (s->inplace[s->wj]) {
		ret = write_inplace(s, w, jb);
		need = 0;
	}
	while (need && !ret) {
		struct slot *sl = &s->s[s->wk];
		struct piece *p;

		if (!s->have || s->wpc == sl->npc) {
			int err = next_slot(s);

			if (err)
				return log_err(w->log, err, "pid %d: reading pages at 0x%llx:",
					       s->rm->pid, (unsigned long long)s->err_addr);
			continue;
		}
		p = &sl->pc[s->wpc];
		if (p->len > need)
			return log_err(w->log, EPROTO, "page stream out of step");
		ret = iw_write_crc(w, sl->buf + s->woff, p->len, p->crc);
		progress_add(w->log, p->len);
		s->woff += p->len;
		s->wpc++;
		need -= p->len;
	}
	s->wj++;
	log_took(w->log, LP_PAGES, t0);
	w->log->times.bytes += total;
	return ret;
}

void page_stream_end(struct page_stream *s)
{
	if (!s)
		return;
	if (s->threaded) {
		pthread_mutex_lock(&s->lock);
		__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->th, NULL);
	}
	free(s);
}

void page_bufs_free(struct page_bufs *b)
{
	membuf_put(b->buf[0], b->nbuf * b->len);
	membuf_put(b->wbuf[0], b->nwbuf * CHUNK);
	*b = (struct page_bufs){ 0 };
}
