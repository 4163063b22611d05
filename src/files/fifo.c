/* fifo.c - named pipes (FIFO), reopened by their path at restart, with
 * their status flags (O_NONBLOCK...) and the data sitting in them.
 *
 * The buffer belongs to the inode, not to a description: however many
 * ends the tree holds, it is written once, as a FIFO record (struct
 * rec_pipe) that each end's FILE names by its rdev.  The buffer's code
 * is a pipe's (pipebuf.c): at checkpoint the data is copied out with
 * tee(), not consumed.  At restart ckpt opens the FIFO itself
 * O_RDWR|O_NONBLOCK before the first end is made (so no open of an end
 * blocks waiting for the other side), checks it is empty, gives it its
 * capacity and data, and keeps it open until every process is built.  A FIFO that already holds data at restart is
 * still open outside the restored tree (the original, or someone else):
 * putting the data back would double it, so restart refuses it.
 * An end elsewhere (a reader outside the tree) just meets the restored
 * ends by the name again.
 *
 * A FIFO whose last name was removed (a ghost) has its owner in the
 * FILE's extra bytes.  At restart ckpt makes a FIFO by the name it had
 * (or beside it, with a suffix, if the name is taken), opens it as
 * above, and removes the name at once; each end is then opened through
 * ckpt's own fd (/proc/self/fd/N reopens the inode) and given to the
 * process, so the ends meet on one unnamed FIFO as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../files.h"
#include "pipebuf.h"

#define FIFO_FLAGS (O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | \
		    ARCH_O_LARGEFILE | O_NOATIME | O_ASYNC)

/* ---- checkpoint ---- */

/* A FIFO whose buffer is in the image, found again by its inode. */
struct cpt_fifo {
	uint64_t dev, ino;
	uint32_t id;
};

/* The checkpoint's: every FIFO written so far. */
struct fifo_cpt {
	struct cpt_fifo *e;
	int n;
	size_t cap;
};

#define DELETED_SUFFIX " (deleted)"
#define DELETED_LEN 10

static bool is_deleted_path(const char *path)
{
	size_t n = strlen(path);

	return n > DELETED_LEN && !strcmp(path + n - DELETED_LEN, DELETED_SUFFIX);
}

/* A FIFO with no name left is a ghost; one named "... (deleted)" but
 * still linked is refused (its name is not what the link says). */
static bool fifo_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return S_ISFIFO(p->st.st_mode) && p->link[0] == '/' &&
	       !(p->flags & O_PATH) &&
	       (!is_deleted_path(p->link) || !p->st.st_nlink);
}

/* A descriptor of ours that reads the FIFO: the tree's own description
 * if it can read, else a reader of our own that never blocks. */
static int fifo_reader(const struct fd_probe *p)
{
	char path[64];

	if ((p->flags & O_ACCMODE) != O_WRONLY)
		return pipebuf_holder_fd(p->pid, p->fd);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, p->fd);
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

static int fifo_write(struct cpt_ctx *c, const struct fd_probe *p, uint32_t *id)
{
	struct fifo_cpt *fc = kind_dump_state(c, &kind_fifo);
	struct cpt_fifo *n;
	int rfd = fifo_reader(p), ret;

	if (rfd < 0)
		return log_err(c->log, errno, "pid %d fd %d: reading FIFO %s:", p->pid,
			       p->fd, p->link);
	ret = pipebuf_dump(c, REC_FIFO, rfd, p->pid, p->fd, id);
	close(rfd);
	n = ret ? NULL : VEC_PUSH(fc->e, fc->n, fc->cap);
	if (!ret && !n)
		ret = log_err(c->log, ENOMEM, "fifo table:");
	if (ret)
		return ret;
	*n = (struct cpt_fifo){ .dev = p->st.st_dev, .ino = p->st.st_ino, .id = *id };
	return 0;
}

static int fifo_ghost_dump(struct cpt_ctx *c, const struct fd_probe *p,
			   void **extra, uint32_t *extra_len)
{
	struct rec_fifo_ghost *g = calloc(1, sizeof(*g));

	if (!g)
		return log_err(c->log, ENOMEM, "pid %d fd %d: ghost FIFO:", p->pid, p->fd);
	g->flags = FIFO_GHOST;
	g->uid = p->st.st_uid;
	g->gid = p->st.st_gid;
	*extra = g;
	*extra_len = sizeof(*g);
	return 0;
}

