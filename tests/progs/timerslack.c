/* timerslack.c - each thread's timer slack (PR_SET_TIMERSLACK) survives
 * the restart: its timed sleeps stay as precise (or as coarse) as the
 * program asked. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/prctl.h>

#include "tp.h"

#define MAIN_SLACK	123456
#define THREAD_SLACK	7777777

static void *thread(void *arg)
{
	long *got = arg;

	prctl(PR_SET_TIMERSLACK, THREAD_SLACK, 0, 0, 0);
	tp_wait_go();
	*got = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	long got = -1, own;

	tp_init(argc, argv);
	prctl(PR_SET_TIMERSLACK, MAIN_SLACK, 0, 0, 0);
	pthread_create(&th, NULL, thread, &got);
	usleep(100000);
	tp_ready();
	tp_wait_go();
	pthread_join(th, NULL);
	own = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	tp_check(own == MAIN_SLACK, "main thread's timer slack %ld, not %d", own, MAIN_SLACK);
	tp_check(got == THREAD_SLACK, "thread's timer slack %ld, not %d", got, THREAD_SLACK);
	return tp_done();
}
