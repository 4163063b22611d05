/* membuf.c - ckpt's own big buffers (page copies, image writes and
 * placing), made in huge pages and populated when made.
 *
 * Every ckpt command is a fresh process, so each of its buffers is
 * fresh memory, and its first touch faults once a page: on a VM, twice
 * (the guest's fault, then the host's for its shadow or nested tables).
 * On a machine with shadow page tables (bench/README.md, session 24),
 * 4 MiB of 4 KiB pages touched one by one cost 10-14 ms; populated
 * first (MADV_POPULATE_WRITE) 5.2 ms, the host's faults left; in two
 * transparent huge pages 0.26-0.37 ms, a python's checkpoint 5 ms less.
 * So a buffer of a MiB or more is rounded up to whole 2 MiB pages and
 * aligned to them; where the kernel gives no huge page (THP off, no
 * free huge page) it still gets populated 4 KiB pages. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>

#include "membuf.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define HUGE		(2ULL << 20)
#define HUGE_MIN	(1ULL << 20)	/* less is not worth a huge page */

static size_t map_len(size_t len)
{
	return len >= HUGE_MIN ? (len + HUGE - 1) & ~(HUGE - 1) : len;
}

void *membuf_get(size_t len)
{
	size_t n = map_len(len), extra = n >= HUGE ? HUGE : 0;
	char *p = mmap(NULL, n + extra, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	if (extra) {	/* trimmed to a huge page boundary */
		a = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
		if (a > (uintptr_t)p)
			munmap(p, a - (uintptr_t)p);
		if (a + n < (uintptr_t)p + n + extra)
			munmap((char *)a + n, (uintptr_t)p + n + extra - (a + n));
		p = (char *)a;
		madvise(p, n, MADV_HUGEPAGE);
	}
	/* not there (an older kernel, no memory now): faulted as before */
	madvise(p, n, MADV_POPULATE_WRITE);
	return p;
}

void membuf_put(void *p, size_t len)
{
	if (p)
		munmap(p, map_len(len));
}
