/* hwlimit.c - what the machine itself can do, for bench.sh to compare
 * ckpt against.  Each mode prints seconds (CLOCK_MONOTONIC), nothing else.
 *
 *   hwlimit memcpy MIB        memcpy of MIB MiB into a destination that is
 *                             already faulted in; one write to each page of
 *                             a fresh mmap (the page faults alone); memcpy
 *                             into a fresh mmap (copy and faults): "S1 S2 S3"
 *   hwlimit write FILE MIB    write(2) an MIB MiB buffer that is already in
 *                             memory to a new FILE in 4 MiB chunks, then
 *                             fsync(2) it and its directory (as ckpt does): "S"
 *   hwlimit read FILE         read(2) all of FILE in 4 MiB chunks into a
 *                             fresh private anonymous mapping (what a restore
 *                             must fill: its page faults are in the time): "S"
 *   hwlimit prime MIB         fault in MIB MiB of anonymous memory and free it
 *
 * Source buffers are filled from xorshift64* (touched, incompressible)
 * before the clock starts.  If HWLIMIT_PRIME_MIB is set, every timed step
 * that allocates memory (write, read, the fresh-mmap ones of memcpy) first
 * primes that much memory, just before its clock starts (see prime()).
 * Exit 0, or 1 with a message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (4u << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "hwlimit: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void *filled(size_t len)
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
static void prime(size_t len)
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

static void prime_env(void)
{
	const char *e = getenv("HWLIMIT_PRIME_MIB");

	if (e)
		prime((size_t)atol(e) << 20);
}

int main(int argc, char **argv)
{
	double t0, t1;

	if (argc == 3 && !strcmp(argv[1], "prime")) {
		prime((size_t)atol(argv[2]) << 20);
		return 0;
	}

	if (argc == 3 && !strcmp(argv[1], "memcpy")) {
		size_t len = (size_t)atol(argv[2]) << 20;
		char *src = filled(len), *dst = map(len);
		double t2, t3, t4, t5;

		memset(dst, 1, len);
		t0 = now();
		memcpy(dst, src, len);
		t1 = now();
		munmap(dst, len);
		prime_env();
		dst = map(len);
		t2 = now();
		for (size_t i = 0; i < len; i += 4096)
			dst[i] = 1;
		t3 = now();
		munmap(dst, len);
		prime_env();
		dst = map(len);
		t4 = now();
		memcpy(dst, src, len);
		t5 = now();
		printf("%.6f %.6f %.6f\n", t1 - t0, t3 - t2, t5 - t4);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "write")) {
		size_t len = (size_t)atol(argv[3]) << 20, off = 0;
		char *src = filled(len);
		int fd;

		if (unlink(argv[2]) && errno != ENOENT)
			die("unlink");
		prime_env();
		t0 = now();
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			die("open");
		while (off < len) {
			size_t n = len - off < CHUNK ? len - off : CHUNK;
			ssize_t k = write(fd, src + off, n);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				die("write");
			off += k;
		}
		if (fsync(fd) || close(fd))
			die("fsync");
		/* as `ckpt checkpoint -o FILE` does: the new name is durable too */
		char *slash = strrchr(argv[2], '/');
		char *dir = slash ? strndup(argv[2], slash - argv[2] + 1) : strdup(".");
		fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		if (fd < 0 || fsync(fd) || close(fd))
			die("fsync (directory)");
		free(dir);
		t1 = now();
		printf("%.6f\n", t1 - t0);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "read")) {
		struct stat st;
		size_t off = 0;
		char *dst;
		int fd;

		prime_env();
		t0 = now();
		fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			die("open");
		dst = map(st.st_size ? st.st_size : 1);
		for (;;) {
			ssize_t k = read(fd, dst + off, CHUNK);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				die("read");
			if (k == 0)
				break;
			off += k;
		}
		close(fd);
		t1 = now();
		if (off != (size_t)st.st_size) {
			fprintf(stderr, "hwlimit: read %zu of %lld bytes\n", off,
				(long long)st.st_size);
			return 1;
		}
		printf("%.6f\n", t1 - t0);
		return 0;
	}
	fprintf(stderr, "usage: hwlimit memcpy MIB | write FILE MIB | read FILE | prime MIB\n");
	return 1;
}
