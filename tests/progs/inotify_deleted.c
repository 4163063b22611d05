/* inotify_deleted.c - an inotify watch on a file whose name was removed,
 * still open.
 *
 * The program watches its directory (wd 1) and FILE (wd 2, IN_MODIFY |
 * IN_CLOSE_WRITE), keeps FILE open read-write, removes it and reads the
 * events away.  After restart: writing through the fd gives IN_MODIFY on
 * wd 2, and closing it IN_CLOSE_WRITE on wd 2: the watch is on the
 * inode the fd is.  A fresh process has none of this.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/inotify.h>

/* The events on @wd read now, or'ed. */
static uint32_t events(int ifd, int wd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pfd = { .fd = ifd, .events = POLLIN };
	uint32_t got = 0;
	ssize_t n;

	poll(&pfd, 1, 1000);
	while ((n = read(ifd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const void *)p;

			if (e->wd == wd)
				got |= e->mask;
			p += sizeof(*e) + e->len;
		}
	return got;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], name[PATH_MAX + 16], *slash;
	int ifd, fd, wd1, wd2;

	tp_init(argc, argv);
	snprintf(dir, sizeof(dir), "%s", tp_gofile);
	slash = strrchr(dir, '/');
	*slash = '\0';
	snprintf(name, sizeof(name), "%s/watched-file", dir);
	ifd = inotify_init1(IN_NONBLOCK);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	wd1 = inotify_add_watch(ifd, dir, IN_CREATE);
	wd2 = inotify_add_watch(ifd, name, IN_MODIFY | IN_CLOSE_WRITE);
	if (ifd < 0 || fd < 0 || wd1 != 1 || wd2 != 2 || unlink(name)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	events(ifd, wd2);
	tp_ready();
	tp_wait_go();
	events(ifd, wd2);	/* restart's own opens of the file, if any */
	tp_check(write(fd, "x", 1) == 1, "write: %s", strerror(errno));
	tp_check(events(ifd, wd2) & IN_MODIFY, "no IN_MODIFY on wd 2");
	close(fd);
	tp_check(events(ifd, wd2) & IN_CLOSE_WRITE, "no IN_CLOSE_WRITE on wd 2");
	return tp_done();
}
