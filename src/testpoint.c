/* testpoint.c - where the test build dies on request (testpoint.h). */
#ifdef CKPT_TEST_HOOKS
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testpoint.h"

void test_point(struct ckpt_log *l, const char *name)
{
	const char *at = getenv("CKPT_TEST_KILL_AT");
	unsigned int n = ++l->test_points;
	char line[128];
	int len, sig;

	if (getenv("CKPT_TEST_POINTS")) {
		len = snprintf(line, sizeof(line), "testpoint %u %s\n", n, name);
		if (write(STDERR_FILENO, line, len) < 0)
			return;
	}
	if (!at)
		return;
	if (strtoul(at, NULL, 10) != n)
		return;
	sig = getenv("CKPT_TEST_KILL_SIG") ? atoi(getenv("CKPT_TEST_KILL_SIG")) : SIGKILL;
	len = snprintf(line, sizeof(line), "ckpt: test: killed at point %u (%s)\n",
		       n, name);
	if (write(STDERR_FILENO, line, len) < 0)
		return;
	/* another signal (SIGINT...) is taken as ckpt takes it */
	raise(sig > 0 && sig < NSIG ? sig : SIGKILL);
}
#endif
