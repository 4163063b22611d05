/* cpu.c - CPU facts for the image head. */
#include <cpuid.h>
#include <pthread.h>

#include "cpu.h"

/* Asked of the CPU once: every CPUID is a VM exit (5.6 us on this
 * project's KVM machines), and a checkpoint asked leaf 0xd twice per
 * component for every thread's guard frame (a JVM's 22 threads: about
 * 200 of them). */
static struct {
	uint64_t xcr0;
	uint32_t size;			/* cpu_xstate_size() */
	uint32_t off[64], len[64];	/* leaf 0xd's, 0: no such component */
} X;
static pthread_once_t X_once = PTHREAD_ONCE_INIT;

static void ask(void)
{
	unsigned int a, b, c, d, lo, hi;

	X.xcr0 = 3;	/* x87 and SSE only */
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE)) {
		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		X.xcr0 = ((uint64_t)hi << 32) | lo;
	}
	if (__get_cpuid_max(0, 0) < 0xd) {
		X.size = 512;
		return;
	}
	X.size = 576;	/* legacy area and xsave header */
	/* ptrace's NT_X86_XSTATE holds every feature the kernel enabled in
	 * XCR0, AMX tiles too once any task may use them.  Neither ebx
	 * (this task's current size) nor ecx (what the CPU could support,
	 * which some hypervisors report beyond XCR0) of leaf 0xd says that;
	 * the enabled features' own offsets and sizes do.  A task's XSAVE
	 * image holds no other component. */
	for (int i = 2; i < 63; i++) {
		if (!(X.xcr0 & (1ULL << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		X.len[i] = a;
		X.off[i] = b;
		if (a + b > X.size)
			X.size = a + b;
	}
}

uint64_t cpu_xfeatures(void)
{
	pthread_once(&X_once, ask);
	return X.xcr0;
}

uint32_t cpu_xstate_size(void)
{
	pthread_once(&X_once, ask);
	return X.size;
}

int cpu_xstate_component(int i, uint32_t *off, uint32_t *size)
{
	pthread_once(&X_once, ask);
	if (i < 2 || i > 62 || !X.len[i])
		return -1;
	*size = X.len[i];
	*off = X.off[i];
	return 0;
}
