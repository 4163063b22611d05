/* fdtable.c - the fd table (FD) and the open file descriptions it points
 * to (FILE), each written once however many fds share it (the seeds'
 * objref; kcmp(KCMP_FILE) tells which fds share a description).  What
 * each description is, is its file kind's business (files.h).
 *
 * An fd no kind claims fails the checkpoint naming pid, fd and what it
 * is, unless the user asked to skip such fds (CKPT_SKIP_UNSUPPORTED):
 * then they are not restored.
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
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../arch/arch.h"
#include "../files.h"
#include "../model.h"
#include "cuda.h"
#include "ns.h"
#include "ns_pid.h"

#define MAX_FDS (1 << 20)

/* ---- checkpoint ---- */

/* A file description already in the image, found again through kcmp. */
struct cpt_file {
	pid_t pid;
	int fd;
	uint32_t id;
};

/* The descriptions written so far whose files have one inode key, in
 * kcmp's order of descriptions: one is found among n in log n kcmp
 * calls (a scan of them made 19,000 fds on /dev/null take 18 minutes). */
struct file_group {
	struct cpt_file *f;
	size_t n, cap;
};

/* The checkpoint's: every description written so far, by inode key
 * (descriptions of one file are few; a process's fds are many: only
 * kcmp tells them apart). */
struct files_cpt {
	struct file_group *groups;
	size_t n, cap;
	struct id_table by_ino;	/* inode key -> group */
	struct fd_note *notes;	/* every fd written (files.h) */
	size_t nn, capn;
};

static uint32_t ino_key(const struct stat *st)
{
	return (uint32_t)(st->st_ino ^ (st->st_ino >> 32) ^ st->st_dev);
}

static const struct file_ops *const file_kinds[] = {
	&file_pipe,	/* before inherit: a pipe inside the tree at fd 0-2 */
	&file_tty,	/* before inherit: a pty inside the tree, the job's tty */
	&file_fifo,	/* and a FIFO, reopened by its name */
	&file_unix,	/* the same for sockets (not those connected outside) */
	&file_packet,	/* before inherit: never a caller's stdio */
	&file_netlink,
	&file_inherit,	/* before inet: a socket at fd 0-2 is the caller's */
	&file_reg,
	&file_memfd,
	&file_deleted,
	&file_dir,
	&file_chr,
	&file_eventfd,
	&file_timerfd,
	&file_signalfd,
	&file_epoll,
	&file_inotify,
	&file_inet,
	&file_pidfd,
	&file_fanotify,
	&file_nsfs,
};
#define NR_FILE_KINDS (int)(sizeof(file_kinds) / sizeof(file_kinds[0]))

static const struct file_ops *ops_for_kind(uint32_t kind)
{
	for (int i = 0; i < NR_FILE_KINDS; i++)
		if (file_kinds[i]->kind == kind)
			return file_kinds[i];
	return NULL;
}

/* @fd of process @pid: @t's, or ckpt's own copy of an fd in flight. */
static int probe_in(struct cpt_ctx *c, struct cpt_task *t, pid_t pid, int fd,
		    struct fd_probe *p, char **fdinfo)
{
	char name[96], *q;
	int ret;