static int fifo_dump(struct cpt_ctx *c, const struct fd_probe *p,
		     struct rec_file *f, void **extra, uint32_t *extra_len)
{
	const struct fifo_cpt *fc = kind_dump_state(c, &kind_fifo);
	uint32_t id = 0;
	int ret = 0;

	for (int i = 0; i < fc->n && !id; i++)
		if (fc->e[i].dev == p->st.st_dev && fc->e[i].ino == p->st.st_ino)
			id = fc->e[i].id;
	if (!id)
		ret = fifo_write(c, p, &id);
	f->pos = 0;
	f->rdev = id;	/* the FIFO record of its buffer */
	if (!ret && is_deleted_path(p->link))
		ret = fifo_ghost_dump(c, p, extra, extra_len);
	return ret;
}

static void fifo_dump_free(struct cpt_ctx *c, void *state)
{
	struct fifo_cpt *fc = state;

	free(fc->e);
}

/* ---- restart ---- */

static int fifo_rec_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	return pipebuf_load(c, &kind_fifo, r, "FIFO");
}

/* Ours, open on @path, holding the saved data: see the top. */
static int fifo_prime(struct rst_ctx *c, struct rst_pipebuf *q, const char *path)
{
	int n = 0;

	q->fd[0] = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (q->fd[0] < 0)
		return log_err(c->log, errno, "FIFO %s:", path);
	if (ioctl(q->fd[0], FIONREAD, &n))
		return log_err(c->log, errno, "FIFO %s:", path);
	if (n && q->p.data_len)
		return log_err(c->log, EBUSY,
			       "FIFO %s already holds %d bytes: it is open outside the restored tree",
			       path, n);
	if (fcntl(q->fd[0], F_GETPIPE_SZ) != (int)q->p.capacity &&
	    fcntl(q->fd[0], F_SETPIPE_SZ, q->p.capacity) < 0)
		return log_err(c->log, errno, "FIFO %s: capacity %u:", path,
			       q->p.capacity);
	if (pipebuf_fill(q->fd[0], q->data, q->p.data_len))
		return log_err(c->log, errno, "filling FIFO %s:", path);
	return 0;
}

static const struct rec_desc fifo_recs[] = {
	{ REC_FIFO, "FIFO", sizeof(struct rec_pipe) },
	{ 0 }
};

static int fifo_restore_end(struct rst_ctx *c)
{
	return pipebuf_restore_end(c, &kind_fifo);
}

const struct kind_ops kind_fifo = {
	.name = "fifo",
	.recs = fifo_recs,
	.phase = PHASE_IMAGE,
	.dump_size = sizeof(struct fifo_cpt),
	.dump_free = fifo_dump_free,
	.load = fifo_rec_load,
	.restore_end = fifo_restore_end,
	.free_ctx = pipebuf_free_ctx,
	.show = pipebuf_show,
};

/* ---- the ends, as a file kind ---- */

/* A ghost's name, as it was before " (deleted)" (f->priv), and its
 * owner, checked. */
static int fifo_ghost_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_fifo_ghost g;
	size_t n = strlen(f->path);

	if (f->f.extra_len != sizeof(g) || !is_deleted_path(f->path))
		return log_err(c->log, EBADMSG, "FILE %u: bad FIFO end", f->f.id);
	memcpy(&g, f->extra, sizeof(g));
	if (g.flags != FIFO_GHOST || g.reserved)
		return log_err(c->log, EBADMSG, "FILE %u: bad ghost FIFO", f->f.id);
	f->priv = strndup(f->path, n - DELETED_LEN);
	if (!f->priv)
		return log_err(c->log, ENOMEM, "FILE %u: ghost FIFO:", f->f.id);
	return 0;
}

static int fifo_load(struct rst_ctx *c, struct rst_file *f)
{
	if (f->f.extra_len && fifo_ghost_load(c, f))
		return -EBADMSG;
	if (f->path[0] != '/' || (f->f.flags & ~FIFO_FLAGS) ||
	    (f->f.flags & O_ACCMODE) == O_ACCMODE || !S_ISFIFO(f->f.mode) ||
	    f->f.pos || !pipebuf_by_id(c, &kind_fifo, f->f.rdev))
		return log_err(c->log, EBADMSG, "FILE %u: bad FIFO end", f->f.id);
	return 0;
}

