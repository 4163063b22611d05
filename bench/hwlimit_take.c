/* hwlimit_take.c - the checkpoint's side of the limits: every way to get
 * the memory of another process into an image file.
 *
 * "hwlimit take HOW FILE MIB [THREADS]": a child fills MIB MiB of its own
 * memory (its own pages, never shared with the parent: a page still
 * copy-on-write shared would be copied by process_vm_readv's pin, which
 * ckpt avoids); then, timed, all of it goes into a new FILE, which is
 * fsync'ed with its directory, THREADS threads (default 1) each taking
 * its share:
 *   vmread    process_vm_readv(2) into a 1 MiB buffer, then pwrite(2)
 *   procmem   pread(2) of /proc/CHILD/mem into the buffer, then pwrite(2)
 *   vmsplice  the child vmsplice(2)s its memory into a pipe (a thread and
 *             a pipe per share), splice(2) from it into FILE: what CRIU's
 *             parasite and criu do
 *   mmap      FILE sized, mapped shared, process_vm_readv(2) straight
 *             into the mapping: one copy
 *   mmappop   the same, the mapping populated (MADV_POPULATE_WRITE) first
 *   direct    process_vm_readv(2) into the buffer, pwrite(2) with O_DIRECT
 * Prints the seconds. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwlimit.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define BUF (CHUNK / 4)
#define MAXT 64

enum how { T_VMREAD, T_PROCMEM, T_VMSPLICE, T_MMAP, T_MMAPPOP, T_DIRECT };
static const char *const hows[] = { "vmread", "procmem", "vmsplice", "mmap",
				    "mmappop", "direct" };

struct share {
	enum how how;
	pid_t child;
	int fd, memfd, pipe;	/* pipe: vmsplice's read end */
	char *src;		/* the child's memory, its address */
	char *dst;		/* mmap: the file mapped */
	size_t off, len;
	const char *err;
};

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

static int vmread(pid_t pid, char *to, const char *from, size_t n)
{
	struct iovec l = { to, n }, r = { (void *)from, n };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

static const char *take_buffered(struct share *s)
{
	char *buf = map(BUF);
	const char *err = NULL;

	for (size_t at = 0; at < s->len && !err; at += BUF) {
		size_t n = min_sz(s->len - at, BUF);
		off_t o = (off_t)(s->off + at);

		if (s->how == T_PROCMEM ?
		    pread(s->memfd, buf, n, (off_t)(uintptr_t)(s->src + o)) != (ssize_t)n :
		    vmread(s->child, buf, s->src + o, n))
			err = s->how == T_PROCMEM ? "pread /proc/CHILD/mem" : "process_vm_readv";
		else if (pwrite(s->fd, buf, n, o) != (ssize_t)n)
			err = "pwrite";
	}
	munmap(buf, BUF);
	return err;
}

static const char *take_spliced(struct share *s)
{
	loff_t o = (loff_t)s->off;
	size_t left = s->len;

	while (left) {
		ssize_t k = splice(s->pipe, NULL, s->fd, &o, min_sz(left, BUF), SPLICE_F_MOVE);

		if (k <= 0)
			return "splice";
		left -= k;
	}
	return NULL;
}

static void *take_share(void *arg)
{
	struct share *s = arg;
	char *d = s->dst + s->off;

	switch (s->how) {
	case T_VMREAD: case T_PROCMEM: case T_DIRECT:
		s->err = take_buffered(s);
		break;
	case T_VMSPLICE:
		s->err = take_spliced(s);
		break;
	case T_MMAPPOP:
		if (madvise(d, s->len, MADV_POPULATE_WRITE)) {
			s->err = "madvise(MADV_POPULATE_WRITE)";
			break;
		}
		/* fall through */
	case T_MMAP:
		for (size_t at = 0; at < s->len && !s->err; at += CHUNK)
			if (vmread(s->child, d + at, s->src + s->off + at,
				   min_sz(s->len - at, CHUNK)))
				s->err = "process_vm_readv";
		break;
	}
	return NULL;
}

/* The child's side of vmsplice: its share into its pipe. */
struct giver {
	int pipe;
	char *p;
	size_t len;
};

static void *give(void *arg)
{
	struct giver *g = arg;

	for (size_t at = 0; at < g->len;) {
		struct iovec v = { g->p + at, min_sz(g->len - at, BUF) };
		ssize_t k = vmsplice(g->pipe, &v, 1, 0);

		if (k <= 0)
			_exit(1);
		at += k;
	}
	return NULL;
}

/* A child holding @len bytes of its own filled memory at *@at; with
 * @pipes (vmsplice), one thread each giving its share once @go has a
 * byte. */
static pid_t take_child(size_t len, char **at, int go[2], int npipes,
			int pipes[][2], const struct share *sh)
{
	int tell[2];
	pid_t pid;

	if (pipe(tell) || pipe(go))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		char *p = filled(len), c;
		struct giver g[MAXT];
		pthread_t th[MAXT];

		if (write(tell[1], &p, sizeof(p)) != sizeof(p) || read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < npipes; i++) {
			g[i] = (struct giver){ pipes[i][1], p + sh[i].off, sh[i].len };
			if (pthread_create(&th[i], NULL, give, &g[i]))
				_exit(1);
		}
		for (int i = 0; i < npipes; i++)
			pthread_join(th[i], NULL);
		pause();
		_exit(0);
	}
	if (read(tell[0], at, sizeof(*at)) != sizeof(*at))
		die("child's address");
	close(tell[0]);
	close(tell[1]);
	return pid;
}

