/* pipe.c - pipes with both ends in the tree (PIPE): their capacity and the
 * data sitting in them, read without consuming it (tee() from a copy of
 * the read end), and put back.  At restart ckpt itself makes each pipe,
 * fills it, and every process takes its ends from ckpt with
 * pidfd_getfd(), so each end is one description wherever it is.  A pipe
 * with an end outside the tree is stdio held by the caller (inherit.c) or
 * refused.  Each end is a file kind (file_pipe) naming its PIPE. */
#define _GNU_SOURCE
#include <dirent.h>
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

#define MAX_PIPE_DATA	(CKPT_REC_MAX_META - sizeof(struct rec_pipe))

/* ---- checkpoint ---- */

static struct cpt_pipe *pipe_find(struct cpt_ctx *c, uint64_t ino)
{
	for (int i = 0; i < c->nr_pipes; i++)
		if (c->pipes[i].ino == ino)
			return &c->pipes[i];
	return NULL;
}

static int note_end(struct cpt_ctx *c, pid_t pid, int fd, uint64_t ino)
{
	struct cpt_pipe *p = pipe_find(c, ino);
	char name[64], *info, *f;
	int acc;

	if (!p) {
		p = realloc(c->pipes, (c->nr_pipes + 1) * sizeof(*p));
		if (!p)
			return log_err(c->log, ENOMEM, "pipe table:");
		c->pipes = p;
		p = &c->pipes[c->nr_pipes++];
		memset(p, 0, sizeof(*p));
		p->ino = ino;
	}
	snprintf(name, sizeof(name), "fdinfo/%d", fd);
	if (proc_read(pid, name, &info, NULL))
		return 0;	/* closed meanwhile: it cannot be, all is held */
	f = strstr(info, "flags:");
	acc = f ? strtoul(f + 6, NULL, 8) & O_ACCMODE : 0;
	free(info);
	if (acc == O_RDONLY && !p->has_read) {
		p->has_read = true;
		p->reader = pid;
		p->reader_fd = fd;
	} else if (acc == O_WRONLY) {
		p->has_write = true;
	}
	return 0;
}

/* Every pipe end every process of the tree holds. */
static int scan(struct cpt_ctx *c)
{
	int ret = 0;

	for (int i = 0; i < c->nr_tasks && !ret; i++) {
		struct cpt_task *t = c->tasks[i];
		char path[64], link[64];
		struct dirent *de;
		DIR *d;

		if (t->zombie)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", t->pid);
		d = opendir(path);
		if (!d)
			return log_err(c->log, errno, "pid %d: listing fds:", t->pid);
		while (!ret && (de = readdir(d))) {
			char name[32];
			unsigned long long ino;

			if (de->d_name[0] == '.')
				continue;
			snprintf(name, sizeof(name), "fd/%.20s", de->d_name);
			if (proc_readlink(t->pid, name, link, sizeof(link)) ||
			    sscanf(link, "pipe:[%llu]", &ino) != 1)
				continue;
			ret = note_end(c, t->pid, atoi(de->d_name), ino);
		}
		closedir(d);
	}
	c->pipes_scanned = true;
	return ret;
}

static int pipe_inside(struct cpt_ctx *c, uint64_t ino, bool *inside)
{
	struct cpt_pipe *p;
	int ret = c->pipes_scanned ? 0 : scan(c);

	p = pipe_find(c, ino);
	*inside = p && p->has_read && p->has_write;
	return ret;
}

/* The bytes in the pipe (or FIFO) @rfd reads, copied out through a
 * second pipe with tee(), which leaves them where they are. */
int pipe_peek(struct cpt_ctx *c, int rfd, pid_t pid, int fd, char **data,
	      uint32_t *len, uint32_t *cap)
{
	int tmp[2] = { -1, -1 }, n = 0, sz = 0, ret = 0;
	size_t got = 0;

	*data = NULL;
	if (ioctl(rfd, FIONREAD, &n) || (sz = fcntl(rfd, F_GETPIPE_SZ)) <= 0 ||
	    pipe2(tmp, O_CLOEXEC | O_NONBLOCK) || fcntl(tmp[1], F_SETPIPE_SZ, sz) < 0) {
		ret = log_err(c->log, errno, "pid %d fd %d: reading its pipe:", pid, fd);
		goto out;
	}
	if ((size_t)n > MAX_PIPE_DATA) {
		ret = log_err(c->log, EFBIG, "pid %d fd %d: %d bytes in the pipe, more than the image takes",
			      pid, fd, n);
		goto out;
	}
	*data = malloc(n ? n : 1);
	if (!*data) {
		ret = log_err(c->log, ENOMEM, "pipe data:");
		goto out;
	}
	if (n && tee(rfd, tmp[1], n, SPLICE_F_NONBLOCK) != n) {
		ret = log_err(c->log, errno ? errno : EIO, "pid %d fd %d: tee:", pid, fd);
		goto out;
	}
	while (got < (size_t)n) {
		ssize_t k = read(tmp[0], *data + got, n - got);

		if (k <= 0) {
			ret = log_err(c->log, k < 0 ? errno : EIO, "pipe copy:");
			goto out;
		}
		got += k;
	}
	*len = n;
	*cap = sz;
out:
	for (int i = 0; i < 2; i++)
		if (tmp[i] >= 0)
			close(tmp[i]);
	if (ret) {
		free(*data);
		*data = NULL;
	}
	return ret;
}

