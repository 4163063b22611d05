/* fobj.c - files no path names any more: memfds and deleted (or
 * O_TMPFILE) files.  Their content can only come from the image, so each
 * is one object there (FILE_OBJ: kind, size, mode, owner, seals, name;
 * then FILE_DATA: the bytes, as runs that skip holes, dataruns.c),
 * written the first time an fd or a mapping of it is met, and named by
 * id by every description (FILE rdev) and every area that maps it (VMA
 * shm_id).
 *
 * At restart ckpt makes each object itself on first use - memfd_create,
 * or O_TMPFILE in the directory the file lived in - fills it straight
 * from the image, and seals it; descriptions are reopened from its fd
 * and mappings map it, so all of them share one inode again, as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../dataruns.h"
#include "../files.h"
#include "../page.h"

#define MAX_SIZE	(1ULL << 50)
#define MEMFD_NAME_MAX	249	/* the kernel's MFD_NAME_MAX_LEN */
#define SEALS_ALL	(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | \
			 F_SEAL_WRITE | F_SEAL_FUTURE_WRITE | SEAL_EXEC)
#define SEAL_EXEC	0x20	/* F_SEAL_EXEC */
#ifndef MFD_EXEC
#define MFD_EXEC	0x10U
#endif
#define TMPFS_MAGIC_	0x01021994
#define DELETED		" (deleted)"
#define SHMEM_LINK	"/dev/zero (deleted)"	/* the kernel's shared memory */

/* ---- checkpoint ---- */

/* An object in the image, found again by its inode. */
struct cpt_fobj {
	uint64_t dev, ino;
	uint32_t id;
};

/* The checkpoint's: every object written so far. */
struct fobj_cpt {
	struct cpt_fobj *e;
	int n;
	size_t cap;
};

/* What the link names, without "/memfd:" and " (deleted)". */
static int obj_name(const char *link, uint32_t kind, char *name, size_t n)
{
	size_t len = strlen(link), suf = strlen(DELETED);

	if (kind == FILE_MEMFD)
		link += 7, len -= 7;
	if (len >= suf && !strcmp(link + len - suf, DELETED))
		len -= suf;
	if (len >= n || (kind == FILE_MEMFD && len > MEMFD_NAME_MAX))
		return -ENAMETOOLONG;
	memcpy(name, link, len);
	name[len] = '\0';
	return 0;
}

/* What kind of object: a memfd, a deleted file, or one we cannot save
 * (logged). */
static int obj_kind(struct cpt_ctx *c, pid_t pid, int fd, const char *link,
		    const struct stat *st, uint32_t *kind, uint32_t *flags)
{
	struct statfs sf;
	struct stat shm;
	int probe;

	if (fstatfs(fd, &sf))
		return log_err(c->log, errno, "pid %d: %s:", pid, link);
	if (!strncmp(link, "/memfd:", 7)) {
		*kind = FILE_MEMFD;
		if (sf.f_type != TMPFS_MAGIC_)
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d: %s: a hugetlb memfd is not supported",
				       pid, link);
		return 0;
	}
	*kind = FILE_DELETED;
	if (st->st_nlink)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: %s: its name was removed, but %lu other links to it remain (not supported)",
			       pid, link, (unsigned long)st->st_nlink);
	/* shared anonymous memory and SysV segments are files of the
	 * kernel's own tmpfs mount, as memfds are: not deleted files */
	probe = memfd_create("ckpt-probe", MFD_CLOEXEC);
	if (probe < 0 || fstat(probe, &shm))
		return log_err(c->log, errno, "memfd probe:");
	close(probe);
	if (shm.st_dev == st->st_dev && !strcmp(link, SHMEM_LINK)) {
		*flags = FOBJ_SHMEM;
		return 0;
	}
	if (shm.st_dev == st->st_dev)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: %s: kernel-internal shared memory is not supported",
			       pid, link);
	return 0;
}

