/* fifo.c - named pipes (FIFO), reopened by their path at restart, with
 * their status flags (O_NONBLOCK...) and the data sitting in them.
 *
 * The buffer belongs to the inode, not to a description: however many
 * ends the tree holds, it is written once, as a FIFO record (struct
 * rec_pipe) that each end's FILE names by its rdev.  At checkpoint the
 * data is copied out with tee() (pipe_peek), not consumed.  At restart
 * ckpt opens the FIFO itself O_RDWR|O_NONBLOCK before the first end is
 * made (so no open of an end blocks waiting for the other side), checks
 * it is empty, gives it its capacity and data, and keeps it open until
 * every process is built.  A FIFO that already holds data at restart is
 * still open outside the restored tree (the original, or someone else):
 * putting the data back would double it, so restart refuses it.
 * An end elsewhere (a reader outside the tree) just meets the restored
 * ends by the name again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../files.h"

#define FIFO_FLAGS (O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | \
		    0100000 /* the kernel's O_LARGEFILE */ | O_NOATIME | O_ASYNC)

/* ---- checkpoint ---- */

static bool fifo_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return S_ISFIFO(p->st.st_mode) && p->link[0] == '/' &&
	       !(p->flags & O_PATH) && !strstr(p->link, " (deleted)");
}

/* A descriptor of ours that reads the FIFO: the tree's own description
 * if it can read, else a reader of our own that never blocks. */
static int reader_of(const struct fd_probe *p)
{
	char path[64];
	long pidfd;
	int fd = -1;

	if ((p->flags & O_ACCMODE) != O_WRONLY) {
		pidfd = syscall(SYS_pidfd_open, p->pid, 0);
		if (pidfd < 0)
			return -1;
		fd = syscall(SYS_pidfd_getfd, pidfd, p->fd, 0);
		close(pidfd);
		return fd;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, p->fd);
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

static int fifo_write(struct cpt_ctx *c, const struct fd_probe *p, uint32_t *id)
{
	struct rec_pipe rp = { 0 };
	struct cpt_shm *n;
	char *data = NULL;
	int rfd = reader_of(p), ret;

	if (rfd < 0)
		return log_err(c->log, errno, "pid %d fd %d: reading FIFO %s:", p->pid,
			       p->fd, p->link);
	ret = pipe_peek(c, rfd, p->pid, p->fd, &data, &rp.data_len, &rp.capacity);
	close(rfd);
	n = ret ? NULL : realloc(c->fifos, (c->nr_fifos + 1) * sizeof(*n));
	if (!ret && !n)
		ret = log_err(c->log, ENOMEM, "fifo table:");
	if (ret) {
		free(data);
		return ret;
	}
	c->fifos = n;
	rp.id = *id = ++c->next_objref;
	n[c->nr_fifos++] = (struct cpt_shm){ .dev = p->st.st_dev, .ino = p->st.st_ino,
						.id = rp.id };
	ret = pipe_write(c, REC_FIFO, &rp, data);
	free(data);
	return ret;
}

static int fifo_dump(struct cpt_ctx *c, const struct fd_probe *p,
		     struct rec_file *f, void **extra, uint32_t *extra_len)
{
	uint32_t id = 0;
	int ret = 0;

	for (int i = 0; i < c->nr_fifos && !id; i++)
		if (c->fifos[i].dev == p->st.st_dev && c->fifos[i].ino == p->st.st_ino)
			id = c->fifos[i].id;
	if (!id)
		ret = fifo_write(c, p, &id);
	f->pos = 0;
	f->rdev = id;	/* the FIFO record of its buffer */
	return ret;
}

/* ---- restart ---- */

struct rst_fifo {
	struct rec_pipe p;
	const char *data;
	void *rec;
	int fd;			/* ours, O_RDWR, once the first end is made */
};

struct fifo_table {
	struct rst_fifo *e;
	int n;
};

static int fifo_rec_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct fifo_table *ft = kind_ctx_state(c, &kind_fifo, sizeof(*ft));
	const struct rec_pipe *rp = r->data;
	struct rst_fifo *n;
	int ret = pipe_rec_check(c->log, r, "FIFO");

	if (!ft)
		return log_err(c->log, ENOMEM, "fifo table:");
	if (ret)
		return ret;
	for (int i = 0; i < ft->n; i++)
		if (ft->e[i].p.id == rp->id)
			return log_err(c->log, EBADMSG, "FIFO %u twice", rp->id);
	n = realloc(ft->e, (ft->n + 1) * sizeof(*n));
	if (!n)
		return log_err(c->log, ENOMEM, "fifo table:");
	ft->e = n;
	n = &ft->e[ft->n++];
	*n = (struct rst_fifo){ .p = *rp, .rec = r->data, .fd = -1,
				.data = (const char *)r->data + sizeof(*rp) };
	r->data = NULL;
	return 0;
}

