/* mem_anon - private anonymous memory survives checkpoint/restart.
 *
 * Covers heap (brk and mmap'd malloc chunks), a live stack frame, .data
 * and .bss, a large pseudo-random area, a sparse 1 GiB area of which only
 * a few pages exist, read-only and PROT_NONE areas, a guard page splitting
 * an area, and the VMA flags MAP_GROWSDOWN, MADV_DONTFORK and
 * MADV_WIPEONFORK.  Every area must come back at the same address with the
 * same boundaries and protections.
 */
#include "tp.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MiB (1024UL * 1024)
#define GiB (1024 * MiB)

#define SMALL_SIZE	1000
#define BIG_SIZE	(4 * MiB)	/* above the mmap threshold */
#define STACK_WORDS	(64 * 1024)	/* 256 KiB live on the stack */
#define RAND_SIZE	(8 * MiB)
#define SPARSE_SIZE	GiB
#define SMALL_AREA	4		/* pages of each small area */
#define GUARD_PAGES	5		/* RW, RW, guard, RW, RW */
/* > stack_guard_gap, 256 pages: 1 MiB, or 16 MiB with 64 KiB pages */
#define HOLE		(page * 256 + 2 * MiB)

static long page;
static int sealed;

/* Initialised so that it lands in .data, not .bss. */
static uint32_t data_arr[4096] = { 1, 2, 3, 4 };
static uint32_t bss_arr[16384];

/* Sparse area: the only pages ever touched, and where in them; in 4
 * KiB pages, scaled to the machine's (scale_sparse()). */
static unsigned long sparse_pages[] = {
	0, 1, 777, 4096, 65535, 65536, 100003, 131072, 200000,
	SPARSE_SIZE / 4096 - 1,
};
#define NSPARSE (sizeof(sparse_pages) / sizeof(sparse_pages[0]))
#define SPARSE_BLOCK 64

/* With bigger pages (64 KiB on ppc64le) the same places, each still a
 * page of its own, the last the area's last. */
static void scale_sparse(void)
{
	for (size_t i = 0; i < NSPARSE; i++) {
		sparse_pages[i] = sparse_pages[i] * 4096 / page;
		if (i && sparse_pages[i] <= sparse_pages[i - 1])
			sparse_pages[i] = sparse_pages[i - 1] + 1;
	}
	sparse_pages[NSPARSE - 1] = SPARSE_SIZE / page - 1;
}

/* Where in its page the block of touched sparse page i lies. */
static size_t sparse_off(size_t i)
{
	return (i * 397) % (4096 - SPARSE_BLOCK);
}

/* Big enough for /proc/self/smaps; static so reading /proc never
 * changes the heap or the mappings this test compares. */
static char procbuf[4 * MiB];

enum {
	L_SMALL, L_BIG, L_STACK, L_DATA, L_BSS, L_RAND, L_SPARSE, L_RO,
	L_NONE, L_GUARD0, L_GUARD1, L_GUARD2, L_GD, L_DC, L_WF, L_NR,
};
static const char *const line_names[L_NR] = {
	"small malloc", "big malloc", "stack array", ".data", ".bss",
	"random area", "sparse area", "read-only area", "PROT_NONE area",
	"guard area low", "guard page", "guard area high", "growsdown area",
	"dontfork area", "wipeonfork area",
};
static const void *line_addr[L_NR];
static char line_before[L_NR][256];

static ssize_t read_proc(const char *path)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, procbuf + len, sizeof(procbuf) - 1 - len)) > 0)
		len += n;
	close(fd);
	if (n < 0)
		return -1;
	procbuf[len] = '\0';
	return len;
}

/* The /proc/self/maps line of the VMA holding addr, without newline. */
static int maps_line(const void *addr, char *out, size_t size)
{
	uintptr_t a = (uintptr_t)addr;
	char *line, *nl;

	out[0] = '\0';
	if (read_proc("/proc/self/maps") < 0)
		return -1;
	for (line = procbuf; *line; line = nl + 1) {
		unsigned long start, end;
		size_t len;

		nl = strchrnul(line, '\n');
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 &&
		    start <= a && a < end) {
			len = nl - line;
			if (len >= size)
				len = size - 1;
			memcpy(out, line, len);
			out[len] = '\0';
			return 0;
		}
		if (!*nl)
			break;
	}
	return -1;
}

