/* inotify.c - inotify instances (FILE_INOTIFY): every watch with its
 * path, mask and watch descriptor.
 *
 * Checkpoint: fdinfo lists each watch as "inotify wd:W ino:I sdev:D
 * mask:M ... f_handle:H"; the handle, opened with open_by_handle_at()
 * on a mount of that device, gives the inode's path now (checked to be
 * that inode).  A watched inode with no path (deleted) is kept if the
 * tree has it open as a deleted file: the watch names its FILE_OBJ
 * ("fobj:N" for a path) and is added at restart through ckpt's fd on
 * the object made again, the very inode the tree's fds are on.  Other
 * inodes with no path, or on a file system without handles, are
 * refused.  Events queued at checkpoint time
 * cannot be read without consuming them: they are not kept (a warning
 * says how many bytes were lost).
 *
 * Restart: ckpt makes the instance itself and hands it over.  Programs
 * keep their wds, so each watch must get its old one: the kernel hands
 * out wds cyclically, one above the last given, so gaps are skipped by
 * adding and removing a dummy watch; the IN_IGNORED events that makes
 * are read away before each real watch is added.  The next wd the
 * program gets is one above its highest watch (the original's cursor
 * may have been further on: fdinfo does not show it).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../files.h"
#include "fhandle.h"

#define IN_LINK "anon_inode:inotify"
#define IN_MAX_WD (1 << 20)	/* at most that many dummy watches at restart */
#define IN_MAX_WATCHES (1 << 20)
#define IN_KNOWN (IN_ALL_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK | \
		  IN_ONESHOT)
#define IN_HANDLE_MAX 128	/* MAX_HANDLE_SZ */

struct watch {
	struct rec_inotify_watch w;
	char path[CKPT_PATH_MAX];
};

/* ---- checkpoint ---- */

static bool in_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return !strcmp(p->link, IN_LINK);
}

#define FOBJ_PREFIX "fobj:"

struct deleted_probe {
	const struct rec_inotify_watch *w;
	uint32_t id;
};

/* files_each_fd(): is @fd of @pid a deleted file that is @arg's inode?
 * Then its FILE_OBJ (written now if not yet) and 1. */
static int deleted_fd(struct cpt_ctx *c, pid_t pid, int fd, void *arg)
{
	struct deleted_probe *d = arg;
	char path[64], link[CKPT_PATH_MAX];
	ssize_t n;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_nlink || st.st_ino != d->w->ino ||
	    major(st.st_dev) != d->w->sdev >> 20 || minor(st.st_dev) != (d->w->sdev & 0xfffff))
		return 0;
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	if (strncmp(link, "/", 1) || !strstr(link, " (deleted)"))
		return 0;
	return fobj_ref(c, pid, path, link, &d->id) ?: 1;
}

/* A watch on an inode with no path: one the tree has open as a deleted
 * file is kept by its FILE_OBJ (see the top). */
static int watch_deleted(struct cpt_ctx *c, struct watch *w)
{
	struct deleted_probe d = { .w = &w->w };
	int ret = files_each_fd(c, deleted_fd, &d);

	if (ret < 0)
		return ret;
	if (!ret)
		return -ENOENT;
	snprintf(w->path, sizeof(w->path), FOBJ_PREFIX "%u", d.id);
	return 0;
}

static int parse_watch(struct cpt_ctx *c, const struct fd_probe *p,
		       const char *line, struct watch *w)
{
	unsigned int wd, sdev, mask, ign, bytes, type;
	unsigned long long ino;
	char hex[2 * IN_HANDLE_MAX + 1];
	struct file_handle *fh;
	int n = sscanf(line, "inotify wd:%x ino:%llx sdev:%x mask:%x ignored_mask:%x fhandle-bytes:%x fhandle-type:%x f_handle:%256s",
		       &wd, &ino, &sdev, &mask, &ign, &bytes, &type, hex);
	int ret;

	if (n >= 4 && (wd < 1 || wd > IN_MAX_WD))
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: inotify wd %u: wds above %d not supported",
			       p->pid, p->fd, wd, IN_MAX_WD);
	if (n < 8 || bytes > IN_HANDLE_MAX || strlen(hex) != 2 * bytes)
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: inotify watch with no file handle (its file system has none?): %.80s",
			       p->pid, p->fd, line);
	w->w = (struct rec_inotify_watch){ .wd = wd, .mask = mask, .ino = ino, .sdev = sdev };
	fh = malloc(sizeof(*fh) + bytes);
	if (!fh)
		return log_err(c->log, ENOMEM, "inotify:");
	fh->handle_bytes = bytes;
	fh->handle_type = type;
	for (unsigned int i = 0; i < bytes; i++)
		sscanf(hex + 2 * i, "%2hhx", &fh->f_handle[i]);
	ret = fhandle_path(fh, w->w.ino, w->w.sdev, w->path);
	free(fh);
	if (ret) {
		bool denied = ret == -EPERM;

		ret = watch_deleted(c, w);
		if (ret && denied)
			return log_err(c->log, EPERM, "pid %d fd %d: inotify wd %u: its file is found by open_by_handle_at(), which needs CAP_DAC_READ_SEARCH (not an ordinary user's)",
				       p->pid, p->fd, wd);
	}
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: inotify wd %u: no path to inode %llu on %u:%u (deleted?):",
			       p->pid, p->fd, wd, ino, sdev >> 20, sdev & 0xfffff);
	w->w.path_len = strlen(w->path) + 1;
	return 0;
}

