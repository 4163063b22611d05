/* eventfd.c - eventfds keep their counter, EFD_SEMAPHORE and flags, and
 * one shared with a child stays one description.
 *
 * A fresh eventfd counts 0; the semaphore one must hand out its count one
 * at a time (a restore that loses EFD_SEMAPHORE hands it all at once);
 * the big one holds more than eventfd2() can be given as a start value.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/kcmp.h>

#include "tp.h"

#define BIG	0x100000003ULL

static int readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 0) == 1;
}

static int semaphore_flag(int fd)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strstr(buf, "eventfd-semaphore:");
	return p ? atoi(p + 18) : -1;
}

int main(int argc, char **argv)
{
	int sem, big, shared, st, hold[2];
	uint64_t v = 5;
	pid_t child;

	tp_init(argc, argv);
	sem = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK);
	big = eventfd(0, EFD_CLOEXEC);
	shared = eventfd(3, EFD_NONBLOCK);
	if (sem < 0 || big < 0 || shared < 0 || write(sem, &v, 8) != 8)
		return 1;
	v = BIG;
	if (write(big, &v, 8) != 8)
		return 1;
	if (pipe(hold))
		return 1;
	child = fork();
	if (child == 0) {
		char c;

		close(hold[1]);
		tp_wait_go();
		v = 10;	/* seen by the parent only through one description */
		st = write(shared, &v, 8) == 8 ? 0 : 1;
		_exit(read(hold[0], &c, 1) == 0 ? st : 1);	/* until kcmp is done */
	}
	close(hold[0]);
	tp_ready();
	tp_wait_go();

	tp_check(semaphore_flag(sem) == 1, "EFD_SEMAPHORE lost (fdinfo)");
	tp_check(fcntl(sem, F_GETFL) & O_NONBLOCK, "O_NONBLOCK lost");
	tp_check(!(fcntl(big, F_GETFL) & O_NONBLOCK), "O_NONBLOCK appeared");
	tp_check(fcntl(big, F_GETFD) & FD_CLOEXEC, "FD_CLOEXEC lost");
	for (int i = 0; i < 5; i++) {
		v = 0;
		tp_check(read(sem, &v, 8) == 8 && v == 1,
			 "semaphore read %d gave %llu, want 1", i, (unsigned long long)v);
	}
	tp_check(read(sem, &v, 8) < 0 && errno == EAGAIN,
		 "semaphore not empty after 5 reads");
	v = 0;
	tp_check(readable(big) && read(big, &v, 8) == 8 && v == BIG,
		 "big counter is %#llx, want %#llx", (unsigned long long)v, BIG);
	st = syscall(SYS_kcmp, getpid(), child, KCMP_FILE, shared, shared);
	tp_check(st == 0, "the child's eventfd is another description (kcmp %d: %m)", st);
	close(hold[1]);
	tp_check(waitpid(child, &st, 0) == child && WIFEXITED(st) && !WEXITSTATUS(st),
		 "child failed (0x%x)", st);
	v = 0;
	tp_check(read(shared, &v, 8) == 8 && v == 13,
		 "shared counter is %llu, want 3 + the child's 10", (unsigned long long)v);
	return tp_done();
}