	memset(p, 0, sizeof(*p));
	p->task = t;
	p->pid = pid;
	p->fd = fd;
	snprintf(name, sizeof(name), "fd/%d", fd);
	ret = proc_readlink(pid, name, p->link, sizeof(p->link));
	snprintf(name, sizeof(name), "/proc/%d/fd/%d", pid, fd);
	if (!ret && stat(name, &p->st))
		ret = -errno;
	snprintf(name, sizeof(name), "fdinfo/%d", fd);
	if (!ret)
		ret = proc_read(pid, name, fdinfo, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d:", pid, fd);
	p->fdinfo = *fdinfo;
	q = strstr(*fdinfo, "pos:");
	if (q)
		p->pos = strtoull(q + 4, NULL, 10);
	q = strstr(*fdinfo, "flags:");
	if (!q)
		return log_err(c->log, EINVAL, "pid %d fd %d: no flags in fdinfo",
			       t->pid, fd);
	p->flags = strtoul(q + 6, NULL, 8);
	return 0;
}

static int probe(struct cpt_ctx *c, struct cpt_task *t, int fd,
		 struct fd_probe *p, char **fdinfo)
{
	return probe_in(c, t, t->pid, fd, p, fdinfo);
}

bool fd_outside_mounts(struct cpt_ctx *c, const struct fd_probe *p)
{
	const char *q = strstr(p->fdinfo ? p->fdinfo : "", "mnt_id:");
	mode_t m = p->st.st_mode & S_IFMT;
	char key[32], *mi = NULL;
	bool found;

	if (!c->host_ns || !NS_OWN(c, NS_MNT) || !q || p->link[0] != '/' ||
	    (m != S_IFREG && m != S_IFDIR && m != S_IFCHR && m != S_IFBLK && m != S_IFIFO))
		return false;
	/* a line of mountinfo starts with the mount's id */
	snprintf(key, sizeof(key), "\n%lu ", strtoul(q + 7, NULL, 10));
	if (proc_read(p->pid, "mountinfo", &mi, NULL))
		return false;	/* the file's kind says what is wrong */
	found = !strncmp(mi, key + 1, strlen(key + 1)) || strstr(mi, key);
	free(mi);
	return !found;
}

static const struct file_ops *probe_kind(struct cpt_ctx *c,
					 const struct fd_probe *p)
{
	for (int i = 0; i < NR_FILE_KINDS; i++)
		if (file_kinds[i]->match(c, p))
			return file_kinds[i];
	return NULL;
}


/* FILE, then its state past one record's room in FILE_MORE chunks */
static int write_file_rec(struct cpt_ctx *c, const struct rec_file *f,
			  const char *path, const char *extra)
{
	uint32_t in_rec = f->extra_len > MAX_FILE_EXTRA ? 0 : f->extra_len;
	int ret = iw_begin(&c->w, REC_FILE, sizeof(*f) + f->path_len + in_rec);

	if (!ret)
		ret = iw_write(&c->w, f, sizeof(*f));
	if (!ret)
		ret = iw_write(&c->w, path, f->path_len);
	if (!ret && in_rec)
		ret = iw_write(&c->w, extra, in_rec);
	if (!ret)
		ret = iw_end(&c->w);
	for (uint32_t off = in_rec; !ret && off < f->extra_len;) {
		uint32_t n = f->extra_len - off;

		n = n > FILE_MORE_CHUNK ? FILE_MORE_CHUNK : n;
		ret = iw_begin(&c->w, REC_FILE_MORE, n);
		if (!ret)
			ret = iw_write(&c->w, extra + off, n);
		if (!ret)
			ret = iw_end(&c->w);
		off += n;
	}
	return ret;
}

static int write_file(struct cpt_ctx *c, const struct fd_probe *p,
		      const struct file_ops *ops, struct rec_file *f)
{
	void *extra = NULL;
	int ret;

	f->kind = ops->kind;
	f->flags = p->flags & ~O_CLOEXEC;	/* an fd's flag, kept in FD */
	f->mode = p->st.st_mode;
	f->pos = p->pos;
	f->size = p->st.st_size;
	f->mtime_ns = p->st.st_mtim.tv_sec * 1000000000LL + p->st.st_mtim.tv_nsec;
	f->rdev = p->st.st_rdev;
	ret = ops->dump ? ops->dump(c, p, f, &extra, &f->extra_len) : 0;
	if (!ret && f->extra_len > MAX_FILE_STATE)
		ret = log_err(c->log, E2BIG, "pid %d fd %d: %u bytes of %s state",
			      p->pid, p->fd, f->extra_len, ops->name);
	if (ret) {
		free(extra);
		return ret;
	}
	/* the objref is taken only now: what the kind wrote came first */
	f->id = ++c->next_objref;
	f->path_len = strlen(p->link) + 1;
	ret = write_file_rec(c, f, p->link, extra);
	free(extra);
	return ret;
}

/* A pipe with an end outside the tree is refused rather than given
 * something else at restart: above stdio there is no counterpart the
 * way restart's own fds 0-2 stand in for the caller's. */
static const char *why_not(const struct fd_probe *p)
{
	return strncmp(p->link, "pipe:", 5) ? "" :
	       ", a pipe whose other end is outside the tree (only fds 0-2 are taken from restart's caller)";
}

/* The description behind the fd, written now: 0 and its id, 0 and id 0
 * if it is skipped (unsupported, and the user said so), or -errno. */
static int dump_file(struct cpt_ctx *c, const struct fd_probe *p, uint32_t *id)
{
	const struct file_ops *ops = probe_kind(c, p);
	struct rec_file f = { 0 };
	int ret;

	*id = 0;
	/* a GPU left out would crash the restored process: never skipped */
	if (!ops && cuda_device_path(p->link))
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: %s, a CUDA device: %s",
			       p->pid, p->fd, p->link, cuda_why_not(c, p->pid));
	/* a message loses no fd: the reader counts on them */
	if (!ops && p->via_pid)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: a file in flight on this unix socket (SCM_RIGHTS) is of an unsupported kind: %s",
			       p->via_pid, p->via_fd, p->link);
	if (!ops && (c->flags & CKPT_SKIP_UNSUPPORTED)) {
		log_warn(c->log, "pid %d fd %d: skipping unsupported %s", p->pid,
			 p->fd, p->link);
		return 0;
	}
	if (!ops)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: unsupported kind of file %s%s (use --skip-unsupported to leave it out)",
			       p->pid, p->fd, p->link, why_not(p));
	/* opened by path at restart, inside the container: where it is not */
	if (ops != &file_inherit && fd_outside_mounts(c, p))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: %s is on a mount outside the container's mount namespace, where restart could not open it",
			       p->pid, p->fd, p->link);
	ret = write_file(c, p, ops, &f);
	if (!ret)
		*id = f.id;
	return ret;
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
	if (*n)
		qsort(*out, *n, sizeof(int), fd_cmp);
	return 0;
}

