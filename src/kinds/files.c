/* files.c - the fd table (FD) and the open file descriptions it points
 * to (FILE), each written once however many fds share it (the seeds'
 * objref; kcmp(KCMP_FILE) tells which fds share a description).
 *
 * Supported now: regular files, directories, the harmless character
 * devices, and stdio (fds 0-2) held by the caller (a pipe, socket or
 * terminal), which restart connects to its own stdio.  Anything else
 * fails the checkpoint naming pid, fd and kind, unless the user asked to
 * skip such fds (CKPT_SKIP_UNSUPPORTED): then they are not restored.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../kinds.h"

#define MAX_FDS (1 << 20)

/* ---- checkpoint ---- */

static bool chr_supported(dev_t rdev)
{
	/* mem major 1: null 3, zero 5, full 7, random 8, urandom 9 */
	unsigned int mi = minor(rdev);

	return major(rdev) == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 ||
				    mi == 9);
}

static bool is_tty(dev_t rdev)
{
	unsigned int ma = major(rdev);

	return ma == 4 || ma == 5 || (ma >= 136 && ma <= 143);
}

static int fdinfo(pid_t pid, int fd, uint64_t *pos, uint32_t *flags)
{
	char name[64], *buf, *p;
	int ret;

	snprintf(name, sizeof(name), "fdinfo/%d", fd);
	ret = proc_read(pid, name, &buf, NULL);
	if (ret)
		return ret;
	p = strstr(buf, "pos:");
	ret = -EINVAL;
	if (p) {
		*pos = strtoull(p + 4, NULL, 10);
		p = strstr(buf, "flags:");
		if (p) {
			*flags = strtoul(p + 6, NULL, 8);
			ret = 0;
		}
	}
	free(buf);
	return ret;
}

static int classify(struct cpt_ctx *c, pid_t pid, int fd, const struct stat *st,
		    const char *link, struct rec_file *f)
{
	bool inside = false;

	if (S_ISREG(st->st_mode) && !strstr(link, " (deleted)") && link[0] == '/')
		f->kind = FILE_REG;
	else if (S_ISDIR(st->st_mode) && link[0] == '/')
		f->kind = FILE_DIR;
	else if (S_ISCHR(st->st_mode) && chr_supported(st->st_rdev))
		f->kind = FILE_CHR;
	else if (S_ISFIFO(st->st_mode) && !strncmp(link, "pipe:", 5) &&
		 pipe_inside(c, st->st_ino, &inside) == 0 && inside)
		f->kind = FILE_PIPE;
	else if (fd <= 2 && (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode) ||
			     (S_ISCHR(st->st_mode) && is_tty(st->st_rdev))))
		f->kind = FILE_INHERIT;
	else if (c->flags & CKPT_SKIP_UNSUPPORTED) {
		log_warn(c->log, "pid %d fd %d: skipping unsupported %s", pid, fd, link);
		return 0;
	} else
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: unsupported kind of file %s (use --skip-unsupported to leave it out)",
			       pid, fd, link);
	return 1;
}

static int dump_file(struct cpt_ctx *c, pid_t pid, int fd, uint32_t id)
{
	struct rec_file f = { .id = id };
	char name[64], link[CKPT_PATH_MAX];
	struct stat st;
	int ret;

	snprintf(name, sizeof(name), "fd/%d", fd);
	ret = proc_readlink(pid, name, link, sizeof(link));
	if (!ret) {
		char path[96];

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		if (stat(path, &st))
			ret = -errno;
	}
	if (!ret)
		ret = fdinfo(pid, fd, &f.pos, &f.flags);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d:", pid, fd);
	ret = classify(c, pid, fd, &st, link, &f);
	if (ret <= 0)
		return ret;
	if (f.kind == FILE_PIPE) {
		uint32_t pipe_id;

		ret = pipe_dump(c, st.st_ino, &pipe_id);
		if (ret)
			return ret;
		st.st_rdev = pipe_id;	/* what rdev names for a pipe end */
	}
	f.flags &= ~O_CLOEXEC;	/* an fd's flag, kept in FD */
	f.mode = st.st_mode;
	f.size = st.st_size;
	f.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	f.rdev = st.st_rdev;
	f.path_len = strlen(link) + 1;
	ret = iw_record_str(&c->w, REC_FILE, &f, sizeof(f), link);
	return ret ? ret : 1;
}

