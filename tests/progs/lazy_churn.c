/* lazy_churn - memory that keeps moving while a lazy restart loads it:
 * every copy the loader makes must land where the page is now, never
 * where it was (restart --lazy, src/lazy_fill.c's map lock).
 *
 *   lazy_churn GOFILE [MIB]
 *
 * AREAS areas of MIB/AREAS each, every page tagged with its area and
 * index.  From READY on, and without waiting, it loops: moves an area to
 * its other slot (mremap), drops a run of its pages (MADV_DONTNEED: they
 * must read as zeros, then are written again), forks a child that checks
 * an area whole, and checks pages here and there.  The checkpoint meets
 * it anywhere in that loop; after restart it goes on at once, while the
 * loader still fills, so its moves race the loader's copies.  Once
 * GOFILE exists it checks everything, says PASS and ends.
 */
#include "tp.h"

#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE	4096UL
#define AREAS	8

struct area {
	uint64_t *at;		/* one of its two slots */
	uint64_t *slot[2];
};

static size_t npages;		/* of an area */
static uint64_t rnd = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

static uint64_t tag(int a, size_t pg, size_t i)
{
	return ((uint64_t)(a + 1) << 56) ^ ((uint64_t)pg * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)i << 40) ^ 0x77;
}

static void write_pages(struct area *ar, int a, size_t from, size_t to)
{
	for (size_t pg = from; pg < to; pg++)
		for (size_t i = 0; i < 4; i++)	/* the first words, and the last */
			ar->at[pg * (PAGE / 8) + i] = ar->at[pg * (PAGE / 8) + PAGE / 8 - 1 - i] =
				tag(a, pg, i);
}

static int check_pages(const struct area *ar, int a, size_t from, size_t to, const char *why)
{
	for (size_t pg = from; pg < to; pg++)
		for (size_t i = 0; i < 4; i++) {
			uint64_t v = ar->at[pg * (PAGE / 8) + i];
			uint64_t w = ar->at[pg * (PAGE / 8) + PAGE / 8 - 1 - i];

			if (v != tag(a, pg, i) || w != tag(a, pg, i)) {
				tp_fail("%s: area %d page %zu word %zu is %#llx / %#llx, not %#llx",
					why, a, pg, i, (unsigned long long)v,
					(unsigned long long)w, (unsigned long long)tag(a, pg, i));
				return 1;
			}
		}
	return 0;
}

/* Area @a to its other slot, which a reservation (PROT_NONE) held. */
static void move(struct area *ar)
{
	uint64_t *to = ar->at == ar->slot[0] ? ar->slot[1] : ar->slot[0];
	void *p = mremap(ar->at, npages * PAGE, npages * PAGE,
			 MREMAP_MAYMOVE | MREMAP_FIXED, to);

	if (p != to) {
		tp_fail("mremap: %s", strerror(errno));
		exit(2);
	}
	/* the old slot held again, so that nothing else is mapped there */
	if (mmap(ar->at, npages * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED)
		exit(2);
	ar->at = to;
}

/* A run of area @a's pages dropped: zeros until written again. */
static int drop(struct area *ar, int a)
{
	size_t n = 1 + next_rand() % 64, from = next_rand() % (npages - n);

	if (madvise(ar->at + from * (PAGE / 8), n * PAGE, MADV_DONTNEED))
		exit(2);
	for (size_t pg = from; pg < from + n; pg++)
		for (size_t i = 0; i < PAGE / 8; i += 511)
			if (ar->at[pg * (PAGE / 8) + i]) {
				tp_fail("area %d page %zu: not zero after MADV_DONTNEED (%#llx)",
					a, pg, (unsigned long long)ar->at[pg * (PAGE / 8) + i]);
				return 1;
			}
	write_pages(ar, a, from, from + n);
	return 0;
}

static int fork_check(const struct area *ar, int a)
{
	int status;
	pid_t child = fork();

	if (child < 0)
		exit(2);
	if (!child)
		_exit(check_pages(ar, a, 0, npages, "forked child"));
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		tp_fail("the child checking area %d failed", a);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct area ar[AREAS];
	uint64_t *base;
	int bad = 0;

	tp_init(argc, argv);
	npages = (argc > 2 ? strtoul(argv[2], NULL, 0) : 128) * (1024 * 1024 / PAGE) / AREAS;
	base = mmap(NULL, 2 * AREAS * npages * PAGE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return perror("mmap"), 2;
	for (int a = 0; a < AREAS; a++) {
		ar[a].slot[0] = base + 2 * a * npages * (PAGE / 8);
		ar[a].slot[1] = ar[a].slot[0] + npages * (PAGE / 8);
		ar[a].at = mmap(ar[a].slot[0], npages * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (ar[a].at != ar[a].slot[0])
			return perror("mmap"), 2;
		write_pages(&ar[a], a, 0, npages);
	}
	tp_ready();
	while (!bad && access(tp_gofile, F_OK) != 0) {
		int a = next_rand() % AREAS;
		size_t from = next_rand() % (npages - 16);

		switch (next_rand() % 8) {
		case 0:
			move(&ar[a]);
			break;
		case 1:
			bad = drop(&ar[a], a);
			break;
		case 2:
			if (next_rand() % 16 == 0)
				bad = fork_check(&ar[a], a);
			break;
		default:
			bad = check_pages(&ar[a], a, from, from + 16, "checking");
		}
	}
	for (int a = 0; a < AREAS && !bad; a++)
		bad = check_pages(&ar[a], a, 0, npages, "at the end");
	return tp_done();
}
