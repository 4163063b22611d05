/* path_ghost.c - an O_PATH fd on a symlink and an fd on a directory,
 * both with their names removed.
 *
 * After restart: the symlink fd is still a symlink, readlinkat() gives
 * its target, the directory fd is a directory with no links and its mode
 * (0710), both links still read "NAME (deleted)", and neither name was
 * left behind.  A fresh process has none of this.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#define TARGET "/no/such/target/of/the/link"

static char lnk[PATH_MAX], dir[PATH_MAX];

static void fd_link(int fd, char *buf, size_t len)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, len - 1);
	buf[n < 0 ? 0 : n] = '\0';
}

static void sibling(char *buf, const char *name)
{
	char *slash;

	snprintf(buf, PATH_MAX, "%s", tp_gofile);
	slash = strrchr(buf, '/');
	snprintf(slash + 1, PATH_MAX - (slash + 1 - buf), "%s", name);
}

int main(int argc, char **argv)
{
	char lwant[PATH_MAX + 16], dwant[PATH_MAX + 16], got[PATH_MAX + 16];
	struct stat st;
	ssize_t n;
	int lfd, dfd;

	tp_init(argc, argv);
	sibling(lnk, "ghost-link");
	sibling(dir, "ghost-dir");
	if (symlink(TARGET, lnk) || mkdir(dir, 0710) || chmod(dir, 0710)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	lfd = open(lnk, O_PATH | O_NOFOLLOW);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (lfd < 0 || dfd < 0 || unlink(lnk) || rmdir(dir)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	fd_link(lfd, lwant, sizeof(lwant));
	fd_link(dfd, dwant, sizeof(dwant));
	tp_ready();
	tp_wait_go();
	fd_link(lfd, got, sizeof(got));
	tp_check(!strcmp(got, lwant), "symlink fd reads %s, not %s", got, lwant);
	fd_link(dfd, got, sizeof(got));
	tp_check(!strcmp(got, dwant), "directory fd reads %s, not %s", got, dwant);
	tp_check(!fstat(lfd, &st) && S_ISLNK(st.st_mode), "not a symlink");
	tp_check((fcntl(lfd, F_GETFL) & O_PATH), "symlink fd is not O_PATH");
	n = readlinkat(lfd, "", got, sizeof(got) - 1);
	got[n < 0 ? 0 : n] = '\0';
	tp_check(!strcmp(got, TARGET), "symlink points to %s", got);
	tp_check(!fstat(dfd, &st) && S_ISDIR(st.st_mode) && st.st_nlink == 0,
		 "not a deleted directory");
	tp_check((st.st_mode & 07777) == 0710, "directory mode %o", st.st_mode & 07777);
	/* lstat: the link would dangle */
	tp_check(lstat(lnk, &st) && errno == ENOENT && lstat(dir, &st) && errno == ENOENT,
		 "a name is there again");
	return tp_done();
}
