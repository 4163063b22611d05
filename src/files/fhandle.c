/* fhandle.c - a watched or marked inode's path now, from its file
 * handle (inotify.c, fanotify.c), and the mountinfo reading it needs
 * (fhandle.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../files.h"
#include "fhandle.h"

void mountinfo_unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
			*o++ = (char)strtol((char[]){ s[1], s[2], s[3], 0 }, NULL, 8);
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

bool mountinfo_next(FILE *mi, unsigned int *id, unsigned int *sdev, char *mp)
{
	char line[2 * CKPT_PATH_MAX];
	unsigned int maj, min;

	while (fgets(line, sizeof(line), mi)) {
		if (sscanf(line, "%u %*u %u:%u %*s %4095s", id, &maj, &min, mp) != 4)
			continue;
		mountinfo_unescape(mp);
		*sdev = maj << 20 | min;
		return true;
	}
	return false;
}

bool same_inode(const char *path, unsigned long long ino, unsigned int sdev)
{
	struct stat st;

	return !lstat(path, &st) && st.st_ino == ino &&
	       major(st.st_dev) == sdev >> 20 && minor(st.st_dev) == (sdev & 0xfffff);
}

int fhandle_path(struct file_handle *fh, unsigned long long ino,
		      unsigned int sdev, char *path)
{
	FILE *mi = fopen("/proc/self/mountinfo", "re");
	char mp[CKPT_PATH_MAX], proc[64];
	unsigned int id, dev;
	int ret = -ENOENT;
	bool denied = false;

	if (!mi)
		return -errno;
	while (ret && mountinfo_next(mi, &id, &dev, mp)) {
		int mfd, fd;
		ssize_t n;

		if (dev != sdev)
			continue;
		/* not O_PATH: open_by_handle_at wants a real open file */
		mfd = open(mp, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		fd = mfd < 0 ? -1 : open_by_handle_at(mfd, fh, O_PATH | O_CLOEXEC);
		denied |= fd < 0 && errno == EPERM;	/* no CAP_DAC_READ_SEARCH */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		n = fd < 0 ? -1 : readlink(proc, path, CKPT_PATH_MAX - 1);
		if (n > 0) {
			path[n] = 0;
			if (path[0] == '/' && same_inode(path, ino, sdev))
				ret = 0;
		}
		if (fd >= 0)
			close(fd);
		if (mfd >= 0)
			close(mfd);
	}
	fclose(mi);
	return ret && denied ? -EPERM : ret;
}
