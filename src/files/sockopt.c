/* sockopt.c - helpers for socket kinds of file. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sockopt.h"

int sock_copy(pid_t pid, int fd)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0), sk, err;

	if (pidfd < 0)
		return -errno;
	sk = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = errno;
	close(pidfd);
	return sk < 0 ? -err : sk;
}

int sock_get_int(int sk, int level, int name, int *val)
{
	socklen_t len = sizeof(*val);

	*val = 0;
	return getsockopt(sk, level, name, val, &len) ? -errno : 0;
}

int sock_set_int(int sk, int level, int name, int val)
{
	return setsockopt(sk, level, name, &val, sizeof(val)) ? -errno : 0;
}

int sock_family_of(pid_t pid, int fd)
{
	int sk = sock_copy(pid, fd), family, ret;

	if (sk < 0)
		return sk;
	ret = sock_get_int(sk, SOL_SOCKET, SO_DOMAIN, &family);
	close(sk);
	return ret ? ret : family;
}
