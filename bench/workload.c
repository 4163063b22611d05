/* workload.c - the process bench.sh checkpoints and restarts.
 *
 *   workload MIB READY GO RESULT
 *
 * Maps MIB MiB of private anonymous memory (0: none, "the tiny process")
 * and fills every byte from a xorshift64* stream, so that every page is
 * touched and nothing compresses.  It then verifies the memory once (to
 * time a verify pass before any checkpoint), writes READY, and sleeps in
 * a loop, polling for the file GO every 2 ms.  bench.sh checkpoints and
 * kills it there, creates GO, and restarts it.  When the restored process
 * sees GO it regenerates the stream, compares every word of its memory
 * with it, and writes RESULT:
 *
 *   ok|BAD mismatches=N go_ns=T1 done_ns=T2 verify_ns=V pre_verify_ns=P
 *
 * T1 (when it first saw GO) and T2 (when its memory was verified) are
 * CLOCK_REALTIME in ns, the clock of bash's $EPOCHREALTIME, so bench.sh
 * can take them against the moment it started `ckpt restart`.  Files are
 * written under a temporary name and renamed, so they appear complete.
 * Exit status 0 if the memory was intact, 1 if not, 2 on a usage or
 * system error.  Single-threaded, no children, stdio left as given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SEED 0x9e3779b97f4a7c15ull

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t xs_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void fill(uint64_t *p, size_t n)
{
	uint64_t s = SEED;

	for (size_t i = 0; i < n; i++)
		p[i] = xs_next(&s);
}

static size_t verify(const uint64_t *p, size_t n)
{
	uint64_t s = SEED;
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += p[i] != xs_next(&s);
	return bad;
}

static void put_file(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "workload: writing %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const struct timespec poll = { 0, 2 * 1000 * 1000 };
	uint64_t *mem = NULL, t0, go_ns, done_ns, pre_verify_ns;
	size_t words, bad;
	struct stat st;
	char line[512];
	long mib;

	if (argc != 5 || (mib = atol(argv[1])) < 0) {
		fprintf(stderr, "usage: workload MIB READY GO RESULT\n");
		return 2;
	}
	/* only stdio: a stray inherited descriptor (a pipe of whatever ran
	 * bench.sh) would make the checkpoint refuse the process */
	close_range(3, ~0u, 0);
	words = (size_t)mib << 20 >> 3;
	if (words) {
		mem = mmap(NULL, words * 8, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED) {
			perror("workload: mmap");
			return 2;
		}
		fill(mem, words);
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	bad = verify(mem, words);
	pre_verify_ns = now_ns(CLOCK_MONOTONIC) - t0;
	if (bad) {
		fprintf(stderr, "workload: memory differs before any checkpoint\n");
		return 2;
	}
	snprintf(line, sizeof(line), "%d\n", (int)getpid());
	put_file(argv[2], line);

	while (stat(argv[3], &st) != 0)
		nanosleep(&poll, NULL);

	go_ns = now_ns(CLOCK_REALTIME);
	t0 = now_ns(CLOCK_MONOTONIC);
	bad = verify(mem, words);
	done_ns = now_ns(CLOCK_REALTIME);
	snprintf(line, sizeof(line),
		 "%s mismatches=%zu go_ns=%llu done_ns=%llu verify_ns=%llu pre_verify_ns=%llu\n",
		 bad ? "BAD" : "ok", bad, (unsigned long long)go_ns,
		 (unsigned long long)done_ns,
		 (unsigned long long)(now_ns(CLOCK_MONOTONIC) - t0),
		 (unsigned long long)pre_verify_ns);
	put_file(argv[4], line);
	return bad ? 1 : 0;
}
