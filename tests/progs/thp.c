/* thp.c - transparent huge pages as the areas asked for them: an area
 * with MADV_HUGEPAGE whose first touch of each 2 MiB block took a huge
 * page, and one with MADV_NOHUGEPAGE beside it.  After restart the first
 * has its huge pages again (restart gives an area its THP advice before
 * it writes the pages: after, each page would be a small one), and
 * every byte is as it was.  With THP "never", or no huge page to be had
 * before the checkpoint, there is nothing to check: it says so and
 * passes.
 */
#include "tp.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

#define MiB	(1024UL * 1024)
#define HUGE	(2 * MiB)
#define AREA	(8 * MiB)

/* AnonHugePages of the area at @start, in KiB; -1 if not found. */
static long anon_huge_kib(void *start)
{
	char want[32], line[512];
	bool in = false;
	long v = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	snprintf(want, sizeof(want), "%lx-", (unsigned long)start);
	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') > strchr(line, '-'))
			in = !strncmp(line, want, strlen(want));
		if (in && sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
			break;
	}
	if (f)
		fclose(f);
	return v;
}

static char *huge_aligned(int advice)
{
	char *p = mmap(NULL, AREA + HUGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + HUGE - 1) & ~(HUGE - 1));
	if (a > p)
		munmap(p, a - p);
	munmap(a + AREA, p + HUGE - a);
	madvise(a, AREA, advice);
	return a;
}

static void touch(char *a, unsigned char seed)
{
	for (size_t off = 0; off < AREA; off += HUGE)
		for (size_t i = 0; i < 64; i++)
			a[off + 4096 + i * 97] = (char)(seed + i + off / HUGE);
}

static bool same(const char *a, unsigned char seed)
{
	for (size_t off = 0; off < AREA; off++) {
		size_t in = off % HUGE, i = (in - 4096) / 97;
		char want = in >= 4096 && (in - 4096) % 97 == 0 && i < 64 ?
			    (char)(seed + i + off / HUGE) : 0;

		if (a[off] != want)
			return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	char *h, *n;
	long before, after;

	tp_init(argc, argv);
	h = huge_aligned(MADV_HUGEPAGE);
	n = huge_aligned(MADV_NOHUGEPAGE);
	if (!h || !n)
		return perror("mmap"), 2;
	touch(h, 1);
	touch(n, 2);
	before = anon_huge_kib(h);
	tp_ready();
	tp_wait_go();
	after = anon_huge_kib(h);
	if (before <= 0) {
		printf("note: no huge pages before the checkpoint (AnonHugePages %ld): nothing to compare\n",
		       before);
	} else {
		tp_check(after == before, "MADV_HUGEPAGE area: AnonHugePages %ld kB, was %ld kB",
			 after, before);
	}
	tp_check(anon_huge_kib(n) == 0, "MADV_NOHUGEPAGE area: AnonHugePages %ld kB",
		 anon_huge_kib(n));
	tp_check(same(h, 1) && same(n, 2), "content changed");
	return tp_done();
}
