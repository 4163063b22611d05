/* ioprio.c - each thread's I/O priority (ioprio_set(), ionice) survives
 * the restart: the main thread in the idle class, another thread
 * best-effort at level 2. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tp.h"

#define WHO_PROCESS	1
#define PRIO(class, level)	((class) << 13 | (level))
#define MAIN_PRIO	PRIO(3, 0)	/* idle */
#define THREAD_PRIO	PRIO(2, 2)	/* best-effort, level 2 */

static long own_prio(void)
{
	return syscall(SYS_ioprio_get, WHO_PROCESS, 0);
}

static void *thread(void *arg)
{
	long *got = arg;

	if (syscall(SYS_ioprio_set, WHO_PROCESS, 0, THREAD_PRIO))
		*got = -2;
	tp_wait_go();
	if (*got != -2)
		*got = own_prio();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	long got = -1, own;

	tp_init(argc, argv);
	tp_check(!syscall(SYS_ioprio_set, WHO_PROCESS, 0, MAIN_PRIO), "ioprio_set failed");
	pthread_create(&th, NULL, thread, &got);
	usleep(100000);
	tp_ready();
	tp_wait_go();
	pthread_join(th, NULL);
	own = own_prio();
	tp_check(own == MAIN_PRIO, "main thread's I/O priority %#lx, not %#x", own, MAIN_PRIO);
	tp_check(got == THREAD_PRIO, "thread's I/O priority %#lx, not %#x", got, THREAD_PRIO);
	return tp_done();
}
