/* ptyq.c - the bytes queued in a pty, taken out and put back (ptyq.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
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
#define N_TTY_ROOM	TTY_MAX_INPUT

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

/* The bytes of a canonical line end: where a read in canonical mode
 * stops (VEOF ends a line too, but a read does not return it). */
static bool line_end(const struct termios *tio, char c)
{
	return c == '\n' || (tio->c_cc[VEOL] && c == (char)tio->c_cc[VEOL]) ||
	       ((tio->c_lflag & IEXTEN) && tio->c_cc[VEOL2] && c == (char)tio->c_cc[VEOL2]);
}

/* Whole lines, one read each, until none is left. */
static int take_lines(int s, const struct termios *tio, char *b, uint32_t *got)
{
	for (;;) {
		ssize_t k = read(s, b + *got, N_TTY_ROOM + 1 - *got);

		if (k < 0)
			return errno == EAGAIN ? 0 : -errno;
		*got += k;
		if (!k || !line_end(tio, b[*got - 1])) {
			if (*got >= N_TTY_ROOM)
				return -EOVERFLOW;
			b[(*got)++] = tio->c_cc[VEOF];
		}
		if (*got >= N_TTY_ROOM)
			return -EOVERFLOW;
	}
}

int ptyq_take_input(int s, const struct termios *tio, char **buf, uint32_t *len,
		    uint32_t *partial)
{
	struct termios raw = *tio;
	uint32_t got = 0, plen = 0;
	char *b = malloc(N_TTY_ROOM + 1), *p = NULL;
	int n = 0, ret = 0;

	*buf = NULL;
	*len = *partial = 0;
	if (!b)
		return -ENOMEM;
	if (ioctl(s, FIONREAD, &n))
		ret = -errno;
	else if ((uint32_t)n >= N_TTY_ROOM - 1)
		ret = -EOVERFLOW;
	else if (tio->c_lflag & ICANON)
		ret = take_lines(s, tio, b, &got);
	/* the rest: all of it in non-canonical mode, else the line being
	 * typed (ICANON back on an empty queue leaves no trace) */
	raw.c_lflag &= ~ICANON;
	if (!ret && (tio->c_lflag & ICANON) && tcsetattr(s, TCSANOW, &raw))
		ret = -errno;
	if (!ret)
		ret = ptyq_drain(s, &p, &plen);
	if ((tio->c_lflag & ICANON) && tcsetattr(s, TCSANOW, tio) && !ret)
		ret = -errno;
	if (!ret && got + plen > N_TTY_ROOM)
		ret = -EOVERFLOW;
	if (!ret && plen)
		memcpy(b + got, p, plen);
	free(p);
	if (ret || !(got + plen)) {
		free(b);
		return ret;
	}
	*buf = b;
	*len = got + plen;
	*partial = tio->c_lflag & ICANON ? plen : 0;
	return 0;
}

/* Input is processed when the worker hands it to the slave's line
 * discipline, later than the write: the raw termios must stay until
 * the slave holds it all.  Whole lines show in FIONREAD (their VEOF
 * markers do not). */
static int lines_landed(int s, uint32_t want)
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

/* A line being typed does not show in FIONREAD: its echo does, on the
 * master, once it is processed. */
static int echo_back(int m, uint32_t want)
{
	struct pollfd pf = { m, POLLIN, 0 };
	char junk[512];

	while (want) {
		ssize_t k;

		if (poll(&pf, 1, WAIT_MS) <= 0)
			return -ETIMEDOUT;
		k = read(m, junk, want < sizeof(junk) ? want : sizeof(junk));
		if (k <= 0)
			return k ? -errno : -EIO;
		want -= k;
	}
	return 0;
}

static uint32_t count_of(const char *b, uint32_t len, char c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < len; i++)
		n += b[i] == c;
	return n;
}

int ptyq_put_input(int m, int s, const struct termios *tio, const char *buf,
		   uint32_t len, uint32_t partial)
{
	struct termios raw = *tio;
	uint32_t lines = len - partial, want = lines;
	int ret, before = 0;

	if (ioctl(s, FIONREAD, &before))
		return -errno;
	if (tio->c_lflag & ICANON)
		want -= count_of(buf, lines, tio->c_cc[VEOF]);
	raw.c_iflag = 0;
	raw.c_oflag &= ~OPOST;
	raw.c_lflag &= ~(ISIG | IEXTEN | ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL |
			 ECHOPRT | ECHOKE);
	ret = tcsetattr(s, TCSANOW, &raw) ? -errno : write_all(m, buf, lines);
	if (!ret)
		ret = lines_landed(s, before + want);
	raw.c_lflag |= ECHO;
	if (!ret && partial && tcsetattr(s, TCSANOW, &raw))
		ret = -errno;
	if (!ret && partial)
		ret = write_all(m, buf + lines, partial);
	if (!ret && partial)
		ret = echo_back(m, partial);
	if (tcsetattr(s, TCSANOW, tio) && !ret)
		ret = -errno;
	return ret;
}