static int peek(struct cpt_ctx *c, struct cpt_pipe *p, char **data,
		uint32_t *len, uint32_t *cap)
{
	long pidfd = syscall(SYS_pidfd_open, p->reader, 0);
	int rfd = -1, ret;

	*data = NULL;
	if (pidfd >= 0)
		rfd = syscall(SYS_pidfd_getfd, pidfd, p->reader_fd, 0);
	if (rfd < 0)
		ret = log_err(c->log, errno, "pid %d fd %d: reading its pipe:", p->reader,
			      p->reader_fd);
	else
		ret = pipe_peek(c, rfd, p->reader, p->reader_fd, data, len, cap);
	if (rfd >= 0)
		close(rfd);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

int pipe_write(struct cpt_ctx *c, uint32_t type, const struct rec_pipe *rp,
	       const char *data)
{
	int ret = iw_begin(&c->w, type, sizeof(*rp) + rp->data_len);

	if (!ret)
		ret = iw_write(&c->w, rp, sizeof(*rp));
	if (!ret)
		ret = iw_write(&c->w, data, rp->data_len);
	if (!ret)
		ret = iw_end(&c->w);
	return ret;
}

static int pipe_dump(struct cpt_ctx *c, uint64_t ino, uint32_t *id)
{
	struct cpt_pipe *p = pipe_find(c, ino);
	struct rec_pipe rp = { 0 };
	char *data;
	int ret;

	if (p->id) {
		*id = p->id;
		return 0;
	}
	ret = peek(c, p, &data, &rp.data_len, &rp.capacity);
	if (ret)
		return ret;
	rp.id = p->id = ++c->next_objref;
	ret = pipe_write(c, REC_PIPE, &rp, data);
	free(data);
	*id = p->id;
	return ret;
}

/* ---- restart ---- */

struct rst_pipe {
	struct rec_pipe p;
	const char *data;
	void *rec;
	int fd[2];		/* ckpt's own ends, -1 until made */
	bool used[2];		/* its first description of each end is taken */
};

struct pipe_table {
	struct rst_pipe *e;
	int n;
};

int pipe_rec_check(struct ckpt_log *log, const struct rec *r, const char *what)
{
	const struct rec_pipe *rp = r->data;
	int ret = rec_want(log, r, sizeof(*rp), what);

	if (ret)
		return ret;
	if (rp->reserved || !rp->id || rp->capacity < 4096 || rp->capacity > (1U << 30) ||
	    rp->data_len > rp->capacity || r->data_len != sizeof(*rp) + rp->data_len)
		return log_err(log, EBADMSG, "bad %s record %llu", what,
			       (unsigned long long)r->index);
	return 0;
}

int pipe_fill(int fd, const char *data, uint32_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t k = write(fd, data + done, len - done);

		if (k <= 0)
			return -1;
		done += k;
	}
	return 0;
}

static int pipe_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct pipe_table *pt = kind_ctx_state(c, &kind_pipe, sizeof(*pt));
	const struct rec_pipe *rp = r->data;
	struct rst_pipe *n;
	int ret = pipe_rec_check(c->log, r, "PIPE");

	if (!pt)
		return log_err(c->log, ENOMEM, "pipe table:");
	if (ret)
		return ret;
	for (int i = 0; i < pt->n; i++)
		if (pt->e[i].p.id == rp->id)
			return log_err(c->log, EBADMSG, "PIPE %u twice", rp->id);
	n = realloc(pt->e, (pt->n + 1) * sizeof(*n));
	if (!n)
		return log_err(c->log, ENOMEM, "pipe table:");
	pt->e = n;
	n = &pt->e[pt->n++];
	memset(n, 0, sizeof(*n));
	n->p = *rp;
	n->data = (const char *)r->data + sizeof(*rp);
	n->rec = r->data;
	n->fd[0] = n->fd[1] = -1;
	r->data = NULL;
	return 0;
}

static struct rst_pipe *pipe_by_id(struct rst_ctx *c, uint32_t id)
{
	struct pipe_table *pt = KCSTATE(c, kind_pipe);

