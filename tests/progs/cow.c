/* cow.c - private memory still copy-on-write shared after fork is saved
 * once, and every process gets its own content back: the parent's pages,
 * a child that rewrote half of them, a child and a grandchild that
 * rewrote none (the grandchild's pages are its parent's, which are in
 * turn the root's).  The image must be far smaller than a copy per
 * process. */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tp.h"

#define LEN (16 << 20)

static unsigned char *m;

static int pattern_ok(size_t from, size_t to, unsigned char salt)
{
	for (size_t i = from; i < to; i += 512)
		if (m[i] != (unsigned char)((i >> 9) ^ salt))
			return 0;
	return 1;
}

static void fill(size_t from, size_t to, unsigned char salt)
{
	for (size_t i = from; i < to; i += 512)
		m[i] = (unsigned char)((i >> 9) ^ salt);
}

static pid_t child(int rewrite, int grandchild)
{
	pid_t pid = fork(), g = 0;
	int st = 0;

	if (pid)
		return pid;
	if (rewrite)
		fill(0, LEN / 2, 0x5a);
	if (grandchild)
		g = child(0, 0);
	tp_wait_go();
	if (g && (waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st)))
		_exit(3);
	_exit(pattern_ok(0, LEN / 2, rewrite ? 0x5a : 0) &&
	      pattern_ok(LEN / 2, LEN, 0) ? 0 : 2);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TP_TMPDIR");
	pid_t kids[2];
	char img[4096];
	struct stat st;
	int status;

	tp_init(argc, argv);
	m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fill(0, LEN, 0);
	kids[0] = child(1, 0);
	kids[1] = child(0, 1);
	sleep(1);
	tp_ready();
	tp_wait_go();
	for (int i = 0; i < 2; i++)
		tp_check(waitpid(kids[i], &status, 0) == kids[i] && WIFEXITED(status) &&
			 !WEXITSTATUS(status), "child %d found its memory wrong (0x%x)",
			 i, status);
	tp_check(pattern_ok(0, LEN, 0), "the parent's memory changed");
	snprintf(img, sizeof(img), "%s/img", dir ? dir : ".");
	if (dir && stat(img, &st) == 0)
		/* 16 MiB once, 8 MiB rewritten: 4 copies would be 56 MiB more */
		tp_check(st.st_size < (36 << 20),
			 "image of %lld MiB: shared pages were saved per process",
			 (long long)st.st_size >> 20);
	else
		tp_check(0, "no image at %s to measure", img);
	return tp_done();
}
