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
	uint64_t xcr0 = cpu_xfeatures();
	unsigned int a, b, c, d;
	uint32_t size = 576;	/* legacy area and xsave header */

	/* ptrace's NT_X86_XSTATE holds every feature the kernel enabled in
	 * XCR0, AMX tiles too once any task may use them.  Neither ebx (this
	 * task's current size) nor ecx (what the CPU could support, which
	 * some hypervisors report beyond XCR0) of leaf 0xd says that; the
	 * enabled features' own offsets and sizes do. */
	if (__get_cpuid_max(0, 0) < 0xd)
		return 512;
	for (int i = 2; i < 63; i++) {
		if (!(xcr0 & (1ULL << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		if (a + b > size)
			size = a + b;
	}
	return size;
}

int cpu_xstate_component(int i, uint32_t *off, uint32_t *size)
{
	unsigned int a, b, c, d;

	if (i < 2 || i > 62 || __get_cpuid_max(0, 0) < 0xd)
		return -1;
	__cpuid_count(0xd, i, a, b, c, d);
	if (!a)
		return -1;
	*size = a;
	*off = b;
	return 0;
}
