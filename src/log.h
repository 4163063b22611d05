/* log.h - messages with context, reported once (the seeds' ckpt_msg). */
#ifndef CKPT_LOG_H
#define CKPT_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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
};

/* Log an error (once: the first one is kept in l->msg) and return -err.
 * A message ending in ':' gets strerror(err) appended. */
int log_err(struct ckpt_log *l, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void log_info(struct ckpt_log *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_warn(struct ckpt_log *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
