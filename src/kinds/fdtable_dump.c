/* fdtable_dump.c - the files kind's checkpoint: each fd of a process
 * probed, its description found again (kcmp) or written once by its file
 * kind, then the fd itself (fdtable.c: the file kinds). */
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
#include "../files.h"
#include "cuda.h"
#include "fdtable.h"
#include "ns.h"

static uint32_t ino_key(const struct stat *st)
{
	return (uint32_t)(st->st_ino ^ (st->st_ino >> 32) ^ st->st_dev);
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
	const struct file_ops *ops = files_kind_claiming(c, p);
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

int files_dump(struct cpt_ctx *c, struct cpt_task *t)
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

void files_dump_free(struct cpt_ctx *c, void *state)
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
