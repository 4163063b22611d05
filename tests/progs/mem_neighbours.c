/* mem_neighbours - two adjacent private anonymous areas that the kernel
 * keeps apart (each its own anon_vma: moved there by mremap), the lower
 * one small and placed by userfaultfd, the upper one with a guard page
 * (so written to /proc/PID/mem): they stay two areas after a restart.
 * (A 2 MiB area beside them makes the userfaultfd worth making.) */
#define _GNU_SOURCE
#include "tp.h"

#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#define K 1024

static char *lo_, *hi_;

static int count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char l[512];
	int n = 0;

	while (f && fgets(l, sizeof(l), f)) {
		unsigned long a, b;

		if (sscanf(l, "%lx-%lx", &a, &b) == 2 && a >= (uintptr_t)lo_ && a < (uintptr_t)hi_) {
			n++;
			fputs(l, stdout);
		}
	}
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	char *big, *r, *a, *n;
	int before, after;

	tp_init(argc, argv);
	big = mmap(NULL, 2048 * K, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r = mmap(NULL, 256 * K, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a = mmap(NULL, 16 * K, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	n = mmap(NULL, 16 * K, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED || r == MAP_FAILED || a == MAP_FAILED || n == MAP_FAILED)
		return printf("FAIL: mmap\n"), 1;
	memset(big, 7, 2048 * K);
	memset(a, 1, 16 * K);
	memset(n, 2, 16 * K);
	if (mremap(a, 16 * K, 16 * K, MREMAP_MAYMOVE | MREMAP_FIXED, r) == MAP_FAILED ||
	    mremap(n, 16 * K, 16 * K, MREMAP_MAYMOVE | MREMAP_FIXED, r + 16 * K) == MAP_FAILED)
		return printf("FAIL: mremap\n"), 1;
	a = r;
	n = r + 16 * K;
	if (madvise(n + 8 * K, 4 * K, MADV_GUARD_INSTALL)) {
		tp_ready();
		tp_wait_go();
		return tp_done();	/* a kernel before 6.13 */
	}
	lo_ = r;
	hi_ = r + 256 * K;
	before = count();
	tp_ready();
	tp_wait_go();
	after = count();
	tp_check(after == before, "%d areas before, %d after", before, after);
	tp_check(a[100] == 1 && n[100] == 2 && big[5000] == 7, "content");
	return tp_done();
}
