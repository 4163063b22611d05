/* coredump_mdwe.c - the process's coredump_filter and its
 * memory-deny-write-execute (PR_SET_MDWE, Linux 6.3) survive the
 * restart: after it the filter reads as set, and a writable page still
 * cannot be made executable, while an area that was writable and
 * executable before MDWE was set (a JIT's) is there as it was. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tp.h"

#define PR_SET_MDWE_	65
#define PR_GET_MDWE_	66
#define FILTER		0x7b

static long read_filter(void)
{
	char buf[32] = "";
	int fd = open("/proc/self/coredump_filter", O_RDWR);
	long n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n <= 0 ? -1 : strtol(buf, NULL, 16);
}

int main(int argc, char **argv)
{
	char *rw, *rwx;
	bool mdwe;
	int fd;

	tp_init(argc, argv);
	fd = open("/proc/self/coredump_filter", O_WRONLY);
	tp_check(fd >= 0 && write(fd, "0x7b", 4) == 4, "writing coredump_filter");
	if (fd >= 0)
		close(fd);
	rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rwx = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tp_check(rw != MAP_FAILED && rwx != MAP_FAILED, "mmap");
	rw[0] = rwx[0] = 1;
	/* a kernel before 6.3 has none: the filter is tested alone */
	mdwe = !prctl(PR_SET_MDWE_, 1, 0, 0, 0);
	if (!mdwe)
		printf("no PR_SET_MDWE here (%s): coredump_filter only\n", strerror(errno));
	tp_ready();
	tp_wait_go();
	tp_check(read_filter() == FILTER, "coredump_filter %#lx, not %#x", read_filter(), FILTER);
	if (mdwe) {
		long m = prctl(PR_GET_MDWE_, 0, 0, 0, 0);

		tp_check(m == 1, "PR_GET_MDWE %ld, not 1", m);
		tp_check(mprotect(rw, 4096, PROT_READ | PROT_EXEC) && errno == EACCES,
			 "a writable page made executable under MDWE (%s)", strerror(errno));
	}
	tp_check(rw[0] == 1 && rwx[0] == 1, "the pages lost their bytes");
	return tp_done();
}
