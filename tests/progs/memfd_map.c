/* memfd_map.c - mappings of files with no name after restart: a
 * MAP_SHARED memfd area in parent and child stays one memory with the
 * memfd's fd; a deleted file mapped shared whose fd was closed (only the
 * mapping keeps it) is still shared; a MAP_PRIVATE memfd area keeps its
 * written pages and still shows the file's other pages; a write-sealed
 * memfd's shared area stays one that cannot be made writable. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tp.h"

#define LEN (16 * 4096)

int main(int argc, char **argv)
{
	const char *dir = getenv("TP_TMPDIR");
	struct timespec ts = { 0, 1000 * 1000 };
	volatile char *shared, *priv, *del, *sealed, *ro;
	char path[4096], c[8] = "";
	int mfd, dfd, sfd, st, i;
	pid_t child;

	tp_init(argc, argv);
	mfd = memfd_create("mapped", 0);
	if (mfd < 0 || ftruncate(mfd, LEN))
		return 1;
	shared = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	priv = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, mfd, 0);
	snprintf(path, sizeof(path), "%s/mapped", dir ? dir : "/tmp");
	dfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (dfd < 0 || ftruncate(dfd, LEN))
		return 1;
	del = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, 0);
	close(dfd);
	unlink(path);
	/* mapped from a read-only fd: it can never be made writable */
	snprintf(path, sizeof(path), "%s/ro", dir ? dir : "/tmp");
	dfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (dfd < 0 || pwrite(dfd, "RO", 2, 0) != 2)
		return 1;
	close(dfd);
	dfd = open(path, O_RDONLY);
	ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dfd, 0);
	close(dfd);
	unlink(path);
	sfd = memfd_create("sealed", MFD_ALLOW_SEALING);
	if (sfd < 0 || pwrite(sfd, "ro", 2, 0) != 2 ||
	    fcntl(sfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK))
		return 1;
	sealed = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sfd, 0);
	close(sfd);
	if (shared == MAP_FAILED || priv == MAP_FAILED || del == MAP_FAILED ||
	    sealed == MAP_FAILED || ro == MAP_FAILED)
		return 1;
	for (i = 0; i < LEN; i += 4096) {
		shared[i] = 'a' + i / 4096;
		del[i] = 'A' + i / 4096;
	}
	priv[0] = 'p';		/* a private copy of page 0 */
	(void)priv[4096];	/* page 1 read: still the file's */
	child = fork();
	if (child == 0) {
		tp_wait_go();
		for (i = 0; i < LEN; i += 4096)
			if (shared[i] != 'a' + i / 4096 || del[i] != 'A' + i / 4096)
				_exit(2);
		shared[4096 + 1] = 'S';	/* the parent, its fd and its
					 * private area's page 1 see these */
		del[2 * 4096 + 1] = 'D';
		_exit(0);
	}
	sleep(1);
	tp_ready();
	tp_wait_go();

	for (i = 0; i < 2000 && (shared[4096 + 1] != 'S' || del[2 * 4096 + 1] != 'D'); i++)
		nanosleep(&ts, NULL);
	tp_check(shared[4096 + 1] == 'S', "the child's write to the memfd area did not reach the parent");
	tp_check(del[2 * 4096 + 1] == 'D', "the child's write to the deleted file's area did not reach the parent");
	tp_check(waitpid(child, &st, 0) == child && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the child found the mapped content changed (0x%x)", st);
	tp_check(pread(mfd, c, 2, 4096) == 2 && c[0] == 'b' && c[1] == 'S',
		 "the memfd's fd does not see the mapping's content");
	tp_check(pwrite(mfd, "F", 1, 3 * 4096 + 2) == 1 && shared[3 * 4096 + 2] == 'F',
		 "a write through the fd is not in the shared mapping");
	tp_check(priv[0] == 'p', "the private area lost its written page");
	tp_check(shared[0] == 'a', "the private write leaked into the memfd");
	tp_check(priv[4096] == 'b' && priv[4096 + 1] == 'S',
		 "the private area's untouched page is not the memfd's");
	for (i = 0; i < LEN; i += 4096)
		if (shared[i] != 'a' + i / 4096 || del[i] != 'A' + i / 4096)
			break;
	tp_check(i >= LEN, "mapped content lost at %d", i);
	tp_check(sealed[0] == 'r' && sealed[1] == 'o', "the sealed memfd's area");
	tp_check(mprotect((void *)sealed, 4096, PROT_READ | PROT_WRITE) != 0,
		 "the write-sealed memfd's area can be made writable");
	tp_check(ro[0] == 'R' && ro[1] == 'O', "the read-only deleted file's area");
	tp_check(mprotect((void *)ro, 4096, PROT_READ | PROT_WRITE) != 0,
		 "an area mapped from a read-only fd can be made writable");
	return tp_done();
}
