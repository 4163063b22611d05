/* pause.c - how long a checkpoint stops its target, seen from inside.
 * usage: pause MiB GOFILE
 * Touches MiB of memory, says READY, then spins reading CLOCK_MONOTONIC
 * until GOFILE exists, and prints the longest gap it saw between two
 * reads (the time it was stopped) in microseconds. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)atoi(argv[1]) << 20;
	char *m = malloc(len ? len : 1);
	long long prev, t, gap = 0;
	unsigned long n = 0;

	if (argc != 3 || !m)
		return 2;
	for (size_t i = 0; i < len; i += 4096)
		m[i] = (char)i;
	printf("READY\n");
	fflush(stdout);
	prev = now_ns();
	for (;;) {
		t = now_ns();
		if (t - prev > gap)
			gap = t - prev;
		prev = t;
		if (++n % 4096 == 0 && access(argv[2], F_OK) == 0)
			break;
	}
	printf("GAP_US %lld\n", gap / 1000);
	return 0;
}
