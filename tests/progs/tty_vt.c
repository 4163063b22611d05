/* tty_vt.c - a console (5:1) and a virtual terminal (4:5) opened by the
 * nodes the program made beside GOFILE, O_NOCTTY: terminals from outside
 * the tree, reachable by their path, nobody's controlling terminal.
 *
 * After restart: each fd is still that device (rdev), with its flags
 * (O_RDONLY, O_NONBLOCK on the console), still reads its node's name,
 * and neither became the controlling terminal.  A fresh process has no
 * such fds.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

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

int main(int argc, char **argv)
{
	char con[PATH_MAX], vt[PATH_MAX];
	int cfd, vfd, t;

	tp_init(argc, argv);
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
	return tp_done();
}
