/* inherit.c - stdio (fds 0-2) that is a pipe, socket or terminal held by
 * whoever started the target, or in a container a file outside its
 * mounts (its runtime's /dev/null or log): at restart the process gets
 * the stdio of `ckpt restart` in its place, the way a shell job would. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/sysmacros.h>

#include "../files.h"

static bool is_tty(dev_t rdev)
{
	unsigned int ma = major(rdev);

	return ma == 4 || ma == 5 || (ma >= 136 && ma <= 143);
}

static bool inherit_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return p->fd <= 2 &&
	       (S_ISFIFO(p->st.st_mode) || S_ISSOCK(p->st.st_mode) ||
		(S_ISCHR(p->st.st_mode) && is_tty(p->st.st_rdev)) ||
		fd_outside_mounts(c, p));
}

static int inherit_load(struct rst_ctx *c, struct rst_file *f)
{
	if (f->f.extra_len)
		return log_err(c->log, EBADMSG, "FILE %u: bad inherited file", f->f.id);
	return 0;
}

const struct file_ops file_inherit = {
	.kind = FILE_INHERIT,
	.name = "inherit",
	.match = inherit_match,
	.load = inherit_load,
	/* no open: the fd stays what the puppet got from restart */
};
