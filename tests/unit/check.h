/* check.h - what the unit tests share: CHECK(cond, fmt, ...) counts a
 * check, and prints the failing ones with where they are. */
#ifndef CKPT_UNIT_CHECK_H
#define CKPT_UNIT_CHECK_H

#include <stdio.h>

static int checks, failures;

#define CHECK(cond, ...) do { \
	checks++; \
	if (!(cond)) { \
		failures++; \
		printf("unit FAIL %s:%d: ", __FILE__, __LINE__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
	} \
} while (0)

#endif
