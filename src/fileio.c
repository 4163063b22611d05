/* fileio.c - whole reads and writes of files.  The image's pages, the
 * page check's cells, the lazy loader's faults and the MAC are all read
 * so, the checkpoint's pages written so: one loop each, one convention. */
#include <errno.h>
#include <unistd.h>

#include "fileio.h"

int pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
	char *c = buf;
	int err = 0;

	while (n) {
		ssize_t k = pread(fd, c, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			err = k < 0 ? errno : ENODATA;
			break;
		}
		c += k;
		n -= k;
		off += k;
	}
	if (got)
		*got = (size_t)(c - (char *)buf);
	return err;
}

int pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
	const char *c = buf;

	while (n) {
		ssize_t k = pwrite(fd, c, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		c += k;
		n -= k;
		off += k;
	}
	return 0;
}