static int write_obj(struct cpt_ctx *c, pid_t pid, int fd, const char *link,
		     const struct stat *st, uint32_t kind, uint32_t flags, uint32_t id)
{
	struct rec_file_obj o = { .id = id, .kind = kind, .size = st->st_size,
				  .mode = st->st_mode, .uid = st->st_uid,
				  .gid = st->st_gid, .flags = flags };
	struct data_runs rs = { 0 };
	char name[CKPT_PATH_MAX];
	int ret;

	if (!S_ISREG(st->st_mode) || (uint64_t)st->st_size > MAX_SIZE)
		return log_err(c->log, EOPNOTSUPP, "pid %d: %s: not a regular file of at most 2^50 bytes",
			       pid, link);
	if (kind == FILE_MEMFD) {
		int seals = fcntl(fd, F_GET_SEALS);

		if (seals < 0)
			return log_err(c->log, errno, "pid %d: %s: F_GET_SEALS:", pid, link);
		o.seals = seals;
	}
	if (obj_name(link, kind, name, sizeof(name)))
		return log_err(c->log, ENAMETOOLONG, "pid %d: %s: name too long", pid, link);
	o.name_len = strlen(name) + 1;
	ret = data_runs_find(fd, st->st_size, &rs);
	if (ret) {
		data_runs_free(&rs);
		return log_err(c->log, -ret, "pid %d: %s: finding its data:", pid, link);
	}
	ret = iw_record_str(&c->w, REC_FILE_OBJ, &o, sizeof(o), name);
	if (!ret && rs.n)
		ret = data_runs_write(c, fd, REC_FILE_DATA, id, &rs);
	if (ret)
		ret = log_err(c->log, -ret, "pid %d: saving the content of %s:", pid, link);
	data_runs_free(&rs);
	return ret;
}

int fobj_ref(struct cpt_ctx *c, pid_t pid, const char *proc_path,
	     const char *link, uint32_t *id)
{
	struct fobj_cpt *fc = kind_dump_state(c, &kind_fobj);
	struct stat st;
	uint32_t kind = 0, flags = 0;
	int fd, ret;

	fd = open(proc_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = log_err(c->log, errno, "pid %d: opening %s (%s):", pid,
			      proc_path, link);
		goto out;
	}
	for (int i = 0; i < fc->n; i++)
		if (fc->e[i].dev == st.st_dev && fc->e[i].ino == st.st_ino) {
			*id = fc->e[i].id;
			ret = 0;
			goto out;
		}
	ret = obj_kind(c, pid, fd, link, &st, &kind, &flags);
	if (!ret && VEC_ROOM(fc->e, fc->n, fc->cap))
		ret = log_err(c->log, ENOMEM, "file objects:");
	if (ret)
		goto out;
	*id = ++c->next_objref;
	ret = write_obj(c, pid, fd, link, &st, kind, flags, *id);
	if (!ret)
		fc->e[fc->n++] = (struct cpt_fobj){ st.st_dev, st.st_ino, *id };
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

uint32_t fobj_known(struct cpt_ctx *c, uint64_t dev, uint64_t ino)
{
	struct fobj_cpt *fc = kind_dump_state(c, &kind_fobj);

	for (int i = 0; fc && i < fc->n; i++)
		if (fc->e[i].dev == dev && fc->e[i].ino == ino)
			return fc->e[i].id;
	return 0;
}

static void fobj_dump_free(struct cpt_ctx *c, void *state)
{
	struct fobj_cpt *fc = state;

	free(fc->e);
}

/* ---- restart ---- */

struct rst_fobj {
	struct rec_file_obj o;
	const char *name;
	struct rst_data_runs data;	/* its FILE_DATA, if it has one */
	int fd;			/* ckpt's, once made; -1 before */
	bool fd_given;		/* that very description given to a task */
	void *rec;
};

struct fobj_table {
	struct rst_fobj *e;
	int n;
	size_t cap;
	struct id_table ids;	/* index in e, by id */
};

static struct rst_fobj *fobj_by_id(struct rst_ctx *c, uint32_t id)
{
	struct fobj_table *ft = KCSTATE(c, kind_fobj);
	long i = ft ? id_find(&ft->ids, id) : -1;

	return i < 0 ? NULL : &ft->e[i];
}

uint32_t fobj_kind(struct rst_ctx *c, uint32_t id)
{
	struct rst_fobj *o = fobj_by_id(c, id);

	return o ? o->o.kind : 0;
}

/* What is wrong with a FILE_OBJ, NULL if nothing. */
static const char *obj_bad(struct rst_ctx *c, const struct rec_file_obj *o,
			   const char *name, const struct rec *r)
{
	if (!o->id || fobj_by_id(c, o->id))
		return "bad or repeated id";
	if (o->flags & ~FOBJ_SHMEM || (o->flags && o->kind != FILE_DELETED))
		return "bad flags";
	if (o->kind != FILE_MEMFD && o->kind != FILE_DELETED)
		return "bad kind";
	if (!S_ISREG(o->mode) || (o->mode & ~(S_IFMT | 07777)) || o->size > MAX_SIZE)
		return "bad mode or size";
	if ((o->seals & ~SEALS_ALL) || (o->kind == FILE_DELETED && o->seals))
		return "bad seals";
	if (r->data_len != sizeof(*o) + o->name_len || !name ||
	    (o->kind == FILE_MEMFD && strlen(name) > MEMFD_NAME_MAX) ||
	    (o->kind == FILE_DELETED && name[0] != '/'))
		return "bad name";
	return NULL;
}

static int load_obj(struct rst_ctx *c, struct fobj_table *ft, struct rec *r)
{
	const struct rec_file_obj *o = r->data;
	struct rst_fobj *n;
	const char *name, *why;
	int ret = rec_want(c->log, r, sizeof(*o), "FILE_OBJ");

	if (ret)
		return ret;
	name = rec_str(r, sizeof(*o), o->name_len);
	why = obj_bad(c, o, name, r);
	if (why)
		return log_err(c->log, EBADMSG, "FILE_OBJ record %llu: %s",
			       (unsigned long long)r->index, why);
	if (VEC_ROOM(ft->e, ft->n, ft->cap) || id_add(&ft->ids, o->id, ft->n))
		return log_err(c->log, ENOMEM, "file objects:");
	n = &ft->e[ft->n++];
	memset(n, 0, sizeof(*n));
	n->o = *o;
	n->name = name;
	n->fd = -1;
	n->rec = r->data;
	r->data = NULL;
	return 0;
}

static int fobj_load_data(struct rst_ctx *c, struct fobj_table *ft, struct rec *r)
{
	struct rst_fobj *o = ft->n ? &ft->e[ft->n - 1] : NULL;

	return data_runs_load(c->log, r, o ? &o->data : NULL, o ? o->o.id : 0,
			      o ? o->o.size : 0, "FILE_OBJ", "file");
}

static int fobj_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct fobj_table *ft = kind_ctx_state(c, &kind_fobj, sizeof(*ft));

	if (!ft)
		return log_err(c->log, ENOMEM, "file objects:");
	return r->type == REC_FILE_OBJ ? load_obj(c, ft, r) : fobj_load_data(c, ft, r);
}

