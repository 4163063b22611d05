/* guard_pages.c - guard pages (madvise MADV_GUARD_INSTALL) of a private
 * anonymous and a private file area come back where they were (pagemap
 * bit 58), and the pages around them keep their content: a guard page
 * cannot be read, the checkpoint must not try.  A child that shares the
 * area copy-on-write gets its own guards, not the ones its parent added
 * after the fork. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "tp.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#define PM_GUARD	(1ULL << 58)
#define NP		6

static int guarded(int pm, char *p)
{
	uint64_t e = 0;

	if (pread(pm, &e, 8, (uintptr_t)p / 4096 * 8) != 8)
		return -1;
	return !!(e & PM_GUARD);
}

int main(int argc, char **argv)
{
	char path[256], *a, *f;
	int fd, pm, p[2], st;
	pid_t kid;

	tp_init(argc, argv);
	snprintf(path, sizeof(path), "%s/guard.file", getenv("TP_TMPDIR") ?: "/tmp");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || pm < 0 || ftruncate(fd, NP * 4096) || pipe(p))
		return printf("FAIL: setup: %s\n", strerror(errno)), 1;
	a = mmap(NULL, NP * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f = mmap(NULL, NP * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (a == MAP_FAILED || f == MAP_FAILED)
		return printf("FAIL: mmap: %s\n", strerror(errno)), 1;
	for (int i = 0; i < NP; i++) {
		sprintf(a + i * 4096, "anon %d", i);
		sprintf(f + i * 4096, "file %d", i);
	}
	for (int i = 1; i < NP; i += 2)
		if (madvise(a + i * 4096, 4096, MADV_GUARD_INSTALL) ||
		    madvise(f + i * 4096, 4096, MADV_GUARD_INSTALL)) {
			if (errno == EINVAL) {	/* a kernel before 6.13 */
				tp_ready();
				tp_wait_go();
				return tp_done();
			}
			return printf("FAIL: MADV_GUARD_INSTALL: %s\n", strerror(errno)), 1;
		}
	/* a child shares the pages copy-on-write; the parent then guards
	 * page 0 too, which the child must not get at restart */
	kid = fork();
	if (kid == 0) {
		char c;

		(void)!read(p[0], &c, 1);
		pm = open("/proc/self/pagemap", O_RDONLY);	/* its own */
		for (int i = 0; i < NP; i++)
			if (guarded(pm, a + i * 4096) != i % 2)
				_exit(10 + i);
		_exit(strcmp(a, "anon 0") || strcmp(a + 2 * 4096, "anon 2"));
	}
	if (madvise(a, 4096, MADV_GUARD_INSTALL))
		return printf("FAIL: MADV_GUARD_INSTALL: %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	(void)!write(p[1], "x", 1);
	tp_check(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the child's guards or pages are wrong (status 0x%x)", st);
	tp_check(guarded(pm, a) == 1, "parent's page 0 not guarded");
	for (int i = 1; i < NP; i++) {
		char want[32];
		int g = i % 2;

		tp_check(guarded(pm, a + i * 4096) == g, "anon page %d guard %d, want %d",
			 i, guarded(pm, a + i * 4096), g);
		tp_check(guarded(pm, f + i * 4096) == g, "file page %d guard %d, want %d",
			 i, guarded(pm, f + i * 4096), g);
		if (g)
			continue;
		sprintf(want, "anon %d", i);
		tp_check(!strcmp(a + i * 4096, want), "anon page %d: %s", i, a + i * 4096);
		sprintf(want, "file %d", i);
		tp_check(!strcmp(f + i * 4096, want), "file page %d: %s", i, f + i * 4096);
	}
	return tp_done();
}
