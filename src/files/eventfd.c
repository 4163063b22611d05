/* eventfd.c - eventfds: the counter and EFD_SEMAPHORE, read from fdinfo
 * (which does not touch the counter), made again at restart by the
 * restored process itself with eventfd2().  The kernel's eventfd-id (a
 * number fdinfo shows, nothing else) cannot be chosen and is not kept. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "../files.h"

#define EFD_MAX_COUNT	(UINT64_MAX - 1)	/* a write never takes it further */

static bool efd_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return !strcmp(p->link, "anon_inode:[eventfd]");
}

static int efd_dump(struct cpt_ctx *c, const struct fd_probe *p,
		    struct rec_file *f, void **extra, uint32_t *extra_len)
{
	const char *count = fdinfo_field(p->fdinfo, "eventfd-count:");
	const char *sem = fdinfo_field(p->fdinfo, "eventfd-semaphore:");
	struct rec_eventfd *e;

	/* without the flag a semaphore would come back handing out its
	 * whole count at once: refuse rather than guess */
	if (!count || !sem)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: eventfd: this kernel's fdinfo has no eventfd-count/eventfd-semaphore (Linux 6.4+)",
			       p->pid, p->fd);
	if (anonfd_dump_flags(c, p, f, "eventfd"))
		return -EOPNOTSUPP;
	e = calloc(1, sizeof(*e));
	if (!e)
		return log_err(c->log, ENOMEM, "eventfd:");
	e->count = strtoull(count, NULL, 16);
	e->flags = atoi(sem) ? EVENTFD_SEMAPHORE : 0;
	*extra = e;
	*extra_len = sizeof(*e);
	return 0;
}

static int efd_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_eventfd e;

	if (anonfd_load(c, f, &e, sizeof(e), "eventfd"))
		return -EBADMSG;
	if (e.reserved || (e.flags & ~EVENTFD_SEMAPHORE) || e.count > EFD_MAX_COUNT)
		return log_err(c->log, EBADMSG, "FILE %u: bad eventfd", f->f.id);
	return 0;
}

static int efd_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		    long *fd)
{
	struct rec_eventfd e;
	uint64_t addr;
	long flags, n;
	int ret;

	anonfd_get(f->extra, f->f.extra_len, &e, sizeof(e));
	flags = (e.flags & EVENTFD_SEMAPHORE ? EFD_SEMAPHORE : 0) |
		(f->f.flags & O_NONBLOCK ? EFD_NONBLOCK : 0);
	/* eventfd2() takes an unsigned int: a bigger count is written */
	ret = rcheck(&t->rm, fd, "eventfd2", SYS_eventfd2,
		     e.count <= UINT32_MAX ? e.count : 0, flags);
	if (ret || e.count <= UINT32_MAX)
		return ret;
	ret = rst_scratch_put(t, 0, &e.count, sizeof(e.count), &addr);
	if (!ret)
		ret = rcheck(&t->rm, &n, "write(eventfd)", SYS_write, *fd, addr,
			     sizeof(e.count));
	return ret;
}

static void efd_show(struct info_out *o, const struct rec_file *f,
		     const void *extra, uint32_t extra_len)
{
	struct rec_eventfd e;

	if (!anonfd_get(extra, extra_len, &e, sizeof(e)))
		return;
	info_u64(o, "count", e.count);
	info_u64(o, "semaphore", e.flags & EVENTFD_SEMAPHORE);
}

const struct file_ops file_eventfd = {
	.kind = FILE_EVENTFD,
	.name = "eventfd",
	.match = efd_match,
	.dump = efd_dump,
	.load = efd_load,
	.open = efd_open,
	.show = efd_show,
};