static int fd_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int list_fds(struct cpt_ctx *c, pid_t pid, int **out, int *n)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return log_err(c->log, errno, "pid %d: listing fds:", pid);
	*out = NULL;
	*n = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			int *p = realloc(*out, (cap = cap ? cap * 2 : 64) * sizeof(int));

			if (!p) {
				closedir(d);
				return log_err(c->log, ENOMEM, "fd list:");
			}
			*out = p;
		}
		(*out)[(*n)++] = atoi(de->d_name);
	}
	closedir(d);
	qsort(*out, *n, sizeof(int), fd_cmp);
	return 0;
}

/* The id of the description behind pid's fd if the image has it already
 * (from this process or an earlier one), else 0. */
static uint32_t known_file(struct cpt_ctx *c, pid_t pid, int fd,
			   const struct stat *st)
{
	for (int i = 0; i < c->nr_files; i++) {
		const struct cpt_file *f = &c->files[i];

		if (f->dev == st->st_dev && f->ino == st->st_ino &&
		    syscall(SYS_kcmp, f->pid, pid, KCMP_FILE, f->fd, fd) == 0)
			return f->id;
	}
	return 0;
}

static int remember_file(struct cpt_ctx *c, pid_t pid, int fd,
			 const struct stat *st, uint32_t id)
{
	struct cpt_file *n = realloc(c->files, (c->nr_files + 1) * sizeof(*n));

	if (!n)
		return log_err(c->log, ENOMEM, "file table:");
	c->files = n;
	n[c->nr_files++] = (struct cpt_file){ pid, fd, id, st->st_dev, st->st_ino };
	return 0;
}

static int dump_fd(struct cpt_ctx *c, pid_t pid, int fd)
{
	struct rec_fd rf = { .fd = fd };
	char path[96];
	struct stat st;
	uint64_t pos;
	uint32_t flags;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (stat(path, &st))
		return log_err(c->log, errno, "pid %d fd %d:", pid, fd);
	/* a description shared with an earlier fd is written once */
	rf.file_id = known_file(c, pid, fd, &st);
	if (!rf.file_id) {
		uint32_t id = c->next_objref + 1;

		ret = dump_file(c, pid, fd, id);
		if (ret <= 0)
			return ret;	/* failed, or skipped */
		c->next_objref = id;
		ret = remember_file(c, pid, fd, &st, id);
		if (ret)
			return ret;
		rf.file_id = id;
	}
	ret = fdinfo(pid, fd, &pos, &flags);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d:", pid, fd);
	rf.cloexec = !!(flags & O_CLOEXEC);
	return iw_record(&c->w, REC_FD, &rf, sizeof(rf));
}

static int files_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	int *fds = NULL, n = 0, ret;

	if (t->shares_files)
		return 0;	/* its parent's table, already written */
	ret = list_fds(c, t->pid, &fds, &n);
	for (int i = 0; i < n && !ret; i++)
		ret = dump_fd(c, t->pid, fds[i]);
	free(fds);
	return ret;
}

/* ---- restart ---- */

/* A description, for the whole tree: the first process that has it opens
 * it (the holder); the others take the very same description from the
 * holder with pidfd_getfd(). */
struct rst_file {
	struct rec_file f;
	const char *path;
	void *rec;
	pid_t holder;
	int holder_fd;
};

struct file_table {		/* the image's, in the restart context */
	struct rst_file *files;
	uint32_t n;
};

struct fd_table {		/* a process's */
	struct rec_fd *fds;
	uint32_t n;
};

static int load_file(struct rst_ctx *c, struct file_table *ft, struct rec *r)
{
	const struct rec_file *f = r->data;
	struct rst_file *nf;
	int ret = rec_want(c->log, r, sizeof(*f), "FILE");

	if (ret)
		return ret;
	if (f->kind < FILE_REG || f->kind > FILE_PIPE || f->reserved ||
	    r->data_len != sizeof(*f) + f->path_len || ft->n >= MAX_FDS ||
	    f->id == 0 || (ft->n && f->id <= ft->files[ft->n - 1].f.id))
		return log_err(c->log, EBADMSG, "bad FILE record %llu",
			       (unsigned long long)r->index);
	nf = realloc(ft->files, (ft->n + 1) * sizeof(*nf));
	if (!nf)
		return log_err(c->log, ENOMEM, "files:");
	ft->files = nf;
	nf = &ft->files[ft->n];
	memset(nf, 0, sizeof(*nf));
	nf->f = *f;
	nf->path = rec_str(r, sizeof(*f), f->path_len);
	if (!nf->path || ((f->kind == FILE_REG || f->kind == FILE_DIR ||
			   f->kind == FILE_CHR) && nf->path[0] != '/'))
		return log_err(c->log, EBADMSG, "FILE %u: bad path", f->id);
	nf->rec = r->data;
	r->data = NULL;
	ft->n++;
	return 0;
}

