/* sched.c - each thread's scheduling survives the restart: a nice value,
 * SCHED_BATCH, SCHED_RR with a priority and reset-on-fork. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "tp.h"

static pid_t tid2;
static volatile int checked;

static void *thread(void *arg)
{
	struct sched_param sp = { 0 };

	(void)arg;
	tid2 = syscall(SYS_gettid);
	sched_setscheduler(0, SCHED_BATCH, &sp);
	setpriority(PRIO_PROCESS, 0, 7);
	while (!checked)	/* alive while the main thread checks it */
		usleep(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 3 };
	pthread_t th;

	tp_init(argc, argv);
	pthread_create(&th, NULL, thread, NULL);
	usleep(100000);
	if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp))
		return printf("FAIL: sched_setscheduler: %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	tp_check(sched_getscheduler(0) == (SCHED_RR | SCHED_RESET_ON_FORK),
		 "main thread's policy %#x", sched_getscheduler(0));
	tp_check(!sched_getparam(0, &sp) && sp.sched_priority == 3,
		 "main thread's priority %d", sp.sched_priority);
	tp_check(sched_getscheduler(tid2) == SCHED_BATCH, "thread's policy %d",
		 sched_getscheduler(tid2));
	errno = 0;
	tp_check(getpriority(PRIO_PROCESS, tid2) == 7, "thread's nice %d",
		 getpriority(PRIO_PROCESS, tid2));
	checked = 1;
	pthread_join(th, NULL);
	return tp_done();
}
