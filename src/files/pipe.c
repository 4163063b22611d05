/* pipe.c - pipes with both ends in the tree (PIPE): their capacity and the
 * data sitting in them, read without consuming it (tee() from a copy of
 * the read end), and put back.  At restart ckpt itself makes each pipe,
 * fills it, and every process takes its ends from ckpt with
 * pidfd_getfd(), so each end is one description wherever it is; an end
 * no one in the tree took (closed everywhere at checkpoint) closes with
 * ckpt's copy.  A pipe with an end held outside the tree is stdio held by
 * the caller (inherit.c) or refused.  Each end is a file kind (file_pipe) naming its PIPE; the
 * buffer's own code is pipebuf.c, shared with FIFOs. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../files.h"
#include "pipebuf.h"

/* ---- checkpoint ---- */

struct cpt_pipe {
	uint64_t ino;
	bool has_read, has_write;
	bool looked_outside;	/* held_outside() asked, answer in outside */
	bool outside;
	pid_t reader;		/* a process of the tree with the read end */
	int reader_fd;
	pid_t writer;		/* one with the write end, if no reader */
	int writer_fd;
	uint32_t id;		/* its PIPE record, once written */
};

/* The checkpoint's: every pipe the tree holds an end of, once scanned. */
struct pipe_cpt {
	struct cpt_pipe *pipes;
	int n;
	size_t cap;
	bool scanned;
};

static struct cpt_pipe *pipe_find(struct pipe_cpt *pc, uint64_t ino)
{
	for (int i = 0; i < pc->n; i++)
		if (pc->pipes[i].ino == ino)
			return &pc->pipes[i];
	return NULL;
}

static int note_end(struct cpt_ctx *c, pid_t pid, int fd, uint64_t ino)
{
	struct pipe_cpt *pc = kind_dump_state(c, &kind_pipe);
	struct cpt_pipe *p = pipe_find(pc, ino);
	char name[64], *info, *f;
	int acc;

	if (!p) {
		p = VEC_PUSH(pc->pipes, pc->n, pc->cap);
		if (!p)
			return log_err(c->log, ENOMEM, "pipe table:");
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
	} else if (acc == O_WRONLY && !p->has_write) {
		p->has_write = true;
		p->writer = pid;
		p->writer_fd = fd;
	}
	return 0;
}

/* Every pipe end every process of the tree holds. */
static int scan_pipe_ends(struct cpt_ctx *c)
{
	struct pipe_cpt *pc = kind_dump_state(c, &kind_pipe);
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
	pc->scanned = true;
	return ret;
}

static bool in_tree(struct cpt_ctx *c, pid_t pid)
{
	for (int i = 0; i < c->nr_tasks; i++)
		if (c->tasks[i]->pid == pid)
			return true;
	return false;
}

static bool holds_pipe(pid_t pid, uint64_t ino)
{
	char path[64], link[64], want[40];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return false;	/* gone, or no fds to look at */
	snprintf(want, sizeof(want), "pipe:[%llu]", (unsigned long long)ino);
	while (!found && (de = readdir(d))) {
		char name[32];

		if (de->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "fd/%.20s", de->d_name);
		found = !proc_readlink(pid, name, link, sizeof(link)) && !strcmp(link, want);
	}
	closedir(d);
	return found;
}

/* Whether a process outside the tree (and other than ckpt) holds the
 * pipe: an end found nowhere in the tree is then held there, else it
 * was closed everywhere and the pipe is the tree's alone. */
static bool held_outside(struct cpt_ctx *c, uint64_t ino)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/proc");

	if (!d)
		return true;	/* cannot tell: refused, as before */
	while (!found && (de = readdir(d))) {
		pid_t pid = atoi(de->d_name);

		if (pid > 0 && pid != getpid() && !in_tree(c, pid))
			found = holds_pipe(pid, ino);
	}
	closedir(d);
	return found;
}

/* A pipe is the tree's when both ends are in it, or when the missing one
 * is closed everywhere (a writer gone, say): it is then made at restart
 * with that end closed as soon as the processes have theirs. */
static int pipe_inside(struct cpt_ctx *c, uint64_t ino, bool *inside)
{
	struct pipe_cpt *pc = kind_dump_state(c, &kind_pipe);
	struct cpt_pipe *p;
	int ret = pc->scanned ? 0 : scan_pipe_ends(c);

	p = pipe_find(pc, ino);
	*inside = false;
	if (!p || (!p->has_read && !p->has_write))
		return ret;
	if (p->has_read && p->has_write) {
		*inside = true;
		return ret;
	}
	if (!p->looked_outside) {
		p->outside = held_outside(c, ino);
		p->looked_outside = true;
	}
	*inside = !p->outside;
	return ret;
}

