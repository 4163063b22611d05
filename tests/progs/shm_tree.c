/* shm_tree.c - memory shared between processes (MAP_SHARED|MAP_ANONYMOUS
 * inherited over fork) stays one memory after restart: what the child
 * writes, the parent reads. */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>

#include "tp.h"

#define LEN (1 << 20)

int main(int argc, char **argv)
{
	volatile unsigned char *m;
	struct timespec ts = { 0, 1000 * 1000 };
	pid_t child;
	int st, i;

	tp_init(argc, argv);
	m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < LEN; i += 4096)
		m[i] = (unsigned char)(i >> 12);
	child = fork();
	if (child == 0) {
		tp_wait_go();
		for (i = 8192; i < LEN; i += 4096)
			if (m[i] != (unsigned char)(i >> 12))
				_exit(2);
		m[4096 + 1] = 0xab;	/* the parent must see this */
		_exit(0);
	}
	sleep(1);
	tp_ready();
	tp_wait_go();
	for (i = 0; i < 2000 && m[4096 + 1] != 0xab; i++)
		nanosleep(&ts, NULL);
	tp_check(m[4096 + 1] == 0xab, "the child's write did not reach the parent: not shared");
	tp_check(waitpid(child, &st, 0) == child && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the child found the shared memory changed (0x%x)", st);
	for (i = 8192; i < LEN; i += 4096)
		if (m[i] != (unsigned char)(i >> 12))
			break;
	tp_check(i >= LEN, "shared memory content lost at %d", i);
	return tp_done();
}