/* Where the description behind @pid's @fd is, or would go, in @g: its
 * index, *found if it is there.  kcmp orders descriptions (0 equal, 1
 * less, 2 greater); one it cannot compare (gone meanwhile) is taken
 * for a new one. */
static size_t group_find(const struct file_group *g, pid_t pid, int fd, bool *found)
{
	size_t lo = 0, hi = g->n;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		long r = syscall(SYS_kcmp, g->f[mid].pid, pid, KCMP_FILE, g->f[mid].fd, fd);

		if (r == 0) {
			*found = true;
			return mid;
		}
		if (r == 1)
			lo = mid + 1;
		else if (r == 2)
			hi = mid;
		else
			return g->n;
	}
	return lo;
}

/* The id of the description behind pid's fd if the image has it already
 * (from this process or an earlier one), else 0. */
static uint32_t known_file(struct cpt_ctx *c, pid_t pid, int fd,
			   const struct stat *st)
{
	const struct files_cpt *fc = kind_dump_state(c, &kind_files);
	long gi = id_find(&fc->by_ino, ino_key(st));
	const struct file_group *g = gi >= 0 ? &fc->groups[gi] : NULL;
	bool found;
	size_t i = g ? group_find(g, pid, fd, &found) : 0;

	return g && found ? g->f[i].id : 0;
}

static int remember_file(struct cpt_ctx *c, pid_t pid, int fd,
			 const struct stat *st, uint32_t id)
{
	struct files_cpt *fc = kind_dump_state(c, &kind_files);
	long gi = id_find(&fc->by_ino, ino_key(st));
	struct file_group *g;
	bool found;
	size_t i;

	if (gi < 0) {
		if (!VEC_PUSH(fc->groups, fc->n, fc->cap) ||
		    id_add(&fc->by_ino, ino_key(st), fc->n - 1))
			return log_err(c->log, ENOMEM, "file table:");
		gi = fc->n - 1;
	}
	g = &fc->groups[gi];
	i = group_find(g, pid, fd, &found);
	if (VEC_ROOM(g->f, g->n, g->cap))
		return log_err(c->log, ENOMEM, "file table:");
	memmove(&g->f[i + 1], &g->f[i], (g->n - i) * sizeof(*g->f));
	g->f[i] = (struct cpt_file){ pid, fd, id };
	g->n++;
	return 0;
}

