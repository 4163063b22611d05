/* fifo_ghost.c - ends of a FIFO whose name was removed.
 *
 * The program opens a FIFO (mode 0640) read-write, read-only nonblocking
 * and write-only, writes 1000 bytes into it and removes its name.  After
 * restart: the three fds are one FIFO with no links, each with its
 * flags, the link still reads "NAME (deleted)", the 1000 bytes are
 * there in order, what the write end writes comes out of the read end,
 * and no name was left behind.  A fresh process has none of this.
 */
#include "tp.h"

#ifdef __powerpc__
#define KERNEL_O_LARGEFILE	0200000
#else
#define KERNEL_O_LARGEFILE	0100000
#endif

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

static char name[PATH_MAX], want[PATH_MAX + 16];

static void fd_link(int fd, char *buf, size_t len)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, len - 1);
	buf[n < 0 ? 0 : n] = '\0';
}

static void check_data(int fd)
{
	unsigned char buf[2000];
	ssize_t n = read(fd, buf, sizeof(buf));

	tp_check(n == 1000, "read %zd bytes, not 1000", n);
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] != (unsigned char)(i * 7 + 3)) {
			tp_fail("byte %zd is %u", i, buf[i]);
			break;
		}
}

int main(int argc, char **argv)
{
	unsigned char buf[1000];
	char got[PATH_MAX + 16], *slash;
	int rw, ro, wo, i;
	struct stat a, b, c;

	tp_init(argc, argv);
	snprintf(name, sizeof(name), "%s", tp_gofile);
	slash = strrchr(name, '/');
	snprintf(slash + 1, sizeof(name) - (slash + 1 - name), "ghost-fifo");
	unlink(name);
	if (mkfifo(name, 0640) || chmod(name, 0640)) {
		tp_fail("setup: mkfifo %s: %s", name, strerror(errno));
		return 1;
	}
	rw = open(name, O_RDWR);
	ro = open(name, O_RDONLY | O_NONBLOCK);
	wo = open(name, O_WRONLY);
	for (i = 0; i < 1000; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	if (rw < 0 || ro < 0 || wo < 0 || write(wo, buf, 1000) != 1000 || unlink(name)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	fd_link(rw, want, sizeof(want));
	tp_ready();
	tp_wait_go();
	fd_link(ro, got, sizeof(got));
	tp_check(!strcmp(got, want), "link is %s, not %s", got, want);
	tp_check(!fstat(rw, &a) && !fstat(ro, &b) && !fstat(wo, &c), "fstat");
	tp_check(S_ISFIFO(a.st_mode) && a.st_nlink == 0, "not a deleted FIFO");
	tp_check((a.st_mode & 07777) == 0640, "mode %o", a.st_mode & 07777);
	tp_check(a.st_ino == b.st_ino && a.st_ino == c.st_ino && a.st_dev == c.st_dev,
		 "the ends are not one FIFO");
	tp_check((fcntl(rw, F_GETFL) & O_ACCMODE) == O_RDWR, "rw flags");
	/* (the kernel's O_LARGEFILE is set on 64-bit: 0100000, powerpc's
	 * 0200000; glibc's O_LARGEFILE is 0 there) */
	tp_check((fcntl(ro, F_GETFL) & ~KERNEL_O_LARGEFILE) == (O_RDONLY | O_NONBLOCK),
		 "ro flags %o", fcntl(ro, F_GETFL));
	tp_check((fcntl(wo, F_GETFL) & O_ACCMODE) == O_WRONLY, "wo flags");
	check_data(ro);
	tp_check(write(wo, "x", 1) == 1 && read(ro, buf, 10) == 1 && buf[0] == 'x',
		 "the ends do not meet");
	tp_check(access(name, F_OK) && errno == ENOENT, "%s is there again", name);
	return tp_done();
}
