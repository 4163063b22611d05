/* sleepers.c - threads asleep in read() on a pipe and in poll() across
 * the checkpoint: each call resumes and gets what arrives after the
 * restart, neither lost nor returned twice nor failed with EINTR. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>

#include "tp.h"

static int p1[2], p2[2];
static char got1[16], got2[16];
static volatile int r1 = -2, r2 = -2;

static void *reader(void *arg)
{
	(void)arg;
	r1 = read(p1[0], got1, sizeof(got1));	/* blocks until after restart */
	return NULL;
}

static void *poller(void *arg)
{
	struct pollfd pf = { .fd = p2[0], .events = POLLIN };

	(void)arg;
	r2 = poll(&pf, 1, -1);
	if (r2 == 1)
		r2 = read(p2[0], got2, sizeof(got2));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	tp_init(argc, argv);
	if (pipe(p1) || pipe(p2))
		return 1;
	pthread_create(&a, NULL, reader, NULL);
	pthread_create(&b, NULL, poller, NULL);
	usleep(100 * 1000);	/* both asleep in their calls */
	tp_ready();
	tp_wait_go();
	tp_check(r1 == -2 && r2 == -2, "a sleeper woke before any data: %d %d", r1, r2);
	if (write(p1[1], "first", 5) != 5 || write(p2[1], "second", 6) != 6)
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	tp_check(r1 == 5 && !memcmp(got1, "first", 5), "read() after restart: %d", r1);
	tp_check(r2 == 6 && !memcmp(got2, "second", 6), "poll()+read() after restart: %d", r2);
	return tp_done();
}