int files_each_fd(struct cpt_ctx *c,
		  int (*fn)(struct cpt_ctx *c, pid_t pid, int fd, void *arg),
		  void *arg)
{
	int ret = 0;

	for (int i = 0; i < c->nr_tasks && !ret; i++) {
		struct cpt_task *t = c->tasks[i];
		char path[64];
		struct dirent *de;
		DIR *d;

		if (t->zombie || t->shares_files)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", t->pid);
		d = opendir(path);
		if (!d)
			return log_err(c->log, errno, "pid %d: listing fds:", t->pid);
		while (!ret && (de = readdir(d)))
			if (de->d_name[0] != '.')
				ret = fn(c, t->pid, atoi(de->d_name), arg);
		closedir(d);
	}
	return ret;
}

uint32_t files_known(struct cpt_ctx *c, pid_t pid, int fd)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	return stat(path, &st) ? 0 : known_file(c, pid, fd, &st);
}

static int ref_probed(struct cpt_ctx *c, const struct fd_probe *p, uint32_t *id)
{
	int ret = 0;

	/* a description shared with an earlier fd is written once */
	*id = known_file(c, p->pid, p->fd, &p->st);
	if (!*id) {
		ret = dump_file(c, p, id);
		if (!ret && *id)
			ret = remember_file(c, p->pid, p->fd, &p->st, *id);
	}
	return ret;
}

int files_ref(struct cpt_ctx *c, struct cpt_task *t, int fd, uint32_t *id)
{
	struct fd_probe p;
	char *info = NULL;
	int ret = probe(c, t, fd, &p, &info);

	if (!ret)
		ret = ref_probed(c, &p, id);
	free(info);
	return ret;
}

int files_ref_own(struct cpt_ctx *c, struct cpt_task *t, int via_fd, int ours,
		  uint32_t *id)
{
	struct fd_probe p;
	char *info = NULL;
	int ret = probe_in(c, t, getpid(), ours, &p, &info);

	p.via_pid = t->pid;
	p.via_fd = via_fd;
	if (!ret)
		ret = ref_probed(c, &p, id);
	free(info);
	return ret;
}

/* @p (written as @id) noted for the locks kind: its lock lines kept. */
static int note_fd(struct cpt_ctx *c, const struct fd_probe *p, uint32_t id)
{
	struct files_cpt *fc = kind_dump_state(c, &kind_files);
	const char *locks = strstr(p->fdinfo ? p->fdinfo : "", "\nlock:\t");
	struct fd_note *n = VEC_PUSH(fc->notes, fc->nn, fc->capn);

	if (!n)
		return log_err(c->log, ENOMEM, "file table:");
	*n = (struct fd_note){ p->pid, p->fd, id, p->flags, locks ? strdup(locks) : NULL };
	if (locks && !n->locks)
		return log_err(c->log, ENOMEM, "file table:");
	return 0;
}

const struct fd_note *files_notes(struct cpt_ctx *c, pid_t pid, size_t *n)
{
	const struct files_cpt *fc = kind_dump_state(c, &kind_files);
	size_t i = 0, j;

	while (i < fc->nn && fc->notes[i].pid != pid)
		i++;
	for (j = i; j < fc->nn && fc->notes[j].pid == pid; j++)
		;
	*n = j - i;
	return j > i ? &fc->notes[i] : NULL;
}

