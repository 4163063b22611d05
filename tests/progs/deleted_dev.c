/* deleted_dev.c - an fd on a device node that was removed: a node of
 * /dev/null (1:3) made by mknod beside GOFILE with mode 0604 and owner
 * 4321:8765, opened O_RDWR|O_APPEND, unlinked.
 *
 * After restart: the fd is still that device (mode, rdev, owner, no
 * links), O_APPEND, writes are swallowed, reads give EOF, and the name
 * was not left behind.  A fresh process has no such fd.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int main(int argc, char **argv)
{
	char path[PATH_MAX], c;
	struct stat st;
	int fd;

	tp_init(argc, argv);
	snprintf(path, sizeof(path), "%s.null", tp_gofile);
	if (mknod(path, S_IFCHR | 0604, makedev(1, 3)) || chmod(path, 0604) ||
	    chown(path, 4321, 8765) || (fd = open(path, O_RDWR | O_APPEND)) < 0 ||
	    unlink(path)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	tp_ready();
	tp_wait_go();
	tp_check(!fstat(fd, &st) && st.st_mode == (S_IFCHR | 0604) &&
		 st.st_rdev == makedev(1, 3), "not the node: mode %o rdev %#llx", st.st_mode,
		 (unsigned long long)st.st_rdev);
	tp_check(st.st_uid == 4321 && st.st_gid == 8765, "owner %d:%d", st.st_uid, st.st_gid);
	tp_check(st.st_nlink == 0, "%d links", (int)st.st_nlink);
	tp_check(fcntl(fd, F_GETFL) & O_APPEND, "not O_APPEND");
	tp_check(write(fd, "x", 1) == 1 && read(fd, &c, 1) == 0, "not /dev/null");
	tp_check(lstat(path, &st) && errno == ENOENT, "%s is there again", path);
	return tp_done();
}
