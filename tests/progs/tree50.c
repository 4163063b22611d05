/* tree50.c - 50 processes of 4 threads each: every one keeps its parent,
 * its threads and their tids. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tp.h"

static pid_t tids[3];
static volatile int checked;

/* a thread lives until its process has counted it */
static void *idle(void *arg)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	tids[(long)arg] = syscall(SYS_gettid);
	while (!checked)
		nanosleep(&ts, NULL);
	return NULL;
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n - 2;
}

static int member(pid_t parent)
{
	pthread_t th[3];
	int bad = 0;

	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, idle, (void *)i);
	tp_wait_go();
	if ((parent && getppid() != parent) || count_threads() != 4)
		bad = 1;
	for (int i = 0; i < 3; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/task/%d", tids[i]);
		if (access(path, F_OK))
			bad = 1;
	}
	checked = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return bad;
}

int main(int argc, char **argv)
{
	pid_t me = getpid();
	int st, bad = 0;

	tp_init(argc, argv);
	for (int i = 0; i < 49; i++)
		if (fork() == 0)
			_exit(member(me));
	sleep(1);	/* all threads created and waiting */
	tp_ready();
	bad = member(0);	/* the root: its parent is now ckpt restart */
	for (int i = 0; i < 49; i++)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	tp_check(!bad, "%d processes lost their parent or threads", bad);
	return tp_done();
}
