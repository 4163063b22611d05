/* fdtable_restore.c - the files kind's restart: the image's descriptions
 * opened once, by the first process that has one, and taken by the
 * others (pidfd_getfd), then each process's fds put in place
 * (fdtable.c: the file kinds). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../files.h"
#include "fdtable.h"
#include "ns_pid.h"

#define MAX_FDS (1 << 20)

/* The image's descriptions, for the whole tree: the first process that
 * has one opens it (the holder); the others take the very same
 * description from the holder with pidfd_getfd(). */
struct file_table {
	struct rst_file *files;	/* by objref, increasing */
	uint32_t n;
	size_t cap;
	struct id_table ids;	/* objref: index in files */
	/* the last FILE while FILE_MORE records still owe it state: what
	 * they gave so far (its kind's load waits for the whole) */
	bool pending;
	uint32_t got;
};

struct fd_table {		/* a process's */
	struct rec_fd *fds;	/* by fd, increasing */
	uint32_t n;
	size_t cap;
};

#define MAX_PASS 2

static int load_file(struct rst_ctx *c, struct file_table *ft, struct rec *r)
{
	const struct rec_file *f = r->data;
	struct rst_file *nf;
	uint32_t in_rec;
	int ret = rec_want(c->log, r, sizeof(*f), "FILE");

	if (ret)
		return ret;
	/* state past one record's room is all in FILE_MORE records */
	in_rec = f->extra_len > MAX_FILE_EXTRA ? 0 : f->extra_len;
	if (!files_kind_of(f->kind) || f->extra_len > MAX_FILE_STATE ||
	    f->path_len > CKPT_PATH_MAX ||
	    r->data_len != sizeof(*f) + f->path_len + in_rec ||
	    ft->n >= MAX_FDS || f->id == 0 ||
	    (ft->n && f->id <= ft->files[ft->n - 1].f.id))
		return log_err(c->log, EBADMSG, "bad FILE record %llu",
			       (unsigned long long)r->index);
	if (VEC_ROOM(ft->files, ft->n, ft->cap))
		return log_err(c->log, ENOMEM, "files:");
	nf = &ft->files[ft->n];
	memset(nf, 0, sizeof(*nf));
	nf->f = *f;
	nf->ops = files_kind_of(f->kind);
	nf->path = rec_str(r, sizeof(*f), f->path_len);
	if (!nf->path)
		return log_err(c->log, EBADMSG, "FILE %u: bad path", f->id);
	nf->extra = (const char *)r->data + sizeof(*f) + f->path_len;
	nf->rec = r->data;
	r->data = NULL;
	ft->n++;	/* from here on freed with the table */
	if (id_add(&ft->ids, nf->f.id, ft->n - 1))
		return log_err(c->log, ENOMEM, "files:");
	if (in_rec < f->extra_len) {
		ft->pending = true;
		ft->got = 0;
		return 0;
	}
	return nf->ops->load ? nf->ops->load(c, nf) : 0;
}

/* FILE_MORE: state of the last FILE, appended to its payload */
static int load_file_more(struct rst_ctx *c, struct file_table *ft, struct rec *r)
{
	struct rst_file *nf = ft->n ? &ft->files[ft->n - 1] : NULL;
	size_t head = nf ? sizeof(nf->f) + nf->f.path_len : 0;
	char *p;

	if (!ft->pending || !r->data_len || r->data_len > FILE_MORE_CHUNK ||
	    r->data_len > nf->f.extra_len - ft->got)
		return log_err(c->log, EBADMSG, "bad FILE_MORE record %llu",
			       (unsigned long long)r->index);
	/* grown by what the image holds, never by what it claims */
	p = realloc(nf->rec, head + ft->got + r->data_len);
	if (!p)
		return log_err(c->log, ENOMEM, "FILE %u:", nf->f.id);
	memcpy(p + head + ft->got, r->data, r->data_len);
	ft->got += r->data_len;
	nf->rec = p;
	nf->path = p + sizeof(nf->f);
	nf->extra = p + head;
	if (ft->got < nf->f.extra_len)
		return 0;
	ft->pending = false;
	return nf->ops->load ? nf->ops->load(c, nf) : 0;
}

static int file_short(struct rst_ctx *c, const struct file_table *ft)
{
	const struct rst_file *f = &ft->files[ft->n - 1];

	return log_err(c->log, EBADMSG, "FILE %u: %u of its %u bytes of %s state",
		       f->f.id, ft->got, f->f.extra_len, f->ops->name);
}

