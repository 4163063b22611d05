/* pipe_halfclosed.c - pipes whose other end is closed everywhere at the
 * checkpoint (a writer gone, a reader gone): they come back with that end
 * still closed, the data in them kept.  Such a pipe was once refused as
 * one held outside the tree. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>

#include "tp.h"

int main(int argc, char **argv)
{
	int nowriter[2], noreader[2];
	char buf[16] = { 0 };
	ssize_t n;

	tp_init(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (pipe(nowriter) || pipe(noreader))
		return 2;
	if (write(nowriter[1], "left", 4) != 4 || fcntl(noreader[1], F_SETPIPE_SZ, 65536 * 2) < 0)
		return 2;
	close(nowriter[1]);
	close(noreader[0]);
	tp_ready();
	tp_wait_go();

	n = read(nowriter[0], buf, sizeof(buf));
	tp_check(n == 4 && !memcmp(buf, "left", 4), "data in the writerless pipe: %zd", n);
	n = read(nowriter[0], buf, sizeof(buf));
	tp_check(n == 0, "no EOF after the data: %zd", n);
	n = write(noreader[1], "x", 1);
	tp_check(n < 0 && errno == EPIPE, "write with no reader: %zd", n);
	tp_check(fcntl(noreader[1], F_GETPIPE_SZ) == 65536 * 2, "capacity of the readerless pipe");
	return tp_done();
}
