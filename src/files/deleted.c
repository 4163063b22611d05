/* deleted.c - regular files open after their last name was removed, and
 * O_TMPFILE files: content, size, mode and owner are saved (src/files/
 * fobj.c) and the file comes back unnamed in the directory it was in;
 * each description its flags and offset, and its mtime, which filling
 * it changed.  A file whose open name was
 * removed but which has other links is reg.c's (reopened by one of
 * them), or refused. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "../files.h"

static bool deleted_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	size_t n = strlen(p->link);

	return S_ISREG(p->st.st_mode) && p->link[0] == '/' &&
	       strncmp(p->link, "/memfd:", 7) &&
	       n > 10 && !strcmp(p->link + n - 10, " (deleted)");
}

/* The mtime the description's FILE saw, on the object ckpt filled. */
static int deleted_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
			long *fd)
{
	int64_t ns = f->f.mtime_ns % 1000000000LL, s = f->f.mtime_ns / 1000000000LL;
	struct timespec ts[2] = { { 0, UTIME_OMIT } };
	int ret = fobj_desc_open(c, t, f, fd), obj;

	if (ret)
		return ret;
	if (ns < 0) {
		ns += 1000000000LL;
		s--;
	}
	ts[1].tv_sec = s;
	ts[1].tv_nsec = ns;
	obj = fobj_fd(c, f->f.rdev);
	if (obj < 0)
		return obj;
	if (futimens(obj, ts))
		return log_err(c->log, errno, "pid %d: deleted %s: its mtime:", t->pid, f->path);
	return 0;
}

const struct file_ops file_deleted = {
	.kind = FILE_DELETED,
	.name = "deleted",
	.match = deleted_match,
	.dump = fobj_desc_dump,
	.load = fobj_desc_load,
	.open = deleted_open,
	.show = fobj_desc_show,
};
