/* chr.c - the harmless character devices (null, zero, full, random,
 * urandom), reopened by path; the device numbers must match. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/sysmacros.h>

#include "../files.h"

static bool chr_supported(dev_t rdev)
{
	/* mem major 1: null 3, zero 5, full 7, random 8, urandom 9 */
	unsigned int mi = minor(rdev);

	return major(rdev) == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 ||
				    mi == 9);
}

static bool chr_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return S_ISCHR(p->st.st_mode) && chr_supported(p->st.st_rdev) &&
	       p->link[0] == '/';
}

static int chr_load(struct rst_ctx *c, struct rst_file *f)
{
	if (f->path[0] != '/' || f->f.extra_len || !chr_supported(f->f.rdev))
		return log_err(c->log, EBADMSG, "FILE %u: bad device", f->f.id);
	return 0;
}

static int chr_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct stat st;

	if (stat(f->path, &st))
		return log_err(c->log, errno, "open file %s:", f->path);
	if (!S_ISCHR(st.st_mode) || st.st_rdev != f->f.rdev)
		return log_err(c->log, ESTALE, "open file %s is no longer the same device",
			       f->path);
	return 0;
}

static int chr_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		    long *fd)
{
	return files_open_path(t, f->path, f->f.flags, fd);
}

const struct file_ops file_chr = {
	.kind = FILE_CHR,
	.name = "chr",
	.match = chr_match,
	.load = chr_load,
	.check = chr_check,
	.open = chr_open,
};
