/* mem_file - file mappings survive checkpoint/restart.
 *
 * A MAP_PRIVATE writable mapping with some pages changed in memory (also
 * the partial page past end of file), a MAP_PRIVATE read-only mapping at a
 * non-zero file offset, and a MAP_SHARED mapping that must still write
 * through to its file after restart.  The descriptors used to map are
 * closed, so only the mappings hold the files.
 */
#include "tp.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define MiB (1024UL * 1024)
#define HOLE (2 * MiB)

#define A_PAGES		16		/* file A: 16 pages ... */
#define A_TAIL		1000		/* ... and 1000 bytes */
#define PRIV_PAGES	(A_PAGES + 1)	/* all of A, last page partial */
#define RO_PGOFF	4		/* read-only window on A */
#define RO_PAGES	8
#define S_PAGES		4		/* file S, mapped shared */

static size_t page;

static char path_a[4096], path_s[4096];
static char line_before[3][512];
static const void *line_addr[3];
static const char *const line_names[3] = {
	"private RW mapping", "private RO mapping", "shared mapping",
};
static char mapsbuf[1 * MiB];

/* Content of file A at offset off, as written at setup. */
static uint8_t file_a(size_t off)
{
	return (uint8_t)(off * 7 + (off >> 12) * 13 + 0x5a);
}

/* Content of file S at setup, and of writes through the mappings. */
static uint8_t pat(size_t off, unsigned int seed)
{
	return (uint8_t)((off * 31 + seed * 101) ^ (off >> 7));
}

