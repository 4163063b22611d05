/* lazy_shm - shared anonymous memory (MAP_SHARED | MAP_ANONYMOUS) whose
 * every page it checks itself after restart --lazy, which leaves the
 * object of one process to the loader (its pages come in as touched),
 * and what madvise(), fork() and a second map then do to it.
 *
 *   lazy_shm GOFILE MIB [advise|fork|twice|punch|orphan|tree]
 *
 * Every page holds words derived from its index, but one in 16, never
 * touched, which must read as zeros.  After GOFILE it first says how many
 * of the area's pages its own page tables map ("mapped N of M", from
 * RssShmem: a page the loader brought but the process has not touched
 * is in the object, not mapped), then checks them from the bottom up.
 * "advise": before the check it drops the view of its first eighth
 * (MADV_DONTNEED: the data stays) and frees the second (MADV_REMOVE:
 * zeros from then on).  "fork": it forks first; the child writes a word
 * into the last page and checks the upper half, the parent the lower
 * half, then sees the child's word.  "twice": the object is mapped a
 * second time (mremap of size 0: the same pages); both views are
 * checked.  "punch": the third eighth freed (MADV_REMOVE) and a word
 * written into each of its pages, which then hold that word and zeros.
 * "orphan": it forks and exits at once, the child checks it all.
 * "tree": it forks before the checkpoint (the object is two processes'),
 * then as "fork".
 */
#include "tp.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE 4096UL
#define MARK 0x5eed5eed5eed5eedULL

static uint64_t word(size_t pg, size_t i)
{
	return (pg * 0x9e3779b97f4a7c15ULL) ^ (i * 0xbf58476d1ce4e5b9ULL) ^ 0xa5a5;
}

/* Pages [from, to): written ones as written (@zero_to: those below it
 * read as zeros); the first bad one said. */
static int check(const uint64_t *mem, size_t from, size_t to, size_t zero_from,
		 size_t zero_to, const char *who)
{
	for (size_t pg = from; pg < to; pg++) {
		const uint64_t *p = mem + pg * (PAGE / 8);
		bool zero = pg % 16 == 7 || (pg >= zero_from && pg < zero_to);

		for (size_t i = 0; i < PAGE / 8; i++)
			if (p[i] != (zero ? 0 : word(pg, i))) {
				tp_fail("%s: page %zu word %zu is %#llx", who, pg, i,
					(unsigned long long)p[i]);
				return 1;
			}
	}
	return 0;
}

/* Pages of shared memory this process maps (its RssShmem). */
static size_t mapped(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssShmem: %zu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb / (PAGE / 1024);
}

/* Both halves, the child's word seen by the parent. */
static int halves(uint64_t *mem, size_t npages, pid_t child)
{
	int status = 0;

	if (child == 0) {
		int bad;

		mem[(npages - 1) * (PAGE / 8)] = MARK;
		bad = check(mem, npages / 2, npages - 1, 0, 0, "child");
		fflush(stdout);
		_exit(bad);
	}
	check(mem, 0, npages / 2, 0, 0, "parent");
	tp_check(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		 WEXITSTATUS(status) == 0, "child: status %#x", status);
	tp_check(mem[(npages - 1) * (PAGE / 8)] == MARK, "the child's word is not seen");
	return tp_done();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "";
	size_t npages, e;
	uint64_t *mem, *view = NULL;
	pid_t child = -1;

	tp_init(argc, argv);
	npages = (argc > 2 ? strtoul(argv[2], NULL, 0) : 32) * (1024 * 1024 / PAGE);
	e = npages / 8;
	mem = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return perror("mmap"), 2;
	for (size_t pg = 0; pg < npages; pg++)
		for (size_t i = 0; pg % 16 != 7 && i < PAGE / 8; i++)
			mem[pg * (PAGE / 8) + i] = word(pg, i);
	if (!strcmp(mode, "twice")) {
		view = mremap(mem, 0, npages * PAGE, MREMAP_MAYMOVE);
		if (view == MAP_FAILED)
			return perror("mremap"), 2;
	}
	if (!strcmp(mode, "tree") && (child = fork()) == 0) {
		tp_wait_go();
		halves(mem, npages, 0);
	}
	tp_ready();
	tp_wait_go();
	printf("mapped %zu of %zu\n", mapped(), npages);
	fflush(stdout);
	if (!strcmp(mode, "advise")) {
		tp_check(!madvise(mem, e * PAGE, MADV_DONTNEED), "MADV_DONTNEED: %m");
		tp_check(!madvise(mem + e * (PAGE / 8), e * PAGE, MADV_REMOVE),
			 "MADV_REMOVE: %m");
		check(mem, 0, npages, e, 2 * e, "after madvise");
		return tp_done();
	}
	if (!strcmp(mode, "punch")) {
		uint64_t *p = mem + 2 * e * (PAGE / 8);

		tp_check(!madvise(p, e * PAGE, MADV_REMOVE), "MADV_REMOVE: %m");
		for (size_t pg = 0; pg < e; pg++)
			p[pg * (PAGE / 8) + 1] = MARK;
		for (size_t pg = 0; pg < e; pg++)
			for (size_t i = 0; i < PAGE / 8; i++)
				if (p[pg * (PAGE / 8) + i] != (i == 1 ? MARK : 0)) {
					tp_fail("punched page %zu word %zu is %#llx", 2 * e + pg, i,
						(unsigned long long)p[pg * (PAGE / 8) + i]);
					return tp_done();
				}
		check(mem, 0, 2 * e, 0, 0, "below the punched pages");
		check(mem, 3 * e, npages, 0, 0, "above the punched pages");
		return tp_done();
	}
	if (!strcmp(mode, "orphan")) {
		if (fork())
			_exit(0);
		check(mem, 0, npages, 0, 0, "the orphan");
		return tp_done();
	}
	if (!strcmp(mode, "fork"))
		return halves(mem, npages, fork());
	if (!strcmp(mode, "tree"))
		return halves(mem, npages, child);
	check(mem, 0, npages, 0, 0, "first view");
	if (view)
		check(view, 0, npages, 0, 0, "second view");
	return tp_done();
}
