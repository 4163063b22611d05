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
 * checked.
 *
 * A ghost - an O_PATH fd on a symlink, or an fd on a directory, whose
 * last name was removed - keeps its owner (and a symlink its target) in
 * the FILE's extra bytes.  At restart ckpt makes it again by the name it
 * had (beside it, with a suffix, if the name is taken), opens it with
 * the saved flags, removes the name and gives the fd to the process: a
 * new inode, but the same kind of nameless thing.  Its directories, if
 * they were removed too, are made for the while and removed again.
 *
 * A regular file whose open name was removed but which has other links
 * is reopened by one of them, if one is in the directory the removed
 * name was in (the only one ckpt can search cheaply); else refused. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../files.h"
#include "../kinds/mntns.h"
#include "pipebuf.h"

/* what an open description of a file can carry in f_flags */
#define REG_FLAGS (O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | \
		   O_DIRECT | ARCH_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | \
		   O_NOATIME | O_PATH | O_ASYNC)

#define DELETED_LEN 10	/* " (deleted)" */

static bool is_deleted_path(const char *path)
{
	size_t n = strlen(path);

	return n > DELETED_LEN && !strcmp(path + n - DELETED_LEN, " (deleted)");
}

/* A symlink (O_PATH) or directory with no name left: see the top. */
static bool is_ghost(const struct fd_probe *p)
{
	return is_deleted_path(p->link) && !p->st.st_nlink &&
	       (S_ISDIR(p->st.st_mode) || ((p->flags & O_PATH) && S_ISLNK(p->st.st_mode)));
}

/* A regular file with its open name removed but links left. */
static bool is_relink(const struct fd_probe *p)
{
	return S_ISREG(p->st.st_mode) && p->st.st_nlink && is_deleted_path(p->link);
}

static bool reg_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return (S_ISREG(p->st.st_mode) ||
		((p->flags & O_PATH) && !S_ISDIR(p->st.st_mode))) &&
	       p->link[0] == '/' &&
	       (!strstr(p->link, " (deleted)") || is_ghost(p) || is_relink(p));
}

/* Another name of @p's file in the directory of its removed name, into
 * @buf (PATH_MAX); refused if there is none. */
static int other_link(struct cpt_ctx *c, const struct fd_probe *p, char *buf)
{
	char dir[PATH_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dp;
	int found = 0;

	snprintf(dir, sizeof(dir), "%.*s", (int)(strlen(p->link) - DELETED_LEN), p->link);
	*(strrchr(dir, '/') + 1) = '\0';
	dp = opendir(dir);
	while (dp && !found && (d = readdir(dp)))
		found = snprintf(buf, PATH_MAX, "%s%s", dir, d->d_name) < PATH_MAX &&
			!lstat(buf, &st) && S_ISREG(st.st_mode) &&
			st.st_dev == p->st.st_dev && st.st_ino == p->st.st_ino;
	if (dp)
		closedir(dp);
	if (!found)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: %s: its name was removed, but %lu other links to it remain, none in %s (not supported)",
			       p->pid, p->fd, p->link, (unsigned long)p->st.st_nlink, dir);
	return 0;
}

static bool dir_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return S_ISDIR(p->st.st_mode) && p->link[0] == '/';
}

/* A ghost symlink's target, read through our copy of the fd. */
static int ghost_target(struct cpt_ctx *c, const struct fd_probe *p, char *buf)
{
	int ours = pipebuf_holder_fd(p->pid, p->fd);
	ssize_t n = ours < 0 ? -1 : readlinkat(ours, "", buf, PATH_MAX);
	int err = errno;

	if (ours >= 0)
		close(ours);
	if (n < 0 || n >= PATH_MAX)
		return log_err(c->log, n < 0 ? err : ENAMETOOLONG,
			       "pid %d fd %d: deleted symlink %s:", p->pid, p->fd, p->link);
	buf[n] = '\0';
	return 0;
}

static int path_dump(struct cpt_ctx *c, const struct fd_probe *p,
		     struct rec_file *f, void **extra, uint32_t *extra_len)
{
	char target[PATH_MAX] = "";
	struct rec_path_ghost *g;
	size_t tlen;
	int ret;

