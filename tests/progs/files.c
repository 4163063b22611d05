/* files.c - file descriptors on regular files, a directory and devices.
 *
 * Every fd the program opens is checked after restart for: the same fd
 * number, the same file (st_dev/st_ino, st_rdev for devices), the same
 * open flags (access mode, O_APPEND, O_NONBLOCK, ...), the same close-on-
 * exec flag, the same offset, and that two fds sharing one open file
 * description still share it while two separate opens of one file do not.
 * A fresh process has none of these fds, and a gap in the fd numbers shows
 * that the restore does not simply open things in a row.
 */
#include "tp.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define MAX_FD		4096
#define DATA_SIZE	5000

enum { A_DATA_RW, B_DATA_RO, C_LOG_APPEND, D_DIR, NUL, ZERO, URANDOM,
       MOVED, NONBLOCK, SHARED, NFDS };

struct fdcase {
	const char *what;
	const char *path;	/* what the fd must refer to */
	int fd;
	int accmode;
	int cloexec;
	off_t off;
};

struct fdsnap {
	int open;
	dev_t dev, rdev;
	ino_t ino;
	mode_t mode;
	int fl, fd_flags;
	off_t off;		/* -1 if lseek fails */
};

static struct fdcase fc[NFDS];
static struct fdsnap before[MAX_FD];
static int max_fd;
static char dir[4096], data_path[4200], log_path[4200], third_path[4200],
	    nb_path[4200];

static unsigned char pattern(int i, int salt)
{
	return (unsigned char)(i * 7 + salt);
}

static void snap(struct fdsnap *s)
{
	for (int fd = 0; fd < max_fd; fd++) {
		struct stat st;

		memset(&s[fd], 0, sizeof(s[fd]));
		s[fd].fd_flags = fcntl(fd, F_GETFD);
		if (s[fd].fd_flags < 0)
			continue;
		s[fd].open = 1;
		s[fd].fl = fcntl(fd, F_GETFL);
		if (fstat(fd, &st) == 0) {
			s[fd].dev = st.st_dev;
			s[fd].ino = st.st_ino;
			s[fd].rdev = st.st_rdev;
			s[fd].mode = st.st_mode;
		}
		s[fd].off = lseek(fd, 0, SEEK_CUR);
	}
}

/* All fds but stdin (which is the runner's business) as they were. */
static void compare_fds(void)
{
	static struct fdsnap after[MAX_FD];

	snap(after);
	for (int fd = 1; fd < max_fd; fd++) {
		struct fdsnap *b = &before[fd], *a = &after[fd];

		if (b->open != a->open) {
			tp_fail("fd %d: %s after restart", fd,
				b->open ? "closed" : "open (leaked)");
			continue;
		}
		if (!b->open)
			continue;
		tp_check(a->dev == b->dev && a->ino == b->ino &&
			 a->rdev == b->rdev && a->mode == b->mode,
			 "fd %d: dev/ino/rdev/mode %#lx/%lu/%#lx/%o, "
			 "was %#lx/%lu/%#lx/%o", fd,
			 (unsigned long)a->dev, (unsigned long)a->ino,
			 (unsigned long)a->rdev, a->mode,
			 (unsigned long)b->dev, (unsigned long)b->ino,
			 (unsigned long)b->rdev, b->mode);
		tp_check(a->fl == b->fl, "fd %d: F_GETFL %#o, was %#o", fd,
			 a->fl, b->fl);
		tp_check(a->fd_flags == b->fd_flags,
			 "fd %d: F_GETFD %#x, was %#x", fd, a->fd_flags,
			 b->fd_flags);
		/* The log on stdout/stderr moves as the program prints. */
		if (fd > 2)
			tp_check(a->off == b->off,
				 "fd %d: offset %lld, was %lld", fd,
				 (long long)a->off, (long long)b->off);
	}
}

/* The fd against what setup meant it to be. */
static void check_case(const struct fdcase *c, const char *when)
{
	struct stat st, want;
	int fl, fdf;
	off_t off;

	if (fstat(c->fd, &st) != 0) {
		tp_fail("%s: %s fd %d: fstat: %s", when, c->what, c->fd,
			strerror(errno));
		return;
	}
	if (stat(c->path, &want) != 0) {
		tp_fail("%s: stat %s: %s", when, c->path, strerror(errno));
		return;
	}
	tp_check(st.st_dev == want.st_dev && st.st_ino == want.st_ino &&
		 st.st_rdev == want.st_rdev,
		 "%s: %s fd %d is not %s", when, c->what, c->fd, c->path);
	fl = fcntl(c->fd, F_GETFL);
	tp_check((fl & O_ACCMODE) == c->accmode,
		 "%s: %s fd %d: access mode %d, want %d", when, c->what,
		 c->fd, fl & O_ACCMODE, c->accmode);
	tp_check(!!(fl & O_APPEND) == (c == &fc[C_LOG_APPEND]),
		 "%s: %s fd %d: O_APPEND %s", when, c->what, c->fd,
		 fl & O_APPEND ? "set" : "clear");
	tp_check(!!(fl & O_NONBLOCK) == (c == &fc[NONBLOCK]),
		 "%s: %s fd %d: O_NONBLOCK %s", when, c->what, c->fd,
		 fl & O_NONBLOCK ? "set" : "clear");
	fdf = fcntl(c->fd, F_GETFD);
	tp_check(!!(fdf & FD_CLOEXEC) == c->cloexec,
		 "%s: %s fd %d: FD_CLOEXEC %d, want %d", when, c->what, c->fd,
		 !!(fdf & FD_CLOEXEC), c->cloexec);
	off = lseek(c->fd, 0, SEEK_CUR);
	if (c->off >= 0)
		tp_check(off == c->off, "%s: %s fd %d: offset %lld, want %lld",
			 when, c->what, c->fd, (long long)off,
			 (long long)c->off);
}

