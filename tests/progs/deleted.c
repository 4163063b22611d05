/* deleted.c - files open after they were unlinked, and O_TMPFILE files,
 * come back unnamed in the same directory with their content (a hole,
 * data after it), size, mode, each description its flags and offset;
 * two descriptions of one such file are one file again. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "tp.h"

#define LEN (3 << 20)

static unsigned char pat(size_t i)
{
	return (unsigned char)(i * 13 + (i >> 10));
}

static void check_link(int fd, const char *want)
{
	char path[64], link[4200] = "";

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	tp_check(readlink(path, link, sizeof(link) - 1) > 0 && !strcmp(link, want),
		 "fd %d links to '%s', want '%s'", fd, link, want);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TP_TMPDIR");
	char name[4096], want[4200], tmpdir[4096], c[16] = "";
	int del, del2, tmp;
	unsigned char *buf;
	struct stat a, b;
	size_t bad = 0;

	tp_init(argc, argv);
	if (!dir)
		dir = "/tmp";
	snprintf(name, sizeof(name), "%s/gone", dir);
	del = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	buf = malloc(LEN);
	for (size_t i = 0; i < LEN; i++)
		buf[i] = pat(i);
	if (del < 0 || write(del, buf, LEN) != LEN ||
	    pwrite(del, "end", 3, 2 * LEN) != 3) {
		perror(name);
		return 1;
	}
	fchmod(del, 0604);
	del2 = open(name, O_RDONLY);
	lseek(del2, 100, SEEK_SET);
	lseek(del, 4242, SEEK_SET);
	unlink(name);
	/* its directory's own name: tests with the same dir can differ */
	snprintf(tmpdir, sizeof(tmpdir), "%s", dir);
	tmp = open(tmpdir, O_TMPFILE | O_RDWR | O_APPEND, 0640);
	if (tmp < 0 || write(tmp, "temporary", 9) != 9) {
		perror("O_TMPFILE");
		return 1;
	}
	tp_ready();
	tp_wait_go();

	snprintf(want, sizeof(want), "%s (deleted)", name);
	check_link(del, want);
	check_link(del2, want);
	tp_check(fstat(del, &a) == 0 && fstat(del2, &b) == 0 &&
		 a.st_ino == b.st_ino && a.st_dev == b.st_dev,
		 "two descriptions of one deleted file are two files");
	tp_check(a.st_nlink == 0, "the deleted file has %lu links", (unsigned long)a.st_nlink);
	tp_check(a.st_size == 2 * LEN + 3, "size %lld", (long long)a.st_size);
	tp_check((a.st_mode & 07777) == 0604, "mode 0%o", a.st_mode & 07777);
	tp_check(access(name, F_OK) != 0, "the deleted file has its name back");
	memset(buf, 0, LEN);
	tp_check(pread(del2, buf, LEN, 0) == LEN, "reading it back");
	for (size_t i = 0; i < LEN; i++)
		bad += buf[i] != pat(i);
	tp_check(bad == 0, "%zu bytes of the deleted file differ", bad);
	tp_check(pread(del2, c, 8, LEN + 100) == 8 && !memcmp(c, "\0\0\0\0\0\0\0\0", 8),
		 "the hole is not zeros");
	tp_check(pread(del2, c, 8, 2 * LEN) == 3 && !memcmp(c, "end", 3),
		 "the data after the hole");
	tp_check(lseek(del, 0, SEEK_CUR) == 4242 && lseek(del2, 0, SEEK_CUR) == 100,
		 "offsets lost");
	tp_check((fcntl(del2, F_GETFL) & O_ACCMODE) == O_RDONLY &&
		 (fcntl(del, F_GETFL) & O_ACCMODE) == O_RDWR, "access modes lost");
	tp_check(pwrite(del, "new", 3, 0) == 3 && pread(del2, c, 3, 0) == 3 &&
		 !memcmp(c, "new", 3), "a write through one description is not seen through the other");

	snprintf(want, sizeof(want), "/proc/self/fd/%d", tmp);
	memset(name, 0, sizeof(name));
	tp_check(readlink(want, name, sizeof(name) - 1) > 0 &&
		 !strncmp(name, dir, strlen(dir)) && name[strlen(dir) + 1] == '#' &&
		 strstr(name, " (deleted)"), "the O_TMPFILE file links to '%s'", name);
	snprintf(name, sizeof(name), "%s/named", dir);
	tp_check(linkat(AT_FDCWD, want, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0,
		 "the O_TMPFILE file cannot be given a name: %s", strerror(errno));
	tp_check(fstat(tmp, &a) == 0 && a.st_nlink == 1 && a.st_size == 9 &&
		 (a.st_mode & 07777) == 0640, "the O_TMPFILE file: size %lld mode 0%o",
		 (long long)a.st_size, a.st_mode & 07777);
	tp_check(fcntl(tmp, F_GETFL) & O_APPEND, "O_APPEND of the O_TMPFILE file lost");
	tp_check(write(tmp, "!", 1) == 1 && pread(tmp, c, 10, 0) == 10 &&
		 !memcmp(c, "temporary!", 10), "the O_TMPFILE file's content");
	return tp_done();
}
