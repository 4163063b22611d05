/* mem_areas - many small areas, as a JVM or a python has: 400 areas
 * of 32 KiB (12.5 MiB in all, enough for the checkpoint's page stream
 * to read ahead across areas on a second thread), read-only and
 * writable in turn so that none merge, some sparse, some PROT_NONE;
 * and a child forked after they were filled, so that some pages are
 * still copy-on-write shared (read another way) between pages that are
 * not.  After the restart both check every page, and the parent that
 * its areas are where they were.
 */
#include "tp.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define AREAS		400
#define AREA_PAGES	8

static size_t page;
static char *area[AREAS];

static bool sparse(int i)
{
	return i % 7 == 3;
}

/* The parent writes these again after the fork: its own copies. */
static bool rewritten(int i)
{
	return i % 5 == 1;
}

static bool touched(int i, int p)
{
	return !sparse(i) || p % 2 == 0;
}

static uint64_t word(int i, int p, size_t w, int gen)
{
	uint64_t x = ((uint64_t)i << 40) ^ ((uint64_t)p << 24) ^ w ^
		     ((uint64_t)gen << 60);

	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static int prot(int i)
{
	if (i % 11 == 6)
		return PROT_NONE;
	return i % 2 ? PROT_READ : PROT_READ | PROT_WRITE;
}

static void fill(int i, int gen)
{
	for (int p = 0; p < AREA_PAGES; p++) {
		uint64_t *w = (uint64_t *)(area[i] + p * page);

		if (touched(i, p))
			for (size_t k = 0; k < page / 8; k++)
				w[k] = word(i, p, k, gen);
	}
}

/* The pages as they should be; a sparse area's holes read as zero. */
static int check(int gen_rewritten)
{
	int bad = 0;

	for (int i = 0; i < AREAS; i++) {
		int gen = rewritten(i) ? gen_rewritten : 0;

		if (prot(i) == PROT_NONE)
			mprotect(area[i], AREA_PAGES * page, PROT_READ);
		for (int p = 0; p < AREA_PAGES; p++) {
			const uint64_t *w = (const uint64_t *)(area[i] + p * page);

			for (size_t k = 0; k < page / 8; k++)
				if (w[k] != (touched(i, p) ? word(i, p, k, gen) : 0)) {
					if (bad++ < 5)
						printf("area %d page %d word %zu: %llx\n", i, p, k,
						       (unsigned long long)w[k]);
					break;
				}
		}
		if (prot(i) == PROT_NONE)
			mprotect(area[i], AREA_PAGES * page, PROT_NONE);
	}
	return bad;
}

/* Not [vsyscall]: a restored 32-bit process shows it (docs/design.md,
 * "32-bit processes"). */
static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strstr(line, "[vsyscall]");
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	int maps_before, status = 0;
	pid_t kid;

	tp_init(argc, argv);
	page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < AREAS; i++) {
		area[i] = mmap(NULL, AREA_PAGES * page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area[i] == MAP_FAILED) {
			perror("mmap");
			return 2;
		}
		fill(i, 0);
	}
	kid = fork();
	if (kid == 0) {
		tp_wait_go();
		_exit(check(0) ? 1 : 0);
	}
	for (int i = 0; i < AREAS; i++) {
		if (rewritten(i))
			fill(i, 1);
		if (mprotect(area[i], AREA_PAGES * page, prot(i))) {
			perror("mprotect");
			return 2;
		}
	}
	maps_before = count_maps();
	tp_ready();
	tp_wait_go();
	tp_check(count_maps() == maps_before, "%d areas before, %d after",
		 maps_before, count_maps());
	tp_check(!check(1), "the parent's pages differ");
	tp_check(waitpid(kid, &status, 0) == kid && WIFEXITED(status) &&
		 WEXITSTATUS(status) == 0, "the child's pages differ (status %#x)",
		 status);
	return tp_done();
}
