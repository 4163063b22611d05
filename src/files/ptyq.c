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
#define ROOM		TTY_MAX_STORED

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

static int grow(char **b, size_t *cap, size_t got)
{
	size_t n = *cap ? *cap * 2 : 16384;
	char *p;

	if (*cap - got >= 4096)
		return 0;
	if (n > TTY_MAX_QUEUE + 8192)
		return -EFBIG;
	p = realloc(*b, n);
	if (!p)
		return -ENOMEM;
	*b = p;
	*cap = n;
	return 0;
}

/* Reads end when nothing more comes within SETTLE_MS: what the line
 * discipline could not take yet waits in the tty's own buffers, and is
 * pushed to it as room is made.  On a description of ckpt's own opened
 * O_NONBLOCK (@own_nonblock) they end at the first EAGAIN instead, with
 * no wait: n_tty_read() says EAGAIN only after it has waited for those
 * buffers' push (tty_buffer_flush_work) and still has nothing.  EIO: the
 * master's slave is closed, and all was read.  What was read is handed
 * back on an error too. */
int ptyq_drain(int fd, bool own_nonblock, char **buf, uint32_t *len)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	size_t cap = 0, got = 0;
	int ret = 0;

	*buf = NULL;
	for (;;) {
		int r = own_nonblock ? 1 : poll(&pf, 1, SETTLE_MS);
		ssize_t k;

		if (own_nonblock)
			pf.revents = POLLIN;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || !(pf.revents & POLLIN)) {
			ret = r < 0 ? -errno : 0;
			break;
		}
		if ((ret = grow(buf, &cap, got)))
			break;
		k = read(fd, *buf + got, cap - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			ret = k < 0 && errno != EAGAIN && errno != EIO ? -errno : 0;
			break;
		}
		got += k;
	}
	if (!ret && got > TTY_MAX_QUEUE)
		ret = -EFBIG;
	*len = got;
	if (!got) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

static int write_waiting(int fd, const char *b, uint32_t len)
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
		if (poll(&pf, 1, WAIT_MS) <= 0)
			return -ETIMEDOUT;
	}
	return 0;
}

int ptyq_put_output(int s, const char *buf, uint32_t len)
{
	struct termios tio, raw;
	int ret;

	if (tcgetattr(s, &tio))
		return -errno;
	/* output is processed as it is written: only OPOST matters */
	raw = tio;
	raw.c_oflag &= ~OPOST;
	ret = tcsetattr(s, TCSANOW, &raw) ? -errno : write_waiting(s, buf, len);
	if (tcsetattr(s, TCSANOW, &tio) && !ret)
		ret = -errno;
	return ret;
}

/* ---- input ---- */

static bool is(const struct termios *tio, int i, unsigned char c)
{
	return c && tio->c_cc[i] == c;	/* 0: disabled */
}

/* A byte that ends a canonical line where a read stops (VEOF ends one
 * too, but a read does not return it). */
static bool line_end(const struct termios *tio, unsigned char c)
{
	return c == '\n' || is(tio, VEOL, c) ||
	       ((tio->c_lflag & IEXTEN) && is(tio, VEOL2, c));
}

/* A byte a canonical line discipline acts on instead of storing it. */
static bool special(const struct termios *tio, unsigned char c)
{
	return line_end(tio, c) || is(tio, VEOF, c) || is(tio, VERASE, c) ||
	       is(tio, VKILL, c) ||
	       ((tio->c_lflag & IEXTEN) && (is(tio, VWERASE, c) || is(tio, VREPRINT, c) ||
					    is(tio, VLNEXT, c)));
}

/* Append @n bytes of a line as the line discipline must be given them
 * again: each special one quoted with VLNEXT (one that could only be
 * there quoted: without IEXTEN none can). */
static void quote(const struct termios *tio, const char *in, size_t n, char *out,
		  uint32_t *len)
{
	bool lnext = (tio->c_lflag & IEXTEN) && tio->c_cc[VLNEXT];

	for (size_t i = 0; i < n; i++) {
		if (lnext && special(tio, in[i]))
			out[(*len)++] = tio->c_cc[VLNEXT];
		out[(*len)++] = in[i];
	}
}

/* Whole lines, one read each, until none is left: each quoted, then its
 * end (a line ended by VEOF comes without it: VEOF is put back). */
static int take_lines(int s, const struct termios *tio, char *out, uint32_t *len,
		      uint32_t *stored)
{
	char line[ROOM + 1];

	for (;;) {
		ssize_t k = read(s, line, sizeof(line));
		bool ends;

		if (k < 0)
			return errno == EAGAIN ? 0 : -errno;
		*stored += k;
		if (*stored > ROOM)
			return -EOVERFLOW;
		ends = k && line_end(tio, line[k - 1]);
		quote(tio, line, k - ends, out, len);
		out[(*len)++] = ends ? line[k - 1] : (char)tio->c_cc[VEOF];
	}
}

/* A non-blocking slave description reads what the line discipline has
 * (whatever VMIN), but poll() wants VMIN bytes: 1 for the drain. */
