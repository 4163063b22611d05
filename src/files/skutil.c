/* skutil.c - a socket's filter and network namespace (skutil.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/sockios.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../log.h"
#include "skutil.h"

int skfilter_get(int sk, void **insns, uint32_t *n)
{
	socklen_t len = 0;
	struct sock_filter *f;

	*insns = NULL;
	*n = 0;
	/* the length is counted in instructions: 0 asks how many */
	if (getsockopt(sk, SOL_SOCKET, SO_GET_FILTER, NULL, &len))
		return -errno;
	if (!len)
		return 0;
	if (len > SKFILTER_MAX)
		return -E2BIG;
	f = calloc(len, sizeof(*f));
	if (!f)
		return -ENOMEM;
	if (getsockopt(sk, SOL_SOCKET, SO_GET_FILTER, f, &len)) {
		int err = errno;

		free(f);
		return -err;
	}
	if (!len || len > SKFILTER_MAX) {	/* changed between the calls */
		free(f);
		return -EAGAIN;
	}
	*insns = f;
	*n = len;
	return 0;
}

int skfilter_dump(struct ckpt_log *log, int pid, int fd, const char *kind, int sk,
		  void **insns, uint32_t *n)
{
	int ret = skfilter_get(sk, insns, n);

	if (ret == -EACCES)
		return log_err(log, EOPNOTSUPP,
			       "pid %d fd %d: %s socket with an eBPF filter (SO_ATTACH_BPF), which cannot be read back",
			       pid, fd, kind);
	return ret ? log_err(log, -ret, "pid %d fd %d: %s socket's filter:", pid, fd, kind) : 0;
}

int skfilter_set(int sk, const void *insns, uint32_t n)
{
	struct sock_fprog p = { .len = n, .filter = (struct sock_filter *)insns };

	if (!n)
		return 0;
	return setsockopt(sk, SOL_SOCKET, SO_ATTACH_FILTER, &p, sizeof(p)) ? -errno : 0;
}

int sk_netns_ours(int sk)
{
	struct stat a, b;
	int ns = ioctl(sk, SIOCGSKNS), err;

	if (ns < 0)
		return -errno;
	err = fstat(ns, &a) || stat("/proc/self/ns/net", &b) ? -errno : 0;
	close(ns);
	if (err)
		return err;
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

static int set_buf(int sk, int get, int force, uint32_t val)
{
	socklen_t len = sizeof(int);
	int now = 0, half = val / 2;

	if (getsockopt(sk, SOL_SOCKET, get, &now, &len))
		return -errno;
	/* the kernel doubles what it is given; FORCE passes the system's
	 * maximum, as the program's own setting or autotuning may have */
	if ((uint32_t)now == val)
		return 0;
	return setsockopt(sk, SOL_SOCKET, force, &half, sizeof(half)) ? -errno : 0;
}

int sk_bufs_set(int sk, uint32_t rcvbuf, uint32_t sndbuf)
{
	int ret = set_buf(sk, SO_RCVBUF, SO_RCVBUFFORCE, rcvbuf);

	return ret ? ret : set_buf(sk, SO_SNDBUF, SO_SNDBUFFORCE, sndbuf);
}