static int maps_line(const void *addr, char *out, size_t size)
{
	uintptr_t a = (uintptr_t)addr;
	ssize_t n, len = 0;
	char *line, *nl;
	int fd;

	out[0] = '\0';
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((n = read(fd, mapsbuf + len, sizeof(mapsbuf) - 1 - len)) > 0)
		len += n;
	close(fd);
	mapsbuf[len] = '\0';
	for (line = mapsbuf; *line; line = nl + 1) {
		unsigned long start, end;

		nl = strchrnul(line, '\n');
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 &&
		    start <= a && a < end) {
			len = nl - line;
			if ((size_t)len >= size)
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

static int make_file(const char *dir, const char *name, char *path,
		     size_t len, int a)
{
	static uint8_t buf[(A_PAGES + 1) * 4096];
	int fd;

	snprintf(path, 4096, "%s/tp-mem_file-%s-XXXXXX", dir, name);
	fd = mkstemp(path);
	if (fd < 0) {
		perror(path);
		exit(2);
	}
	for (size_t i = 0; i < len; i++)
		buf[i] = a ? file_a(i) : pat(i, 1);
	if (pwrite(fd, buf, len, 0) != (ssize_t)len) {
		perror("pwrite");
		exit(2);
	}
	return fd;
}

static void *place(char **cursor, size_t len, int prot, int flags, int fd,
		   off_t off)
{
	void *p;

	*cursor += HOLE;
	p = mmap(*cursor, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	*cursor += len;
	return p;
}

/* What the private RW mapping of A must show at off (see setup). */
static uint8_t priv_expect(size_t off)
{
	size_t pg = off / page, in = off % page;

	if (pg == 2)
		return pat(off, 2);
	if (pg == 5 && in >= 100 && in < 300)
		return pat(off, 5);
	if (pg == 11 && in == 17)
		return 0xee;
	if (pg == A_PAGES && in >= 2000 && in < 2100)
		return pat(off, 16);
	if (off >= A_PAGES * page + A_TAIL)
		return 0;	/* past end of file */
	return file_a(off);
}

/* The contents of file S, read through a descriptor opened now. */
static int file_s_matches(size_t from, size_t len, unsigned int seed)
{
	static uint8_t buf[S_PAGES * 4096];
	int fd = open(path_s, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, buf, len, from);
	close(fd);
	if (n != (ssize_t)len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pat(from + i, seed))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	static uint8_t buf[(A_PAGES + 1) * 4096];
	const char *dir = getenv("TP_TMPDIR");
	uint8_t *priv, *ro, *sh;
	char *cursor, line[512];
	struct stat st;
	size_t i, bad;
	int fd_a, fd_s;

	tp_init(argc, argv);
	page = sysconf(_SC_PAGESIZE);
	if (!dir || !*dir)
		dir = "/tmp";

	fd_a = make_file(dir, "a", path_a, A_PAGES * page + A_TAIL, 1);
	fd_s = make_file(dir, "s", path_s, S_PAGES * page, 0);

	/* Holes between the mappings keep each one a VMA of its own. */
	cursor = mmap(NULL, 16 * MiB, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (cursor == MAP_FAILED)
		return 2;
	munmap(cursor, 16 * MiB);

	priv = place(&cursor, PRIV_PAGES * page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE, fd_a, 0);
	ro = place(&cursor, RO_PAGES * page, PROT_READ, MAP_PRIVATE, fd_a,
		   RO_PGOFF * page);
	sh = place(&cursor, S_PAGES * page, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd_s, 0);
	close(fd_a);
	close(fd_s);

	/*
	 * Private copies of: all of page 2, a range of page 5, one byte of
	 * page 11, and bytes past EOF in the last, partial page.  Page 7 is
	 * only read, the other pages are never touched.
	 */
	for (i = 2 * page; i < 3 * page; i++)
		priv[i] = pat(i, 2);
	for (i = 5 * page + 100; i < 5 * page + 300; i++)
		priv[i] = pat(i, 5);
	priv[11 * page + 17] = 0xee;
	for (i = A_PAGES * page + 2000; i < A_PAGES * page + 2100; i++)
		priv[i] = pat(i, 16);
	__asm__ volatile("" : : "r"(priv[7 * page]) : "memory");

	/* Through the shared mapping: one range of page 0, all of page 2. */
	for (i = 0; i < 100; i++)
		sh[i] = pat(i, 3);
	for (i = 2 * page; i < 3 * page; i++)
		sh[i] = pat(i, 3);

	line_addr[0] = priv;
	line_addr[1] = ro;
	line_addr[2] = sh;
	for (i = 0; i < 3; i++)
		if (maps_line(line_addr[i], line_before[i],
			      sizeof(line_before[i])) < 0)
			return 2;

	tp_ready();
	tp_wait_go();

	/* Same addresses, perms, offsets, devices, inodes and paths. */
	for (i = 0; i < 3; i++) {
		maps_line(line_addr[i], line, sizeof(line));
		tp_check(!strcmp(line, line_before[i]),
			 "%s: maps line was '%s', now '%s'", line_names[i],
			 line_before[i], line);
	}

	for (i = 0; i < PRIV_PAGES * page; i++)
		if (priv[i] != priv_expect(i))
			break;
	tp_check(i == PRIV_PAGES * page,
		 "private RW mapping differs at offset %zu (page %zu)", i,
		 i / page);

	/* The private changes never reached the file. */
	fd_a = open(path_a, O_RDONLY | O_CLOEXEC);
	tp_check(fd_a >= 0, "open %s: %s", path_a, strerror(errno));
	if (fd_a >= 0) {
		size_t a_size = A_PAGES * page + A_TAIL;

		tp_check(fstat(fd_a, &st) == 0 && (size_t)st.st_size == a_size,
			 "file A size changed");
		tp_check(pread(fd_a, buf, a_size, 0) == (ssize_t)a_size,
			 "pread file A");
		for (i = 0; i < a_size; i++)
			if (buf[i] != file_a(i))
				break;
		tp_check(i == a_size, "file A on disk changed at offset %zu",
			 i);
		close(fd_a);
	}

	for (i = 0; i < RO_PAGES * page; i++)
		if (ro[i] != file_a(RO_PGOFF * page + i))
			break;
	tp_check(i == RO_PAGES * page,
		 "private RO mapping differs at offset %zu", i);

	/* Shared: the old writes are in the mapping and in the file ... */
	for (bad = 0, i = 0; i < S_PAGES * page; i++)
		bad += sh[i] != pat(i, (i < 100 || i / page == 2) ? 3 : 1);
	tp_check(!bad, "shared mapping: %zu bytes differ", bad);
	tp_check(file_s_matches(0, 100, 3) &&
		 file_s_matches(100, page - 100, 1) &&
		 file_s_matches(2 * page, page, 3),
		 "file S lacks the writes made before checkpoint");

	/* ... and new writes still go to the file, not to a private copy. */
	for (i = page; i < 2 * page; i++)
		sh[i] = pat(i, 4);
	for (i = 3 * page + 500; i < 3 * page + 600; i++)
		sh[i] = pat(i, 4);
	tp_check(file_s_matches(page, page, 4) &&
		 file_s_matches(3 * page + 500, 100, 4) &&
		 file_s_matches(3 * page, 500, 1),
		 "write through the shared mapping after restart did not "
		 "reach file S");

	unlink(path_a);
	unlink(path_s);
	return tp_done();
}