static struct rst_file *file_by_id(const struct file_table *ft, uint32_t id)
{
	long i = ft ? id_find(&ft->ids, id) : -1;

	return i < 0 ? NULL : &ft->files[i];
}

struct rst_file *files_by_id(struct rst_ctx *c, uint32_t id)
{
	const struct file_table *ft = KCSTATE(c, kind_files);
	struct rst_file *f = file_by_id(ft, id);

	/* not loaded by its kind yet */
	return f && ft->pending && f == &ft->files[ft->n - 1] ? NULL : f;
}

bool files_written(struct rst_ctx *c, const char *path)
{
	const struct file_table *ft = KCSTATE(c, kind_files);

	for (uint32_t i = 0; ft && i < ft->n; i++) {
		uint32_t fl = ft->files[i].f.flags;

		if (!(fl & O_PATH) && (fl & O_ACCMODE) != O_RDONLY &&
		    !strcmp(ft->files[i].path, path))
			return true;
	}
	return false;
}

static int load_fd(struct rst_ctx *c, const struct file_table *ft,
		   struct fd_table *s, struct rec *r)
{
	const struct rec_fd *fd = r->data;

	if (r->data_len != sizeof(*fd) || fd->cloexec > 1 || fd->reserved ||
	    fd->fd >= MAX_FDS || !file_by_id(ft, fd->file_id) ||
	    (s->n && s->fds[s->n - 1].fd >= fd->fd))
		return log_err(c->log, EBADMSG, "bad FD record %llu",
			       (unsigned long long)r->index);
	/* restart's stdio, never another fd it has (a namespace's, a
	 * library caller's) */
	if (file_by_id(ft, fd->file_id)->ops == &file_inherit && fd->fd > 2)
		return log_err(c->log, EBADMSG, "bad FD record %llu: fd %u is no stdio to inherit",
			       (unsigned long long)r->index, fd->fd);
	if (VEC_ROOM(s->fds, s->n, s->cap))
		return log_err(c->log, ENOMEM, "fds:");
	s->fds[s->n++] = *fd;
	file_by_id(ft, fd->file_id)->has_fd = true;
	return 0;
}

int files_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct file_table *ft = kind_ctx_state(c, &kind_files, sizeof(*ft));
	struct fd_table *s = kind_state(t, &kind_files, sizeof(*s));

	if (!ft || !s)
		return log_err(c->log, ENOMEM, "files state:");
	if (r->type == REC_FD && (t->t.flags & TASK_SHARES_FILES))
		return log_err(c->log, EBADMSG, "pid %d: FD record, but it shares its parent's table",
			       t->pid);
	if (r->type == REC_FILE_MORE)
		return load_file_more(c, ft, r);
	if (ft->pending)
		return file_short(c, ft);
	return r->type == REC_FILE ? load_file(c, ft, r) : load_fd(c, ft, s, r);
}

int files_check(struct rst_ctx *c, struct rst_task *t)
{
	const struct file_table *ft = KCSTATE(c, kind_files);
	const struct fd_table *s = KSTATE(t, kind_files);

	if (ft && ft->pending)
		return file_short(c, ft);
	for (uint32_t i = 0; s && c->here && i < s->n; i++) {
		const struct rst_file *f = file_by_id(ft, s->fds[i].file_id);
		int ret = f->ops->check ? f->ops->check(c, f) : 0;

		if (ret)
			return ret;
	}
	return 0;
}

static const struct fd_table *fd_table_of(struct rst_ctx *c, struct rst_task *t)
{
	/* a process sharing its parent's table has none of its own */
	return KSTATE(rst_owner(c, t, TASK_SHARES_FILES), kind_files);
}

int files_fd_of(struct rst_ctx *c, struct rst_task *t, uint32_t id)
{
	const struct fd_table *s = fd_table_of(c, t);

	for (uint32_t i = 0; s && i < s->n; i++)
		if (s->fds[i].file_id == id)
			return s->fds[i].fd;
	return -1;
}

static int rec_fd_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct rec_fd *)a)->fd, y = ((const struct rec_fd *)b)->fd;

	return x < y ? -1 : x > y;
}

/* @fd's slot in @s, NULL if none. */
static const struct rec_fd *fd_slot(const struct fd_table *s, int fd)
{
	struct rec_fd key = { .fd = fd };

	if (!s || !s->n || fd < 0)
		return NULL;
	return bsearch(&key, s->fds, s->n, sizeof(key), rec_fd_cmp);
}

