/* unix_ghost.c - unix sockets whose path no longer leads to them.
 *
 * A stream listener bound to DIR/a, with a connection waiting in its
 * backlog, then DIR/a removed; a datagram socket bound to DIR/b with a
 * message queued for it, then DIR/b replaced by a regular file.  After
 * restart: getsockname() of each still says its path, DIR/a is not
 * there, DIR/b is the same regular file, the listener still listens and
 * its waiting connection is accepted and carries data, and the queued
 * datagram is there.  A fresh process has none of this.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static struct sockaddr_un a = { .sun_family = AF_UNIX }, b = { .sun_family = AF_UNIX };

static int bound(int type, const struct sockaddr_un *to)
{
	int s = socket(AF_UNIX, type, 0);

	if (s < 0 || bind(s, (const struct sockaddr *)to, sizeof(*to))) {
		tp_fail("setup: bind %s: %s", to->sun_path, strerror(errno));
		exit(1);
	}
	return s;
}

static void check_name(int s, const struct sockaddr_un *want)
{
	struct sockaddr_un got = { 0 };
	socklen_t len = sizeof(got);

	tp_check(!getsockname(s, (struct sockaddr *)&got, &len) &&
		 !strcmp(got.sun_path, want->sun_path),
		 "getsockname says %s, not %s", got.sun_path, want->sun_path);
}

static void check_listener(int lst, int cl)
{
	int one = 0, srv;
	socklen_t len = sizeof(one);
	char buf[8] = "";

	tp_check(!getsockopt(lst, SOL_SOCKET, SO_ACCEPTCONN, &one, &len) && one,
		 "the listener does not listen");
	srv = accept4(lst, NULL, NULL, SOCK_NONBLOCK);
	tp_check(srv >= 0, "accept: %s", strerror(errno));
	tp_check(write(cl, "ping", 4) == 4 && srv >= 0 && read(srv, buf, 8) == 4 &&
		 !memcmp(buf, "ping", 4), "the waiting connection carries nothing");
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], *slash, buf[64] = "";
	int lst, cl, dg, fd;
	struct stat st;

	tp_init(argc, argv);
	snprintf(dir, sizeof(dir), "%s", tp_gofile);
	slash = strrchr(dir, '/');
	snprintf(slash + 1, sizeof(dir) - (slash + 1 - dir), "ughost");
	mkdir(dir, 0755);
	if (strlen(dir) > 90) {
		tp_fail("setup: %s too long for a socket path", dir);
		return 1;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%.90s/a", dir);
	snprintf(b.sun_path, sizeof(b.sun_path), "%.90s/b", dir);
	unlink(a.sun_path);
	unlink(b.sun_path);
	lst = bound(SOCK_STREAM, &a);
	dg = bound(SOCK_DGRAM, &b);
	cl = socket(AF_UNIX, SOCK_STREAM, 0);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (listen(lst, 4) || connect(cl, (struct sockaddr *)&a, sizeof(a)) ||
	    sendto(fd, "queued", 6, 0, (struct sockaddr *)&b, sizeof(b)) != 6 ||
	    unlink(a.sun_path) || unlink(b.sun_path)) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	close(fd);
	fd = open(b.sun_path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0 || write(fd, "other", 5) != 5) {
		tp_fail("setup: %s: %s", b.sun_path, strerror(errno));
		return 1;
	}
	close(fd);
	tp_ready();
	tp_wait_go();
	check_name(lst, &a);
	check_name(dg, &b);
	tp_check(access(a.sun_path, F_OK) && errno == ENOENT, "%s is there again", a.sun_path);
	tp_check(!stat(b.sun_path, &st) && S_ISREG(st.st_mode) && st.st_size == 5,
		 "%s is not the file put there", b.sun_path);
	check_listener(lst, cl);
	tp_check(recv(dg, buf, sizeof(buf), MSG_DONTWAIT) == 6 && !memcmp(buf, "queued", 6),
		 "the queued datagram is not there");
	unlink(b.sun_path);
	rmdir(dir);
	return tp_done();
}