	if (!is_deleted_path(p->link) || !(is_ghost(p) || is_relink(p)))
		return 0;
	if (is_relink(p))
		ret = other_link(c, p, target);
	else
		ret = S_ISLNK(p->st.st_mode) ? ghost_target(c, p, target) : 0;
	if (ret)
		return ret;
	tlen = target[0] ? strlen(target) + 1 : 0;
	g = calloc(1, sizeof(*g) + tlen);
	if (!g)
		return log_err(c->log, ENOMEM, "pid %d fd %d: deleted %s:", p->pid, p->fd, p->link);
	g->flags = is_relink(p) ? PATH_RELINK : PATH_GHOST;
	g->uid = p->st.st_uid;
	g->gid = p->st.st_gid;
	memcpy(g + 1, target, tlen);
	*extra = g;
	*extra_len = sizeof(*g) + tlen;
	return 0;
}

static bool path_type_ok(uint32_t type)
{
	return type == S_IFREG || type == S_IFLNK || type == S_IFIFO ||
	       type == S_IFCHR || type == S_IFBLK || type == S_IFSOCK;
}

/* A ghost's extra bytes (see the top): its name without " (deleted)"
 * in f->priv. */
static int ghost_load(struct rst_ctx *c, struct rst_file *f)
{
	uint32_t type = f->f.mode & S_IFMT, tlen = f->f.extra_len - sizeof(struct rec_path_ghost);
	const char *target = (const char *)f->extra + sizeof(struct rec_path_ghost);
	struct rec_path_ghost g;

	if (f->f.extra_len < sizeof(g) || !is_deleted_path(f->path))
		return log_err(c->log, EBADMSG, "FILE %u: bad extra bytes", f->f.id);
	memcpy(&g, f->extra, sizeof(g));
	if (g.reserved || (g.flags != PATH_GHOST && g.flags != PATH_RELINK) ||
	    (type != S_IFDIR &&
	     (tlen < 2 || tlen > PATH_MAX || memchr(target, 0, tlen) != target + tlen - 1)) ||
	    (g.flags == PATH_RELINK ? type != S_IFREG || f->f.kind != FILE_REG || target[0] != '/' :
	     type == S_IFDIR ? f->f.kind != FILE_DIR || tlen :
	     type != S_IFLNK || !(f->f.flags & O_PATH)))
		return log_err(c->log, EBADMSG, "FILE %u: bad deleted file, symlink or directory",
			       f->f.id);
	/* a relinked file is opened by its other name */
	f->priv = g.flags == PATH_RELINK ? strdup(target) :
		  strndup(f->path, strlen(f->path) - DELETED_LEN);
	return f->priv ? 0 : log_err(c->log, ENOMEM, "FILE %u:", f->f.id);
}

