/* lazy_mem - a large private anonymous area whose every page it checks
 * itself after restart (restart --lazy: pages come on touch and from
 * the loader; a page missed or zeroed shows here).
 *
 *   lazy_mem GOFILE MIB [fork]
 *
 * Every page of the area holds words derived from its index, but one in
 * 16, never touched, which must read as zeros.  After GOFILE it checks
 * from the bottom up (the loader works from the top down, so the low
 * pages come on touch).  With "fork" it forks half-way: the child checks
 * the upper half too (its missing pages are its own to load), and the
 * parent the rest.
 */
#include "tp.h"

#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE 4096UL

static uint64_t word(size_t pg, size_t i)
{
	return (pg * 0x9e3779b97f4a7c15ULL) ^ (i * 0xbf58476d1ce4e5b9ULL) ^ 0x5a5a;
}

/* Pages [from, to) as written; the first bad one said. */
static int check(const uint64_t *mem, size_t from, size_t to, const char *who)
{
	for (size_t pg = from; pg < to; pg++) {
		const uint64_t *p = mem + pg * (PAGE / 8);

		for (size_t i = 0; i < PAGE / 8; i++)
			if (p[i] != (pg % 16 == 7 ? 0 : word(pg, i))) {
				tp_fail("%s: page %zu word %zu is %#llx", who, pg, i,
					(unsigned long long)p[i]);
				return 1;
			}
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t npages, half;
	uint64_t *mem;
	int status;
	pid_t child;

	tp_init(argc, argv);
	npages = (argc > 2 ? strtoul(argv[2], NULL, 0) : 64) * (1024 * 1024 / PAGE);
	mem = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return perror("mmap"), 2;
	for (size_t pg = 0; pg < npages; pg++)
		for (size_t i = 0; pg % 16 != 7 && i < PAGE / 8; i++)
			mem[pg * (PAGE / 8) + i] = word(pg, i);
	tp_ready();
	tp_wait_go();
	half = npages / 2;
	check(mem, 0, half / 2, "before fork");
	if (argc > 3 && !strcmp(argv[3], "fork")) {
		child = fork();
		if (child == 0)
			_exit(check(mem, half / 2, npages, "child"));
		check(mem, half / 2, npages, "parent");
		tp_check(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
			 WEXITSTATUS(status) == 0, "child: status %#x", status);
	} else {
		check(mem, half / 2, npages, "after");
	}
	return tp_done();
}
