/* tty_vt.c - a console (5:1) and a virtual terminal (4:5) opened by the
 * nodes the program made beside GOFILE, O_NOCTTY: terminals from outside
 * the tree, reachable by their path, nobody's controlling terminal.
 *
 * A child leading its own session opens a third node, of vt 63, which
 * becomes its controlling terminal, its group in the foreground.
 *
 * After restart: each fd is still that device (rdev), with its flags
 * (O_RDONLY, O_NONBLOCK on the console), still reads its node's name,
 * and neither became the program's controlling terminal; the child's
 * controlling terminal is vt 63 again, its group in the foreground.  A
 * fresh process has no such fds.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

/* tty_nr of /proc/self/stat */
static int ctty(void)
{
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	int nr = -1;

	if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %d", &nr);
	if (f)
		fclose(f);
	return nr;
}

static int node(const char *suffix, dev_t dev, int flags, char *path)
{
	snprintf(path, PATH_MAX, "%s.%s", tp_gofile, suffix);
	if (mknod(path, S_IFCHR | 0600, dev))
		return -1;
	return open(path, flags | O_NOCTTY);
}

static void check(int fd, const char *path, dev_t dev, int flags)
{
	char proc[64], link[PATH_MAX];
	struct stat st;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, link, sizeof(link) - 1);
	link[n < 0 ? 0 : n] = '\0';
	tp_check(!fstat(fd, &st) && S_ISCHR(st.st_mode) && st.st_rdev == dev,
		 "%s: rdev %#llx", path, (unsigned long long)st.st_rdev);
	tp_check(!strcmp(link, path), "fd %d reads %s, not %s", fd, link, path);
	tp_check((fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK)) == flags, "%s: flags %#x",
		 path, fcntl(fd, F_GETFL));
}

/* The child: vt 63 (62 for the 32-bit build, which runs beside) as its
 * controlling terminal, before and after. */
#define VT (sizeof(long) == 4 ? 62 : 63)

static int leader(int ready)
{
	char path[PATH_MAX];
	int fd;

	if (setsid() < 0 || (fd = node("vtN", makedev(4, VT), O_RDWR, path)) < 0 ||
	    ioctl(fd, TIOCSCTTY, 0) || ctty() != (int)makedev(4, VT)) {
		tp_fail("child setup: %s", strerror(errno));
		unlink(path);
		return 1;
	}
	close(ready);
	tp_wait_go();
	check(fd, path, makedev(4, VT), O_RDWR);
	tp_check(ctty() == (int)makedev(4, VT), "the child's controlling terminal is %#x",
		 ctty());
	unlink(path);
	tp_check(tcgetpgrp(fd) == getpgrp(), "foreground group %d, not %d", tcgetpgrp(fd),
		 getpgrp());
	return tp_done();
}

int main(int argc, char **argv)
{
	char con[PATH_MAX], vt[PATH_MAX], c;
	int cfd, vfd, t, p[2], st;
	pid_t child;

	tp_init(argc, argv);
	if (pipe(p) || (child = fork()) < 0) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	if (!child) {
		close(p[0]);
		return leader(p[1]);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 0) {
		tp_fail("setup: the child");
		return 1;
	}
	cfd = node("console", makedev(5, 1), O_RDONLY | O_NONBLOCK, con);
	vfd = cfd < 0 ? -1 : node("vt", makedev(4, 5), O_RDONLY, vt);
	if (cfd < 0 || vfd < 0) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	tp_ready();
	tp_wait_go();
	check(cfd, con, makedev(5, 1), O_RDONLY | O_NONBLOCK);
	check(vfd, vt, makedev(4, 5), O_RDONLY);
	t = ctty();
	tp_check(t != (int)makedev(5, 1) && t != (int)makedev(4, 5),
		 "the controlling terminal is %#x", t);
	unlink(con);
	unlink(vt);
	tp_check(waitpid(child, &st, 0) == child && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the child failed");
	return tp_done();
}