uint32_t files_id_at(struct rst_ctx *c, struct rst_task *t, int fd)
{
	const struct rec_fd *d = fd_slot(fd_table_of(c, t), fd);

	return d ? d->file_id : 0;
}

static bool fd_kept(const struct file_table *ft, const struct fd_table *s,
		    int fd, int img_fd)
{
	const struct rec_fd *d = fd == img_fd ? NULL : fd_slot(s, fd);

	if (fd == img_fd)
		return true;
	return d && !file_by_id(ft, d->file_id)->ops->open;
}

/* Close what the puppet inherited from us, but the image and stdio the
 * restored process takes from its caller: in one batch of calls where
 * none is open (a tiny restart closed seven, a stop each). */
static int close_inherited(struct rst_task *t, const struct file_table *ft,
			   const struct fd_table *s)
{
	bool batch = !t->rm.batch;
	char path[64];
	struct dirent *de;
	int ret, end;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", t->pid);
	d = opendir(path);
	if (!d)
		return log_err(t->rm.log, errno, "listing puppet fds:");
	ret = batch ? rst_batch_begin(t, &t->rm) : 0;
	while (!ret && (de = readdir(d))) {
		int fd = atoi(de->d_name);

		/* (and the pidfd on ckpt files_give() takes them through) */
		if (de->d_name[0] == '.' || fd_kept(ft, s, fd, t->img_fd) ||
		    (fd && fd == ns_ckpt_fd(t)))
			continue;
		ret = rcheck(&t->rm, NULL, "close", SYS_close, fd);
	}
	closedir(d);
	end = batch ? rst_batch_end(t, &t->rm, !ret) : 0;
	return ret ? ret : end;
}

int files_open_path(struct rst_task *t, const char *path, int flags, long *fd)
{
	uint64_t addr;
	int ret = rst_scratch_put(t, 0, path, strlen(path) + 1, &addr);

	flags &= ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY);
	/* a 64-bit open adds O_LARGEFILE, which a 32-bit process's file
	 * has only if it asked for it (and F_SETFL cannot take it away) */
	if (!ret && task_ia32(t))
		ret = remote_call32(&t->rm, fd, arch_nr32_openat, AT_FDCWD, addr, flags, 0, 0, 0);
	else if (!ret)
		ret = remote_call(&t->rm, fd, SYS_openat, AT_FDCWD, addr, flags, 0, 0, 0);
	if (!ret && *fd < 0)
		return log_err(t->rm.log, (int)-*fd, "pid %d: reopening %s:", t->pid,
			       path);
	return ret;
}

/* @pid (outer) as @t's pid namespace numbers it (ns_pid_in()). */
static int take_from(struct rst_task *t, pid_t pid, int theirs, long *fd)
{
	long pidfd;
	int ret = rcheck(&t->rm, &pidfd, "pidfd_open", SYS_pidfd_open, pid, 0);

	if (ret)
		return ret;
	ret = rcheck(&t->rm, fd, "pidfd_getfd", SYS_pidfd_getfd, pidfd, theirs, 0);
	rcall(&t->rm, &pidfd, SYS_close, pidfd);
	return ret;
}

int files_copy(struct rst_ctx *c, uint32_t id, int *ours)
{
	const struct rst_file *f = files_by_id(c, id);
	pid_t pid = f ? f->holder : 0;
	int fd = f ? f->holder_fd : -1;
	long pidfd;

	/* a description the process keeps (stdio) has no holder: any fd */
	for (int i = 0; f && !pid && i < c->nr_tasks; i++)
		if (!(c->tasks[i]->t.flags & TASK_ZOMBIE) &&
		    (fd = files_fd_of(c, c->tasks[i], id)) >= 0)
			pid = c->tasks[i]->pid;
	if (!pid)
		return log_err(c->log, ENOENT, "FILE %u: no process has it", id);
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	*ours = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (pidfd >= 0)
		close(pidfd);
	return *ours < 0 ? log_err(c->log, errno, "FILE %u: taking it from pid %d:", id, pid) : 0;
}

/* A puppet that has a pidfd on ckpt (one of a tree with nested pid
 * namespaces, where ckpt has no pid) takes it through that. */
int files_give(struct rst_task *t, int ours, long *fd)
{
	if (ns_ckpt_fd(t))
		return ns_ckpt_give(t, ours, fd);
	return take_from(t, getpid(), ours, fd);
}