	for (int i = 0; pt && i < pt->n; i++)
		if (pt->e[i].p.id == id)
			return &pt->e[i];
	return NULL;
}

/* Made here, in ckpt, with its capacity and its data. */
static int make(struct rst_ctx *c, struct rst_pipe *p)
{
	if (pipe2(p->fd, O_CLOEXEC | O_NONBLOCK) ||
	    fcntl(p->fd[1], F_SETPIPE_SZ, p->p.capacity) < 0)
		return log_err(c->log, errno, "making pipe %u:", p->p.id);
	if (pipe_fill(p->fd[1], p->data, p->p.data_len))
		return log_err(c->log, errno, "filling pipe %u:", p->p.id);
	/* the ends' own flags are set by the processes that take them */
	if (fcntl(p->fd[0], F_SETFL, 0) || fcntl(p->fd[1], F_SETFL, 0))
		return log_err(c->log, errno, "pipe %u:", p->p.id);
	return 0;
}

static int pipe_take(struct rst_ctx *c, struct rst_task *t, uint32_t id, int flags,
		     long *fd)
{
	struct rst_pipe *p = pipe_by_id(c, id);
	int end = (flags & O_ACCMODE) == O_WRONLY, ours, ret;
	long pidfd;

	if (!p)
		return log_err(c->log, EBADMSG, "no PIPE %u", id);
	if (p->fd[0] < 0 && (ret = make(c, p)))
		return ret;
	/* a further description of the same end is opened anew */
	ours = p->fd[end];
	if (p->used[end]) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", p->fd[end]);
		ours = open(path, (end ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
		if (ours < 0)
			return log_err(c->log, errno, "reopening pipe %u:", id);
	}
	p->used[end] = true;
	ret = rcheck(&t->rm, &pidfd, "pidfd_open", SYS_pidfd_open, getpid(), 0);
	if (!ret)
		ret = rcheck(&t->rm, fd, "pidfd_getfd", SYS_pidfd_getfd, pidfd, ours, 0);
	if (!ret)
		rcall(&t->rm, &pidfd, SYS_close, pidfd);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     flags & ~O_ACCMODE);
	if (ours != p->fd[end])
		close(ours);
	return ret;
}

static void pipe_free_ctx(void *state)
{
	struct pipe_table *pt = state;

	for (int i = 0; i < pt->n; i++) {
		for (int j = 0; j < 2; j++)
			if (pt->e[i].fd[j] >= 0)
				close(pt->e[i].fd[j]);
		free(pt->e[i].rec);
	}
	free(pt->e);
	free(pt);
}

static void pipe_show(struct info_out *o, const struct rec *r)
{
	const struct rec_pipe *rp = r->data;

	info_u64(o, "id", rp->id);
	info_u64(o, "capacity", rp->capacity);
	info_u64(o, "bytes", rp->data_len);
}

const struct kind_ops kind_pipe = {
	.name = "pipe",
	.types = { REC_PIPE },
	.phase = PHASE_IMAGE,
	.load = pipe_load,
	.free_ctx = pipe_free_ctx,
	.show = pipe_show,
};

/* ---- the ends, as a file kind ---- */

static bool end_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	bool inside = false;

	return S_ISFIFO(p->st.st_mode) && !strncmp(p->link, "pipe:", 5) &&
	       pipe_inside(c, p->st.st_ino, &inside) == 0 && inside;
}

static int end_dump(struct cpt_ctx *c, const struct fd_probe *p,
		    struct rec_file *f, void **extra, uint32_t *extra_len)
{
	uint32_t id = 0;
	int ret = pipe_dump(c, p->st.st_ino, &id);

	f->rdev = id;	/* what rdev names for a pipe end */
	return ret;
}

static int end_load(struct rst_ctx *c, struct rst_file *f)
{
	if (f->f.extra_len || f->f.rdev > UINT32_MAX || !pipe_by_id(c, f->f.rdev))
		return log_err(c->log, EBADMSG, "FILE %u: no PIPE %llu", f->f.id,
			       (unsigned long long)f->f.rdev);
	return 0;
}

static int end_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		    long *fd)
{
	return pipe_take(c, t, f->f.rdev, f->f.flags, fd);
}

static void end_show(struct info_out *o, const struct rec_file *f,
		     const void *extra, uint32_t extra_len)
{
	info_u64(o, "pipe", f->rdev);
}

const struct file_ops file_pipe = {
	.kind = FILE_PIPE,
	.name = "pipe",
	.own_sharing = true,	/* pipe_take() opens further descriptions */
	.match = end_match,
	.dump = end_dump,
	.load = end_load,
	.open = end_open,
	.show = end_show,
};
