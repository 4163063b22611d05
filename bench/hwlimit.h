/* hwlimit.h - what hwlimit.c and hwlimit_take.c share: a clock, exit on
 * error, fresh and filled memory, and priming (see prime()). */
#ifndef HWLIMIT_H
#define HWLIMIT_H
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#define CHUNK (4u << 20)

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void die(const char *what)
{
	fprintf(stderr, "hwlimit: %s: %s\n", what, strerror(errno));
	exit(1);
}

static inline void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static inline void *filled(size_t len)
{
	uint64_t *p = map(len), s = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < len / 8; i++) {
		s ^= s >> 12;
		s ^= s << 25;
		s ^= s >> 27;
		p[i] = s * 0x2545f4914f6cdd1dull;
	}
	return p;
}

/* Fault in and free len bytes of memory.  On a VM whose balloon reports
 * free pages to the host, memory freed a few seconds ago is given back and
 * its next first touch costs a host fault, several times a guest one; the
 * kernel hands out recently freed pages first, so this makes the memory
 * the next step allocates the same kind for every measurement. */
static inline void prime(size_t len)
{
	void *p;

	if (!len)
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		die("mmap (prime)");
	munmap(p, len);
}

static inline void prime_env(void)
{
	const char *e = getenv("HWLIMIT_PRIME_MIB");

	if (e)
		prime((size_t)atol(e) << 20);
}

/* as `ckpt checkpoint -o FILE` does: the new name is durable too */
static inline void fsync_dir(const char *file)
{
	const char *slash = strrchr(file, '/');
	char *dir = slash ? strndup(file, slash - file + 1) : strdup(".");
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd < 0 || fsync(fd) || close(fd))
		die("fsync (directory)");
	free(dir);
}

/* hwlimit_take.c: "take HOW FILE MIB [THREADS]" */
int take(const char *how, const char *file, size_t len, int nthreads);
#endif