static struct rst_file *file_by_id(const struct file_table *ft, uint32_t id)
{
	for (uint32_t i = 0; ft && i < ft->n; i++)
		if (ft->files[i].f.id == id)
			return &ft->files[i];
	return NULL;
}

static int load_fd(struct rst_ctx *c, const struct file_table *ft,
		   struct fd_table *s, struct rec *r)
{
	const struct rec_fd *fd = r->data;
	struct rec_fd *nfd;

	if (r->data_len != sizeof(*fd) || fd->cloexec > 1 || fd->reserved ||
	    fd->fd >= MAX_FDS || !file_by_id(ft, fd->file_id) ||
	    (s->n && s->fds[s->n - 1].fd >= fd->fd))
		return log_err(c->log, EBADMSG, "bad FD record %llu",
			       (unsigned long long)r->index);
	nfd = realloc(s->fds, (s->n + 1) * sizeof(*nfd));
	if (!nfd)
		return log_err(c->log, ENOMEM, "fds:");
	s->fds = nfd;
	s->fds[s->n++] = *fd;
	return 0;
}

static int files_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct file_table *ft = kind_ctx_state(c, &kind_files, sizeof(*ft));
	struct fd_table *s = kind_state(t, &kind_files, sizeof(*s));

	if (!ft || !s)
		return log_err(c->log, ENOMEM, "files state:");
	if (r->type == REC_FD && (t->t.flags & TASK_SHARES_FILES))
		return log_err(c->log, EBADMSG, "pid %d: FD record, but it shares its parent's table",
			       t->pid);
	return r->type == REC_FILE ? load_file(c, ft, r) : load_fd(c, ft, s, r);
}

static int files_check(struct rst_ctx *c, struct rst_task *t)
{
	const struct file_table *ft = KCSTATE(c, kind_files);
	const struct fd_table *s = KSTATE(t, kind_files);
	struct stat st;

	for (uint32_t i = 0; s && c->here && i < s->n; i++) {
		const struct rst_file *f = file_by_id(ft, s->fds[i].file_id);

		if (f->f.kind == FILE_INHERIT || f->f.kind == FILE_PIPE)
			continue;
		if (stat(f->path, &st))
			return log_err(c->log, errno, "open file %s:", f->path);
		if ((st.st_mode & S_IFMT) != (f->f.mode & S_IFMT) ||
		    (f->f.kind == FILE_CHR && st.st_rdev != f->f.rdev))
			return log_err(c->log, ESTALE,
				       "open file %s is no longer the same kind of file",
				       f->path);
	}
	return 0;
}

static bool fd_kept(const struct file_table *ft, const struct fd_table *s,
		    int fd, int img_fd)
{
	if (fd == img_fd)
		return true;
	for (uint32_t i = 0; s && i < s->n; i++)
		if ((int)s->fds[i].fd == fd)
			return file_by_id(ft, s->fds[i].file_id)->f.kind == FILE_INHERIT;
	return false;
}

/* Close what the puppet inherited from us, but the image and stdio the
 * restored process takes from its caller. */
static int close_inherited(struct rst_task *t, const struct file_table *ft,
			   const struct fd_table *s)
{
	char path[64];
	struct dirent *de;
	int ret = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", t->pid);
	d = opendir(path);
	if (!d)
		return log_err(t->rm.log, errno, "listing puppet fds:");
	while ((de = readdir(d)) && !ret) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd_kept(ft, s, fd, t->img_fd))
			continue;
		ret = rcheck(&t->rm, NULL, "close", SYS_close, fd);
	}
	closedir(d);
	return ret;
}

static int open_file(struct rst_task *t, const struct rst_file *f, long *fd)
{
	int flags = f->f.flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY);
	uint64_t addr;
	int ret = rst_scratch_put(t, 0, f->path, strlen(f->path) + 1, &addr);

	if (!ret)
		ret = remote_call(&t->rm, fd, SYS_openat, AT_FDCWD, addr, flags, 0, 0, 0);
	if (!ret && *fd < 0)
		return log_err(t->rm.log, (int)-*fd, "pid %d: reopening %s:", t->pid,
			       f->path);
	if (!ret && (f->f.kind == FILE_REG || f->f.kind == FILE_DIR) && f->f.pos)
		ret = rcheck(&t->rm, NULL, "lseek", SYS_lseek, *fd, f->f.pos, SEEK_SET);
	return ret;
}

