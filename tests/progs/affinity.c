/* affinity.c - each thread's CPU mask survives the restart: the main
 * thread on the last CPU it may use, the other on the first (with one
 * CPU, both on it, and there is nothing to tell apart). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>

#include "tp.h"

static pid_t tid2;
static int first, last;
static volatile int checked;

static int only(pid_t tid, int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(tid, sizeof(s), &s);
}

static int is_only(pid_t tid, int cpu)
{
	cpu_set_t s;

	return !sched_getaffinity(tid, sizeof(s), &s) && CPU_COUNT(&s) == 1 &&
	       CPU_ISSET(cpu, &s);
}

static void *thread(void *arg)
{
	(void)arg;
	tid2 = syscall(SYS_gettid);
	if (only(0, first))
		printf("FAIL: thread's sched_setaffinity: %s\n", strerror(errno));
	while (!checked)	/* alive while the main thread checks it */
		usleep(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	cpu_set_t s;

	tp_init(argc, argv);
	if (sched_getaffinity(0, sizeof(s), &s))
		return printf("FAIL: sched_getaffinity: %s\n", strerror(errno)), 1;
	first = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &s)) {
			if (first < 0)
				first = i;
			last = i;
		}
	pthread_create(&th, NULL, thread, NULL);
	if (only(0, last))
		return printf("FAIL: sched_setaffinity: %s\n", strerror(errno)), 1;
	usleep(100000);
	tp_ready();
	tp_wait_go();
	tp_check(is_only(0, last), "main thread not on CPU %d alone", last);
	tp_check(is_only(tid2, first), "thread not on CPU %d alone", first);
	checked = 1;
	pthread_join(th, NULL);
	return tp_done();
}
