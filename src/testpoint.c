/* testpoint.c - where the test build dies on request (testpoint.h). */
#ifdef CKPT_TEST_HOOKS
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "testpoint.h"


/* "K:NAME": K, and whether NAME is @name */
static unsigned long fail_at(const char *name)
{
	const char *at = getenv("CKPT_TEST_FAIL_AT");
	char *colon = NULL;
	unsigned long k = at ? strtoul(at, &colon, 10) : 0;

	return colon && *colon == ':' && !strcmp(colon + 1, name) ? k : 0;
}

int test_fail_point(struct ckpt_log *l, const char *name, int ret)
{
	unsigned long k = fail_at(name);
	unsigned int n = k ? ++l->test_fails : 0;	/* passings of that name */

	test_point(l, name);
	if (getenv("CKPT_TEST_POINTS")) {
		char line[128];
		int len = snprintf(line, sizeof(line), "failpoint %u %s\n", l->test_points, name);

		if (write(STDERR_FILENO, line, len) < 0)
			return ret;
	}
	if (ret || !k || n != k)
		return ret;
	return log_err(l, EIO, "test: failure injected at %lu:%s", k, name);
}

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
