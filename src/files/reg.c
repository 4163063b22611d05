/* reg.c - regular files and directories, reopened by path at restart
 * with their flags and offset. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "../files.h"

static bool reg_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return S_ISREG(p->st.st_mode) && p->link[0] == '/' &&
	       !strstr(p->link, " (deleted)");
}

static bool dir_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return S_ISDIR(p->st.st_mode) && p->link[0] == '/';
}

static int path_load(struct rst_ctx *c, struct rst_file *f)
{
	if (f->path[0] != '/' || f->f.extra_len)
		return log_err(c->log, EBADMSG, "FILE %u: bad path", f->f.id);
	return 0;
}

static int path_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct stat st;

	if (stat(f->path, &st))
		return log_err(c->log, errno, "open file %s:", f->path);
	if ((st.st_mode & S_IFMT) != (f->f.mode & S_IFMT))
		return log_err(c->log, ESTALE,
			       "open file %s is no longer the same kind of file",
			       f->path);
	return 0;
}

static int path_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		     long *fd)
{
	int ret = files_open_path(t, f->path, f->f.flags, fd);

	if (!ret && f->f.pos)
		ret = rcheck(&t->rm, NULL, "lseek", SYS_lseek, *fd, f->f.pos, SEEK_SET);
	return ret;
}

const struct file_ops file_reg = {
	.kind = FILE_REG,
	.name = "reg",
	.match = reg_match,
	.load = path_load,
	.check = path_check,
	.open = path_open,
};

const struct file_ops file_dir = {
	.kind = FILE_DIR,
	.name = "dir",
	.match = dir_match,
	.load = path_load,
	.check = path_check,
	.open = path_open,
};