static int wd_cmp(const void *a, const void *b)
{
	return ((const struct watch *)a)->w.wd - ((const struct watch *)b)->w.wd;
}

/* What the queue holds is lost; say so. */
static void warn_queued(struct cpt_ctx *c, const struct fd_probe *p)
{
	int pidfd = syscall(SYS_pidfd_open, p->pid, 0);
	int fd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, p->fd, 0), n = 0;

	if (fd >= 0 && !ioctl(fd, FIONREAD, &n) && n > 0)
		log_warn(c->log, "pid %d fd %d: %d bytes of queued inotify events are not kept",
			 p->pid, p->fd, n);
	if (fd >= 0)
		close(fd);
	if (pidfd >= 0)
		close(pidfd);
}

static int pack(struct cpt_ctx *c, struct watch *ws, uint32_t nr, void **extra,
		uint32_t *extra_len)
{
	size_t len = sizeof(struct rec_inotify);
	struct rec_inotify h = { .nr = nr };
	char *buf, *q;

	for (uint32_t i = 0; i < nr; i++)
		len += sizeof(ws[i].w) + ws[i].w.path_len;
	if (len > MAX_FILE_EXTRA)
		return log_err(c->log, E2BIG, "inotify: %zu bytes of watches", len);
	q = buf = malloc(len);
	if (!buf)
		return log_err(c->log, ENOMEM, "inotify:");
	memcpy(q, &h, sizeof(h));
	q += sizeof(h);
	for (uint32_t i = 0; i < nr; i++) {
		memcpy(q, &ws[i].w, sizeof(ws[i].w));
		memcpy(q + sizeof(ws[i].w), ws[i].path, ws[i].w.path_len);
		q += sizeof(ws[i].w) + ws[i].w.path_len;
	}
	*extra = buf;
	*extra_len = len;
	return 0;
}

static int in_dump(struct cpt_ctx *c, const struct fd_probe *p,
		   struct rec_file *f, void **extra, uint32_t *extra_len)
{
	const char *line = p->fdinfo;
	struct watch *ws = NULL;
	uint32_t nr = 0;
	size_t cap = 0;
	int ret = 0;

	while (!ret && (line = strstr(line, "\ninotify wd:"))) {
		line++;
		if (nr >= IN_MAX_WATCHES || VEC_ROOM(ws, nr, cap)) {
			ret = log_err(c->log, ENOMEM, "pid %d fd %d: inotify watches",
				      p->pid, p->fd);
			break;
		}
		ret = parse_watch(c, p, line, &ws[nr++]);
	}
	if (!ret) {
		if (nr)	/* no watches: ws is NULL */
			qsort(ws, nr, sizeof(*ws), wd_cmp);
		ret = pack(c, ws, nr, extra, extra_len);
	}
	if (!ret)
		warn_queued(c, p);
	free(ws);
	return ret;
}

/* ---- restart ---- */

/* The i'th watch of @extra, already validated by in_load(): *w and its
 * path; returns the offset of the next. */
static size_t watch_at(const char *extra, size_t off, struct rec_inotify_watch *w,
		       const char **path)
{
	memcpy(w, extra + off, sizeof(*w));
	*path = extra + off + sizeof(*w);
	return off + sizeof(*w) + w->path_len;
}

/* The FILE_OBJ of a watch on a deleted file ("fobj:N", the image's
 * deleted file N), 0 if @path is not one. */
static uint32_t watch_obj(struct rst_ctx *c, const char *path)
{
	char *end;
	unsigned long id;

	if (strncmp(path, FOBJ_PREFIX, strlen(FOBJ_PREFIX)) ||
	    !isdigit((unsigned char)path[strlen(FOBJ_PREFIX)]))
		return 0;
	id = strtoul(path + strlen(FOBJ_PREFIX), &end, 10);
	if (*end || !id || id > UINT32_MAX || fobj_kind(c, id) != FILE_DELETED)
		return 0;
	return id;
}