/* The description its holder has, into this task: the same one. */
static int take_file(struct rst_task *t, const struct rst_file *f, long *fd)
{
	long pidfd;
	int ret = rcheck(&t->rm, &pidfd, "pidfd_open", SYS_pidfd_open, f->holder, 0);

	if (ret)
		return ret;
	ret = rcheck(&t->rm, fd, "pidfd_getfd", SYS_pidfd_getfd, pidfd,
		     f->holder_fd, 0);
	rcall(&t->rm, &pidfd, SYS_close, pidfd);
	return ret;
}

/* Every fd of this task naming description @f. */
static int install(struct rst_ctx *c, struct rst_task *t,
		   const struct fd_table *s, struct rst_file *f)
{
	long tmp = -1;
	bool tmp_used = false;
	int ret = 0;

	if (f->f.kind == FILE_PIPE)
		ret = pipe_take(c, t, f->f.rdev, f->f.flags, &tmp);
	else if (f->f.kind != FILE_INHERIT)
		ret = f->holder ? take_file(t, f, &tmp) : open_file(t, f, &tmp);
	for (uint32_t i = 0; i < s->n && !ret; i++) {
		const struct rec_fd *d = &s->fds[i];

		if (d->file_id != f->f.id)
			continue;
		if (f->f.kind == FILE_INHERIT || (long)d->fd == tmp) {
			tmp_used |= (long)d->fd == tmp;
			ret = rcheck(&t->rm, NULL, "fcntl(F_SETFD)", SYS_fcntl, d->fd,
				     F_SETFD, d->cloexec ? FD_CLOEXEC : 0);
		} else {
			ret = rcheck(&t->rm, NULL, "dup3", SYS_dup3, tmp, d->fd,
				     d->cloexec ? O_CLOEXEC : 0);
		}
		if (!ret && !f->holder && f->f.kind != FILE_INHERIT &&
		    f->f.kind != FILE_PIPE) {
			f->holder = t->pid;
			f->holder_fd = d->fd;
		}
	}
	if (tmp >= 0 && !tmp_used)
		rcall(&t->rm, &tmp, SYS_close, tmp);
	return ret;
}

static int files_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct file_table *ft = KCSTATE(c, kind_files);
	struct fd_table empty = { 0 }, *s = KSTATE(t, kind_files);
	int ret;

	if (t->t.flags & TASK_SHARES_FILES)
		return 0;	/* its parent's table, which its parent restores */
	if (!s)
		s = &empty;
	ret = close_inherited(t, ft, s);
	for (uint32_t i = 0; ft && i < ft->n && !ret; i++)
		ret = install(c, t, s, &ft->files[i]);
	return ret;
}

static void files_free(struct rst_task *t, void *state)
{
	struct fd_table *s = state;

	free(s->fds);
	free(s);
}

static void files_free_ctx(void *state)
{
	struct file_table *ft = state;

	for (uint32_t i = 0; i < ft->n; i++)
		free(ft->files[i].rec);
	free(ft->files);
	free(ft);
}

static void files_show(struct info_out *o, const struct rec *r)
{
	static const char *kinds[] = { "?", "reg", "dir", "chr", "inherit", "pipe" };

	if (r->type == REC_FILE) {
		const struct rec_file *f = r->data;

		info_u64(o, "id", f->id);
		info_str(o, "kind", kinds[f->kind <= FILE_PIPE ? f->kind : 0]);
		if (f->kind == FILE_PIPE)
			info_u64(o, "pipe", f->rdev);
		info_hex(o, "flags", f->flags);
		info_u64(o, "pos", f->pos);
		info_str(o, "path", rec_str(r, sizeof(*f), f->path_len) ?: "?");
	} else {
		const struct rec_fd *d = r->data;

		info_u64(o, "fd", d->fd);
		info_u64(o, "file", d->file_id);
		info_u64(o, "cloexec", d->cloexec);
	}
}

const struct kind_ops kind_files = {
	.name = "files",
	.types = { REC_FILE, REC_FD },
	.phase = PHASE_IMAGE,
	.dump = files_dump,
	.load = files_load,
	.check = files_check,
	.restore = files_restore,
	.free = files_free,
	.free_ctx = files_free_ctx,
	.show = files_show,
};