static struct rst_fifo *fifo_by_id(struct rst_ctx *c, uint64_t id)
{
	struct fifo_table *ft = KCSTATE(c, kind_fifo);

	for (int i = 0; ft && i < ft->n; i++)
		if (ft->e[i].p.id == id)
			return &ft->e[i];
	return NULL;
}

/* Ours, open on @path, holding the saved data: see the top. */
static int prime(struct rst_ctx *c, struct rst_fifo *q, const char *path)
{
	int n = 0;

	q->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (q->fd < 0)
		return log_err(c->log, errno, "FIFO %s:", path);
	if (ioctl(q->fd, FIONREAD, &n))
		return log_err(c->log, errno, "FIFO %s:", path);
	if (n && q->p.data_len)
		return log_err(c->log, EBUSY,
			       "FIFO %s already holds %d bytes: it is open outside the restored tree",
			       path, n);
	if (fcntl(q->fd, F_GETPIPE_SZ) != (int)q->p.capacity &&
	    fcntl(q->fd, F_SETPIPE_SZ, q->p.capacity) < 0)
		return log_err(c->log, errno, "FIFO %s: capacity %u:", path,
			       q->p.capacity);
	if (pipe_fill(q->fd, q->data, q->p.data_len))
		return log_err(c->log, errno, "filling FIFO %s:", path);
	return 0;
}

static void fifo_free_ctx(void *state)
{
	struct fifo_table *ft = state;

	for (int i = 0; i < ft->n; i++) {
		if (ft->e[i].fd >= 0)
			close(ft->e[i].fd);
		free(ft->e[i].rec);
	}
	free(ft->e);
	free(ft);
}

static void fifo_rec_show(struct info_out *o, const struct rec *r)
{
	const struct rec_pipe *rp = r->data;

	info_u64(o, "id", rp->id);
	info_u64(o, "capacity", rp->capacity);
	info_u64(o, "bytes", rp->data_len);
}

const struct kind_ops kind_fifo = {
	.name = "fifo",
	.types = { REC_FIFO },
	.phase = PHASE_IMAGE,
	.load = fifo_rec_load,
	.free_ctx = fifo_free_ctx,
	.show = fifo_rec_show,
};

/* ---- the ends, as a file kind ---- */

static int fifo_load(struct rst_ctx *c, struct rst_file *f)
{
	if (f->path[0] != '/' || f->f.extra_len || (f->f.flags & ~FIFO_FLAGS) ||
	    (f->f.flags & O_ACCMODE) == O_ACCMODE || !S_ISFIFO(f->f.mode) ||
	    f->f.pos || !fifo_by_id(c, f->f.rdev))
		return log_err(c->log, EBADMSG, "FILE %u: bad FIFO end", f->f.id);
	return 0;
}

static int fifo_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct stat st;

	if (stat(f->path, &st))
		return log_err(c->log, errno, "FIFO %s:", f->path);
	if (!S_ISFIFO(st.st_mode))
		return log_err(c->log, ESTALE, "FIFO %s is no longer a FIFO", f->path);
	return 0;
}

static int fifo_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		     long *fd)
{
	struct rst_fifo *q = fifo_by_id(c, f->f.rdev);
	int ret = q->fd < 0 ? prime(c, q, f->path) : 0;

	if (!ret)
		ret = files_open_path(t, f->path, f->f.flags, fd);
	if (!ret && (f->f.flags & O_ASYNC))
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	return ret;
}

static void fifo_show(struct info_out *o, const struct rec_file *f,
		      const void *extra, uint32_t extra_len)
{
	info_u64(o, "fifo", f->rdev);
}

const struct file_ops file_fifo = {
	.kind = FILE_FIFO,
	.name = "fifo",
	.match = fifo_match,
	.dump = fifo_dump,
	.load = fifo_load,
	.check = fifo_check,
	.open = fifo_open,
	.show = fifo_show,
};