/* The smaps entry of the VMA starting at start: [*begin, return value). */
static char *smaps_entry(const void *start, char **begin)
{
	char key[32], *p, *end;

	if (read_proc("/proc/self/smaps") < 0)
		return NULL;
	snprintf(key, sizeof(key), "%lx-", (unsigned long)start);
	for (p = procbuf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, strlen(key)))
			break;
	if (!p)
		return NULL;
	/* VmFlags is the last line of an entry. */
	end = strstr(p, "\nVmFlags:");
	if (!end)
		return NULL;
	*begin = p;
	return strchrnul(end + 1, '\n');
}

static int has_vmflag(const void *start, const char *flag)
{
	char *begin, *end, *p;
	size_t len = strlen(flag);

	end = smaps_entry(start, &begin);
	if (!end)
		return 0;
	*end = '\0';
	p = strstr(begin, "\nVmFlags:") + strlen("\nVmFlags:");
	while ((p = strstr(p, flag)) != NULL) {
		if (p[-1] == ' ' && (p[len] == ' ' || p[len] == '\0'))
			return 1;
		p += len;
	}
	return 0;
}

/* Rss of the VMA starting at start in KiB, or -1. */
static long rss_kib(const void *start)
{
	char *begin, *end, *p;

	end = smaps_entry(start, &begin);
	if (!end)
		return -1;
	*end = '\0';
	p = strstr(begin, "\nRss:");
	return p ? strtol(p + strlen("\nRss:"), NULL, 10) : -1;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint8_t pat8(unsigned long i, unsigned int seed)
{
	return (uint8_t)((i * 131 + seed) ^ (i >> 8));
}

/* Pattern byte i of an area, i counted from the start of the area. */
static void fill(void *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		((uint8_t *)p)[i] = pat8(i, seed);
}

/* Whether len bytes at p are bytes from..from+len of pattern seed. */
static int same_at(const void *p, size_t from, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if (((const uint8_t *)p)[i] != pat8(from + i, seed))
			return 0;
	return 1;
}

static int same(const void *p, size_t len, unsigned int seed)
{
	return same_at(p, 0, len, seed);
}

static int all_zero(const void *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (((const uint8_t *)p)[i])
			return 0;
	return 1;
}

static int sparse_touched(unsigned long n)
{
	for (size_t i = 0; i < NSPARSE; i++)
		if (sparse_pages[i] == n)
			return 1;
	return 0;
}

/* Touches stack well below main's frame, so that the [stack] VMA does not
 * grow while the checks run and its maps line stays comparable. */
static __attribute__((noinline)) void pregrow_stack(void)
{
	volatile char deep[64 * 1024];

	for (size_t i = 0; i < sizeof(deep); i += 512)
		deep[i] = 1;
}

static void *place(char **cursor, size_t len, int prot, int flags)
{
	void *p;

	*cursor += HOLE;
	p = mmap(*cursor, len, prot, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_FIXED_NOREPLACE | flags, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	*cursor += len;
	return p;
}

static void check_perms(int idx, const char *perms)
{
	char line[256];

	maps_line(line_addr[idx], line, sizeof(line));
	tp_check(strlen(line) > 30 && !strncmp(strchr(line, ' ') + 1, perms, 4),
		 "%s: perms not %s: %s", line_names[idx], perms, line);
}

int main(int argc, char **argv)
{
	uint32_t stack_arr[STACK_WORDS];
	char *small, *big, *cursor, *rnd, *sparse, *ro, *none, *guard;
	char *gd, *dc, *wf, line[256];
	uint64_t seed;
	long rss;
	size_t i;

	tp_init(argc, argv);
	page = sysconf(_SC_PAGESIZE);
	scale_sparse();

	small = malloc(SMALL_SIZE);
	big = malloc(BIG_SIZE);
	if (!small || !big)
		return 2;
	fill(small, SMALL_SIZE, 11);
	fill(big, BIG_SIZE, 12);

	for (i = 0; i < STACK_WORDS; i++)
		stack_arr[i] = (uint32_t)i * 2654435761u ^ 0x57ac0000;
	/* The array escapes, so the stores happen and later loads are real. */
	__asm__ volatile("" : : "r"(stack_arr) : "memory");
	pregrow_stack();

	for (i = 0; i < 4096; i++)
		data_arr[i] = 0xda7a0000 + i * 7;
	for (i = 0; i < 16384; i++)
		bss_arr[i] = 0xb5500000 + i * 3;

	/*
	 * Find room for all areas, then place each at a fixed spot with a
	 * hole on either side, so that no area merges with a neighbour and
	 * each maps line is exactly what was set up here.
	 */
	cursor = mmap(NULL, RAND_SIZE + SPARSE_SIZE + 16 * HOLE + 64 * MiB, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (cursor == MAP_FAILED)
		return 2;
	munmap(cursor, RAND_SIZE + SPARSE_SIZE + 16 * HOLE + 64 * MiB);

	rnd = place(&cursor, RAND_SIZE, PROT_READ | PROT_WRITE, 0);
	seed = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < RAND_SIZE / 8; i++)
		((uint64_t *)rnd)[i] = xorshift(&seed);

	/*
	 * Only the touched pages exist.  No THP, so that one touch makes one
	 * 4 KiB page even with THP "always", and Rss tells what was restored.
	 */
	sparse = place(&cursor, SPARSE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_NORESERVE);
	madvise(sparse, SPARSE_SIZE, MADV_NOHUGEPAGE);
	for (i = 0; i < NSPARSE; i++)
		fill(sparse + sparse_pages[i] * page + sparse_off(i),
		     SPARSE_BLOCK, 100 + i);

	ro = place(&cursor, SMALL_AREA * page, PROT_READ | PROT_WRITE, 0);
	fill(ro, SMALL_AREA * page, 21);
	mprotect(ro, SMALL_AREA * page, PROT_READ);
	/* sealed (mseal, Linux 6.10+): no later mprotect or munmap works */
	sealed = syscall(462, ro, SMALL_AREA * page, 0) == 0;

	none = place(&cursor, SMALL_AREA * page, PROT_READ | PROT_WRITE, 0);
	fill(none, SMALL_AREA * page, 22);
	mprotect(none, SMALL_AREA * page, PROT_NONE);

	guard = place(&cursor, GUARD_PAGES * page, PROT_READ | PROT_WRITE, 0);
	fill(guard, GUARD_PAGES * page, 23);
	mprotect(guard + 2 * page, page, PROT_NONE);

	gd = place(&cursor, SMALL_AREA * page, PROT_READ | PROT_WRITE,
		   MAP_GROWSDOWN);
	fill(gd, SMALL_AREA * page, 24);

	dc = place(&cursor, SMALL_AREA * page, PROT_READ | PROT_WRITE, 0);
	fill(dc, SMALL_AREA * page, 25);
	madvise(dc, SMALL_AREA * page, MADV_DONTFORK);
	mlock(dc, SMALL_AREA * page);

	wf = place(&cursor, SMALL_AREA * page, PROT_READ | PROT_WRITE, 0);
	fill(wf, SMALL_AREA * page, 26);
	madvise(wf, SMALL_AREA * page, MADV_WIPEONFORK);
	madvise(wf, SMALL_AREA * page, MADV_DONTDUMP);

	line_addr[L_SMALL] = small;
	line_addr[L_BIG] = big;
	line_addr[L_STACK] = stack_arr;
	line_addr[L_DATA] = data_arr;
	line_addr[L_BSS] = bss_arr + 16383;
	line_addr[L_RAND] = rnd;
	line_addr[L_SPARSE] = sparse;
	line_addr[L_RO] = ro;
	line_addr[L_NONE] = none;
	line_addr[L_GUARD0] = guard;
	line_addr[L_GUARD1] = guard + 2 * page;
	line_addr[L_GUARD2] = guard + 3 * page;
	line_addr[L_GD] = gd;
	line_addr[L_DC] = dc;
	line_addr[L_WF] = wf;
	for (i = 0; i < L_NR; i++)
		if (maps_line(line_addr[i], line_before[i],
			      sizeof(line_before[i])) < 0)
			return 2;

	tp_ready();
	tp_wait_go();

	/* Same VMAs at the same places, before anything can fault in. */
	for (i = 0; i < L_NR; i++) {
		maps_line(line_addr[i], line, sizeof(line));
		tp_check(!strcmp(line, line_before[i]),
			 "%s: maps line was '%s', now '%s'", line_names[i],
			 line_before[i], line);
	}

	/* Only the touched pages of the sparse area were brought back. */
	rss = rss_kib(sparse);
	tp_check(rss >= 0 && rss < 1024, "sparse area: Rss %ld KiB", rss);
	tp_check(has_vmflag(sparse, "nh"), "sparse area: no 'nh' VmFlag");
	for (i = 0; i < NSPARSE; i++) {
		char *pg = sparse + sparse_pages[i] * page;
		size_t off = sparse_off(i);

		tp_check(same(pg + off, SPARSE_BLOCK, 100 + i) &&
			 all_zero(pg, off) &&
			 all_zero(pg + off + SPARSE_BLOCK,
				  page - off - SPARSE_BLOCK),
			 "sparse area: page %lu content", sparse_pages[i]);
	}
	/* Untouched pages read as zero: the neighbours of the touched ones
	 * and a sample across the area (reads map the zero page only). */
	for (i = 0; i < SPARSE_SIZE / page; i += 509)
		if (!sparse_touched(i))
			tp_check(all_zero(sparse + i * page, page),
				 "sparse area: untouched page %zu not zero", i);
	for (i = 0; i < NSPARSE; i++) {
		unsigned long n = sparse_pages[i];

		if (n > 0 && !sparse_touched(n - 1))
			tp_check(all_zero(sparse + (n - 1) * page, page),
				 "sparse area: untouched page %lu not zero",
				 n - 1);
		if (n + 1 < SPARSE_SIZE / page && !sparse_touched(n + 1))
			tp_check(all_zero(sparse + (n + 1) * page, page),
				 "sparse area: untouched page %lu not zero",
				 n + 1);
	}

	tp_check(same(small, SMALL_SIZE, 11), "small malloc content");
	tp_check(same(big, BIG_SIZE, 12), "big malloc content");
	for (i = 0; i < STACK_WORDS; i++)
		if (stack_arr[i] != ((uint32_t)i * 2654435761u ^ 0x57ac0000))
			break;
	tp_check(i == STACK_WORDS, "stack array differs at word %zu", i);
	for (i = 0; i < 4096; i++)
		if (data_arr[i] != 0xda7a0000 + i * 7)
			break;
	tp_check(i == 4096, ".data array differs at %zu", i);
	for (i = 0; i < 16384; i++)
		if (bss_arr[i] != 0xb5500000 + i * 3)
			break;
	tp_check(i == 16384, ".bss array differs at %zu", i);

	seed = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < RAND_SIZE / 8; i++)
		if (((uint64_t *)rnd)[i] != xorshift(&seed))
			break;
	tp_check(i == RAND_SIZE / 8, "random area differs at word %zu", i);

	check_perms(L_RO, "r--p");
	tp_check(same(ro, SMALL_AREA * page, 21), "read-only area content");

	check_perms(L_NONE, "---p");
	tp_check(mprotect(none, SMALL_AREA * page, PROT_READ) == 0,
		 "mprotect PROT_NONE area: %s", strerror(errno));
	tp_check(same(none, SMALL_AREA * page, 22), "PROT_NONE area content");

	/* The guard page still splits the area in three VMAs. */
	check_perms(L_GUARD0, "rw-p");
	check_perms(L_GUARD1, "---p");
	check_perms(L_GUARD2, "rw-p");
	maps_line(guard + 2 * page, line, sizeof(line));
	tp_check(strtoul(line, NULL, 16) == (uintptr_t)(guard + 2 * page) &&
		 strtoul(strchr(line, '-') + 1, NULL, 16) ==
		 (uintptr_t)(guard + 3 * page), "guard page VMA: %s", line);
	tp_check(same(guard, 2 * page, 23) &&
		 same_at(guard + 3 * page, 3 * page, 2 * page, 23),
		 "guard area content");

	tp_check(same(gd, SMALL_AREA * page, 24), "growsdown area content");
	if (has_vmflag(gd, "gd")) {
		/* A real growsdown VMA extends when touched just below
		 * its start (without the flag, this would be SIGSEGV). */
		gd[-1] = 'x';
		maps_line(gd - 1, line, sizeof(line));
		tp_check(strtoul(line, NULL, 16) == (uintptr_t)(gd - page),
			 "growsdown area did not grow: %s", line);
	} else {
		tp_fail("growsdown area: no 'gd' VmFlag");
	}

	tp_check(has_vmflag(dc, "dc"), "dontfork area: no 'dc' VmFlag");
	tp_check(has_vmflag(dc, "lo"), "mlocked area: no 'lo' VmFlag");
	tp_check(has_vmflag(wf, "dd"), "dontdump area: no 'dd' VmFlag");
	if (sealed)
		tp_check(has_vmflag(ro, "sl") &&
			 mprotect(ro, SMALL_AREA * page, PROT_READ | PROT_WRITE) != 0,
			 "sealed area: no longer sealed");
	tp_check(same(dc, SMALL_AREA * page, 25), "dontfork area content");
	tp_check(has_vmflag(wf, "wf"), "wipeonfork area: no 'wf' VmFlag");
	tp_check(same(wf, SMALL_AREA * page, 26), "wipeonfork area content");

	return tp_done();
}