static int drain_input(int s, const struct termios *tio, char **buf, uint32_t *len)
{
	struct termios raw = *tio;
	int ret;

	raw.c_lflag &= ~ICANON;
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(s, TCSANOW, &raw))
		return -errno;
	ret = ptyq_drain(s, true, buf, len);
	if (tcsetattr(s, TCSANOW, tio) && !ret)
		ret = -errno;
	return ret;
}

int ptyq_take_input(int s, const struct termios *tio, char **buf, uint32_t *len,
		    uint32_t *partial)
{
	bool canon = tio->c_lflag & ICANON;
	uint32_t got = 0, stored = 0, rlen = 0, lines;
	char *out = malloc(3 * ROOM + 16), *rest = NULL, *n;
	int avail = 0, ret = 0, r2;

	*buf = NULL;
	*len = *partial = 0;
	if (!out)
		return -ENOMEM;
	if (ioctl(s, FIONREAD, &avail) || (uint32_t)avail >= ROOM - 1) {
		ret = (uint32_t)avail >= ROOM - 1 ? -EOVERFLOW : -errno;
		free(out);	/* nothing read: nothing to put back */
		return ret;
	}
	if (canon)
		ret = take_lines(s, tio, out, &got, &stored);
	lines = got;
	/* the rest: all of it in non-canonical mode, else the line being
	 * typed (ICANON back on an empty queue leaves no trace); taken
	 * even past an overflow, so that all of it goes back in order */
	if (!ret || ret == -EOVERFLOW) {
		r2 = drain_input(s, tio, &rest, &rlen);
		ret = ret ? ret : r2;
	}
	n = rlen ? realloc(out, got + 2 * (size_t)rlen + 16) : out;
	if (!n) {
		ret = -ENOMEM;
		rlen = 0;	/* lost, but said */
	} else {
		out = n;
	}
	if (rlen && canon)
		quote(tio, rest, rlen, out, &got);
	else if (rlen)
		memcpy(out + got, rest, rlen), got += rlen;
	if (!ret && stored + rlen > ROOM)
		ret = -EOVERFLOW;
	free(rest);
	*buf = out;
	*len = got;
	*partial = canon ? got - lines : 0;
	return ret;
}

int ptyq_check_input(const struct termios *tio, const char *buf, uint32_t len,
		     uint32_t partial, uint32_t *lines, uint32_t *typed)
{
	if (partial > len)
		return -EBADMSG;
	bool lnext = (tio->c_lflag & IEXTEN) && tio->c_cc[VLNEXT], ended = true;
	uint32_t st[2] = { 0, 0 };

	if (!(tio->c_lflag & ICANON)) {
		*lines = len;
		*typed = 0;
		return partial || len > ROOM ? -EBADMSG : 0;
	}
	for (uint32_t i = 0; i < len; i++) {
		unsigned char c = buf[i];
		int part = i >= len - partial;

		if (part && i == len - partial && !ended)
			return -EBADMSG;	/* the lines do not end */
		if (lnext && c == tio->c_cc[VLNEXT]) {
			if (++i >= len || (i >= len - partial) != part)
				return -EBADMSG;
			st[part]++;
			ended = false;
		} else if (!special(tio, c)) {
			st[part]++;
			ended = false;
		} else if (part || !(line_end(tio, c) || is(tio, VEOF, c))) {
			return -EBADMSG;	/* acted on, not stored */
		} else {
			st[part] += !is(tio, VEOF, c) || line_end(tio, c);
			ended = true;
		}
	}
	if ((!partial && !ended) || st[0] + st[1] > ROOM)
		return -EBADMSG;
	*lines = st[0];
	*typed = st[1];
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

int ptyq_put_input(int m, int s, const struct termios *tio, const char *buf,
		   uint32_t len, uint32_t partial)
{
	struct termios raw = *tio;
	uint32_t lines, typed;
	int ret, before = 0;

	/* more than the line discipline holds (an overflow put back): it
	 * goes in all the same, and waits in the tty's buffers */
	if (ptyq_check_input(tio, buf, len, partial, &lines, &typed)) {
		lines = ROOM - 1;
		typed = 0;
	}
	if (ioctl(s, FIONREAD, &before))
		return -errno;
	/* no input processing, no signals, no echo: they happened; ICANON
	 * and IEXTEN as they were, so lines and quotes are read again */
	raw.c_iflag = 0;
	raw.c_oflag &= ~OPOST;
	raw.c_lflag &= ~(ISIG | ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL | ECHOPRT |
			 ECHOKE);
	ret = tcsetattr(s, TCSANOW, &raw) ? -errno : write_waiting(m, buf, len - partial);
	if (!ret)
		ret = lines_landed(s, before + lines < ROOM ? before + lines : ROOM - 1);
	raw.c_lflag |= ECHO;
	if (!ret && partial && tcsetattr(s, TCSANOW, &raw))
		ret = -errno;
	if (!ret && partial)
		ret = write_waiting(m, buf + len - partial, partial);
	if (!ret && partial && typed)
		ret = echo_back(m, typed);
	if (tcsetattr(s, TCSANOW, tio) && !ret)
		ret = -errno;
	return ret;
}
