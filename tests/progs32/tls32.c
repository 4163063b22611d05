/* tls32 - a 32-bit process's TLS descriptors and robust lists survive.
 *
 * glibc gives each thread its own GDT TLS entry 12 (gs 0x63) with its own
 * base; each thread here also keeps a __thread value.  The main thread
 * adds a descriptor of its own with set_thread_area (entry 13, a 4 KiB
 * data segment over a buffer) and loads it into fs; another thread loads
 * a different base into entry 14.  After restart each thread reads its
 * values through gs and fs, and get_thread_area and get_robust_list give
 * what they gave before.
 */
#include "tp.h"

#include <asm/ldt.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>

#ifndef __i386__
#error "a 32-bit test: build with -m32"
#endif
#define NTHREADS 3

static __thread uint32_t mine;
static uint32_t seg13[1024] = { 0xc0ffee13 };
static uint32_t seg14[1024] = { 0xbeef0014 };

struct before {
	struct user_desc tls[3];
	void *robust;
	size_t robust_len;
};

struct thr {
	pthread_t t;
	int idx;
	struct before b;
};

static pthread_barrier_t ready;

static int desc_equal(const struct user_desc *a, const struct user_desc *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void take(struct before *b)
{
	for (int i = 0; i < 3; i++) {
		b->tls[i].entry_number = 12 + i;
		syscall(SYS_get_thread_area, &b->tls[i]);
	}
	syscall(SYS_get_robust_list, 0, &b->robust, &b->robust_len);
}

static void compare(const char *who, const struct before *b)
{
	struct before now;

	take(&now);
	for (int i = 0; i < 3; i++)
		tp_check(desc_equal(&now.tls[i], &b->tls[i]),
			 "%s: TLS entry %d base %#x limit %#x, was base %#x limit %#x",
			 who, 12 + i, now.tls[i].base_addr, now.tls[i].limit,
			 b->tls[i].base_addr, b->tls[i].limit);
	tp_check(now.robust == b->robust && now.robust_len == b->robust_len,
		 "%s: robust list %p/%zu, was %p/%zu", who, now.robust,
		 now.robust_len, b->robust, b->robust_len);
}

static uint32_t read_fs0(void)
{
	uint32_t v;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(v));
	return v;
}

static int set_entry(int entry, void *base, unsigned short *sel)
{
	struct user_desc d = {
		.entry_number = entry,
		.base_addr = (uintptr_t)base,
		.limit = 0,		/* one 4 KiB page */
		.seg_32bit = 1,
		.limit_in_pages = 1,
		.useable = 1,
	};

	if (syscall(SYS_set_thread_area, &d))
		return -1;
	*sel = (d.entry_number << 3) | 3;
	__asm__ volatile("mov %0, %%fs" : : "r"(*sel));
	return 0;
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	unsigned short sel = 0;
	char who[32];

	mine = 0x1000 + t->idx;
	if (t->idx == 1 && set_entry(14, seg14, &sel))
		tp_fail("thread %d: set_thread_area: %s", t->idx, strerror(errno));
	take(&t->b);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&ready);	/* after the restart */
	snprintf(who, sizeof(who), "thread %d", t->idx);
	tp_check(mine == 0x1000u + t->idx, "%s: __thread value %#x", who, mine);
	if (t->idx == 1)
		tp_check(read_fs0() == 0xbeef0014, "%s: fs:0 reads %#x", who, read_fs0());
	compare(who, &t->b);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct thr th[NTHREADS];
	struct before b;
	unsigned short sel;

	tp_init(argc, argv);
	pthread_barrier_init(&ready, NULL, NTHREADS + 1);
	mine = 0xabcd;
	if (set_entry(13, seg13, &sel) || sel != 0x6b) {
		printf("set_thread_area: %s (selector %#x)\n", strerror(errno), sel);
		return 2;
	}
	for (int i = 0; i < NTHREADS; i++) {
		th[i].idx = i;
		if (pthread_create(&th[i].t, NULL, thread_main, &th[i]))
			return 2;
	}
	pthread_barrier_wait(&ready);
	take(&b);
	tp_ready();
	tp_wait_go();
	pthread_barrier_wait(&ready);
	tp_check(mine == 0xabcd, "main: __thread value %#x", mine);
	tp_check(read_fs0() == 0xc0ffee13, "main: fs:0 reads %#x", read_fs0());
	compare("main", &b);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i].t, NULL);
	return tp_done();
}
