/* ptyq.c - the bytes queued in a pty, taken out and put back (ptyq.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../image_format.h"
#include "ptyq.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER	_IO('T', 0x41)
#endif
/* A write past the line discipline lands in the other side's buffer
 * through a kernel worker: how long ckpt waits for it to get there. */
#define SETTLE_MS	20
#define WAIT_MS		2000

int ptyq_peer(int m, int flags, bool locked)
{
	int zero = 0, one = 1, fd, err;

	if (locked)
		ioctl(m, TIOCSPTLCK, &zero);
	fd = ioctl(m, TIOCGPTPEER, flags | O_NOCTTY | O_CLOEXEC);
	err = errno;
	if (locked)
		ioctl(m, TIOCSPTLCK, &one);
	errno = err;
	return fd;
}

/* Reads end when nothing more comes within SETTLE_MS: what the line
 * discipline could not take yet waits in the tty's own buffers, and is
 * pushed to it as room is made.  EIO: the master's slave is closed, and
 * all was read. */
int ptyq_drain(int fd, char **buf, uint32_t *len)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	char *b = NULL, *n;
	size_t cap = 0, got = 0;
	ssize_t k;
	int r;

	*buf = NULL;
	*len = 0;
	for (;;) {
		r = poll(&pf, 1, SETTLE_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || !(pf.revents & POLLIN))
			break;
		if (cap - got < 4096) {
			cap = cap ? cap * 2 : 16384;
			if (cap > TTY_MAX_QUEUE + 4096 || !(n = realloc(b, cap))) {
				free(b);
				return cap > TTY_MAX_QUEUE + 4096 ? -EFBIG : -ENOMEM;
			}
			b = n;
		}
		k = read(fd, b + got, cap - got);
		if (k < 0 && (errno == EAGAIN || errno == EIO))
			break;
		if (k <= 0) {
			r = k < 0 ? -errno : 0;
			if (!r)
				break;
			free(b);
			return r;
		}
		got += k;
	}
	if (got > TTY_MAX_QUEUE) {
		free(b);
		return -EFBIG;
	}
	*buf = got ? b : NULL;
	*len = got;
	if (!got)
		free(b);
	return r < 0 ? -errno : 0;
}

static int write_all(int fd, const char *b, uint32_t len)
{
	struct pollfd pf = { fd, POLLOUT, 0 };
	uint32_t done = 0;

	while (done < len) {
		ssize_t k = write(fd, b + done, len - done);

		if (k > 0) {
			done += k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0 || errno != EAGAIN)
			return k ? -errno : -EIO;
		/* a stopped tty (^S) does not take output: not for ever */
		if (poll(&pf, 1, WAIT_MS) <= 0)
			return -ETIMEDOUT;
	}
	return 0;
}

int ptyq_put_output(int m, bool locked, const char *buf, uint32_t len)
{
	struct termios tio, raw;
	int s = ptyq_peer(m, O_RDWR | O_NONBLOCK, locked), ret;

	if (s < 0)
		return -errno;
	if (tcgetattr(s, &tio)) {
		ret = -errno;
		close(s);
		return ret;
	}
	/* output is processed as it is written: only OPOST matters */
	raw = tio;
	raw.c_oflag &= ~OPOST;
	ret = tcsetattr(s, TCSANOW, &raw) ? -errno : write_all(s, buf, len);
	if (tcsetattr(s, TCSANOW, &tio) && !ret)
		ret = -errno;
	close(s);
	return ret;
}

/* Input is processed when the worker hands it to the slave's line
 * discipline, later than the write: the raw termios must stay until
 * the slave holds it all. */
static int input_landed(int s, uint32_t want)
{
	struct timespec ms = { 0, 1000000 };
	int n = 0;

	for (int i = 0; i < WAIT_MS; i++) {
		if (ioctl(s, FIONREAD, &n))
			return -errno;
		if ((uint32_t)n >= want)
			return 0;
		nanosleep(&ms, NULL);
	}
	return -ETIMEDOUT;
}

int ptyq_put_input(int m, int s, const char *buf, uint32_t len)
{
	struct termios tio, raw;
	int ret, before = 0;

	if (tcgetattr(s, &tio) || ioctl(s, FIONREAD, &before))
		return -errno;
	raw = tio;
	raw.c_iflag = 0;
	raw.c_lflag &= ~(ICANON | ISIG | IEXTEN | ECHO | ECHOE | ECHOK | ECHONL);
	ret = tcsetattr(s, TCSANOW, &raw) ? -errno : write_all(m, buf, len);
	if (!ret)
		ret = input_landed(s, before + len);
	if (tcsetattr(s, TCSANOW, &tio) && !ret)
		ret = -errno;
	return ret;
}
