/* fdpass.h - fds handed over unix sockets (SCM_RIGHTS), with a message. */
#ifndef CKPT_FDPASS_H
#define CKPT_FDPASS_H

#include <sys/types.h>
#include <sys/uio.h>

/* the most fds one message carries either way */
#define FDPASS_MAX 16

/* @iov (@niov parts) with @nfd of @fds (0 to FDPASS_MAX): what
 * sendmsg() returns. */
ssize_t fd_sendv(int sock, const struct iovec *iov, int niov, const int *fds,
		 unsigned int nfd, int flags);

static inline ssize_t fd_send(int sock, const void *buf, size_t len, const int *fds,
			      unsigned int nfd, int flags)
{
	struct iovec iov = { (void *)buf, len };

	return fd_sendv(sock, &iov, 1, fds, nfd, flags);
}

/* A message into @buf (@len bytes), and the fds that came with it, all
 * close-on-exec: the first *@nfd of them into @fds, each one more
 * closed; *@nfd is then how many @fds holds.  recvmsg()'s result (with
 * MSG_TRUNC in @flags, the message's whole length), or -errno; a
 * message with more fds than FDPASS_MAX is -EMSGSIZE, none kept. */
ssize_t fd_recv(int sock, void *buf, size_t len, int flags, int *fds, unsigned int *nfd);

#endif