static int xopen(const char *path, int flags)
{
	int fd = open(path, flags, 0600);

	if (fd < 0) {
		tp_fail("setup: open %s: %s", path, strerror(errno));
		exit(1);
	}
	return fd;
}

static void fill(int fd, int size, int salt)
{
	unsigned char buf[DATA_SIZE];

	for (int i = 0; i < size; i++)
		buf[i] = pattern(i, salt);
	if (write(fd, buf, size) != size) {
		tp_fail("setup: write: %s", strerror(errno));
		exit(1);
	}
}

static void set_case(int i, const char *what, const char *path, int fd,
		     int accmode, int cloexec, off_t off)
{
	fc[i] = (struct fdcase){ what, path, fd, accmode, cloexec, off };
}

/* @n bytes read through @fd must be the pattern from file offset @at. */
static void expect_pattern(int fd, int at, int n, int salt, const char *what)
{
	unsigned char buf[64];
	int got = read(fd, buf, n);

	if (got != n) {
		tp_fail("%s: read %d of %d bytes: %s", what, got, n,
			got < 0 ? strerror(errno) : "short");
		return;
	}
	for (int i = 0; i < n; i++)
		if (buf[i] != pattern(at + i, salt)) {
			tp_fail("%s: byte %d is %#x, want %#x", what, at + i,
				buf[i], pattern(at + i, salt));
			return;
		}
}