static void shares(struct share *sh, int n, size_t len, enum how how)
{
	for (int i = 0; i < n; i++) {
		size_t a = len / n * i & ~4095ul;
		size_t b = i == n - 1 ? len : len / n * (i + 1) & ~4095ul;

		sh[i] = (struct share){ .how = how, .off = a, .len = b - a };
	}
}

static int parse(const char *how_s, int nthreads)
{
	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++)
		if (!strcmp(how_s, hows[i]) && nthreads >= 1 && nthreads <= MAXT)
			return i;
	fprintf(stderr, "hwlimit: take HOW FILE MIB [THREADS 1-%d]: HOW one of vmread procmem vmsplice mmap mmappop direct\n", MAXT);
	return -1;
}

int take(const char *how_s, const char *file, size_t len, int nthreads)
{
	int how = parse(how_s, nthreads), pipes[MAXT][2], go[2], fd, memfd = -1, ret = 0;
	struct share sh[MAXT];
	pthread_t th[MAXT];
	char *src, *dst = NULL, path[64];
	pid_t child;
	double t0, t1;

	if (how < 0 || !len)
		return 1;
	len &= ~4095ul;
	shares(sh, nthreads, len, how);
	for (int i = 0; how == T_VMSPLICE && i < nthreads; i++)
		if (pipe(pipes[i]) || fcntl(pipes[i][1], F_SETPIPE_SZ, BUF) < 0)
			die("pipe");
	child = take_child(len, &src, go, how == T_VMSPLICE ? nthreads : 0, pipes, sh);
	snprintf(path, sizeof(path), "/proc/%d/mem", child);
	if (how == T_PROCMEM && (memfd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		die("open /proc/CHILD/mem");
	if (unlink(file) && errno != ENOENT)
		die("unlink");
	prime_env();
	t0 = now();
	if (write(go[1], "g", 1) != 1)
		die("go");
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC |
		  (how == T_DIRECT ? O_DIRECT : 0), 0600);
	if (fd < 0)
		die(how == T_DIRECT ? "open O_DIRECT" : "open");
	if (how == T_MMAP || how == T_MMAPPOP) {
		if (ftruncate(fd, (off_t)len))
			die("ftruncate");
		dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (dst == MAP_FAILED)
			die("mmap of the file");
	}
	for (int i = 0; i < nthreads; i++) {
		sh[i].child = child;
		sh[i].fd = fd;
		sh[i].memfd = memfd;
		sh[i].pipe = how == T_VMSPLICE ? pipes[i][0] : -1;
		sh[i].src = src;
		sh[i].dst = dst;
		if (pthread_create(&th[i], NULL, take_share, &sh[i]))
			die("pthread_create");
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		if (sh[i].err) {
			fprintf(stderr, "hwlimit: %s: %s\n", sh[i].err, strerror(errno));
			ret = 1;
		}
	}
	if (dst)
		munmap(dst, len);
	if (fsync(fd) || close(fd))
		die("fsync");
	fsync_dir(file);
	t1 = now();
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (!ret)
		printf("%.6f\n", t1 - t0);
	return ret;
}
