/* signalfd.c - signalfds: the mask of signals they read (fdinfo sigmask),
 * made again at restart by the restored process with signalfd4().  The
 * signals themselves are the process's pending signals (signals.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>

#include "../files.h"

/* the kernel never lets a signalfd take these */
#define SFD_NEVER	((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)))

static bool sfd_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return !strcmp(p->link, "anon_inode:[signalfd]");
}

static int sfd_dump(struct cpt_ctx *c, const struct fd_probe *p,
		    struct rec_file *f, void **extra, uint32_t *extra_len)
{
	const char *mask = fdinfo_field(p->fdinfo, "sigmask:");
	struct rec_signalfd *s;

	if (!mask)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: signalfd without a sigmask in fdinfo",
			       p->pid, p->fd);
	if (anonfd_dump_flags(c, p, f, "signalfd"))
		return -EOPNOTSUPP;
	s = calloc(1, sizeof(*s));
	if (!s)
		return log_err(c->log, ENOMEM, "signalfd:");
	s->sigmask = strtoull(mask, NULL, 16);
	*extra = s;
	*extra_len = sizeof(*s);
	return 0;
}

static int sfd_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_signalfd s;

	if (anonfd_load(c, f, &s, sizeof(s), "signalfd"))
		return -EBADMSG;
	if (s.sigmask & SFD_NEVER)
		return log_err(c->log, EBADMSG, "FILE %u: bad signalfd", f->f.id);
	return 0;
}

static int sfd_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		    long *fd)
{
	struct rec_signalfd s;
	uint64_t addr;
	int ret;

	anonfd_get(f->extra, f->f.extra_len, &s, sizeof(s));
	ret = rst_scratch_put(t, 0, &s.sigmask, sizeof(s.sigmask), &addr);
	if (!ret)
		ret = rcheck(&t->rm, fd, "signalfd4", SYS_signalfd4, -1, addr,
			     sizeof(s.sigmask),
			     f->f.flags & O_NONBLOCK ? SFD_NONBLOCK : 0);
	return ret;
}

static void sfd_show(struct info_out *o, const struct rec_file *f,
		     const void *extra, uint32_t extra_len)
{
	struct rec_signalfd s;

	if (!anonfd_get(extra, extra_len, &s, sizeof(s)))
		return;
	info_hex(o, "sigmask", s.sigmask);
}

const struct file_ops file_signalfd = {
	.kind = FILE_SIGNALFD,
	.name = "signalfd",
	.match = sfd_match,
	.dump = sfd_dump,
	.load = sfd_load,
	.open = sfd_open,
	.show = sfd_show,
};
