/* pipebuf.c - the buffer of a pipe or a FIFO, one implementation for
 * pipe.c and fifo.c.
 *
 * Checkpoint: the bytes in it are copied out through a second pipe with
 * tee(), which leaves them where they are, and written with its capacity
 * as one PIPE or FIFO record.  Restart: the record is checked and kept
 * in its kind's table for whoever makes the pipe or opens the FIFO,
 * which puts the bytes back with pipebuf_fill().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pipebuf.h"

#define MAX_PIPE_DATA	(CKPT_REC_MAX_META - sizeof(struct rec_pipe))

/* ---- checkpoint ---- */

int pipebuf_holder_fd(pid_t pid, int fd)
{
	long pidfd = syscall(SYS_pidfd_open, pid, 0);
	int ours, err;

	if (pidfd < 0)
		return -1;
	ours = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = errno;
	close(pidfd);
	errno = err;
	return ours;
}

/* The bytes in the pipe (or FIFO) @rfd reads, copied out through a
 * second pipe with tee(), which leaves them where they are. */
static int pipebuf_peek(struct cpt_ctx *c, int rfd, pid_t pid, int fd,
			char **data, uint32_t *len, uint32_t *cap)
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

int pipebuf_dump(struct cpt_ctx *c, uint32_t type, int rfd, pid_t pid, int fd,
		 uint32_t *id)
{
	struct rec_pipe rp = { 0 };
	char *data;
	int ret = pipebuf_peek(c, rfd, pid, fd, &data, &rp.data_len, &rp.capacity);

	if (ret)
		return ret;
	rp.id = *id = ++c->next_objref;
	ret = iw_begin(&c->w, type, sizeof(rp) + rp.data_len);
	if (!ret)
		ret = iw_write(&c->w, &rp, sizeof(rp));
	if (!ret)
		ret = iw_write(&c->w, data, rp.data_len);
	if (!ret)
		ret = iw_end(&c->w);
	free(data);
	return ret;
}

/* ---- restart ---- */

struct pipebuf_table {
	struct rst_pipebuf *e;
	int n;
	size_t cap;
	struct id_table ids;	/* index in e, by id */
};

static int pipebuf_rec_check(struct ckpt_log *log, const struct rec *r,
			     const char *what)
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

int pipebuf_load(struct rst_ctx *c, const struct kind_ops *k, struct rec *r,
		 const char *what)
{
	struct pipebuf_table *pt = kind_ctx_state(c, k, sizeof(*pt));
	const struct rec_pipe *rp = r->data;
	int ret = pipebuf_rec_check(c->log, r, what);

	if (!pt)
		return log_err(c->log, ENOMEM, "%s table:", what);
	if (ret)
		return ret;
	if (id_find(&pt->ids, rp->id) >= 0)
		return log_err(c->log, EBADMSG, "%s %u twice", what, rp->id);
	if (VEC_ROOM(pt->e, pt->n, pt->cap) || id_add(&pt->ids, rp->id, pt->n))
		return log_err(c->log, ENOMEM, "%s table:", what);
	pt->e[pt->n++] = (struct rst_pipebuf){
		.p = *rp, .rec = r->data, .fd = { -1, -1 },
		.data = (const char *)r->data + sizeof(*rp) };
	r->data = NULL;
	return 0;
}

struct rst_pipebuf *pipebuf_by_id(struct rst_ctx *c, const struct kind_ops *k,
				  uint64_t id)
{
	struct pipebuf_table *pt = c->kind_state[kind_index(k)];
	long i = pt && id <= UINT32_MAX ? id_find(&pt->ids, id) : -1;

	return i < 0 ? NULL : &pt->e[i];
}

int pipebuf_fill(int fd, const char *data, uint32_t len)
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

int pipebuf_restore_end(struct rst_ctx *c, const struct kind_ops *k)
{
	struct pipebuf_table *pt = KCSTATE(c, *k);

	for (int i = 0; pt && i < pt->n; i++)
		for (int j = 0; j < 2; j++) {
			if (pt->e[i].fd[j] >= 0)
				close(pt->e[i].fd[j]);
			pt->e[i].fd[j] = -1;
		}
	return 0;
}

void pipebuf_free_ctx(void *state)
{
	struct pipebuf_table *pt = state;

	for (int i = 0; i < pt->n; i++) {
		for (int j = 0; j < 2; j++)
			if (pt->e[i].fd[j] >= 0)
				close(pt->e[i].fd[j]);
		free(pt->e[i].rec);
	}
	free(pt->e);
	id_table_free(&pt->ids);
	free(pt);
}

void pipebuf_show(struct info_out *o, const struct rec *r)
{
	const struct rec_pipe *rp = r->data;

	info_u64(o, "id", rp->id);
	info_u64(o, "capacity", rp->capacity);
	info_u64(o, "bytes", rp->data_len);
}
