/* progress.c - the progress line (progress.h).  Drawn only on a terminal
 * and only past the first second: a short checkpoint, a script's or a
 * log file's, sees nothing. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "progress.h"

#define FIRST_NS	1000000000ULL
/* (its own clock: log.c calls progress_clear(), and calls go one way) */
#define EVERY_NS	100000000ULL

struct progress {
	const char *what;
	uint64_t total, done;
	uint64_t start, last;	/* CLOCK_MONOTONIC ns, as log_now() */
	uint64_t first;		/* ns before the first line */
	uint64_t every;		/* ns between redraws */
	int width;		/* of the line drawn, 0: none */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void progress_begin(struct ckpt_log *log, unsigned long flags, const char *what,
		    uint64_t total)
{
	struct progress *p;

	if (!(flags & CKPT_PROGRESS) || log->fd < 0 || !isatty(log->fd) || log->progress)
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;		/* a nicety, not worth failing for */
	p->what = what;
	p->total = total;
	p->first = FIRST_NS;
	p->every = EVERY_NS;
#ifdef CKPT_TEST_HOOKS
	/* the tests draw it at once, and redraw it as often, however fast
	 * this machine is (256 MiB went out in under the 100 ms between
	 * two lines) */
	if (getenv("CKPT_TEST_PROGRESS_MS"))
		p->first = p->every = strtoull(getenv("CKPT_TEST_PROGRESS_MS"), NULL, 10) * 1000000;
#endif
	p->start = log->times.start ? log->times.start : now_ns();
	log->progress = p;
}

static double mib(uint64_t n)
{
	return n / 1048576.0;
}

static void draw(struct ckpt_log *log, struct progress *p, uint64_t now)
{
	double secs = (now - p->start) / 1e9, rate = p->done / secs;
	char line[160];
	int n;

	if (p->total > p->done && rate > 0)
		n = snprintf(line, sizeof(line), "\rckpt: %s %.1f of %.1f MiB, %.0f MiB/s, %.1f s left",
			     p->what, mib(p->done), mib(p->total), mib(rate),
			     (p->total - p->done) / rate);
	else
		n = snprintf(line, sizeof(line), "\rckpt: %s %.1f MiB, %.0f MiB/s",
			     p->what, mib(p->done), mib(rate));
	if (n <= 0 || (size_t)n >= sizeof(line))
		return;
	/* wipe what a longer line left */
	if (n < p->width && (size_t)p->width < sizeof(line) - 1) {
		memset(line + n, ' ', p->width - n);
		n = p->width;
	}
	if (write(log->fd, line, n) == n)
		p->width = n;
}

void progress_add(struct ckpt_log *log, uint64_t n)
{
	struct progress *p = log->progress;
	uint64_t now;

	if (!p)
		return;
	p->done += n;
	now = now_ns();
	if (now - p->start < p->first || now - p->last < p->every)
		return;
	p->last = now;
	draw(log, p, now);
}

void progress_clear(struct ckpt_log *log)
{
	struct progress *p = log->progress;
	static const char wipe[] = "\r\033[K";

	if (!p || !p->width)
		return;
	if (write(log->fd, wipe, sizeof(wipe) - 1) < 0)
		return;
	p->width = 0;
}

void progress_end(struct ckpt_log *log)
{
	progress_clear(log);
	free(log->progress);
	log->progress = NULL;
}

void progress_mem_split(pid_t pid, uint64_t *anon, uint64_t *shmem)
{
	char path[64], line[256];
	unsigned long long kb;
	FILE *f;

	*anon = *shmem = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %llu kB", &kb) == 1)
			*anon = kb * 1024;
		else if (sscanf(line, "RssShmem: %llu kB", &kb) == 1)
			*shmem = kb * 1024;
	fclose(f);
}

uint64_t progress_mem_of(pid_t pid)
{
	uint64_t anon, shmem;

	progress_mem_split(pid, &anon, &shmem);
	return anon + shmem;
}
