/* threads_churn.c - threads are created and exit all the time, also while
 * the checkpoint is taken: none may escape it or be half captured, and the
 * restored process goes on creating them. */
#define _GNU_SOURCE
#include <pthread.h>

#include "tp.h"

static volatile unsigned long made;
static volatile int stop;

static void *short_life(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&made, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, short_life, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t sp[2];
	unsigned long before;

	tp_init(argc, argv);
	pthread_create(&sp[0], NULL, spawner, NULL);
	pthread_create(&sp[1], NULL, spawner, NULL);
	while (made < 100)
		usleep(1000);
	tp_ready();
	tp_wait_go();
	before = made;
	usleep(50 * 1000);
	stop = 1;
	pthread_join(sp[0], NULL);
	pthread_join(sp[1], NULL);
	tp_check(made > before, "no thread was created after the restart (%lu)", made);
	return tp_done();
}
