/* inotify.c - inotify watches survive with their watch descriptors.
 *
 * In $TP_TMPDIR: a watch on a directory (IN_CREATE|IN_DELETE), on a file
 * (IN_MODIFY), a gap of removed watches, then a watch on a second file
 * with a high wd, and one on a symlink itself (IN_DONT_FOLLOW).  The fd
 * is non-blocking, and an epoll watches it.  An event is left queued at checkpoint (it is lost:
 * documented; not checked).  After restart every watch reports its
 * change under its own wd, adding an existing watch again returns its
 * wd, and a new watch gets a wd above all of them.
 */
#include "tp.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>

static char dir[512], fa[600], fb[600], fl[600], fnew[600];
static int in, ep, wd_dir, wd_a, wd_b, wd_l;

static void path_in(char *out, const char *name)
{
	snprintf(out, 600, "%s/%s", dir, name);
}

static void touch_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	if (fd < 0 || write(fd, "x", 1) != 1 || close(fd))
		exit(3);
}

static void setup(void)
{
	const char *tmp = getenv("TP_TMPDIR");

	snprintf(dir, sizeof(dir), "%s/watched", tmp ? tmp : "/tmp");
	if (mkdir(dir, 0755))
		exit(3);
	path_in(fa, "a");
	path_in(fb, "b");
	path_in(fl, "link");
	path_in(fnew, "new");
	touch_file(fa);
	touch_file(fb);
	if (symlink("a", fl))
		exit(3);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	wd_dir = inotify_add_watch(in, dir, IN_CREATE | IN_DELETE | IN_ONLYDIR);
	wd_a = inotify_add_watch(in, fa, IN_MODIFY);
	for (int i = 0; i < 20; i++)	/* a gap in the wds */
		inotify_rm_watch(in, inotify_add_watch(in, "/", IN_ATTRIB));
	wd_b = inotify_add_watch(in, fb, IN_MODIFY | IN_CLOSE_WRITE);
	wd_l = inotify_add_watch(in, fl, IN_ATTRIB | IN_DONT_FOLLOW);
	if (in < 0 || wd_dir < 1 || wd_a < 1 || wd_b < 20 || wd_l < 1)
		exit(3);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, in,
				&(struct epoll_event){ .events = EPOLLIN, .data.u64 = 0x1e }))
		exit(3);
	/* drop the gap's IN_IGNORED, then queue one event: lost, as said */
	while (read(in, (char[4096]){ 0 }, 4096) > 0)
		;
	touch_file(fa);
}

/* Drain the queue; the mask of the events seen for @wd (and @name). */
static uint32_t events_for(int wd, const char *name)
{
	char buf[8192] __attribute__((aligned(8)));
	uint32_t mask = 0;
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;

			if (e->wd == wd && (!name || (e->len && !strcmp(e->name, name))))
				mask |= e->mask;
			p += sizeof(*e) + e->len;
		}
	return mask;
}

int main(int argc, char **argv)
{
	uint32_t m;
	int flags, wd;

	tp_init(argc, argv);
	setup();
	tp_ready();
	tp_wait_go();

	flags = fcntl(in, F_GETFL);
	tp_check(flags >= 0 && (flags & O_NONBLOCK), "inotify fd flags %#x", flags);
	events_for(-1, NULL);	/* whatever is there (nothing should be) */
	touch_file(fa);
	{
		struct epoll_event ev = { 0 };

		tp_check(epoll_wait(ep, &ev, 1, 0) == 1 && ev.data.u64 == 0x1e,
			 "epoll of the inotify fd: no event");
	}
	m = events_for(wd_a, NULL);
	tp_check(m & IN_MODIFY, "write to a: no IN_MODIFY under wd %d (mask %#x)", wd_a, m);
	touch_file(fb);
	m = events_for(wd_b, NULL);
	tp_check((m & IN_MODIFY) && (m & IN_CLOSE_WRITE),
		 "write to b: mask %#x under wd %d", m, wd_b);
	touch_file(fnew);
	m = events_for(wd_dir, "new");
	tp_check(m & IN_CREATE, "create in dir: no IN_CREATE under wd %d (mask %#x)", wd_dir, m);
	tp_check(unlink(fnew) == 0, "unlink");
	m = events_for(wd_dir, "new");
	tp_check(m & IN_DELETE, "unlink in dir: no IN_DELETE under wd %d (mask %#x)", wd_dir, m);
	tp_check(fchmodat(AT_FDCWD, fl, 0600, AT_SYMLINK_NOFOLLOW) == 0 || errno == EOPNOTSUPP,
		 "lchmod");
	tp_check(lchown(fl, 0, 0) == 0, "lchown");
	m = events_for(wd_l, NULL);
	tp_check(m & IN_ATTRIB, "lchown link: no IN_ATTRIB under wd %d (mask %#x)", wd_l, m);
	wd = inotify_add_watch(in, fb, IN_MODIFY | IN_CLOSE_WRITE);
	tp_check(wd == wd_b, "watch on b again: wd %d, not %d", wd, wd_b);
	wd = inotify_add_watch(in, "/", IN_ATTRIB);
	tp_check(wd > wd_b && wd > wd_l && wd > wd_a, "a new watch got wd %d", wd);
	return tp_done();
}
