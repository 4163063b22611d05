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
 *   hwlimit place HOW FILE [THREADS]
 *                             all of FILE into fresh private anonymous
 *                             memory, split over THREADS threads (default
 *                             1), each placing its share, HOW:
 *                               read      read(2) into a plain mmap
 *                               populate  MAP_POPULATE mmap, then read(2)
 *                               popwrite  MADV_POPULATE_WRITE, then read(2)
 *                               hugepage  MADV_HUGEPAGE, then read(2)
 *                               uffd      UFFDIO_COPY from FILE mmapped,
 *                                         1 MiB a call, no fault taken
 *                               uffdbuf   UFFDIO_COPY from a 1 MiB buffer
 *                                         pread(2) fills each time (what
 *                                         ckpt's restart does: a VM that
 *                                         shadows page tables makes each
 *                                         page of FILE mapped costly)
 *                             and from outside, into a child's fresh mmap
 *                             (what a restorer's helper can do):
 *                               vmwrite   pread(2) into a buffer, then
 *                                         process_vm_writev(2)
 *                               procmem   pwrite(2) from FILE mmapped
 *                                         into /proc/CHILD/mem
 *                               preadv    the child's own read(2), for
 *                                         comparison (THREADS 1 only)
 *   hwlimit take HOW FILE MIB [THREADS]
 *                             another process's memory into a new FILE,
 *                             every way ckpt could: hwlimit_take.c
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
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwlimit.h"

enum how { P_READ, P_POPULATE, P_POPWRITE, P_HUGEPAGE, P_UFFD, P_UFFDBUF,
	   P_VMWRITE, P_PROCMEM, P_PREADV };
static const char *const hows[] = { "read", "populate", "popwrite", "hugepage",
				    "uffd", "uffdbuf", "vmwrite", "procmem", "preadv" };

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* One thread's share of a placement: [off, off + len) of the file. */
struct share {
	enum how how;
	int fd, uffd, memfd;
	pid_t child;
	char *dst;		/* the file's offset 0 in the destination */
	const char *src;	/* the file mapped (uffd, procmem) */
	size_t off, len;
	const char *err;
};

static int read_all(int fd, char *dst, size_t off, size_t len)
{
	while (len) {
		ssize_t k = pread(fd, dst, len < CHUNK ? len : CHUNK, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		dst += k;
		off += k;
		len -= k;
	}
	return 0;
}

static void *place_share(void *arg)
{
	struct share *s = arg;
	char *d = s->dst + s->off, *buf = NULL;

	switch (s->how) {
	case P_POPWRITE:
		if (madvise(d, s->len, MADV_POPULATE_WRITE))
			return s->err = "madvise(MADV_POPULATE_WRITE)", s;
		/* fall through */
	case P_READ: case P_POPULATE: case P_HUGEPAGE: case P_PREADV:
		if (read_all(s->fd, d, s->off, s->len))
			s->err = "read";
		return s;
	case P_UFFD:
		for (size_t at = 0; at < s->len; at += CHUNK / 4) {
			struct uffdio_copy c = {
				.dst = (uintptr_t)d + at,
				.src = (uintptr_t)s->src + s->off + at,
				.len = s->len - at < CHUNK / 4 ? s->len - at : CHUNK / 4,
			};

			if (ioctl(s->uffd, UFFDIO_COPY, &c))
				return s->err = "UFFDIO_COPY", s;
		}
		return s;
	case P_UFFDBUF:
		buf = map(CHUNK / 4);
		for (size_t at = 0; at < s->len && !s->err; at += CHUNK / 4) {
			struct uffdio_copy c = {
				.dst = (uintptr_t)d + at, .src = (uintptr_t)buf,
				.len = s->len - at < CHUNK / 4 ? s->len - at : CHUNK / 4,
			};

			if (read_all(s->fd, buf, s->off + at, c.len))
				s->err = "read";
			else if (ioctl(s->uffd, UFFDIO_COPY, &c))
				s->err = "UFFDIO_COPY";
		}
		munmap(buf, CHUNK / 4);
		return s;
	case P_VMWRITE:
		buf = map(CHUNK / 4);
		for (size_t at = 0; at < s->len && !s->err; at += CHUNK / 4) {
			size_t n = s->len - at < CHUNK / 4 ? s->len - at : CHUNK / 4;
			struct iovec l = { buf, n }, r = { d + at, n };

			if (read_all(s->fd, buf, s->off + at, n))
				s->err = "read";
			else if (process_vm_writev(s->child, &l, 1, &r, 1, 0) != (ssize_t)n)
				s->err = "process_vm_writev";
		}
		munmap(buf, CHUNK / 4);
		return s;
	case P_PROCMEM:
		for (size_t at = 0; at < s->len; at += CHUNK) {
			size_t n = s->len - at < CHUNK ? s->len - at : CHUNK;

			if (pwrite(s->memfd, s->src + s->off + at, n,
				   (off_t)(uintptr_t)(d + at)) != (ssize_t)n)
				return s->err = "pwrite /proc/CHILD/mem", s;
		}
		return s;
	}
	return s;
}

/* A child with @len of fresh memory at *@at, waiting on @go: a byte
 * read from it (and, with @fd, the file read into that memory first),
 * then one written to @done. */
static pid_t place_child(size_t len, int fd, char **at, int go[2], int done[2])
{
	int tell[2];
	pid_t pid;
	char c;

	if (pipe(tell) || pipe(go) || pipe(done))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		char *d = map(len);
		int ok;

		if (write(tell[1], &d, sizeof(d)) != sizeof(d) || read(go[0], &c, 1) != 1)
			_exit(1);
		ok = fd < 0 || !read_all(fd, d, 0, len);
		if (write(done[1], ok ? "y" : "n", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(tell[0], at, sizeof(*at)) != sizeof(*at))
		die("child's address");
	close(tell[0]);
	close(tell[1]);
	return pid;
}

static int place(const char *how_s, const char *file, int nthreads)
{
	struct share sh[64];
	pthread_t th[64];
	int how = -1, fd, go[2], done[2], ret = 0;
	struct stat st;
	char *dst = NULL, *src = NULL, path[64], c;
	pid_t child = 0;
	double t0, t1;
	size_t len;

	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++)
		if (!strcmp(how_s, hows[i]))
			how = i;
	if (how < 0 || nthreads < 1 || nthreads > 64 || (how == P_PREADV && nthreads != 1)) {
		fprintf(stderr, "hwlimit: place HOW FILE [THREADS 1-64]: HOW one of read populate popwrite hugepage uffd uffdbuf vmwrite procmem preadv (THREADS 1)\n");
		return 1;
	}
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size < 4096)
		die("open (a file of a page or more)");
	len = st.st_size & ~4095ul;
	if (how >= P_VMWRITE)
		child = place_child(len, how == P_PREADV ? fd : -1, &dst, go, done);
	prime_env();
	t0 = now();
	if (how == P_UFFD || how == P_PROCMEM) {
		src = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
		if (src == MAP_FAILED)
			die("mmap of the file");
	}
	if (how < P_VMWRITE) {
		dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
			   (how == P_POPULATE ? MAP_POPULATE : 0), -1, 0);
		if (dst == MAP_FAILED)
			die("mmap");
		if (how == P_HUGEPAGE && madvise(dst, len, MADV_HUGEPAGE))
			die("madvise(MADV_HUGEPAGE)");
	}
	int uffd = -1, memfd = -1;

	if (how == P_UFFD || how == P_UFFDBUF) {
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register reg = {
			.range = { (uintptr_t)dst, len }, .mode = UFFDIO_REGISTER_MODE_MISSING,
		};

		uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
		if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg))
			die("userfaultfd");
	}
	if (how == P_PROCMEM) {
		snprintf(path, sizeof(path), "/proc/%d/mem", child);
		memfd = open(path, O_RDWR | O_CLOEXEC);
		if (memfd < 0)
			die("open /proc/CHILD/mem");
	}
	if (how == P_PREADV) {
		if (write(go[1], "g", 1) != 1 || read(done[0], &c, 1) != 1 || c != 'y')
			die("the child's read");
	} else {
		for (int i = 0; i < nthreads; i++) {
			size_t a = len / nthreads * i & ~4095ul;
			size_t b = i == nthreads - 1 ? len : len / nthreads * (i + 1) & ~4095ul;

			sh[i] = (struct share){ how, fd, uffd, memfd, child, dst, src, a, b - a, NULL };
			if (pthread_create(&th[i], NULL, place_share, &sh[i]))
				die("pthread_create");
		}
		for (int i = 0; i < nthreads; i++) {
			pthread_join(th[i], NULL);
			if (sh[i].err) {
				fprintf(stderr, "hwlimit: %s: %s\n", sh[i].err, strerror(errno));
				ret = 1;
			}
		}
	}
	t1 = now();
	if (child) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (!ret)
		printf("%.6f\n", t1 - t0);
	return ret;
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
		fsync_dir(argv[2]);
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
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "place"))
		return place(argv[2], argv[3], argc == 5 ? atoi(argv[4]) : 1);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "take"))
		return take(argv[2], argv[3], (size_t)atol(argv[4]) << 20,
			    argc == 6 ? atoi(argv[5]) : 1);
	fprintf(stderr, "usage: hwlimit memcpy MIB | write FILE MIB | read FILE | prime MIB | place HOW FILE [THREADS] | take HOW FILE MIB [THREADS]\n");
	return 1;
}
