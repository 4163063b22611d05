/* lazy.c - the target of bench/lazy.sh: MIB MiB of written private
 * memory, then a loop that reads the clock until it sees a gap (it was
 * checkpointed and restarted): the first clock read after the gap is its
 * first instruction after restart; then it reads one word of every page
 * (each page in: on touch, or the loader's already) and says both
 * times, in ns since the epoch, to OUT; then waits to be killed.
 * LAZY_SHARED=1: the memory is shared anonymous memory instead.
 * LAZY_IDLE=1: it reads none of it (the loader alone brings it all).
 * usage: lazy MIB OUT */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t len = (argc > 2 ? strtoul(argv[1], NULL, 0) : 64) << 20;
	volatile unsigned char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
					    (getenv("LAZY_SHARED") ? MAP_SHARED : MAP_PRIVATE) |
					    MAP_ANONYMOUS, -1, 0);
	long long last, t, first, all;
	unsigned long sum = 0;
	FILE *f;

	if (argc < 3 || mem == MAP_FAILED)
		return 2;
	for (size_t i = 0; i < len; i += 4096)
		memset((void *)(mem + i), (int)(i >> 12) | 1, 4096);
	printf("READY\n");
	fflush(stdout);
	for (last = now();; last = t) {
		t = now();
		if (t - last > 200000000LL)
			break;
	}
	first = t;
	for (size_t i = 0; !getenv("LAZY_IDLE") && i < len; i += 4096)
		sum += mem[i];
	all = now();
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "%lld %lld %lu\n", first, all, sum);
	fclose(f);
	for (;;)	/* until killed: the loader finishes its other areas */
		pause();
}
