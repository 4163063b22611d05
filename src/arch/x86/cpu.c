/* cpu.c - CPU facts for the image head. */
#include <cpuid.h>

#include "cpu.h"

uint64_t cpu_xfeatures(void)
{
	unsigned int a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return 3;	/* x87 and SSE only */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

uint32_t cpu_xstate_size(void)
{
	unsigned int a, b, c, d;

	/* ptrace's buffer is sized for every user feature (ecx of 0xd/0),
	 * which is also what PTRACE_GETREGSET fills */
	if (__get_cpuid_max(0, 0) < 0xd)
		return 512;
	__cpuid_count(0xd, 0, a, b, c, d);
	return c;
}
