/* log.h - messages with context, reported once (the seeds' ckpt_msg). */
#ifndef CKPT_LOG_H
#define CKPT_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Where the time of a checkpoint or a restart goes, shown with -v
 * (timing.c).  The first phases are disjoint steps; LP_REMOTE and those
 * after it are counted inside the steps too (a remote call made while
 * saving a kind is part of that kind's time). */
enum log_phase {
	LP_SEIZE,	/* finding and holding the tree (ptrace seize, stops) */
	LP_PREP,	/* checkpoint: syscall instruction, guard frames, scratch */
	LP_KINDS,	/* every kind's dump or restore (per kind: kind_ns) */
	LP_FSYNC,	/* the image made durable */
	LP_KILL,	/* killing the tree, waiting for its deaths */
	LP_RELEASE,	/* letting the tree go */
	LP_READ,	/* restart: reading and checking the image */
	LP_PIDWAIT,	/* restart: waiting for the image's pids to be free */
	LP_PUPPET,	/* restart: making the root puppet and the tree */
	LP_THREADS,	/* restart: cloning the threads */
	LP_REMOTE,	/* remote system calls (count) */
	LP_PROC,	/* /proc reads of maps and smaps (count) */
	LP_PAGES,	/* memory pages copied: count of areas, bytes in bytes */
	LP_NR
};

#define LOG_MAX_KINDS 32

struct log_times {
	uint64_t start;			/* CLOCK_MONOTONIC ns at the start */
	uint64_t ns[LP_NR];
	uint32_t n[LP_NR];
	uint64_t bytes;			/* of LP_PAGES */
	uint32_t batches, batched;	/* of LP_REMOTE: stops made by the
					 * batch runner, calls made in them */
	uint64_t kind_ns[LOG_MAX_KINDS];	/* LP_KINDS, per kind index */
};

struct progress;

struct ckpt_log {
	int fd;			/* where messages go, -1 for nowhere */
	bool verbose;		/* also log progress, not only errors */
	pid_t pid;		/* task being worked on, for context */
	pid_t container;	/* a container's engine: its init's host pid */
	const uint64_t *pos;	/* stream position, for context */
	int err;		/* first error, positive errno */
	char msg[512];		/* first error message */
	unsigned int test_points;	/* passed so far (testpoint.h) */
	unsigned int test_fails;	/* CKPT_TEST_FAIL_AT's name passed so far */
	struct log_times times;	/* timing.c */
	struct progress *progress;	/* the line drawn (progress.c), or NULL */
};

/* Log an error (once: the first one is kept in l->msg) and return -err.
 * A message ending in ':' gets strerror(err) appended. */
int log_err(struct ckpt_log *l, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void log_info(struct ckpt_log *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_warn(struct ckpt_log *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* CLOCK_MONOTONIC in ns: cheap (vdso), so timings are always taken and
 * only shown with -v. */
uint64_t log_now(void);
/* Time since @t0 (log_now()) goes to phase @ph, counted once. */
static inline void log_took(struct ckpt_log *l, enum log_phase ph, uint64_t t0)
{
	l->times.ns[ph] += log_now() - t0;
	l->times.n[ph]++;
}

/* @e, an expression, timed as phase @ph: ret = LOG_TIMED(l, LP_X, f()); */
/* The same for the kind of index @k: its own time, and LP_KINDS. */
static inline void log_kind_took(struct ckpt_log *l, int k, uint64_t t0)
{
	uint64_t d = log_now() - t0;

	if (k >= 0 && k < LOG_MAX_KINDS)
		l->times.kind_ns[k] += d;
	l->times.ns[LP_KINDS] += d;
	l->times.n[LP_KINDS]++;
}

#define LOG_TIMED(l, ph, e) ({ uint64_t t0_ = log_now(); \
	__typeof__(e) r_ = (e); log_took((l), (ph), t0_); r_; })

#endif