static void dir_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash == path ? 1 : (size_t)(slash - path);

	snprintf(dir, n, "%.*s", (int)len, path);
}

/* A deleted file comes back in the directory it was in: it must exist. */
static int fobj_check(struct rst_ctx *c, struct rst_task *t)
{
	struct fobj_table *ft = KCSTATE(c, kind_fobj);
	char dir[CKPT_PATH_MAX];
	struct stat st;

	if (!ft || t != c->tasks[0] || !c->here)
		return 0;
	for (int i = 0; i < ft->n; i++) {
		int err;

		if (ft->e[i].o.kind != FILE_DELETED || (ft->e[i].o.flags & FOBJ_SHMEM))
			continue;
		dir_of(ft->e[i].name, dir, sizeof(dir));
		err = stat(dir, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
		if (err)
			return log_err(c->log, err,
				       "the directory of deleted file %s, %s, is gone:",
				       ft->e[i].name, dir);
	}
	return 0;
}

/* An O_TMPFILE's own name: '#' and its inode number. */
static bool tmpfile_name(const char *path)
{
	const char *base = strrchr(path, '/') + 1;

	return base[0] == '#' && base[1] && strspn(base + 1, "0123456789") == strlen(base + 1);
}

/* @fd (an O_TMPFILE) opened again through @name, which it is given for a
 * moment: an fd's link names the entry it was opened through. */
static int by_its_name(int fd, const char *name)
{
	char self[64];
	struct stat a, b;
	int named;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, self, AT_FDCWD, name, AT_SYMLINK_FOLLOW))
		return fd;	/* the name is taken: keep the O_TMPFILE's */
	named = open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	unlink(name);
	if (named >= 0 && (fstat(fd, &a) || fstat(named, &b) ||
			   a.st_ino != b.st_ino || a.st_dev != b.st_dev)) {
		close(named);
		named = -1;
	}
	if (named < 0)
		return fd;
	close(fd);
	return named;
}

/* An unnamed file in the directory it was in.  One that had a name gets
 * it back for a moment (linked and unlinked), so that its fds read as
 * they did, if the name is free; an O_TMPFILE one stays linkable. */
static int make_deleted(struct rst_ctx *c, const struct rst_fobj *o)
{
	char dir[CKPT_PATH_MAX], tmp[CKPT_PATH_MAX + 32];
	int fd;

	dir_of(o->name, dir, sizeof(dir));
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 && !tmpfile_name(o->name))
		fd = by_its_name(fd, o->name);
	else if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		fd = open(o->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		snprintf(tmp, sizeof(tmp), "%s", o->name);
		if (fd < 0 && errno == EEXIST) {
			snprintf(tmp, sizeof(tmp), "%s/.ckpt-deleted-XXXXXX", dir);
			fd = mkostemp(tmp, O_CLOEXEC);
		}
		if (fd >= 0)
			unlink(tmp);
	}
	if (fd < 0)
		return log_err(c->log, errno, "making deleted file %s again in %s:",
			       o->name, dir);
	return fd;
}

