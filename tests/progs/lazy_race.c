/* lazy_race - a fault and a MADV_DONTNEED near it, read by the loader
 * together (restart --lazy).
 *
 *   lazy_race GOFILE [drop]
 *
 * 64 MiB of private memory, every page written.  After GOFILE one
 * thread touches page 0 (missing: the loader brings it and the pages
 * after it) while another, 5 ms later, drops pages 4-7 (MADV_DONTNEED:
 * they must read as zeros from then on).  The test build's loader,
 * told to wait before and after each read of its userfaultfd, reads
 * the fault and the drop together, and the drop is done before it
 * serves the fault: a loader that served the fault first brought the
 * dropped pages back with their old contents.  Then every page is
 * checked.
 *
 * With "drop": 0.5 s after GOFILE it drops all 64 MiB (MADV_DONTNEED)
 * and checks that every page reads as zeros: the test build's loader,
 * told to wait between taking a background step and copying it, has a
 * step of this memory under way then, and a loader that read the drop
 * meanwhile let that copy bring its pages back.
 */
#include "tp.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE	4096UL
#define NPAGES	(16384UL)	/* 64 MiB */

static volatile uint64_t *mem;

static uint64_t word(size_t pg)
{
	return pg * 0x9e3779b97f4a7c15ULL | 1;
}

static void *toucher(void *arg)
{
	(void)arg;
	tp_check(mem[0] == word(0), "page 0 is %#llx", (unsigned long long)mem[0]);
	return NULL;
}

static int drop_all(void)
{
	usleep(500000);
	if (madvise((void *)mem, NPAGES * PAGE, MADV_DONTNEED))
		return perror("madvise"), 2;
	for (size_t pg = 0; pg < NPAGES; pg++)
		if (mem[pg * (PAGE / 8)]) {
			tp_fail("page %zu is %#llx after the drop: brought back", pg,
				(unsigned long long)mem[pg * (PAGE / 8)]);
			break;
		}
	return tp_done();
}

int main(int argc, char **argv)
{
	pthread_t th;

	tp_init(argc, argv);
	mem = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED)
		return perror("mmap"), 2;
	for (size_t pg = 0; pg < NPAGES; pg++)
		mem[pg * (PAGE / 8)] = word(pg);
	tp_ready();
	tp_wait_go();
	if (argc > 2 && !strcmp(argv[2], "drop"))
		return drop_all();
	/* (what the toucher needs but page 0 is in before it runs: a
	 * fault of its on anything else would be read first) */
	tp_check(mem != NULL && tp_failures == 0, "no memory");
	if (pthread_create(&th, NULL, toucher, NULL))
		return perror("pthread_create"), 2;
	usleep(5000);
	if (madvise((void *)(mem + 4 * (PAGE / 8)), 4 * PAGE, MADV_DONTNEED))
		return perror("madvise"), 2;
	pthread_join(th, NULL);
	for (size_t pg = 0; pg < NPAGES; pg++) {
		uint64_t want = pg >= 4 && pg < 8 ? 0 : word(pg);

		if (mem[pg * (PAGE / 8)] != want) {
			tp_fail("page %zu is %#llx, not %#llx%s", pg,
				(unsigned long long)mem[pg * (PAGE / 8)], (unsigned long long)want,
				want ? "" : " (dropped before: brought back)");
			break;
		}
	}
	return tp_done();
}
