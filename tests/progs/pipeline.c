/* pipeline.c - producer | filter | consumer, with data in flight in both
 * pipes at the checkpoint: nothing may be lost, doubled or reordered, and
 * the pipes keep their capacity and flags. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/wait.h>

#include "tp.h"

#define LINES 2000
#define BIG (256 * 1024)

static void producer(int out)
{
	char line[32];

	for (int n = 0; n < LINES; n++) {
		if (n == LINES / 2)
			tp_wait_go();	/* half of it sits in the pipe meanwhile */
		snprintf(line, sizeof(line), "%d\n", n);
		if (write(out, line, strlen(line)) != (ssize_t)strlen(line))
			_exit(2);
	}
	_exit(fcntl(out, F_GETPIPE_SZ) == BIG ? 0 : 3);
}

static void filter(int in, int out)
{
	FILE *f = fdopen(in, "r");
	char line[32];

	if (write(out, "start\n", 6) != 6)	/* waits in the second pipe */
		_exit(2);
	tp_wait_go();
	while (fgets(line, sizeof(line), f)) {
		char o[32];

		snprintf(o, sizeof(o), "%d\n", atoi(line) * 2);
		if (write(out, o, strlen(o)) != (ssize_t)strlen(o))
			_exit(2);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int a[2], b[2], n = -1, st, bad = 0;
	char line[32];
	FILE *in;

	tp_init(argc, argv);
	if (pipe(a) || pipe(b) || fcntl(a[1], F_SETPIPE_SZ, BIG) < 0)
		return 1;
	if (fork() == 0) {
		close(a[0]);
		close(b[0]);
		close(b[1]);
		producer(a[1]);
	}
	if (fork() == 0) {
		close(a[1]);
		close(b[0]);
		filter(a[0], b[1]);
	}
	close(a[0]);
	close(a[1]);
	close(b[1]);
	fcntl(b[0], F_SETFL, O_NONBLOCK);
	sleep(1);	/* the producer is blocked on GO with half its lines sent */
	tp_ready();
	tp_wait_go();
	tp_check(fcntl(b[0], F_GETFL) & O_NONBLOCK, "O_NONBLOCK lost on the pipe");
	fcntl(b[0], F_SETFL, 0);
	in = fdopen(b[0], "r");
	tp_check(fgets(line, sizeof(line), in) && !strcmp(line, "start\n"),
		 "the line waiting in the second pipe was lost");
	while (fgets(line, sizeof(line), in)) {
		if (atoi(line) != 2 * ++n && bad++ < 3)
			tp_fail("line %d is %s", n, line);
	}
	tp_check(n == LINES - 1, "%d lines came through, want %d", n + 1, LINES);
	for (int i = 0; i < 2; i++)
		tp_check(wait(&st) > 0 && WIFEXITED(st) && !WEXITSTATUS(st),
			 "a stage failed (0x%x: 3 = pipe capacity lost)", st);
	return tp_done();
}
