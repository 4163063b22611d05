/* shm_below.c - a shared anonymous area split by mremap() so that the
 * area at the lowest address maps the object from its second page and
 * the first page sits higher up, shared with a child.  Restart once
 * refused an area below the first one's offset. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "tp.h"

#define PG 4096

int main(int argc, char **argv)
{
	char *a, *hole, *top;
	int pipefd[2], st;
	pid_t child;

	tp_init(argc, argv);
	hole = mmap(NULL, 64 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED)
		return 2;
	a = mmap(hole, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0);
	if (a == MAP_FAILED || pipe(pipefd))
		return 2;
	strcpy(a, "page0");
	strcpy(a + PG, "page1");
	strcpy(a + 2 * PG, "page2");
	/* page 0 of the object moves above the rest */
	top = hole + 32 * PG;
	if (mremap(a, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, top) != top)
		return 2;
	child = fork();
	if (child == 0) {
		char c;

		/* the child writes into page 0 and page 2 when told */
		if (read(pipefd[0], &c, 1) != 1)
			_exit(2);
		strcpy(top, "child0");
		strcpy(a + 2 * PG, "child2");
		_exit(0);
	}
	tp_ready();
	tp_wait_go();

	tp_check(!strcmp(top, "page0") && !strcmp(a + PG, "page1") && !strcmp(a + 2 * PG, "page2"),
		 "contents: %s %s %s", top, a + PG, a + 2 * PG);
	if (write(pipefd[1], "x", 1) != 1 || waitpid(child, &st, 0) != child || st)
		tp_fail("the child did not run");
	tp_check(!strcmp(top, "child0"), "page 0 not shared: %s", top);
	tp_check(!strcmp(a + 2 * PG, "child2"), "page 2 not shared: %s", a + 2 * PG);
	return tp_done();
}
