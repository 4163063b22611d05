/* dirtier - a process whose memory changes between checkpoints, and
 * which checks at the end that every page holds what it last wrote
 * there (incremental checkpoints: tests/cases/incr.sh, bench/migrate.sh).
 *
 * dirtier DIR MIB [RATE]: MIB MiB of pages, each filled from its index
 * and its generation (gen[], itself in memory).  Then, until DIR/go
 * exists: for each DIR/stepN (N = 1, 2, ...) as it appears, step N is
 * done and "DONE N" printed; with RATE, RATE MiB/s of random pages are
 * rewritten all along.  At DIR/go every page is checked: "PASS", or
 * "FAIL: ..." lines.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE	4096UL

struct area {
	uint64_t *mem;
	uint32_t *gen;		/* 0: never written (zero) */
	size_t pages;
};

static struct area main_a, new_a;

static uint64_t word(size_t p, uint32_t gen)
{
	return gen ? (p + 1) * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)gen << 40) : 0;
}

static void put(struct area *a, size_t p, uint32_t gen)
{
	uint64_t w = word(p, gen), *pg = a->mem + p * (PAGE / 8);

	a->gen[p] = gen;
	for (size_t i = 0; i < PAGE / 8; i++)
		pg[i] = w + i;
}

static int check(const struct area *a, const char *name)
{
	int bad = 0;

	for (size_t p = 0; p < a->pages; p++) {
		uint64_t w = word(p, a->gen[p]), *pg = a->mem + p * (PAGE / 8);

		for (size_t i = 0; i < PAGE / 8; i++)
			if (pg[i] != (a->gen[p] ? w + i : 0)) {
				if (bad++ < 5)
					printf("FAIL: %s page %zu word %zu: %#llx, want generation %u\n",
					       name, p, i, (unsigned long long)pg[i], a->gen[p]);
				break;
			}
	}
	return bad;
}

static int make(struct area *a, size_t pages)
{
	a->pages = pages;
	a->mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a->gen = calloc(pages, sizeof(*a->gen));
	if (a->mem == MAP_FAILED || !a->gen)
		return -1;
	for (size_t p = 0; p < pages; p++)
		put(a, p, 1);
	return 0;
}

static void step(int n)
{
	switch (n) {
	case 1:
		for (size_t p = 1; p < main_a.pages; p += 7)
			put(&main_a, p, main_a.gen[p] + 1);
		break;
	case 2:	/* a new area, and pages dropped */
		if (make(&new_a, 256))
			printf("FAIL: mmap\n");
		for (size_t p = 2; p < main_a.pages; p += 5)
			put(&main_a, p, main_a.gen[p] + 1);
		for (size_t p = 3; p < main_a.pages; p += 11) {
			madvise(main_a.mem + p * (PAGE / 8), PAGE, MADV_DONTNEED);
			main_a.gen[p] = 0;
		}
		break;
	default:
		for (size_t p = n % 3; p < main_a.pages; p += 3)
			put(&main_a, p, main_a.gen[p] + 1);
		for (size_t p = 0; p < new_a.pages; p += 2)
			put(&new_a, p, new_a.gen[p] + 1);
		break;
	}
}

static int exists(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	double rate = argc > 3 ? atof(argv[3]) : 0, owed = 0;
	int next = 1, bad;
	char name[32];

	if (argc < 3) {
		fprintf(stderr, "usage: dirtier DIR MIB [RATE]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	if (make(&main_a, strtoul(argv[2], NULL, 0) * 256)) {
		printf("FAIL: mmap\n");
		return 1;
	}
	printf("READY %d\n", getpid());
	srandom(getpid());
	while (!exists(argv[1], "go")) {
		snprintf(name, sizeof(name), "step%d", next);
		if (exists(argv[1], name)) {
			step(next);
			printf("DONE %d\n", next++);
		}
		/* 10 ms a tick: RATE MiB/s is RATE * 256 / 100 pages a tick */
		for (owed += rate * 2.56; owed >= 1; owed--) {
			size_t p = (size_t)random() % main_a.pages;

			put(&main_a, p, main_a.gen[p] + 1);
		}
		nanosleep(&tick, NULL);
	}
	bad = check(&main_a, "area") + (new_a.pages ? check(&new_a, "new area") : 0);
	if (bad)
		return 1;
	printf("PASS\n");
	return 0;
}
