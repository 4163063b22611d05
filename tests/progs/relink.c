/* relink.c - a file open under a removed name that has another name in
 * the same directory.
 *
 * The program opens FILE read-write, writes "content", links FILE as
 * OTHER, removes FILE, and reads 3 bytes.  After restart: the fd is the
 * file OTHER names (what it writes shows there), its offset is 3 and
 * the link count is 1; FILE is not there again.  A fresh process has
 * none of this.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

static char name[PATH_MAX], other[PATH_MAX];

static void sibling(char *buf, const char *base)
{
	char *slash;

	snprintf(buf, PATH_MAX, "%s", tp_gofile);
	slash = strrchr(buf, '/');
	snprintf(slash + 1, PATH_MAX - (slash + 1 - buf), "%s", base);
}

int main(int argc, char **argv)
{
	struct stat a, b;
	char buf[16];
	int fd, ofd;

	tp_init(argc, argv);
	sibling(name, "relink-file");
	sibling(other, "relink-other");
	unlink(other);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "content", 7) != 7 || link(name, other) || unlink(name) ||
	    lseek(fd, 3, SEEK_SET) != 3) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	tp_ready();
	tp_wait_go();
	tp_check(lseek(fd, 0, SEEK_CUR) == 3, "offset is not 3");
	tp_check(!fstat(fd, &a) && !stat(other, &b) && a.st_ino == b.st_ino &&
		 a.st_dev == b.st_dev && a.st_nlink == 1, "the fd is not the file %s names", other);
	tp_check(write(fd, "XY", 2) == 2, "write: %s", strerror(errno));
	ofd = open(other, O_RDONLY);
	tp_check(ofd >= 0 && read(ofd, buf, 7) == 7 && !memcmp(buf, "conXYnt", 7),
		 "the write does not show through %s", other);
	tp_check(access(name, F_OK) && errno == ENOENT, "%s is there again", name);
	unlink(other);
	return tp_done();
}