static void cleanup(void)
{
	unlink(data_path);
	unlink(log_path);
	unlink(third_path);
	unlink(nb_path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TP_TMPDIR");
	struct rlimit rl;
	int fd, gap;

	tp_init(argc, argv);
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/ckpt-files-XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		tp_fail("setup: mkdtemp %s: %s", dir, strerror(errno));
		return 1;
	}
	snprintf(data_path, sizeof(data_path), "%s/data", dir);
	snprintf(log_path, sizeof(log_path), "%s/log", dir);
	snprintf(third_path, sizeof(third_path), "%s/third", dir);
	snprintf(nb_path, sizeof(nb_path), "%s/nonblock", dir);
	atexit(cleanup);

	max_fd = MAX_FD;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < MAX_FD)
		max_fd = rl.rlim_cur;

	/* One file opened twice: two open file descriptions, two offsets. */
	fd = xopen(data_path, O_RDWR | O_CREAT | O_TRUNC);
	fill(fd, DATA_SIZE, 3);
	lseek(fd, 1234, SEEK_SET);
	set_case(A_DATA_RW, "data O_RDWR", data_path, fd, O_RDWR, 0, 1234);
	fd = xopen(data_path, O_RDONLY);
	lseek(fd, 77, SEEK_SET);
	set_case(B_DATA_RO, "data O_RDONLY", data_path, fd, O_RDONLY, 0, 77);

	/* Closed below: leaves a hole among the low fd numbers. */
	gap = xopen("/dev/null", O_RDONLY);

	/* O_APPEND with the offset moved back to 0: a write must still go
	 * to the end, which it would not if O_APPEND were lost. */
	fd = xopen(log_path, O_WRONLY | O_APPEND | O_CREAT);
	if (write(fd, "hello\n", 6) != 6)
		tp_fail("setup: write log: %s", strerror(errno));
	lseek(fd, 0, SEEK_SET);
	set_case(C_LOG_APPEND, "log O_APPEND", log_path, fd, O_WRONLY, 0, 0);

	fd = xopen(dir, O_RDONLY | O_DIRECTORY);
	set_case(D_DIR, "directory", dir, fd, O_RDONLY, 0, -1);
	fd = xopen("/dev/null", O_WRONLY);
	set_case(NUL, "/dev/null", "/dev/null", fd, O_WRONLY, 0, -1);
	fd = xopen("/dev/zero", O_RDONLY | O_CLOEXEC);
	set_case(ZERO, "/dev/zero", "/dev/zero", fd, O_RDONLY, 1, -1);
	fd = xopen("/dev/urandom", O_RDONLY);
	set_case(URANDOM, "/dev/urandom", "/dev/urandom", fd, O_RDONLY, 0, -1);

	/* Moved far up, and close-on-exec set after the move (dup2 clears
	 * it on the new fd). */
	fd = xopen(third_path, O_RDWR | O_CREAT | O_TRUNC);
	fill(fd, 600, 11);
	lseek(fd, 300, SEEK_SET);
	if (dup2(fd, 1000) != 1000) {
		tp_fail("setup: dup2: %s", strerror(errno));
		return 1;
	}
	close(fd);
	fcntl(1000, F_SETFD, FD_CLOEXEC);
	set_case(MOVED, "third (dup2'd to 1000)", third_path, 1000, O_RDWR, 1,
		 300);

	fd = xopen(nb_path, O_RDWR | O_CREAT | O_TRUNC);
	fill(fd, 100, 5);
	close(fd);
	fd = xopen(nb_path, O_RDONLY | O_NONBLOCK);
	lseek(fd, 10, SEEK_SET);
	set_case(NONBLOCK, "nonblock O_NONBLOCK", nb_path, fd, O_RDONLY, 0, 10);

	/* Shares A's open file description, so also its offset. */
	fd = dup(fc[A_DATA_RW].fd);
	set_case(SHARED, "dup of data O_RDWR", data_path, fd, O_RDWR, 0, 1234);

	close(gap);

	snap(before);
	for (int i = 0; i < NFDS; i++)
		check_case(&fc[i], "setup");
	tp_check(!before[gap].open, "setup: gap fd %d open", gap);
	tp_check(gap < fc[NONBLOCK].fd, "setup: gap fd %d is not a hole", gap);
	if (tp_failures)
		return 1;

	tp_ready();
	tp_wait_go();

	compare_fds();
	for (int i = 0; i < NFDS; i++)
		check_case(&fc[i], "after restart");
	errno = 0;
	tp_check(fcntl(gap, F_GETFD) < 0 && errno == EBADF,
		 "gap fd %d: open after restart", gap);

	/* Offsets in use: A and its dup share one, B has its own. */
	expect_pattern(fc[A_DATA_RW].fd, 1234, 16, 3, "read data O_RDWR");
	tp_check(lseek(fc[SHARED].fd, 0, SEEK_CUR) == 1250,
		 "dup'd fd does not share the offset of fd %d",
		 fc[A_DATA_RW].fd);
	expect_pattern(fc[B_DATA_RO].fd, 77, 16, 3, "read data O_RDONLY");
	tp_check(lseek(fc[A_DATA_RW].fd, 0, SEEK_CUR) == 1250,
		 "the O_RDONLY fd shares the offset of the O_RDWR fd");
	expect_pattern(1000, 300, 16, 11, "read fd 1000");
	expect_pattern(fc[NONBLOCK].fd, 10, 16, 5, "read O_NONBLOCK fd");

	/* The access modes are enforced, not just reported. */
	errno = 0;
	tp_check(write(fc[B_DATA_RO].fd, "x", 1) < 0 && errno == EBADF,
		 "write to the O_RDONLY fd did not fail with EBADF");
	tp_check(pwrite(fc[A_DATA_RW].fd, "Z", 1, 4999) == 1,
		 "write to the O_RDWR fd: %s", strerror(errno));

	/* O_APPEND: lands at the end although the offset was 0. */
	if (write(fc[C_LOG_APPEND].fd, "world\n", 6) != 6) {
		tp_fail("write to the O_APPEND fd: %s", strerror(errno));
	} else {
		char buf[32] = "";
		int lfd = open(log_path, O_RDONLY);
		ssize_t n = lfd >= 0 ? read(lfd, buf, sizeof(buf) - 1) : -1;

		tp_check(n == 12 && !memcmp(buf, "hello\nworld\n", 12),
			 "log after O_APPEND write: %zd bytes \"%.*s\"", n,
			 n > 0 ? (int)n : 0, buf);
		if (lfd >= 0)
			close(lfd);
	}

	/* Devices work. */
	{
		char buf[4096];
		ssize_t n;
		int ok = 1;

		memset(buf, 0xff, sizeof(buf));
		n = read(fc[ZERO].fd, buf, sizeof(buf));
		for (ssize_t i = 0; i < n; i++)
			ok &= buf[i] == 0;
		tp_check(n == sizeof(buf) && ok, "read /dev/zero: %zd bytes%s",
			 n, ok ? "" : ", not all zero");
		tp_check(write(fc[NUL].fd, buf, 100) == 100,
			 "write /dev/null: %s", strerror(errno));
		tp_check(read(fc[URANDOM].fd, buf, 32) == 32,
			 "read /dev/urandom: %s", strerror(errno));
	}

	/* The directory fd is usable as one. */
	{
		int dfd = openat(fc[D_DIR].fd, "data", O_RDONLY);

		tp_check(dfd >= 0, "openat(directory fd, \"data\"): %s",
			 strerror(errno));
		if (dfd >= 0)
			close(dfd);
	}

	/* stderr is still writable (stdout is proven by the result line). */
	tp_check(write(2, "", 0) == 0, "write to stderr: %s", strerror(errno));

	return tp_done();
}
