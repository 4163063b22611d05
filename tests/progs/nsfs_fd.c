/* nsfs_fd.c - fds on the process's own namespaces (/proc/self/ns/net,
 * pid_for_children, and uts as O_PATH) come back on the same namespaces,
 * with their flags, and setns() takes them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include "tp.h"

static const char *const names[] = { "net", "pid_for_children", "uts" };

int main(int argc, char **argv)
{
	int fds[3];

	tp_init(argc, argv);
	for (int i = 0; i < 3; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
		fds[i] = open(path, i == 2 ? O_PATH : O_RDONLY);
		if (fds[i] < 0)
			return 1;
	}
	tp_ready();
	tp_wait_go();

	for (int i = 0; i < 3; i++) {
		char path[64], want[64] = "", got[64] = "";
		struct stat a, b;

		snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
		tp_check(readlink(path, want, sizeof(want) - 1) > 0, "%s: %m", path);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		tp_check(readlink(path, got, sizeof(got) - 1) > 0 && !strcmp(got, want),
			 "fd %d on %s, want %s", fds[i], got, want);
		snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
		tp_check(!fstat(fds[i], &a) && !stat(path, &b) && a.st_ino == b.st_ino &&
			 a.st_dev == b.st_dev, "fd %d: another inode than %s", fds[i], path);
	}
	tp_check((fcntl(fds[2], F_GETFL) & O_PATH) && !(fcntl(fds[0], F_GETFL) & O_PATH),
		 "O_PATH not as opened");
	tp_check(setns(fds[0], CLONE_NEWNET) == 0, "setns(net): %m");
	return tp_done();
}
