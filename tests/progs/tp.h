/* tp.h - the test-program side of the ckpt test protocol.
 *
 * A test program is started as `PROG GOFILE` with stdout and stderr on a
 * regular file.  It sets up the state it tests, calls tp_ready() (prints
 * READY), and waits in tp_wait_go() until GOFILE exists.  Meanwhile the
 * runner checkpoints it with --kill and restarts it from the image.  Then
 * the program checks every piece of its state and reports through
 * tp_check()/tp_done(): "PASS" and exit 0, or "FAIL: why" lines and exit 1.
 */
#ifndef TP_H
#define TP_H
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *tp_gofile;
static int tp_failures;

static inline void tp_init(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s GOFILE\n", argv[0]);
		exit(2);
	}
	tp_gofile = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);
}

static inline void tp_ready(void)
{
	printf("READY %d\n", getpid());
}

/* Polls with nanosleep so that the checkpoint usually meets the program
 * inside a system call, which restart must re-arm correctly. */
static inline void tp_wait_go(void)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	while (access(tp_gofile, F_OK) != 0)
		nanosleep(&ts, NULL);
}

static inline void tp_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	tp_failures++;
}

#define tp_check(cond, ...) do { if (!(cond)) tp_fail(__VA_ARGS__); } while (0)

static inline int tp_done(void)
{
	if (tp_failures)
		return 1;
	printf("PASS\n");
	return 0;
}
#endif
