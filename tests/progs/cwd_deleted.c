/* cwd_deleted.c - a working directory whose name was removed.
 *
 * The program enters a directory of its own (mode 0750), opens it, and
 * removes it; its child does the same with a directory it does not
 * open.  After restart: each cwd link still reads "DIR (deleted)", the
 * directory has no links and the same mode, the parent's fd and cwd are
 * still one directory, and nothing by either name was left behind.  A
 * fresh process has a live cwd.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include <sys/wait.h>

static char dir[PATH_MAX], want[PATH_MAX + 16];

static void cwd_link(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/cwd", buf, len - 1);

	buf[n < 0 ? 0 : n] = '\0';
}

/* Enters @name beside the go file, removes it, and checks it after. */
static int deleted_cwd(const char *name, bool keep_fd)
{
	char *slash;
	int fd = -1;

	snprintf(dir, sizeof(dir), "%s", tp_gofile);
	slash = strrchr(dir, '/');
	snprintf(slash + 1, sizeof(dir) - (slash + 1 - dir), "%s", name);
	if (mkdir(dir, 0750) || chmod(dir, 0750) || chdir(dir) ||
	    (keep_fd && (fd = open(".", O_RDONLY | O_DIRECTORY)) < 0) || rmdir(dir)) {
		tp_fail("setup: %s: %s", dir, strerror(errno));
		return -1;
	}
	cwd_link(want, sizeof(want));
	return fd;
}

static void check_cwd(int fd)
{
	char got[PATH_MAX + 16];
	struct stat st, fst;

	cwd_link(got, sizeof(got));
	tp_check(!strcmp(got, want), "cwd is %s, not %s", got, want);
	tp_check(!stat(".", &st) && st.st_nlink == 0 && S_ISDIR(st.st_mode),
		 "cwd is not a deleted directory");
	tp_check((st.st_mode & 07777) == 0750, "cwd mode %o", st.st_mode & 07777);
	tp_check(access(dir, F_OK) && errno == ENOENT, "%s is there again", dir);
	if (fd >= 0)
		tp_check(!fstat(fd, &fst) && fst.st_ino == st.st_ino && fst.st_dev == st.st_dev,
			 "the fd on the cwd is another directory");
}

int main(int argc, char **argv)
{
	int pfd[2], fd, status;
	pid_t child;
	char c;

	tp_init(argc, argv);
	if (pipe(pfd))
		return 1;
	child = fork();
	if (!child) {
		close(pfd[0]);
		if (deleted_cwd("gone-cwd-child", false) != -1 || tp_failures)
			_exit(2);
		if (write(pfd[1], "r", 1) != 1)
			_exit(2);
		tp_wait_go();
		check_cwd(-1);
		_exit(tp_failures ? 1 : 0);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		tp_fail("setup: the child failed");
		return 1;
	}
	fd = deleted_cwd("gone-cwd", true);
	if (fd < 0)
		return 1;
	tp_ready();
	tp_wait_go();
	check_cwd(fd);
	tp_check(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		 !WEXITSTATUS(status), "the child's cwd is not right");
	return tp_done();
}