/* A read end for the buffer: the tree's own, or, with no reader left, one
 * opened through the writer's fd (a pipe opens either way by /proc). */
static int pipe_read_fd(const struct cpt_pipe *p)
{
	char path[64];

	if (p->has_read)
		return pipebuf_holder_fd(p->reader, p->reader_fd);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->writer, p->writer_fd);
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

/* The pipe's buffer, read through a copy of a read end the tree holds. */
static int pipe_dump(struct cpt_ctx *c, uint64_t ino, uint32_t *id)
{
	struct cpt_pipe *p = pipe_find(kind_dump_state(c, &kind_pipe), ino);
	int rfd, ret, fd;
	pid_t pid;

	if (p->id) {
		*id = p->id;
		return 0;
	}
	rfd = pipe_read_fd(p);
	pid = p->has_read ? p->reader : p->writer;
	fd = p->has_read ? p->reader_fd : p->writer_fd;
	if (rfd < 0)
		return log_err(c->log, errno, "pid %d fd %d: reading its pipe:", pid, fd);
	ret = pipebuf_dump(c, REC_PIPE, rfd, pid, fd, &p->id);
	close(rfd);
	*id = p->id;
	return ret;
}

static void pipe_dump_free(struct cpt_ctx *c, void *state)
{
	struct pipe_cpt *pc = state;

	free(pc->pipes);
}

/* ---- restart ---- */

static int pipe_rec_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	return pipebuf_load(c, &kind_pipe, r, "PIPE");
}

/* Made here, in ckpt, with its capacity and its data. */
static int pipe_make(struct rst_ctx *c, struct rst_pipebuf *p)
{
	if (pipe2(p->fd, O_CLOEXEC | O_NONBLOCK) ||
	    fcntl(p->fd[1], F_SETPIPE_SZ, p->p.capacity) < 0)
		return log_err(c->log, errno, "making pipe %u:", p->p.id);
	if (pipebuf_fill(p->fd[1], p->data, p->p.data_len))
		return log_err(c->log, errno, "filling pipe %u:", p->p.id);
	/* the ends' own flags are set by the processes that take them */
	if (fcntl(p->fd[0], F_SETFL, 0) || fcntl(p->fd[1], F_SETFL, 0))
		return log_err(c->log, errno, "pipe %u:", p->p.id);
	return 0;
}

static int pipe_take(struct rst_ctx *c, struct rst_task *t, uint32_t id, int flags,
		     long *fd)
{
	struct rst_pipebuf *p = pipebuf_by_id(c, &kind_pipe, id);
	int end = (flags & O_ACCMODE) == O_WRONLY, ours, ret;

	if (!p)
		return log_err(c->log, EBADMSG, "no PIPE %u", id);
	if (p->fd[0] < 0 && (ret = pipe_make(c, p)))
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
	ret = files_give(t, ours, fd);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     flags & ~O_ACCMODE);
	if (ours != p->fd[end])
		close(ours);
	return ret;
}

static const struct rec_desc pipe_recs[] = {
	{ REC_PIPE, "PIPE", sizeof(struct rec_pipe) },
	{ 0 }
};

static int pipe_restore_end(struct rst_ctx *c)
{
	return pipebuf_restore_end(c, &kind_pipe);
}

const struct kind_ops kind_pipe = {
	.name = "pipe",
	.recs = pipe_recs,
	.phase = PHASE_IMAGE,
	.dump_size = sizeof(struct pipe_cpt),
	.dump_free = pipe_dump_free,
	.load = pipe_rec_load,
	.restore_end = pipe_restore_end,
	.free_ctx = pipebuf_free_ctx,
	.show = pipebuf_show,
};

/* ---- the ends, as a file kind ---- */

static bool end_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	struct pipe_cpt *pc = kind_dump_state(c, &kind_pipe);
	bool inside = false;

	if (!S_ISFIFO(p->st.st_mode) || strncmp(p->link, "pipe:", 5))
		return false;
	/* an end in flight on a unix socket of the tree (ckpt's own copy of
	 * it) is the tree's too */
	if (p->via_pid && ((!pc->scanned && scan_pipe_ends(c)) ||
			   note_end(c, p->pid, p->fd, p->st.st_ino)))
		return false;
	return pipe_inside(c, p->st.st_ino, &inside) == 0 && inside;
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
	if (f->f.extra_len || f->f.rdev > UINT32_MAX ||
	    !pipebuf_by_id(c, &kind_pipe, f->f.rdev))
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
	.match = end_match,
	.dump = end_dump,
	.load = end_load,
	.open = end_open,
	.show = end_show,
};
