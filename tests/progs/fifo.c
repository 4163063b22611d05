/* fifo.c - named pipes with data in them, ends in two processes.
 *
 * FIFO a: the parent holds a read end (O_NONBLOCK) and a write end, with
 * a capacity of 128 KiB (not the default) and 3000 bytes written, 100
 * of them read; the child holds a second read end of its own.  FIFO b:
 * only a write end is left in the tree, with 500 bytes in it (its reader
 * is gone).  After restart: every fd is the same FIFO with the same
 * flags, a holds exactly the 2900 unread bytes in order (put back once,
 * not once per end), its capacity is kept, b's bytes are there, and the
 * ends work (the child reads what the parent writes).  A fresh process
 * has none of this.
 */
#include "tp.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define CAP	(128 * 1024)

static char dir[4096], fa[4200], fb[4200], pinged[4200];

static unsigned char pattern(int i)
{
	return (unsigned char)(i * 13 + 5);
}

static void cleanup(void)
{
	unlink(fa);
	unlink(fb);
	unlink(pinged);
	rmdir(dir);
}

static int xopen(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0) {
		tp_fail("setup: open %s: %s", path, strerror(errno));
		exit(1);
	}
	return fd;
}

static void put(int fd, int from, int n)
{
	unsigned char buf[4096];

	for (int i = 0; i < n; i++)
		buf[i] = pattern(from + i);
	if (write(fd, buf, n) != n) {
		tp_fail("setup: write: %s", strerror(errno));
		exit(1);
	}
}

/* Exactly @n bytes of the pattern from @from, then nothing. */
static void expect(int fd, int from, int n, const char *what)
{
	unsigned char buf[8192];
	int avail = -1, got;

	ioctl(fd, FIONREAD, &avail);
	tp_check(avail == n, "%s: %d bytes in it, want %d", what, avail, n);
	got = read(fd, buf, sizeof(buf));
	tp_check(got == n, "%s: read %d bytes, want %d", what, got, n);
	for (int i = 0; i < got && i < n; i++)
		if (buf[i] != pattern(from + i)) {
			tp_fail("%s: byte %d is %#x, want %#x", what, i, buf[i],
				pattern(from + i));
			break;
		}
}

static void same_fifo(int fd, const struct stat *want, int flags, const char *what)
{
	struct stat st;

	tp_check(fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
		 st.st_ino == want->st_ino && st.st_dev == want->st_dev,
		 "%s: fd %d is not the FIFO", what, fd);
	tp_check(fcntl(fd, F_GETFL) == flags, "%s: F_GETFL %#o, want %#o", what,
		 fcntl(fd, F_GETFL), flags);
}

static int child(int rd, const struct stat *sa, int flags)
{
	char buf[16] = "";

	tp_wait_go();
	same_fifo(rd, sa, flags, "child's read end");
	/* the parent writes "ping" once it has read what was in the FIFO */
	while (access(pinged, F_OK))
		usleep(1000);
	if (read(rd, buf, 4) != 4 || memcmp(buf, "ping", 4))
		tp_fail("child: read \"%.4s\", want ping", buf);
	return tp_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TP_TMPDIR");
	int ra, wa, wb, tb, crd, st, fl_ra, fl_wa, fl_wb, fl_crd;
	struct stat sa, sb;
	pid_t kid;

	tp_init(argc, argv);
	snprintf(dir, sizeof(dir), "%s/ckpt-fifo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		tp_fail("setup: mkdtemp: %s", strerror(errno));
		return 1;
	}
	snprintf(fa, sizeof(fa), "%s/a", dir);
	snprintf(fb, sizeof(fb), "%s/b", dir);
	snprintf(pinged, sizeof(pinged), "%s/pinged", dir);
	atexit(cleanup);
	if (mkfifo(fa, 0600) || mkfifo(fb, 0600)) {
		tp_fail("setup: mkfifo: %s", strerror(errno));
		return 1;
	}
	ra = xopen(fa, O_RDONLY | O_NONBLOCK);
	wa = xopen(fa, O_WRONLY);
	if (fcntl(wa, F_SETPIPE_SZ, CAP) != CAP)
		tp_fail("setup: F_SETPIPE_SZ: %s", strerror(errno));
	put(wa, 0, 3000);
	{
		char buf[100];

		if (read(ra, buf, 100) != 100)
			tp_fail("setup: read: %s", strerror(errno));
	}
	tb = xopen(fb, O_RDONLY | O_NONBLOCK);
	wb = xopen(fb, O_WRONLY | O_NONBLOCK);
	put(wb, 0, 500);
	close(tb);
	crd = xopen(fa, O_RDONLY);
	stat(fa, &sa);
	stat(fb, &sb);
	fl_ra = fcntl(ra, F_GETFL);
	fl_wa = fcntl(wa, F_GETFL);
	fl_wb = fcntl(wb, F_GETFL);
	fl_crd = fcntl(crd, F_GETFL);
	kid = fork();
	if (kid == 0)
		_exit(child(crd, &sa, fl_crd));
	close(crd);
	if (tp_failures)
		return 1;

	tp_ready();
	tp_wait_go();

	same_fifo(ra, &sa, fl_ra, "read end of a");
	same_fifo(wa, &sa, fl_wa, "write end of a");
	same_fifo(wb, &sb, fl_wb, "write end of b");
	tp_check(fcntl(wa, F_GETPIPE_SZ) == CAP, "capacity of a: %d, want %d",
		 fcntl(wa, F_GETPIPE_SZ), CAP);
	expect(ra, 100, 2900, "FIFO a");
	{
		int rb = open(fb, O_RDONLY | O_NONBLOCK);

		tp_check(rb >= 0, "open b: %s", strerror(errno));
		if (rb >= 0)
			expect(rb, 0, 500, "FIFO b");
	}
	tp_check(write(wa, "ping", 4) == 4, "write to a: %s", strerror(errno));
	close(open(pinged, O_WRONLY | O_CREAT, 0600));
	tp_check(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "child %d failed (status %#x)", kid, st);
	return tp_done();
}
