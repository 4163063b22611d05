/* fileflags.c - the status flags of open files that files.c does not
 * cover: O_PATH (on a file, a directory and a symlink itself), O_NOATIME,
 * O_DIRECT, O_APPEND with O_NOATIME, O_SYNC/O_DSYNC.  After restart each fd must report
 * the very same F_GETFL, refer to the same inode and behave as such: an
 * O_PATH fd cannot be read, an O_APPEND one writes at the end.  A fresh
 * process has none of these fds.
 */
#include "tp.h"

#include <fcntl.h>
#include <sys/stat.h>

enum { PATH_FILE, PATH_DIR, PATH_LINK, NOATIME, DIRECT, APPEND_NOATIME,
       SYNC, NFDS };

static const char *names[NFDS] = { "O_PATH file", "O_PATH dir",
	"O_PATH|O_NOFOLLOW symlink", "O_NOATIME", "O_DIRECT",
	"O_APPEND|O_NOATIME", "O_SYNC|O_DSYNC" };
static int fds[NFDS], fl[NFDS];
static struct stat st[NFDS];
static char dir[4096], file[4200], link_path[4200], direct[4200],
	    app[4200];

static void cleanup(void)
{
	unlink(file);
	unlink(link_path);
	unlink(direct);
	unlink(app);
	rmdir(dir);
}

static int xopen(const char *path, int flags)
{
	int fd = open(path, flags, 0600);

	if (fd < 0) {
		tp_fail("setup: open %s (%#o): %s", path, flags, strerror(errno));
		exit(1);
	}
	return fd;
}

static void check_all(const char *when)
{
	for (int i = 0; i < NFDS; i++) {
		struct stat now;
		int f = fcntl(fds[i], F_GETFL);

		tp_check(f == fl[i], "%s: %s fd %d: F_GETFL %#o, want %#o", when,
			 names[i], fds[i], f, fl[i]);
		if (fstat(fds[i], &now)) {
			tp_fail("%s: %s: fstat: %s", when, names[i], strerror(errno));
			continue;
		}
		tp_check(now.st_ino == st[i].st_ino && now.st_dev == st[i].st_dev &&
			 (now.st_mode & S_IFMT) == (st[i].st_mode & S_IFMT),
			 "%s: %s fd %d is another file", when, names[i], fds[i]);
	}
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TP_TMPDIR");
	char buf[4096] __attribute__((aligned(4096)));

	tp_init(argc, argv);
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/ckpt-flags-XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		tp_fail("setup: mkdtemp: %s", strerror(errno));
		return 1;
	}
	snprintf(file, sizeof(file), "%s/file", dir);
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	snprintf(direct, sizeof(direct), "%s/direct", dir);
	snprintf(app, sizeof(app), "%s/append", dir);
	atexit(cleanup);

	close(xopen(file, O_WRONLY | O_CREAT | O_TRUNC));
	if (symlink(file, link_path)) {
		tp_fail("setup: symlink: %s", strerror(errno));
		return 1;
	}
	fds[PATH_FILE] = xopen(file, O_PATH);
	fds[PATH_DIR] = xopen(dir, O_PATH | O_DIRECTORY);
	fds[PATH_LINK] = xopen(link_path, O_PATH | O_NOFOLLOW);
	fds[NOATIME] = xopen(file, O_RDONLY | O_NOATIME);
	fds[DIRECT] = xopen(direct, O_RDWR | O_CREAT | O_DIRECT);
	memset(buf, 'd', sizeof(buf));
	if (write(fds[DIRECT], buf, sizeof(buf)) != sizeof(buf))
		tp_fail("setup: O_DIRECT write: %s", strerror(errno));
	fds[APPEND_NOATIME] = xopen(app, O_WRONLY | O_CREAT | O_APPEND | O_NOATIME);
	if (write(fds[APPEND_NOATIME], "ab", 2) != 2)
		tp_fail("setup: write: %s", strerror(errno));
	lseek(fds[APPEND_NOATIME], 0, SEEK_SET);
	fds[SYNC] = xopen(file, O_WRONLY | O_SYNC | O_DSYNC);
	for (int i = 0; i < NFDS; i++) {
		fl[i] = fcntl(fds[i], F_GETFL);
		fstat(fds[i], &st[i]);
	}
	tp_check(S_ISLNK(st[PATH_LINK].st_mode), "setup: O_PATH symlink is not one");
	tp_check(fl[PATH_FILE] & O_PATH, "setup: no O_PATH in F_GETFL");
	check_all("setup");
	if (tp_failures)
		return 1;

	tp_ready();
	tp_wait_go();

	check_all("after restart");
	errno = 0;
	tp_check(read(fds[PATH_FILE], buf, 1) < 0 && errno == EBADF,
		 "O_PATH fd can be read");
	tp_check(pread(fds[DIRECT], buf, sizeof(buf), 0) == sizeof(buf) &&
		 buf[4095] == 'd', "O_DIRECT read: %s", strerror(errno));
	tp_check(write(fds[APPEND_NOATIME], "c", 1) == 1 &&
		 lseek(fds[APPEND_NOATIME], 0, SEEK_CUR) == 3,
		 "O_APPEND write did not land at the end");
	{
		int fd = openat(fds[PATH_DIR], "file", O_RDONLY);

		tp_check(fd >= 0, "openat(O_PATH dir fd): %s", strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return tp_done();
}