static int path_load(struct rst_ctx *c, struct rst_file *f)
{
	uint32_t type = f->f.mode & S_IFMT;
	bool o_path = f->f.flags & O_PATH;

	if (f->f.extra_len && ghost_load(c, f))
		return -EBADMSG;
	if (f->path[0] != '/' || (f->f.flags & ~REG_FLAGS) ||
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

/* A ghost is made again in its directory, which is made too if it was
 * removed as well (and removed again): the deepest of its directories
 * that exists must be a directory. */
static int ghost_check(struct rst_ctx *c, const struct rst_file *f)
{
	char dir[CKPT_PATH_MAX];
	struct stat st;
	char *slash;
	int err;

	snprintf(dir, sizeof(dir), "%s", (const char *)f->priv);
	do {
		slash = strrchr(dir, '/');
		slash[slash == dir] = '\0';
		err = stat(dir, &st) ? errno : 0;
	} while (err == ENOENT && slash != dir);
	if (err || !S_ISDIR(st.st_mode))
		return log_err(c->log, err ? err : ENOTDIR, "deleted %s: its directory %s:",
			       f->path, dir);
	return 0;
}

/* Relinked (see the top): reopened by its other name, f->priv. */
static bool relinked(const struct rst_file *f)
{
	return f->priv && S_ISREG(f->f.mode);
}

static int path_check(struct rst_ctx *c, const struct rst_file *f)
{
	const char *path = relinked(f) ? f->priv : f->path;
	struct stat st;
	int ret;

	if (proc_of_image(c, f->path))
		return 0;
	if (f->priv && !relinked(f))
		return ghost_check(c, f);
	ret = mntns_stat(c, path, !(f->f.flags & O_NOFOLLOW), &st);
	if (ret == 1)
		return 0;
	if (ret == -EINVAL)
		ret = ((f->f.flags & O_NOFOLLOW) ? lstat(path, &st) : stat(path, &st)) ? -errno : 0;
	if (ret)
		return log_err(c->log, -ret, "open file %s:", path);
	if ((st.st_mode & S_IFMT) != (f->f.mode & S_IFMT))
		return log_err(c->log, ESTALE,
			       "open file %s is no longer the same kind of file",
			       path);
	if (writes(f->f.flags) || (f->f.flags & O_PATH))
		return 0;
	return same_content(c, f, &st);
}

static int ghost_mk(const struct rst_file *f, const char *path)
{
	const char *target = (const char *)f->extra + sizeof(struct rec_path_ghost);

	return S_ISDIR(f->f.mode) ? mkdir(path, 0700) : symlink(target, path);
}

/* The directories above @path that are missing, made; *top: the length
 * of the highest one made, 0 if none. */
static int parents_make(char *path, size_t *top)
{
	int err = 0;

	*top = 0;
	for (char *s = strchr(path + 1, '/'); s && !err; s = strchr(s + 1, '/')) {
		*s = '\0';
		err = mkdir(path, 0700) ? errno : 0;
		*s = '/';
		if (!err && !*top)
			*top = s - path;
		err = err == EEXIST ? 0 : err;
	}
	return err;
}

/* Those directories removed again, the deepest first. */
static void parents_remove(const char *path, size_t top)
{
	char dir[CKPT_PATH_MAX + 32];
	char *s;

	snprintf(dir, sizeof(dir), "%s", path);
	while (top && (s = strrchr(dir, '/')) && (size_t)(s - dir) >= top) {
		*s = '\0';
		rmdir(dir);
	}
}

/* Made by its name (or beside it), opened by us, the name removed. */
static int ghost_open(struct rst_ctx *c, struct rst_task *t, const struct rst_file *f,
		      long *fd)
{
	char path[CKPT_PATH_MAX + 32];
	struct rec_path_ghost g;
	int ours, ret;
	size_t top;

	memcpy(&g, f->extra, sizeof(g));
	snprintf(path, sizeof(path), "%s", (const char *)f->priv);
	ret = parents_make(path, &top);
	if (ret) {
		parents_remove(path, top);
		return log_err(c->log, ret, "pid %d: deleted %s: making its directory again:",
			       t->pid, path);
	}
	ret = ghost_mk(f, path) ? errno : 0;
	if (ret == EEXIST) {
		snprintf(path, sizeof(path), "%s.ckpt-ghost-%u", (const char *)f->priv, f->f.id);
		ret = ghost_mk(f, path) ? errno : 0;
	}
	if (ret) {
		parents_remove(path, top);
		return log_err(c->log, ret, "pid %d: making deleted %s again:", t->pid, path);
	}
	if (lchown(path, g.uid, g.gid) || (S_ISDIR(f->f.mode) && chmod(path, f->f.mode & 07777)))
		ret = log_err(c->log, errno, "pid %d: deleted %s: owner/mode:", t->pid, path);
	ours = ret ? -1 : open(path, (f->f.flags & ~O_ASYNC) | O_CLOEXEC);
	if (!ret && ours < 0)
		ret = log_err(c->log, errno, "pid %d: opening deleted %s:", t->pid, path);
	if ((S_ISDIR(f->f.mode) ? rmdir(path) : unlink(path)) && !ret)
		ret = log_err(c->log, errno, "pid %d: removing %s again:", t->pid, path);
	parents_remove(path, top);
	if (!ret)
		ret = files_give(t, ours, fd);
	if (ours >= 0)
		close(ours);
	return ret;
}

static int path_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		     long *fd)
{
	int ret = relinked(f) ? files_open_path(t, f->priv, f->f.flags, fd) :
		  f->priv ? ghost_open(c, t, f, fd) : files_open_path(t, f->path, f->f.flags, fd);

	if (!ret && f->f.pos && !(f->f.flags & O_PATH))
		ret = rcheck(&t->rm, NULL, "lseek", SYS_lseek, *fd, f->f.pos, SEEK_SET);
	/* open() leaves O_ASYNC off: only fcntl sets it */
	if (!ret && (f->f.flags & O_ASYNC))
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	return ret;
}

static void path_free(struct rst_file *f)
{
	free(f->priv);
}

static void path_show(struct info_out *o, const struct rec_file *f,
		      const void *extra, uint32_t extra_len)
{
	if (extra_len >= sizeof(struct rec_path_ghost))
		info_str(o, "ghost", "yes");
}

const struct file_ops file_reg = {
	.kind = FILE_REG,
	.name = "reg",
	.match = reg_match,
	.dump = path_dump,
	.load = path_load,
	.check = path_check,
	.open = path_open,
	.free = path_free,
	.show = path_show,
};

const struct file_ops file_dir = {
	.kind = FILE_DIR,
	.name = "dir",
	.match = dir_match,
	.dump = path_dump,
	.load = path_load,
	.check = path_check,
	.open = path_open,
	.free = path_free,
	.show = path_show,
};