static int in_load(struct rst_ctx *c, struct rst_file *f)
{
	const char *x = f->extra;
	size_t off = sizeof(struct rec_inotify), len = f->f.extra_len;
	struct rec_inotify h;
	int32_t last = 0;

	if (len < sizeof(h))
		return log_err(c->log, EBADMSG, "FILE %u: inotify state missing", f->f.id);
	memcpy(&h, x, sizeof(h));
	if (h.reserved || h.nr > IN_MAX_WATCHES)
		return log_err(c->log, EBADMSG, "FILE %u: bad inotify watch count %u",
			       f->f.id, h.nr);
	for (uint32_t i = 0; i < h.nr; i++) {
		struct rec_inotify_watch w;
		const char *path;

		if (len - off < sizeof(w))
			return log_err(c->log, EBADMSG, "FILE %u: inotify watch %u beyond the record",
				       f->f.id, i);
		memcpy(&w, x + off, sizeof(w));
		if (w.path_len < 2 || w.path_len > CKPT_PATH_MAX ||
		    w.path_len > len - off - sizeof(w) || w.wd <= last || w.wd > IN_MAX_WD ||
		    !(w.mask & IN_ALL_EVENTS) || (w.mask & ~IN_KNOWN))
			return log_err(c->log, EBADMSG, "FILE %u: bad inotify watch %u (wd %d, mask %#x, path_len %u)",
				       f->f.id, i, w.wd, w.mask, w.path_len);
		off = watch_at(x, off, &w, &path);
		if (strnlen(path, w.path_len) != w.path_len - 1 ||
		    (path[0] != '/' && !watch_obj(c, path)))
			return log_err(c->log, EBADMSG, "FILE %u: inotify watch %d: bad path",
				       f->f.id, w.wd);
		last = w.wd;
	}
	if (off != len)
		return log_err(c->log, EBADMSG, "FILE %u: %zu bytes after the inotify watches",
			       f->f.id, len - off);
	return 0;
}

static int in_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct rec_inotify h;
	size_t off = sizeof(h);
	struct stat st;

	memcpy(&h, f->extra, sizeof(h));
	for (uint32_t i = 0; i < h.nr; i++) {
		struct rec_inotify_watch w;
		const char *path;

		off = watch_at(f->extra, off, &w, &path);
		if (path[0] == '/' && lstat(path, &st))
			return log_err(c->log, errno, "inotify watch %d on %s:", w.wd, path);
	}
	return 0;
}

/* Read away the queue: only dummies' IN_IGNORED can be in it yet (and
 * what happened to watched files since the checkpoint, lost anyway). */
static void drain(int ifd)
{
	char buf[4096];

	while (read(ifd, buf, sizeof(buf)) > 0)
		;
}

/* Skip wd @next: a watch on a path no real watch of ours has, removed. */
static int dummy(int ifd, int *next)
{
	static const char *const spare[] = { "/", "/proc", "/dev", "/sys", "/etc",
					     "/tmp", "/usr", "/var" };
	int wd = -1;

	for (size_t i = 0; wd < 0 && i < sizeof(spare) / sizeof(spare[0]); i++)
		wd = inotify_add_watch(ifd, spare[i], IN_DELETE_SELF | IN_MASK_CREATE);
	if (wd < 0 || inotify_rm_watch(ifd, wd))
		return -errno;
	*next = wd + 1;
	return 0;
}

static int add_watch(struct rst_ctx *c, int ifd, int *next,
		     const struct rec_inotify_watch *w, const char *path)
{
	uint32_t mask = w->mask;
	char objpath[64];
	struct stat st;
	int wd, ret = 0, n = 0;

	while (!ret && *next < w->wd) {
		ret = dummy(ifd, next);
		if (++n % 1024 == 0)
			drain(ifd);
	}
	drain(ifd);
	if (ret)
		return log_err(c->log, -ret, "inotify: reaching wd %d:", w->wd);
	if (path[0] != '/') {	/* a deleted file's, through our fd on it */
		int obj = fobj_fd(c, watch_obj(c, path));

		if (obj < 0)
			return obj;
		snprintf(objpath, sizeof(objpath), "/proc/self/fd/%d", obj);
		path = objpath;
	} else if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		mask |= IN_DONT_FOLLOW;	/* the watch was on the link itself */
	}
	wd = inotify_add_watch(ifd, path, mask);
	if (wd < 0)
		return log_err(c->log, errno, "inotify watch %d on %s:", w->wd, path);
	if (wd != w->wd)
		return log_err(c->log, EEXIST, "inotify watch on %s came back as wd %d, not %d",
			       path, wd, w->wd);
	*next = wd + 1;
	return 0;
}

static int in_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		   long *fd)
{
	int ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK), next = 1, ret = 0;
	struct rec_inotify h;
	size_t off = sizeof(h);

	if (ifd < 0)
		return log_err(c->log, errno, "inotify_init1:");
	memcpy(&h, f->extra, sizeof(h));
	for (uint32_t i = 0; i < h.nr && !ret; i++) {
		struct rec_inotify_watch w;
		const char *path;

		off = watch_at(f->extra, off, &w, &path);
		ret = add_watch(c, ifd, &next, &w, path);
	}
	if (!ret)
		ret = files_give(t, ifd, fd);
	close(ifd);
	if (!ret)	/* ours was non-blocking; the process's as it was */
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	return ret;
}

static void in_show(struct info_out *o, const struct rec_file *f,
		    const void *extra, uint32_t extra_len)
{
	struct rec_inotify h;

	if (extra_len < sizeof(h))
		return;
	memcpy(&h, extra, sizeof(h));
	info_u64(o, "watches", h.nr);
}

const struct file_ops file_inotify = {
	.kind = FILE_INOTIFY,
	.name = "inotify",
	.match = in_match,
	.dump = in_dump,
	.load = in_load,
	.check = in_check,
	.open = in_open,
	.show = in_show,
};
