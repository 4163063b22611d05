/* fdpass.c - fds handed over unix sockets (SCM_RIGHTS).  Every place
 * that passes an fd (the lazy loader's channel, the mount namespace's
 * cloner, the puppets' fds, the console socket, the socket keeper, the
 * CRIU service) builds its control message here, once. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

union fd_cmsg {
	char b[CMSG_SPACE(FDPASS_MAX * sizeof(int))];
	struct cmsghdr align;
};

ssize_t fd_sendv(int sock, const struct iovec *iov, int niov, const int *fds,
		 unsigned int nfd, int flags)
{
	union fd_cmsg u;
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = niov };
	struct cmsghdr *cm;

	if (nfd > FDPASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (nfd) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.b;
		mh.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfd * sizeof(int));
	}
	return sendmsg(sock, &mh, flags);
}

/* The fds of @cm, from the @first-th on, closed. */
static void close_from(const struct cmsghdr *cm, unsigned int first)
{
	unsigned int n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

	for (unsigned int i = first; i < n; i++) {
		int fd;

		memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
		close(fd);
	}
}

ssize_t fd_recv(int sock, void *buf, size_t len, int flags, int *fds, unsigned int *nfd)
{
	union fd_cmsg u;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	unsigned int cap = *nfd, got = 0;
	ssize_t n;

	*nfd = 0;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		unsigned int k, take;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		take = k < cap - got ? k : cap - got;
		if (take)	/* (@fds may be NULL where none is kept) */
			memcpy(fds + got, CMSG_DATA(cm), take * sizeof(int));
		close_from(cm, take);
		got += take;
	}
	if (mh.msg_flags & MSG_CTRUNC) {	/* (the kernel dropped the rest) */
		while (got)
			close(fds[--got]);
		return -EMSGSIZE;
	}
	*nfd = got;
	return n;
}
