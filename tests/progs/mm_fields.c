/* mm_fields - the mm_struct fields and special mappings survive restart.
 *
 * The program break (also its unaligned part), the code/data/stack/brk/
 * arg/env addresses of /proc/self/stat, the auxiliary vector and
 * AT_RANDOM, cmdline and environ (argv[0] is rewritten in place, so a
 * fresh exec would show something else), /proc/self/exe, the vDSO and vvar
 * mappings, which must be the live ones of this kernel, and comm.
 */
#include "tp.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>

#define BRK_GROW	12345	/* not a multiple of the page size */
#define BRK_MORE	(3 * 4096 + 7)

/* /proc/self/stat fields that PR_SET_MM restores, 1-based. */
static const int stat_fields[] = { 26, 27, 28, 45, 46, 47, 48, 49, 50, 51 };
#define NFIELDS (sizeof(stat_fields) / sizeof(stat_fields[0]))

struct blob {
	char data[64 * 1024];
	ssize_t len;
};

static struct blob auxv_b, cmdline_b, environ_b, comm_b, special_b;
static struct blob cur, special_now;
static unsigned long stat_b[NFIELDS];
static char exe_b[4096];

static ssize_t read_file(const char *path, struct blob *b)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	b->len = 0;
	if (fd < 0)
		return -1;
	while ((n = read(fd, b->data + b->len,
			 sizeof(b->data) - 1 - b->len)) > 0)
		b->len += n;
	close(fd);
	b->data[b->len] = '\0';
	return n < 0 ? -1 : b->len;
}

