/* reg.c - regular files and directories, reopened by path at restart
 * with their status flags (O_APPEND, O_NONBLOCK, O_DIRECT, O_NOATIME,
 * O_SYNC, O_PATH, ...) and offset.  An O_PATH fd on anything but a
 * directory (a FIFO, a device, a symlink itself with O_NOFOLLOW) is a
 * reg too: it is only a place in the tree, reopened O_PATH.
 *
 * Is it still the same file at restart?  It must exist and be the same
 * kind of file.  A file the tree has open only for reading must also
 * have kept its size and mtime: the process may have read part of it and
 * would go on reading something else (an O_PATH fd reads nothing: it is
 * not checked).  A file the tree has open for writing anywhere is the
 * tree's own work: a copy restarted while the original runs on
 * (checkpoint without --kill) sees it grow, so its content is not
 * checked. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "../files.h"

/* the kernel's, which userspace headers define as 0 on 64-bit */
#define K_O_LARGEFILE 0100000
/* what an open description of a file can carry in f_flags */
#define REG_FLAGS (O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | \
		   O_DIRECT | K_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | \
		   O_NOATIME | O_PATH | O_ASYNC)

static bool reg_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return (S_ISREG(p->st.st_mode) ||
		((p->flags & O_PATH) && !S_ISDIR(p->st.st_mode))) &&
	       p->link[0] == '/' && !strstr(p->link, " (deleted)");
}

static bool dir_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return S_ISDIR(p->st.st_mode) && p->link[0] == '/';
}

static bool path_type_ok(uint32_t type)
{
	return type == S_IFREG || type == S_IFLNK || type == S_IFIFO ||
	       type == S_IFCHR || type == S_IFBLK || type == S_IFSOCK;
}

static int path_load(struct rst_ctx *c, struct rst_file *f)
{
	uint32_t type = f->f.mode & S_IFMT;
	bool o_path = f->f.flags & O_PATH;

	if (f->path[0] != '/' || f->f.extra_len || (f->f.flags & ~REG_FLAGS) ||
	    (f->f.flags & O_ACCMODE) == O_ACCMODE ||
	    (o_path && (f->f.flags & O_ACCMODE)))
		return log_err(c->log, EBADMSG, "FILE %u: bad path or flags", f->f.id);
	if (f->f.kind == FILE_DIR ? type != S_IFDIR
				  : type != S_IFREG && (!o_path || !path_type_ok(type)))
		return log_err(c->log, EBADMSG, "FILE %u: bad mode %#o", f->f.id,
			       f->f.mode);
	return 0;
}

static bool writes(uint32_t flags)
{
	return !(flags & O_PATH) && (flags & O_ACCMODE) != O_RDONLY;
}

/* Read only by the tree: it must not have changed (see the top). */
static int same_content(struct rst_ctx *c, const struct rst_file *f,
			const struct stat *st)
{
	int64_t mtime = st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;

	if (!S_ISREG(st->st_mode) || files_written(c, f->path))
		return 0;
	if ((uint64_t)st->st_size != f->f.size || mtime != f->f.mtime_ns)
		return log_err(c->log, ESTALE,
			       "open file %s changed since the checkpoint (size %llu, was %llu; mtime %s)",
			       f->path, (unsigned long long)st->st_size,
			       (unsigned long long)f->f.size,
			       mtime == f->f.mtime_ns ? "same" : "differs");
	return 0;
}

/* /proc/PID/... of a process or thread of the image: it exists once that
 * process does, after this check, and is opened by the process holding it. */
static bool proc_of_image(const struct rst_ctx *c, const char *path)
{
	char *end;
	long pid;

	if (strncmp(path, "/proc/", 6) || path[6] < '1' || path[6] > '9')
		return false;
	pid = strtol(path + 6, &end, 10);
	if (*end != '/' && *end)
		return false;
	for (int i = 0; i < c->nr_tasks; i++) {
		const struct rst_task *t = c->tasks[i];

		if (t->t.pid == pid)
			return true;
		for (int j = 0; j < t->nr_threads; j++)
			if (t->threads[j].tid == pid)
				return true;
	}
	return false;
}

static int path_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct stat st;
	int ret;

	if (proc_of_image(c, f->path))
		return 0;
	ret = (f->f.flags & O_NOFOLLOW) ? lstat(f->path, &st) : stat(f->path, &st);
	if (ret)
		return log_err(c->log, errno, "open file %s:", f->path);
	if ((st.st_mode & S_IFMT) != (f->f.mode & S_IFMT))
		return log_err(c->log, ESTALE,
			       "open file %s is no longer the same kind of file",
			       f->path);
	if (writes(f->f.flags) || (f->f.flags & O_PATH))
		return 0;
	return same_content(c, f, &st);
}

static int path_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		     long *fd)
{
	int ret = files_open_path(t, f->path, f->f.flags, fd);

	if (!ret && f->f.pos && !(f->f.flags & O_PATH))
		ret = rcheck(&t->rm, NULL, "lseek", SYS_lseek, *fd, f->f.pos, SEEK_SET);
	/* open() leaves O_ASYNC off: only fcntl sets it */
	if (!ret && (f->f.flags & O_ASYNC))
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
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