static int make_memfd(struct rst_ctx *c, const struct rst_fobj *o)
{
	unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	int fd = memfd_create(o->name, flags | (o->o.mode & 0111 ? MFD_EXEC : 0));

	/* MFD_EXEC is refused where vm.memfd_noexec forbids it, or unknown */
	if (fd < 0 && (errno == EINVAL || errno == EACCES))
		fd = memfd_create(o->name, flags);
	if (fd < 0)
		return log_err(c->log, errno, "memfd_create(%s):", o->name);
	return fd;
}

/* The kernel's own shared memory object, as MAP_SHARED|MAP_ANONYMOUS
 * makes it: the mapping's file, opened through map_files, outlives it. */
static int make_shmem(struct rst_ctx *c, const struct rst_fobj *o)
{
	uint64_t len = o->o.size ? (o->o.size + PAGE - 1) & ~(PAGE - 1) : PAGE;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char path[128];
	int fd;

	if (m == MAP_FAILED)
		return log_err(c->log, errno, "shared memory of %llu bytes:",
			       (unsigned long long)o->o.size);
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)m, (unsigned long)m + (unsigned long)len);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fd = log_err(c->log, errno, "opening shared memory %s:", path);
	munmap(m, len);
	return fd;
}

static int fobj_fill(struct rst_ctx *c, const struct rst_fobj *o, int fd)
{
	const struct rec_data_run *run = o->data.runs;
	off_t from = o->data.off;

	if (ftruncate(fd, o->o.size))
		return log_err(c->log, errno, "sizing %s to %llu bytes:", o->name,
			       (unsigned long long)o->o.size);
	for (uint32_t i = 0; i < o->data.nr_runs; i++) {
		uint64_t left = run[i].len;

		if (lseek(fd, run[i].off, SEEK_SET) < 0)
			return log_err(c->log, errno, "filling %s:", o->name);
		while (left) {
			ssize_t k = sendfile(fd, c->img_fd, &from,
					     left < 0x40000000 ? left : 0x40000000);

			if (k <= 0)
				return log_err(c->log, k < 0 ? errno : ENODATA,
					       "filling %s from the image:", o->name);
			left -= k;
		}
	}
	return 0;
}

static int fobj_make(struct rst_ctx *c, struct rst_fobj *o)
{
	int fd = o->o.kind == FILE_MEMFD ? make_memfd(c, o) :
		 o->o.flags & FOBJ_SHMEM ? make_shmem(c, o) : make_deleted(c, o);
	int ret;

	if (fd < 0)
		return fd;
	ret = fobj_fill(c, o, fd);
	if (!ret && fchown(fd, o->o.uid, o->o.gid))
		ret = log_err(c->log, errno, "giving %s to uid %u gid %u:", o->name,
			      o->o.uid, o->o.gid);
	if (!ret && fchmod(fd, o->o.mode & 07777))
		ret = log_err(c->log, errno, "chmod %s:", o->name);
	/* last: F_SEAL_WRITE would stop the writes above */
	if (!ret && o->o.seals && fcntl(fd, F_ADD_SEALS, o->o.seals))
		ret = log_err(c->log, errno, "sealing %s with 0x%x:", o->name,
			      o->o.seals);
	if (ret) {
		close(fd);
		return ret;
	}
	o->fd = fd;
	return 0;
}

int fobj_fd(struct rst_ctx *c, uint32_t id)
{
	struct rst_fobj *o = fobj_by_id(c, id);
	int ret;

	if (!o)
		return log_err(c->log, EBADMSG, "no FILE_OBJ %u", id);
	if (o->fd < 0 && (ret = fobj_make(c, o)))
		return ret;
	return o->fd;
}

static void fobj_free_ctx(void *state)
{
	struct fobj_table *ft = state;

	for (int i = 0; i < ft->n; i++) {
		if (ft->e[i].fd >= 0)
			close(ft->e[i].fd);
		free(ft->e[i].rec);
		free(ft->e[i].data.rec);
	}
	free(ft->e);
	id_table_free(&ft->ids);
	free(ft);
}