static int same_blob(const struct blob *a, const struct blob *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

/* Fields of /proc/self/stat, counted past the comm, which may hold
 * spaces and parentheses. */
static int read_stat(unsigned long *out)
{
	char *p;
	int field = 3;
	size_t i = 0;

	if (read_file("/proc/self/stat", &cur) < 0)
		return -1;
	p = strrchr(cur.data, ')');
	if (!p)
		return -1;
	p += 2;
	while (i < NFIELDS && *p) {
		if (field == stat_fields[i])
			out[i++] = strtoul(p, NULL, 10);
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
		field++;
	}
	return i == NFIELDS ? 0 : -1;
}

/* All [vdso] and [vvar*] lines of /proc/self/maps, in order. */
static void special_lines(struct blob *out)
{
	char *line, *nl;

	read_file("/proc/self/maps", &cur);
	out->len = 0;
	for (line = cur.data; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		if (memmem(line, nl - line, "[vdso]", 6) ||
		    memmem(line, nl - line, "[vvar", 5)) {
			memcpy(out->data + out->len, line, nl - line + 1);
			out->len += nl - line + 1;
		}
		if (!*nl)
			break;
	}
	out->data[out->len] = '\0';
}

/* Start of the [vdso] line among those special_lines() found. */
static uintptr_t vdso_start(const struct blob *lines)
{
	const char *line = lines->data, *nl;

	for (; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		if (memmem(line, nl - line, "[vdso]", 6))
			return strtoul(line, NULL, 16);
		if (!*nl)
			break;
	}
	return 0;
}

static long long ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static long long us(const struct timeval *tv)
{
	return tv->tv_sec * 1000000LL + tv->tv_usec;
}

/*
 * The vDSO reading of clock id must lie between two system calls.  With
 * a stale copy of the vvar data instead of the kernel's live pages, it
 * lags behind (the coarse clocks are read straight from vvar).
 */
static void check_clock(clockid_t id, const char *name)
{
	struct timespec t1, t2, t3;

	syscall(SYS_clock_gettime, id, &t1);
	tp_check(clock_gettime(id, &t2) == 0, "%s: %s", name, strerror(errno));
	syscall(SYS_clock_gettime, id, &t3);
	tp_check(ns(&t1) <= ns(&t2) && ns(&t2) <= ns(&t3),
		 "%s: vDSO %lld ns not within syscalls %lld..%lld", name,
		 ns(&t2), ns(&t1), ns(&t3));
}

int main(int argc, char **argv)
{
	static const char marker[] = "ckpt-argv0-";
	struct timespec mono0, mono1;
	struct timeval tv0, tv1, tv2, tv3;
	unsigned long stat_now[NFIELDS];
	uint8_t random_b[16];
	uintptr_t brk0, brk1, random_p, vdso;
	char *heap, *more, exe[4096];
	ssize_t n;
	size_t i;

	tp_init(argc, argv);

	/* Grow the heap by hand; brk must come back exact, not aligned. */
	brk0 = syscall(SYS_brk, 0);
	heap = sbrk(BRK_GROW);
	brk1 = syscall(SYS_brk, 0);
	if (heap == (void *)-1 || brk1 != (uintptr_t)heap + BRK_GROW ||
	    brk1 < brk0 + BRK_GROW)
		return 2;
	for (i = 0; i < BRK_GROW; i++)
		heap[i] = (char)(i * 13 + 1);

	/* cmdline shows process memory: make it unlike a fresh exec's. */
	for (i = 0; argv[0][i]; i++)
		argv[0][i] = marker[i % (sizeof(marker) - 1)];

	random_p = getauxval(AT_RANDOM);
	if (!random_p)
		return 2;
	memcpy(random_b, (void *)random_p, 16);
	if (read_stat(stat_b) < 0 ||
	    read_file("/proc/self/auxv", &auxv_b) <= 0 ||
	    read_file("/proc/self/cmdline", &cmdline_b) <= 0 ||
	    read_file("/proc/self/environ", &environ_b) < 0 ||
	    read_file("/proc/self/comm", &comm_b) <= 0 ||
	    readlink("/proc/self/exe", exe_b, sizeof(exe_b) - 1) <= 0)
		return 2;
	if (strncmp(cmdline_b.data, marker, strlen(argv[0]) < 4 ?
		    strlen(argv[0]) : 4))
		return 2;
	special_lines(&special_b);
	if (!vdso_start(&special_b))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &mono0);
	gettimeofday(&tv0, NULL);

	tp_ready();
	tp_wait_go();

	/* The special mappings first: the clocks below run in the vDSO. */
	special_lines(&special_now);
	tp_check(same_blob(&special_now, &special_b),
		 "vdso/vvar lines were\n%snow\n%s", special_b.data,
		 special_now.data);
	vdso = getauxval(AT_SYSINFO_EHDR);
	tp_check(vdso && vdso == vdso_start(&special_now),
		 "AT_SYSINFO_EHDR %#lx is not the [vdso] mapping",
		 (unsigned long)vdso);

	/* brk: the kernel's value, glibc's cached one, and growing on. */
	tp_check((uintptr_t)syscall(SYS_brk, 0) == brk1,
		 "brk is %#lx, was %#lx", (unsigned long)syscall(SYS_brk, 0),
		 (unsigned long)brk1);
	tp_check((uintptr_t)sbrk(0) == brk1, "sbrk(0) is %p, was %#lx",
		 sbrk(0), (unsigned long)brk1);
	for (i = 0; i < BRK_GROW; i++)
		if (heap[i] != (char)(i * 13 + 1))
			break;
	tp_check(i == BRK_GROW, "sbrk'd memory differs at %zu", i);
	more = sbrk(BRK_MORE);
	tp_check((uintptr_t)more == brk1, "sbrk(%d) returned %p, not %#lx",
		 BRK_MORE, more, (unsigned long)brk1);
	tp_check((uintptr_t)syscall(SYS_brk, 0) == brk1 + BRK_MORE,
		 "brk did not grow to %#lx", (unsigned long)(brk1 + BRK_MORE));
	if (more != (void *)-1) {
		for (i = 0; i < BRK_MORE; i++)
			more[i] = (char)i;
		for (i = 0; i < BRK_MORE; i++)
			if (more[i] != (char)i)
				break;
		tp_check(i == BRK_MORE, "grown heap differs at %zu", i);
	}

	tp_check(read_stat(stat_now) == 0, "cannot parse /proc/self/stat");
	for (i = 0; i < NFIELDS; i++)
		tp_check(stat_now[i] == stat_b[i],
			 "/proc/self/stat field %d is %#lx, was %#lx",
			 stat_fields[i], stat_now[i], stat_b[i]);

	read_file("/proc/self/auxv", &cur);
	tp_check(same_blob(&cur, &auxv_b), "/proc/self/auxv differs");
	tp_check(getauxval(AT_RANDOM) == random_p &&
		 !memcmp((void *)random_p, random_b, 16),
		 "AT_RANDOM bytes differ");
	read_file("/proc/self/cmdline", &cur);
	tp_check(same_blob(&cur, &cmdline_b), "/proc/self/cmdline differs");
	read_file("/proc/self/environ", &cur);
	tp_check(same_blob(&cur, &environ_b), "/proc/self/environ differs");
	read_file("/proc/self/comm", &cur);
	tp_check(same_blob(&cur, &comm_b), "comm was %s now %s", comm_b.data,
		 cur.data);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	tp_check(!strcmp(exe, exe_b), "exe was %s now %s", exe_b, exe);

	/* Clocks: working, monotonic across restart, and live. */
	tp_check(clock_gettime(CLOCK_MONOTONIC, &mono1) == 0 &&
		 ns(&mono1) >= ns(&mono0) &&
		 ns(&mono1) - ns(&mono0) < 3600 * 1000000000LL,
		 "CLOCK_MONOTONIC went from %lld to %lld", ns(&mono0),
		 ns(&mono1));
	check_clock(CLOCK_MONOTONIC, "CLOCK_MONOTONIC");
	check_clock(CLOCK_REALTIME, "CLOCK_REALTIME");
	check_clock(CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE");
	check_clock(CLOCK_REALTIME_COARSE, "CLOCK_REALTIME_COARSE");
	check_clock(CLOCK_BOOTTIME, "CLOCK_BOOTTIME");
	syscall(SYS_gettimeofday, &tv1, NULL);
	tp_check(gettimeofday(&tv2, NULL) == 0, "gettimeofday: %s",
		 strerror(errno));
	syscall(SYS_gettimeofday, &tv3, NULL);
	tp_check(us(&tv1) <= us(&tv2) && us(&tv2) <= us(&tv3),
		 "gettimeofday: vDSO %lld us not within syscalls %lld..%lld",
		 us(&tv2), us(&tv1), us(&tv3));
	tp_check(us(&tv2) - us(&tv0) > -1000000 &&
		 us(&tv2) - us(&tv0) < 3600 * 1000000LL,
		 "gettimeofday went from %lld to %lld", us(&tv0), us(&tv2));

	return tp_done();
}
