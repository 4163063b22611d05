/* chroot.c - a process chrooted into a directory, its cwd inside it, a
 * file opened inside the jail (by a path only the jail resolves) and one
 * opened outside before the chroot.
 *
 * After restart: "/" is the jail (and "/.." too: still no way out), "."
 * is the jail's sub directory, both fds are the files they were with
 * their offsets, and paths resolve inside the jail.  A fresh process is
 * not chrooted at all.  GOFILE, outside the jail, is watched through a
 * directory fd opened before the chroot.
 */
#include "tp.h"

#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>

static int same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int xopen(const char *path, int flags)
{
	int fd = open(path, flags | O_CREAT, 0600);

	if (fd < 0) {
		tp_fail("setup: open %s: %s", path, strerror(errno));
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TP_TMPDIR");
	char jail[4096], path[4200], gocopy[4096];
	struct stat sj, ssub, sin, sout, st;
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int out, in, godir;

	tp_init(argc, argv);
	snprintf(jail, sizeof(jail), "%s/jail-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(jail)) {
		tp_fail("setup: mkdtemp: %s", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/sub", jail);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/outside", tmp && *tmp ? tmp : "/tmp");
	out = xopen(path, O_RDWR);
	if (write(out, "outside", 7) != 7)
		tp_fail("setup: write: %s", strerror(errno));
	snprintf(gocopy, sizeof(gocopy), "%s", argv[1]);
	godir = open(dirname(gocopy), O_PATH | O_DIRECTORY);
	stat(jail, &sj);
	if (godir < 0 || chroot(jail) || chdir("/sub")) {
		tp_fail("setup: chroot %s: %s", jail, strerror(errno));
		return 1;
	}
	in = xopen("/sub/inside", O_RDWR);
	if (write(in, "inside", 6) != 6)
		tp_fail("setup: write: %s", strerror(errno));
	lseek(in, 2, SEEK_SET);
	stat(".", &ssub);
	fstat(in, &sin);
	fstat(out, &sout);
	if (tp_failures)
		return 1;

	tp_ready();
	while (faccessat(godir, "go", F_OK, 0))
		nanosleep(&ts, NULL);

	tp_check(stat("/", &st) == 0 && same(&st, &sj), "\"/\" is not the jail");
	tp_check(stat("/..", &st) == 0 && same(&st, &sj), "\"/..\" is not the jail");
	tp_check(stat(".", &st) == 0 && same(&st, &ssub), "\".\" is not /sub in the jail");
	tp_check(stat("/sub/inside", &st) == 0 && same(&st, &sin),
		 "/sub/inside does not resolve in the jail");
	tp_check(fstat(in, &st) == 0 && same(&st, &sin), "fd %d is not the inside file", in);
	tp_check(fstat(out, &st) == 0 && same(&st, &sout), "fd %d is not the outside file",
		 out);
	tp_check(lseek(in, 0, SEEK_CUR) == 2, "inside offset %lld, want 2",
		 (long long)lseek(in, 0, SEEK_CUR));
	tp_check(lseek(out, 0, SEEK_CUR) == 7, "outside offset %lld, want 7",
		 (long long)lseek(out, 0, SEEK_CUR));
	tp_check(access(path, F_OK) != 0, "%s (outside) is visible in the jail", path);
	return tp_done();
}
