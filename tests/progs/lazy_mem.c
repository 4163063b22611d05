/* lazy_mem - a large private anonymous area whose every page it checks
 * itself after restart (restart --lazy: pages come on touch and from
 * the loader; a page missed or zeroed shows here).
 *
 *   lazy_mem GOFILE MIB [fork|tree|split|rand]
 *
 * Every page of the area holds words derived from its index, but one in
 * 16, never touched, which must read as zeros.  After GOFILE it checks
 * from the bottom up (the loader works from the top down, so the low
 * pages come on touch).  With "fork" it forks half-way: the child checks
 * the upper half too (its missing pages are its own to load), and the
 * parent the rest.  With "split" it makes a page of every MiB read-only
 * after GOFILE, so that the area is many areas before the loader is
 * done.  With "tree" it forks before READY: the image holds
 * both.  The child shares the lower three quarters with its parent
 * (copy-on-write), has written its own upper quarter, and has an area
 * of its own of MIB/4; each checks its memory after GOFILE.  With
 * "rand" it checks its pages in a scattered order (a stride of 7919),
 * touching pages far ahead of where the loader is.
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

/* The child's own pages: its quarter of the shared area, and its own
 * area; the first bad one said. */
static uint64_t own_word(size_t pg, size_t i)
{
	return ~word(pg, i);
}

static int check_own(const uint64_t *mem, size_t from, size_t to, const char *who)
{
	for (size_t pg = from; pg < to; pg++)
		for (size_t i = 0; i < PAGE / 8; i++)
			if (mem[pg * (PAGE / 8) + i] != own_word(pg, i)) {
				tp_fail("%s: page %zu word %zu is %#llx", who, pg, i,
					(unsigned long long)mem[pg * (PAGE / 8) + i]);
				return 1;
			}
	return 0;
}

/* "tree": a child that keeps most of @mem shared with us, writes its
 * upper quarter, maps an area of its own, and checks all of it after
 * GOFILE.  Returns once the child is ready. */
static pid_t tree_child(uint64_t *mem, size_t npages)
{
	size_t q = npages / 4;
	char c;
	int fds[2];
	pid_t child;

	if (pipe(fds))
		exit(2);
	child = fork();
	if (child) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			exit(2);
		close(fds[0]);
		return child;
	}
	close(fds[0]);
	uint64_t *own = mmap(NULL, q * PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (own == MAP_FAILED)
		_exit(2);
	for (size_t pg = npages - q; pg < npages; pg++)
		for (size_t i = 0; i < PAGE / 8; i++)
			mem[pg * (PAGE / 8) + i] = own_word(pg, i);
	for (size_t pg = 0; pg < q; pg++)
		for (size_t i = 0; i < PAGE / 8; i++)
			own[pg * (PAGE / 8) + i] = own_word(pg, i);
	if (write(fds[1], "r", 1) != 1)
		_exit(2);
	tp_wait_go();
	_exit(check(mem, 0, npages - q, "child, shared") ||
	      check_own(mem, npages - q, npages, "child, its own quarter") ||
	      check_own(own, 0, q, "child, its own area"));
}

int main(int argc, char **argv)
{
	size_t npages, half;
	uint64_t *mem;
	int status;
	pid_t child = 0;

	tp_init(argc, argv);
	npages = (argc > 2 ? strtoul(argv[2], NULL, 0) : 64) * (1024 * 1024 / PAGE);
	mem = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return perror("mmap"), 2;
	for (size_t pg = 0; pg < npages; pg++)
		for (size_t i = 0; pg % 16 != 7 && i < PAGE / 8; i++)
			mem[pg * (PAGE / 8) + i] = word(pg, i);
	if (argc > 3 && !strcmp(argv[3], "tree"))
		child = tree_child(mem, npages);
	tp_ready();
	tp_wait_go();
	/* "split": a page of every MiB made read-only, the area cut into
	 * many (the loader's copies must fit each) */
	for (size_t pg = 128; argc > 3 && !strcmp(argv[3], "split") && pg < npages; pg += 256)
		if (mprotect(mem + pg * (PAGE / 8), PAGE, PROT_READ))
			return perror("mprotect"), 2;
	if (child) {
		check(mem, 0, npages, "parent");
		tp_check(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
			 WEXITSTATUS(status) == 0, "child: status %#x", status);
		return tp_done();
	}
	for (size_t i = 0; argc > 3 && !strcmp(argv[3], "rand") && i < npages; i++) {
		size_t pg = (i * 7919) % npages;

		if (check(mem, pg, pg + 1, "scattered"))
			break;
	}
	if (argc > 3 && !strcmp(argv[3], "rand"))
		return tp_done();
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
