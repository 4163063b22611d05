/* testpoint.h - named points in a checkpoint where the test build can be
 * made to die, so that the tests reach every step of it, not only those
 * that timing happens to hit.
 *
 * In the test build (CKPT_TEST_HOOKS) the environment decides:
 *   CKPT_TEST_KILL_AT=N       SIGKILL ckpt at the N-th point passed (1-based)
 *   CKPT_TEST_KILL_SIG=S      ... with signal S instead (2: as a ^C)
 *   CKPT_TEST_POINTS=1        list each point passed on stderr
 * The release build has no such points. */
#ifndef CKPT_TESTPOINT_H
#define CKPT_TESTPOINT_H

#include "log.h"

#ifdef CKPT_TEST_HOOKS
void test_point(struct ckpt_log *l, const char *name);
#else
static inline void test_point(struct ckpt_log *l, const char *name)
{
	(void)l;
	(void)name;
}
#endif

#endif
