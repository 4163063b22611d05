/* cwd_deleted.c - a working directory whose name was removed.
 *
 * The program enters a directory of its own (mode 0750) and removes it.
 * After restart: its cwd link still reads "DIR (deleted)", the directory
 * has no links and the same mode, and nothing by that name was left
 * behind.  A fresh process has a live cwd.
 */
#include "tp.h"

#include <limits.h>
#include <sys/stat.h>

static char dir[PATH_MAX], want[PATH_MAX + 16];

static void cwd_link(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/cwd", buf, len - 1);

	buf[n < 0 ? 0 : n] = '\0';
}

int main(int argc, char **argv)
{
	char got[PATH_MAX + 16], *slash;
	struct stat st;

	tp_init(argc, argv);
	snprintf(dir, sizeof(dir), "%s", tp_gofile);
	slash = strrchr(dir, '/');
	snprintf(slash ? slash + 1 : dir, sizeof(dir) - (slash ? slash + 1 - dir : 0),
		 "gone-cwd");
	if (mkdir(dir, 0750) || chdir(dir) || rmdir(dir)) {
		tp_fail("setup: %s: %s", dir, strerror(errno));
		return 1;
	}
	cwd_link(want, sizeof(want));
	tp_ready();
	tp_wait_go();
	cwd_link(got, sizeof(got));
	tp_check(!strcmp(got, want), "cwd is %s, not %s", got, want);
	tp_check(!stat(".", &st) && st.st_nlink == 0 && S_ISDIR(st.st_mode),
		 "cwd is not a deleted directory");
	tp_check((st.st_mode & 07777) == 0750, "cwd mode %o", st.st_mode & 07777);
	tp_check(access(dir, F_OK) && errno == ENOENT, "%s is there again", dir);
	return tp_done();
}
