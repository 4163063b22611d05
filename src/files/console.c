/* console.c - a terminal container's console: the master of the pty
 * that restart made for a session whose terminal's master was outside
 * the tree (TTY_ORPHAN) goes to restart's caller, as a container runtime
 * takes its console: a callback of the library's caller (the CRIU
 * drop-in's orphan-pts-master notification), or a unix stream socket
 * (`--console-socket PATH`, as runc's), over which it is sent with the
 * name of its slave, as runc's recvtty expects. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "console.h"
#include "../fdpass.h"

static int send_master(int sk, int master)
{
	static const char name[] = "/dev/ptmx";
	ssize_t n = fd_send(sk, name, sizeof(name) - 1, &master, 1, MSG_NOSIGNAL);

	return n == (ssize_t)sizeof(name) - 1 ? 0 : -errno;
}

static int to_socket(struct rst_ctx *c, const char *path, int master)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int sk, ret;

	if (strlen(path) >= sizeof(a.sun_path))
		return log_err(c->log, ENAMETOOLONG, "--console-socket %s:", path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	sk = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sk < 0)
		return log_err(c->log, errno, "--console-socket %s:", path);
	ret = connect(sk, (struct sockaddr *)&a, sizeof(a)) ? -errno : send_master(sk, master);
	close(sk);
	return ret ? log_err(c->log, -ret, "--console-socket %s: sending the console's master:",
			     path) : 0;
}

int console_give(struct rst_ctx *c, int master)
{
	const struct ckpt_restart_opts *o = c->opts;
	int ret;

	if (o && o->console) {
		ret = o->console(o->console_arg, master);
		return ret ? log_err(c->log, ret < 0 ? -ret : EIO,
				     "the console's master: its taker failed it:") : 0;
	}
	if (o && o->console_socket)
		return to_socket(c, o->console_socket, master);
	return log_err(c->log, EINVAL, "the console's master: nobody to give it to");
}
