/* file_mtime.c - the mtime of a deleted file whose content the image
 * carries: written, its mtime set to a day in 1970 (and a nanosecond
 * part), then unlinked.
 *
 * After restart: the content, the mode and that mtime, to the
 * nanosecond (filling the file anew would give it the restart's time).
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#define MTIME 123456
#define MTIME_NS 789

int main(int argc, char **argv)
{
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { MTIME, MTIME_NS } };
	char path[PATH_MAX], buf[4096], got[4096];
	struct stat st;
	int fd;

	tp_init(argc, argv);
	snprintf(path, sizeof(path), "%s.mtime", tp_gofile);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7 + 3);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0640);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) || futimens(fd, ts) ||
	    unlink(path)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	tp_ready();
	tp_wait_go();
	tp_check(pread(fd, got, sizeof(got), 0) == sizeof(got) && !memcmp(buf, got, sizeof(buf)),
		 "content differs");
	tp_check(!fstat(fd, &st) && st.st_nlink == 0, "not deleted");
	tp_check((st.st_mode & 07777) == 0640, "mode %o", st.st_mode & 07777);
	tp_check(st.st_mtim.tv_sec == MTIME && st.st_mtim.tv_nsec == MTIME_NS,
		 "mtime %lld.%09ld, not %d.%09d", (long long)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec, MTIME, MTIME_NS);
	return tp_done();
}
