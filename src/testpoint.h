/* testpoint.h - named points in a checkpoint where the test build can be
 * made to die, so that the tests reach every step of it, not only those
 * that timing happens to hit.
 *
 * In the test build (CKPT_TEST_HOOKS) the environment decides:
 *   CKPT_TEST_KILL_AT=N       SIGKILL ckpt at the N-th point passed (1-based)
 *   CKPT_TEST_KILL_SIG=S      ... with signal S instead (2: as a ^C)
 *   CKPT_TEST_FAIL_AT=K:NAME  make the K-th passing of the point NAME fail
 *                             (EIO), if it is one that can: ckpt goes on as
 *                             after any error (by name: the count of all
 *                             points varies from run to run with retries)
 *   CKPT_TEST_POINTS=1        list each point passed on stderr ("testpoint
 *                             N NAME"; also "failpoint N NAME" for one that
 *                             can fail: its K is how many lines of NAME
 *                             came so far)
 * The release build has no such points. */
#ifndef CKPT_TESTPOINT_H
#define CKPT_TESTPOINT_H

#include "log.h"

#ifdef CKPT_TEST_HOOKS
void test_point(struct ckpt_log *l, const char *name);
/* A point that can fail: @ret if it is an error, else 0 or the injected
 * failure (-EIO, logged). */
int test_fail_point(struct ckpt_log *l, const char *name, int ret);
#else
static inline void test_point(struct ckpt_log *l, const char *name)
{
	(void)l;
	(void)name;
}

static inline int test_fail_point(struct ckpt_log *l, const char *name, int ret)
{
	(void)l;
	(void)name;
	return ret;
}
#endif

#endif
