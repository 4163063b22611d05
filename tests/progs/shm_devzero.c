/* shm_devzero.c - the kernel's shared memory object behind a
 * MAP_SHARED|MAP_ANONYMOUS mapping ("/dev/zero (deleted)"), open as a
 * file through map_files and mapped privately too, comes back as one
 * object: its content and size, the fd's flags and offset, the shared
 * areas sharing with each other and with the fd, the private area its
 * own written page and the object's others. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/vfs.h>

#include "tp.h"

#define PG 4096

int main(int argc, char **argv)
{
	char path[128], link[128] = "", buf[8] = "";
	char *sh, *sh2, *priv;
	struct statfs sf;
	int fd;

	tp_init(argc, argv);
	sh = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return printf("FAIL: mmap: %s\n", strerror(errno)), 1;
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)sh, (unsigned long)sh + 4 * PG);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return printf("FAIL: open %s: %s\n", path, strerror(errno)), 1;
	strcpy(sh, "page0");
	strcpy(sh + PG, "page1");
	strcpy(sh + 2 * PG, "page2");
	priv = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, PG);
	sh2 = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * PG);
	if (priv == MAP_FAILED || sh2 == MAP_FAILED)
		return printf("FAIL: mmap of the fd: %s\n", strerror(errno)), 1;
	strcpy(priv, "private");	/* its own copy of page 1 */
	if (fcntl(fd, F_SETFL, O_APPEND) || lseek(fd, 3, SEEK_SET) != 3)
		return printf("FAIL: fcntl/lseek: %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	tp_check(readlink(path, link, sizeof(link) - 1) > 0 &&
		 !strcmp(link, "/dev/zero (deleted)"), "fd links to '%s'", link);
	tp_check(!fstatfs(fd, &sf) && sf.f_type == 0x01021994, "fd not on tmpfs");
	tp_check(fcntl(fd, F_GETFL) & O_APPEND, "O_APPEND lost");
	tp_check(lseek(fd, 0, SEEK_CUR) == 3, "offset %ld, want 3", (long)lseek(fd, 0, SEEK_CUR));
	tp_check(lseek(fd, 0, SEEK_END) == 4 * PG, "size %ld", (long)lseek(fd, 0, SEEK_END));
	tp_check(!strcmp(sh, "page0") && !strcmp(sh + PG, "page1"), "shared content lost");
	tp_check(!strcmp(priv, "private"), "private page: %s", priv);
	tp_check(!strcmp(sh2, "page2"), "second shared area: %s", sh2);
	strcpy(sh2, "new2");
	tp_check(!strcmp(sh + 2 * PG, "new2"), "the shared areas do not share");
	strcpy(sh + 3 * PG, "new3");
	tp_check(!strcmp(priv + 2 * PG, "new3"), "private area does not see the object");
	tp_check(pread(fd, buf, 5, 3 * PG) == 5 && !strcmp(buf, "new3"),
		 "the fd does not see the areas: %s", buf);
	return tp_done();
}
