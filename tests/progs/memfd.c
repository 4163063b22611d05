/* memfd.c - memfds come back with their name, content (a hole and data
 * past it, more than one record's worth), size, mode, seals (enforced:
 * a write-sealed memfd refuses writes), each description its flags and
 * offset, and two descriptions of one memfd are one file again. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "tp.h"

#define BIG	(20 << 20)	/* more than a 16 MiB record */
#define TAIL_AT	(40 << 20)	/* after a hole */
#define SEALS	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static unsigned char pat(size_t i)
{
	return (unsigned char)(i * 7 + (i >> 12));
}

static int reopen(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags);
}

static void check_link(int fd, const char *want)
{
	char path[64], link[256] = "";

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	tp_check(readlink(path, link, sizeof(link) - 1) > 0 && !strcmp(link, want),
		 "fd %d links to '%s', want '%s'", fd, link, want);
}

static void check_content(int fd)
{
	unsigned char *buf = malloc(1 << 20);
	size_t bad = 0;
	struct stat st;

	tp_check(fstat(fd, &st) == 0 && st.st_size == TAIL_AT + 5,
		 "sealed memfd size %lld", (long long)st.st_size);
	for (size_t off = 0; off < BIG; off += 1 << 20) {
		if (pread(fd, buf, 1 << 20, off) != 1 << 20) {
			tp_fail("pread at %zu", off);
			break;
		}
		for (size_t i = 0; i < 1 << 20; i++)
			bad += buf[i] != pat(off + i);
	}
	tp_check(bad == 0, "%zu bytes of the memfd's content differ", bad);
	tp_check(pread(fd, buf, 4096, BIG + 4096) == 4096 && buf[0] == 0 &&
		 buf[4095] == 0, "the hole is not zeros");
	tp_check(pread(fd, buf, 16, TAIL_AT) == 5 && !memcmp(buf, "tail!", 5),
		 "the data after the hole is lost");
	free(buf);
}

int main(int argc, char **argv)
{
	int sealed, ro, plain, plain2, nos;
	unsigned char *buf;
	struct stat a, b;
	char c[8] = "";

	tp_init(argc, argv);
	/* a big sealed one, with a hole */
	sealed = memfd_create("ckpt test: sealed", MFD_ALLOW_SEALING);
	buf = malloc(BIG);
	for (size_t i = 0; i < BIG; i++)
		buf[i] = pat(i);
	if (sealed < 0 || write(sealed, buf, BIG) != BIG ||
	    pwrite(sealed, "tail!", 5, TAIL_AT) != 5 ||
	    fcntl(sealed, F_ADD_SEALS, SEALS)) {
		perror("sealed memfd");
		return 1;
	}
	free(buf);
	lseek(sealed, 12345, SEEK_SET);
	ro = reopen(sealed, O_RDONLY);
	lseek(ro, 777, SEEK_SET);
	/* an unsealed one, two descriptions (one O_APPEND), 0640, CLOEXEC */
	plain = memfd_create("plain", MFD_CLOEXEC);
	fchmod(plain, 0640);
	if (write(plain, "abcdef", 6) != 6)
		return 1;
	plain2 = reopen(plain, O_RDWR | O_APPEND);
	lseek(plain2, 2, SEEK_SET);
	nos = memfd_create("", 0);	/* no MFD_ALLOW_SEALING, empty */
	tp_ready();
	tp_wait_go();

	check_link(sealed, "/memfd:ckpt test: sealed (deleted)");
	check_link(plain, "/memfd:plain (deleted)");
	check_link(nos, "/memfd: (deleted)");
	check_content(sealed);
	tp_check(lseek(sealed, 0, SEEK_CUR) == 12345, "sealed memfd offset lost");
	tp_check(lseek(ro, 0, SEEK_CUR) == 777, "second description's offset lost");
	tp_check((fcntl(ro, F_GETFL) & O_ACCMODE) == O_RDONLY, "O_RDONLY lost");
	tp_check(fcntl(sealed, F_GET_SEALS) == SEALS, "seals 0x%x, want 0x%x",
		 fcntl(sealed, F_GET_SEALS), SEALS);
	errno = 0;
	tp_check(write(sealed, "x", 1) < 0 && errno == EPERM,
		 "a write to a F_SEAL_WRITE memfd did not fail with EPERM");
	tp_check(ftruncate(sealed, 1) < 0, "F_SEAL_SHRINK not enforced");
	tp_check(fcntl(sealed, F_ADD_SEALS, F_SEAL_SEAL) == 0,
		 "sealing is no longer allowed");
	tp_check(fstat(sealed, &a) == 0 && fstat(ro, &b) == 0 &&
		 a.st_ino == b.st_ino && a.st_dev == b.st_dev,
		 "two descriptions of one memfd are two files");

	tp_check(fstat(plain, &a) == 0 && (a.st_mode & 07777) == 0640 &&
		 a.st_size == 6 && a.st_nlink == 0,
		 "plain memfd mode 0%o size %lld", a.st_mode & 07777, (long long)a.st_size);
	tp_check(fcntl(plain, F_GETFD) == FD_CLOEXEC, "MFD_CLOEXEC lost");
	tp_check(fcntl(plain, F_GET_SEALS) == F_SEAL_SEAL,
		 "a memfd without MFD_ALLOW_SEALING can be sealed");
	tp_check(fcntl(plain2, F_GETFL) & O_APPEND, "O_APPEND lost");
	tp_check(lseek(plain2, 0, SEEK_CUR) == 2, "offset of the O_APPEND description");
	tp_check(lseek(plain, 0, SEEK_CUR) == 6, "offset of the first description");
	tp_check(write(plain2, "XY", 2) == 2 && pread(plain, c, 8, 0) == 8 &&
		 !memcmp(c, "abcdefXY", 8),
		 "a write through one description is not seen through the other: '%.8s'", c);
	tp_check(fcntl(nos, F_GET_SEALS) == F_SEAL_SEAL && fstat(nos, &a) == 0 &&
		 a.st_size == 0, "the empty memfd");
	return tp_done();
}