static int dump_fd(struct cpt_ctx *c, struct cpt_task *t, int fd)
{
	struct rec_fd rf = { .fd = fd };
	struct fd_probe p;
	char *info = NULL;
	int ret = probe(c, t, fd, &p, &info);

	if (!ret)
		ret = ref_probed(c, &p, &rf.file_id);
	if (!ret && rf.file_id)
		ret = note_fd(c, &p, rf.file_id);
	free(info);
	if (ret || !rf.file_id)
		return ret;	/* failed, or skipped */
	rf.cloexec = !!(p.flags & O_CLOEXEC);
	return iw_record(&c->w, REC_FD, &rf, sizeof(rf));
}

static int files_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	int *fds = NULL, n = 0, ret;

	if (t->shares_files)
		return 0;	/* its parent's table, already written */
	ret = list_fds(c, t->pid, &fds, &n);
	for (int i = 0; i < n && !ret; i++)
		if (!t->own_fd || fds[i] != t->own_fd)	/* ckpt's own */
			ret = dump_fd(c, t, fds[i]);
	free(fds);
	return ret;
}

/* ---- restart ---- */

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
	if (!ops_for_kind(f->kind) || f->extra_len > MAX_FILE_STATE ||
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
	nf->ops = ops_for_kind(f->kind);
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

static int files_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
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

static int files_check(struct rst_ctx *c, struct rst_task *t)
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

		/* (and the pidfd on ckpt files_give() takes them through) */
		if (de->d_name[0] == '.' || fd_kept(ft, s, fd, t->img_fd) ||
		    (fd && fd == ns_ckpt_fd(t)))
			continue;
		ret = rcheck(&t->rm, NULL, "close", SYS_close, fd);
	}
	closedir(d);
	return ret;
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

static int files_restore(struct rst_ctx *c, struct rst_task *t)
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

static void files_free(struct rst_task *t, void *state)
{
	struct fd_table *s = state;

	free(s->fds);
	free(s);
}

static void files_free_ctx(void *state)
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

static void files_dump_free(struct cpt_ctx *c, void *state)
{
	struct files_cpt *fc = state;

	for (size_t i = 0; i < fc->n; i++)
		free(fc->groups[i].f);
	free(fc->groups);
	id_table_free(&fc->by_ino);
	for (size_t i = 0; i < fc->nn; i++)
		free(fc->notes[i].locks);
	free(fc->notes);
}

static void files_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_FILE_MORE) {
		info_u64(o, "bytes", r->data_len);
	} else if (r->type == REC_FILE) {
		const struct rec_file *f = r->data;
		const struct file_ops *ops = ops_for_kind(f->kind);
		const char *path = rec_str(r, sizeof(*f), f->path_len);

		info_u64(o, "id", f->id);
		info_str(o, "kind", ops ? ops->name : "?");
		info_hex(o, "flags", f->flags);
		info_u64(o, "pos", f->pos);
		info_str(o, "path", path ?: "?");
		if (ops && ops->show && path &&
		    r->data_len == sizeof(*f) + f->path_len + f->extra_len)
			ops->show(o, f, path + f->path_len, f->extra_len);
		else if (path && r->data_len == sizeof(*f) + f->path_len && f->extra_len)
			info_str(o, "state", "in the FILE_MORE records after it");
	} else {
		const struct rec_fd *d = r->data;

		info_u64(o, "fd", d->fd);
		info_u64(o, "file", d->file_id);
		info_u64(o, "cloexec", d->cloexec);
	}
}

static const struct rec_desc files_recs[] = {
	{ REC_FILE, "FILE", sizeof(struct rec_file) },
	{ REC_FD, "FD", sizeof(struct rec_fd) },
	{ REC_FILE_MORE, "FILE_MORE", 0 },
	{ 0 }
};

const struct kind_ops kind_files = {
	.name = "files",
	.recs = files_recs,
	.phase = PHASE_IMAGE,
	.dump = files_dump,
	.dump_size = sizeof(struct files_cpt),
	.dump_free = files_dump_free,
	.load = files_load,
	.check = files_check,
	.restore = files_restore,
	.free = files_free,
	.free_ctx = files_free_ctx,
	.show = files_show,
};
