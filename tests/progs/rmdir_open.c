/* rmdir_open.c - an fd on a directory removed together with the
 * directory it was in: DIR/sub (mode 0750) opened, then sub and DIR
 * removed.
 *
 * After restart: the fd is a directory with no links and mode 0750, its
 * link still reads ".../DIR/sub (deleted)", and neither DIR nor sub is
 * left behind (restart made both for the while).
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	char dir[PATH_MAX], sub[PATH_MAX + 8], want[PATH_MAX + 32], got[PATH_MAX + 32], proc[64];
	struct stat st;
	ssize_t n;
	int fd;

	tp_init(argc, argv);
	snprintf(dir, sizeof(dir), "%s.dir", tp_gofile);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	if (mkdir(dir, 0700) || mkdir(sub, 0750) || chmod(sub, 0750) ||
	    (fd = open(sub, O_RDONLY | O_DIRECTORY)) < 0 || rmdir(sub) || rmdir(dir)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	snprintf(want, sizeof(want), "%s (deleted)", sub);
	tp_ready();
	tp_wait_go();
	tp_check(!fstat(fd, &st) && S_ISDIR(st.st_mode) && st.st_nlink == 0,
		 "not a removed directory");
	tp_check((st.st_mode & 07777) == 0750, "mode %o", st.st_mode & 07777);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, got, sizeof(got) - 1);
	got[n < 0 ? 0 : n] = '\0';
	tp_check(!strcmp(got, want), "fd reads %s, not %s", got, want);
	tp_check(lstat(dir, &st) && errno == ENOENT, "%s is there again", dir);
	return tp_done();
}
