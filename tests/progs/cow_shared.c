/* cow_shared.c - pages a parent and its child still share copy-on-write
 * since fork come back shared: the same frame in both (pagemap PFNs,
 * visible to root), for a private anonymous area and the written pages of
 * a private file area; pages either one rewrote come back its own, and
 * a page the child never had stays absent in it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "tp.h"

#define NP	8
#define PFN(e)	((e) & ((1ULL << 55) - 1))

static uint64_t pm(pid_t pid, const void *p)
{
	char path[64];
	uint64_t e = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, &e, 8, (uintptr_t)p / 4096 * 8) != 8)
		e = 0;
	if (fd >= 0)
		close(fd);
	return e;
}

static int same_frame(pid_t a, pid_t b, const void *p)
{
	uint64_t x = pm(a, p), y = pm(b, p);

	return (x >> 63) && (y >> 63) && PFN(x) && PFN(x) == PFN(y);
}

int main(int argc, char **argv)
{
	char path[256], *a, *f;
	int fd, p[2], st;
	pid_t kid;

	tp_init(argc, argv);
	snprintf(path, sizeof(path), "%s/cow.file", getenv("TP_TMPDIR") ?: "/tmp");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, NP * 4096) || pipe(p))
		return printf("FAIL: setup: %s\n", strerror(errno)), 1;
	a = mmap(NULL, NP * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f = mmap(NULL, NP * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (a == MAP_FAILED || f == MAP_FAILED)
		return printf("FAIL: mmap: %s\n", strerror(errno)), 1;
	for (int i = 0; i < NP - 1; i++) {	/* the last anon page never touched */
		sprintf(a + i * 4096, "anon %d", i);
		sprintf(f + i * 4096, "file %d", i);
	}
	kid = fork();
	if (kid == 0) {
		char c;

		strcpy(a, "child's own");	/* page 0: the child's */
		strcpy(f, "child's own");
		(void)!read(p[0], &c, 1);	/* the parent has checked */
		_exit(strcmp(a, "child's own") || strcmp(a + 4096, "anon 1") ||
		      strcmp(f + 2 * 4096, "file 2") || a[(NP - 1) * 4096]);
	}
	strcpy(a + 4096 * 3, "parent's own");	/* page 3: the parent's */
	tp_ready();
	tp_wait_go();
	for (int i = 1; i < NP - 1; i++) {
		int shared = i != 3;

		tp_check(same_frame(getpid(), kid, a + i * 4096) == shared,
			 "anon page %d: shared %d, want %d", i, !shared, shared);
		if (i != 3)
			tp_check(same_frame(getpid(), kid, f + i * 4096),
				 "file page %d not shared", i);
	}
	tp_check(!same_frame(getpid(), kid, a), "the child's own page shared");
	tp_check(!(pm(kid, a + (NP - 1) * 4096) >> 63), "untouched page present in the child");
	tp_check(!strcmp(a + 3 * 4096, "parent's own") && !strcmp(a, "anon 0") &&
		 !strcmp(f, "file 0"), "parent's content lost");
	(void)!write(p[1], "x", 1);
	tp_check(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the child found its memory wrong (status 0x%x)", st);
	return tp_done();
}
