/* robust_list.c - each thread's robust futex list (set_robust_list)
 * survives the restart: the one glibc registered, and one of the
 * program's own. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "tp.h"

static struct robust_list_head own = { .list = { &own.list } };

struct rl {
	void *head;
	size_t len;
};

static struct rl get(void)
{
	struct rl r = { 0 };

	syscall(SYS_get_robust_list, 0, &r.head, &r.len);
	return r;
}

static void *thread(void *arg)
{
	struct rl *r = arg;

	r[0] = get();
	tp_wait_go();
	r[1] = get();
	return NULL;
}

int main(int argc, char **argv)
{
	struct rl before, after, th[2];
	pthread_t t;

	tp_init(argc, argv);
	if (syscall(SYS_set_robust_list, &own, sizeof(own)))
		return printf("FAIL: set_robust_list: %s\n", strerror(errno)), 1;
	before = get();
	pthread_create(&t, NULL, thread, th);
	usleep(100000);
	tp_ready();
	tp_wait_go();
	after = get();
	pthread_join(t, NULL);
	tp_check(after.head == &own && after.len == before.len,
		 "main thread's robust list %p (%zu), not %p", after.head, after.len,
		 (void *)&own);
	tp_check(th[0].head && th[1].head == th[0].head && th[1].len == th[0].len,
		 "thread's robust list %p, not %p", th[1].head, th[0].head);
	return tp_done();
}