static int by_file_cmp(const void *a, const void *b, void *arg)
{
	const struct fd_table *s = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t fx = s->fds[x].file_id, fy = s->fds[y].file_id;

	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* @s's fds by the description they name, each one's in fd order, as
 * indexes into s->fds in *@by: a description's fds are found without
 * going through all of them (100k fds, 100k descriptions).  0 or
 * -ENOMEM. */
static int fds_by_file(const struct fd_table *s, uint32_t **by)
{
	*by = s->n ? malloc(s->n * sizeof(**by)) : NULL;
	if (s->n && !*by)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n; i++)
		(*by)[i] = i;
	if (s->n)
		qsort_r(*by, s->n, sizeof(**by), by_file_cmp, (void *)s);
	return 0;
}

/* Description @theirs of @pid, which @t cannot name, taken by ckpt and
 * given to @t. */
static int give_from(struct rst_ctx *c, struct rst_task *t, pid_t pid, int theirs, long *fd)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0);
	int ours = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, theirs, 0);
	int ret = ours < 0 ? log_err(c->log, errno, "pid %d: taking fd %d of pid %d:", t->pid,
				    theirs, pid)
			   : files_give(t, ours, fd);

	if (pidfd >= 0)
		close(pidfd);
	if (ours >= 0)
		close(ours);
	return ret;
}

/* The @n fds of this task naming description @f: s->fds[@by[0..n)]. */
static int install_desc(struct rst_ctx *c, struct rst_task *t,
			const struct fd_table *s, const uint32_t *by, uint32_t n,
			struct rst_file *f)
{
	bool keep = !f->ops->open, tmp_used = false;
	long tmp = -1;
	int ret = 0;

	if (!n)
		return 0;
	if (f->holder && ns_pid_in(c, t, f->holder))
		ret = take_from(t, ns_pid_in(c, t, f->holder), f->holder_fd, &tmp);
	else if (f->holder)	/* outside its pid namespace: through ckpt */
		ret = give_from(c, t, f->holder, f->holder_fd, &tmp);
	else if (!keep)
		ret = f->ops->open(c, t, f, &tmp);
	for (uint32_t i = 0; i < n && !ret; i++) {
		const struct rec_fd *d = &s->fds[by[i]];

		if (keep || (long)d->fd == tmp) {
			tmp_used |= (long)d->fd == tmp;
			ret = rcheck(&t->rm, NULL, "fcntl(F_SETFD)", SYS_fcntl, d->fd,
				     F_SETFD, d->cloexec ? FD_CLOEXEC : 0);
		} else {
			ret = rcheck(&t->rm, NULL, "dup3", SYS_dup3, tmp, d->fd,
				     d->cloexec ? O_CLOEXEC : 0);
		}
		if (!ret && !f->holder && !keep) {
			f->holder = t->pid;
			f->holder_fd = d->fd;
		}
	}
	if (tmp >= 0 && !tmp_used)
		rcall(&t->rm, &tmp, SYS_close, tmp);
	return ret;
}

int files_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct file_table *ft = KCSTATE(c, kind_files);
	struct fd_table empty = { 0 }, *s = KSTATE(t, kind_files);
	uint32_t *by = NULL;
	int ret;

	if (t->t.flags & TASK_SHARES_FILES)
		return 0;	/* its parent's table, which its parent restores */
	if (!s)
		s = &empty;
	ret = close_inherited(t, ft, s);
	if (!ret && fds_by_file(s, &by))
		ret = log_err(c->log, ENOMEM, "fds:");
	/* both by objref: each description's fds follow the last one's */
	for (int pass = 0; pass <= MAX_PASS; pass++)
		for (uint32_t i = 0, j = 0, k; ft && i < ft->n && !ret; i++, j = k) {
			struct rst_file *f = &ft->files[i];

			for (k = j; k < s->n && s->fds[by[k]].file_id == f->f.id; k++)
				;
			if (f->ops->pass == pass)
				ret = install_desc(c, t, s, by + j, k - j, f);
		}
	free(by);
	return ret;
}

void files_free(struct rst_task *t, void *state)
{
	struct fd_table *s = state;

	free(s->fds);
	free(s);
}

void files_free_ctx(void *state)
{
	struct file_table *ft = state;

	for (uint32_t i = 0; i < ft->n; i++) {
		if (ft->files[i].ops->free)
			ft->files[i].ops->free(&ft->files[i]);
		free(ft->files[i].rec);
	}
	free(ft->files);
	id_table_free(&ft->ids);
	free(ft);
}
