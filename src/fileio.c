/* fileio.c - whole reads of files.  The image's pages, the page
 * check's cells, the lazy loader's faults and the MAC are all read so:
 * one loop, one convention. */
#include <errno.h>
#include <unistd.h>

#include "fileio.h"

int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	char *c = buf;

	while (n) {
		ssize_t k = pread(fd, c, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : ENODATA;
		c += k;
		n -= k;
		off += k;
	}
	return 0;
}
