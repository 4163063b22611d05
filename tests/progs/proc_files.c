/* proc_files.c - files of /proc opened by pid: a child's stat held by its
 * parent, and the process's own maps.  Restart once checked them before
 * any process of the image existed, and failed for want of them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "tp.h"

int main(int argc, char **argv)
{
	char path[64], buf[256];
	int st, maps;
	ssize_t n;
	pid_t child;

	tp_init(argc, argv);
	child = fork();
	if (child == 0) {
		for (;;)
			pause();
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", child);
	st = open(path, O_RDONLY);
	snprintf(path, sizeof(path), "/proc/%d/maps", getpid());
	maps = open(path, O_RDONLY);
	if (st < 0 || maps < 0)
		return 2;
	tp_ready();
	tp_wait_go();

	n = pread(st, buf, sizeof(buf) - 1, 0);
	tp_check(n > 0 && atoi(buf) == child, "the child's stat: %zd", n);
	n = pread(maps, buf, sizeof(buf) - 1, 0);
	tp_check(n > 0, "own maps: %zd", n);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return tp_done();
}
