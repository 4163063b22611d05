/* anonfd.c - what the anon-inode kinds made again by the restored process
 * itself (eventfd, signalfd, timerfd) share: reading fdinfo, the file
 * flags such a syscall can give, and their fixed-size payload. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "../files.h"

/* what eventfd2(), signalfd4() and timerfd_create() can give */
#define ANONFD_FILE_FLAGS	(O_RDWR | O_NONBLOCK)

const char *fdinfo_field(const char *info, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = info; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n))
			return p + n;
	return NULL;
}

int anonfd_dump_flags(struct cpt_ctx *c, const struct fd_probe *p,
		      const struct rec_file *f, const char *name)
{
	if (f->flags & ~ANONFD_FILE_FLAGS)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: %s with file flags 0%o (only O_NONBLOCK can be restored)",
			       p->pid, p->fd, name, f->flags);
	return 0;
}

/* The payload may sit anywhere after the path: copied, not cast. */
bool anonfd_get(const void *extra, uint32_t extra_len, void *dst, size_t len)
{
	if (extra_len != len)
		return false;
	memcpy(dst, extra, len);
	return true;
}

int anonfd_load(struct rst_ctx *c, const struct rst_file *f, void *dst,
		size_t len, const char *name)
{
	if (!anonfd_get(f->extra, f->f.extra_len, dst, len) ||
	    (f->f.flags & ~ANONFD_FILE_FLAGS) || (f->f.flags & O_ACCMODE) != O_RDWR)
		return log_err(c->log, EBADMSG, "FILE %u: bad %s", f->f.id, name);
	return 0;
}
