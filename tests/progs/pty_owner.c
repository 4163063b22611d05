/* pty_owner.c - a pty's slave with its own owner and mode, and a pty
 * slave whose master was closed.
 *
 * The first pair: /dev/pts/N given to 13333:44444, mode 0640.  The
 * second: two slave descriptions kept, the master closed (they are hung
 * up, /dev/pts/M is gone).
 *
 * After restart: the slave's owner and mode (a pty made anew is root's,
 * 0620 or 0600), the pair still talks both ways; the hung-up slaves are
 * still pty slaves whose name reads "(deleted)", reading them gives
 * EOF or EIO and writing EIO.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>

static int pair(int *m, int *s)
{
	*m = posix_openpt(O_RDWR | O_NOCTTY);
	if (*m < 0 || grantpt(*m) || unlockpt(*m))
		return -1;
	*s = open(ptsname(*m), O_RDWR | O_NOCTTY);
	return *s < 0 ? -1 : 0;
}

static int is_deleted_pts(int fd)
{
	char proc[64], link[PATH_MAX];
	struct stat st;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, link, sizeof(link) - 1);
	link[n < 0 ? 0 : n] = '\0';
	return !fstat(fd, &st) && S_ISCHR(st.st_mode) && major(st.st_rdev) >= 136 &&
	       major(st.st_rdev) <= 143 && strstr(link, " (deleted)");
}

int main(int argc, char **argv)
{
	int m, s, m2, h1, h2;
	struct termios tio;
	struct stat st;
	char buf[8];

	tp_init(argc, argv);
	if (pair(&m, &s) || fchown(s, 13333, 44444) || fchmod(s, 0640) || tcgetattr(s, &tio) ||
	    (cfmakeraw(&tio), tcsetattr(s, TCSANOW, &tio)) || pair(&m2, &h1) ||
	    (h2 = open(ptsname(m2), O_RDWR | O_NOCTTY)) < 0 || close(m2)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	tp_ready();
	tp_wait_go();
	tp_check(!fstat(s, &st) && st.st_uid == 13333 && st.st_gid == 44444,
		 "slave owner %d:%d", (int)st.st_uid, (int)st.st_gid);
	tp_check((st.st_mode & 07777) == 0640, "slave mode %o", st.st_mode & 07777);
	tp_check(write(m, "ping\n", 5) == 5 && read(s, buf, 5) == 5 && !memcmp(buf, "ping\n", 5),
		 "master to slave");
	tp_check(write(s, "pong", 4) == 4 && read(m, buf, 4) == 4 && !memcmp(buf, "pong", 4),
		 "slave to master");
	tp_check(is_deleted_pts(h1) && is_deleted_pts(h2), "the hung-up slaves are not removed pts");
	tp_check(read(h1, buf, 1) <= 0 && read(h2, buf, 1) <= 0, "a hung-up slave reads");
	tp_check(write(h1, "x", 1) < 0 && errno == EIO, "the hung-up slave writes");
	return tp_done();
}