/* A ghost is made again in its directory: that must be there. */
static int fifo_ghost_check(struct rst_ctx *c, const struct rst_file *f)
{
	char dir[CKPT_PATH_MAX];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", (const char *)f->priv);
	*(strrchr(dir, '/') + 1) = '\0';
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return log_err(c->log, errno ? errno : ENOTDIR,
			       "deleted FIFO %s: its directory %s:", f->path, dir);
	return 0;
}

static int fifo_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct stat st;

	if (f->priv)
		return fifo_ghost_check(c, f);
	if (stat(f->path, &st))
		return log_err(c->log, errno, "FIFO %s:", f->path);
	if (!S_ISFIFO(st.st_mode))
		return log_err(c->log, ESTALE, "FIFO %s is no longer a FIFO", f->path);
	return 0;
}

/* The ghost made again, primed as any FIFO, and its name removed. */
static int fifo_ghost_make(struct rst_ctx *c, struct rst_pipebuf *q,
			   const struct rst_file *f)
{
	const char *name = f->priv;
	char path[CKPT_PATH_MAX + 32];
	struct rec_fifo_ghost g;
	int ret;

	memcpy(&g, f->extra, sizeof(g));
	snprintf(path, sizeof(path), "%s", name);
	ret = mkfifo(path, 0600) ? errno : 0;
	if (ret == EEXIST) {
		snprintf(path, sizeof(path), "%s.ckpt-fifo-%u", name, f->f.id);
		ret = mkfifo(path, 0600) ? errno : 0;
	}
	if (ret)
		return log_err(c->log, ret, "deleted FIFO %s: make it again:", path);
	if (chown(path, g.uid, g.gid) || chmod(path, f->f.mode & 07777))
		ret = log_err(c->log, errno, "deleted FIFO %s: owner/mode:", path);
	else
		ret = fifo_prime(c, q, path);
	if (unlink(path) && !ret)
		ret = log_err(c->log, errno, "deleted FIFO %s: remove it again:", path);
	return ret;
}

/* An end of a ghost: ckpt's O_RDWR fd reopened with the end's flags
 * (never blocks: that fd is a reader and a writer), given to @t. */
static int fifo_ghost_open(struct rst_ctx *c, struct rst_task *t,
			   const struct rst_pipebuf *q, const struct rst_file *f,
			   long *fd)
{
	char path[64];
	int ours, ret;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", q->fd[0]);
	ours = open(path, (f->f.flags & ~O_ASYNC) | O_CLOEXEC);
	if (ours < 0)
		return log_err(c->log, errno, "pid %d: deleted FIFO %s:", t->pid, f->path);
	ret = files_give(t, ours, fd);
	close(ours);
	return ret;
}

static int fifo_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		     long *fd)
{
	struct rst_pipebuf *q = pipebuf_by_id(c, &kind_fifo, f->f.rdev);
	int ret = 0;

	if (q->fd[0] < 0)
		ret = f->priv ? fifo_ghost_make(c, q, f) : fifo_prime(c, q, f->path);
	if (!ret)
		ret = f->priv ? fifo_ghost_open(c, t, q, f, fd) :
		      files_open_path(t, f->path, f->f.flags, fd);
	if (!ret && (f->f.flags & O_ASYNC))
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	return ret;
}

static void fifo_show(struct info_out *o, const struct rec_file *f,
		      const void *extra, uint32_t extra_len)
{
	info_u64(o, "fifo", f->rdev);
	if (extra_len == sizeof(struct rec_fifo_ghost))
		info_str(o, "ghost", "yes");
}

static void fifo_free(struct rst_file *f)
{
	free(f->priv);
}

const struct file_ops file_fifo = {
	.kind = FILE_FIFO,
	.name = "fifo",
	.match = fifo_match,
	.dump = fifo_dump,
	.load = fifo_load,
	.check = fifo_check,
	.open = fifo_open,
	.free = fifo_free,
	.show = fifo_show,
};