static void fobj_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_FILE_OBJ) {
		const struct rec_file_obj *f = r->data;

		info_u64(o, "id", f->id);
		info_str(o, "kind", f->kind == FILE_MEMFD ? "memfd" :
				    f->kind == FILE_DELETED ? "deleted" : "?");
		info_u64(o, "size", f->size);
		info_hex(o, "mode", f->mode);
		info_hex(o, "seals", f->seals);
		if (f->flags & FOBJ_SHMEM)
			info_str(o, "shmem", "yes");
		info_str(o, "name", rec_str(r, sizeof(*f), f->name_len) ?: "?");
	} else {
		data_runs_show(o, r);
	}
}

static const struct rec_desc fobj_recs[] = {
	{ REC_FILE_OBJ, "FILE_OBJ", 0 },
	{ REC_FILE_DATA, "FILE_DATA", 0 },
	{ 0 }
};

const struct kind_ops kind_fobj = {
	.name = "fobj",
	.recs = fobj_recs,
	.phase = PHASE_IMAGE,
	.dump_size = sizeof(struct fobj_cpt),
	.dump_free = fobj_dump_free,
	.load = fobj_load,
	.check = fobj_check,
	.free_ctx = fobj_free_ctx,
	.show = fobj_show,
};

/* ---- a description of an object, for memfd.c and deleted.c ---- */

int fobj_desc_dump(struct cpt_ctx *c, const struct fd_probe *p,
		   struct rec_file *f, void **extra, uint32_t *extra_len)
{
	char path[64];
	uint32_t id = 0;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p->pid, p->fd);
	ret = fobj_ref(c, p->pid, path, p->link, &id);
	f->rdev = id;
	return ret;
}

int fobj_desc_load(struct rst_ctx *c, struct rst_file *f)
{
	if (f->f.extra_len || f->f.rdev > UINT32_MAX ||
	    fobj_kind(c, f->f.rdev) != f->f.kind)
		return log_err(c->log, EBADMSG, "FILE %u: no FILE_OBJ %llu of its kind",
			       f->f.id, (unsigned long long)f->f.rdev);
	return 0;
}

/* Whether @f is to be the memfd's own description, the one
 * memfd_create() made: the first writable description of a memfd.  That
 * one does not count as a writer of the file (its open did not go through
 * the file's writers count), so the memfd can still be executed (no
 * ETXTBSY), which a description reopened writable through /proc forbids
 * while it is open. */
static bool memfd_own_desc(struct rst_ctx *c, const struct rst_file *f)
{
	struct rst_fobj *o = fobj_by_id(c, f->f.rdev);

	return o && o->o.kind == FILE_MEMFD && !o->fd_given &&
	       (f->f.flags & O_ACCMODE) == O_RDWR;
}

static int memfd_give_own(struct rst_ctx *c, struct rst_task *t,
			  const struct rst_file *f, int obj, long *fd)
{
	struct rst_fobj *o = fobj_by_id(c, f->f.rdev);
	int fl = f->f.flags & (O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME);

	if (fcntl(obj, F_SETFL, fl))
		return log_err(c->log, errno, "pid %d: %s: F_SETFL 0x%x:", t->pid,
			       f->path, fl);
	if (lseek(obj, f->f.pos, SEEK_SET) < 0)
		return log_err(c->log, errno, "pid %d: %s: lseek to %llu:", t->pid,
			       f->path, (unsigned long long)f->f.pos);
	o->fd_given = true;
	return files_give(t, obj, fd);
}

/* A new description of the object, opened by ckpt through its own fd
 * with the saved flags and offset, and given to @t. */
int fobj_desc_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		   long *fd)
{
	int obj = fobj_fd(c, f->f.rdev), ours, ret;
	char path[64];

	if (obj < 0)
		return obj;
	if (memfd_own_desc(c, f))
		return memfd_give_own(c, t, f, obj, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", obj);
	/* an O_TMPFILE description keeps __O_TMPFILE|O_DIRECTORY in its
	 * flags; here they would make another file or fail */
	ours = open(path, (f->f.flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY |
					  O_TMPFILE | O_DIRECTORY)) | O_CLOEXEC);
	if (ours < 0)
		return log_err(c->log, errno, "pid %d: reopening %s:", t->pid, f->path);
	if (lseek(ours, f->f.pos, SEEK_SET) < 0)
		ret = log_err(c->log, errno, "pid %d: %s: lseek to %llu:", t->pid,
			      f->path, (unsigned long long)f->f.pos);
	else
		ret = files_give(t, ours, fd);
	close(ours);
	return ret;
}

void fobj_desc_show(struct info_out *o, const struct rec_file *f,
		    const void *extra, uint32_t extra_len)
{
	info_u64(o, "object", f->rdev);
}
