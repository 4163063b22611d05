/* sysvshm.c - SysV shared memory segments (shmget/shmat) the tree has
 * attached.
 *
 * Checkpoint: each segment met in an area /SYSV<key> (the area's inode
 * number is the segment's id) is written once: SYSV_SHM (id, key, size,
 * mode, owner, marked for deletion or locked) and SYSV_DATA, its bytes
 * read through the area's /proc/PID/map_files entry (the segment's own
 * shmem file: no attach, shm_nattch and shm_lpid untouched) as runs that
 * skip holes (dataruns.c, as a memfd's FILE_DATA).  Each area is a VMA of kind VMA_SYSV naming the segment,
 * with its offset in it (mm.c).
 *
 * Restart policy, decided for every segment before any process exists:
 * - the same id still exists with the same key and size and is not
 *   marked for deletion (a segment outlives its processes: the usual
 *   case after checkpoint --kill on this machine): it is attached as it
 *   is, its live content kept;
 * - the id and the key are both free: ckpt makes it again with the same
 *   id (/proc/sys/kernel/shm_next_id), fills it from the image, gives it
 *   its owner and mode; one that was marked for deletion is marked again
 *   once every process has attached it;
 * - anything else (the id or the key held by another segment) refuses
 *   the restart, naming it.
 * A segment ckpt made is removed again if the restart fails.
 *
 * A container's own ipc namespace (ipcns.c; ckpt is in it): every
 * segment in it is the container's, so those no process attaches are
 * saved too (read through an attach of ckpt's own, for a moment), and
 * one attached only by processes outside the tree is refused.  At
 * restart the namespace is new and empty: every segment is made in it
 * (sysv_make_all(), from ipcns's restore, before any process attaches).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../dataruns.h"
#include "../model.h"
#include "ns.h"
#include "sysvshm.h"
#include "../page.h"

#define MAX_SIZE	(1ULL << 46)	/* more than any address space holds */
#define NEXT_ID		"/proc/sys/kernel/shm_next_id"
#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC	0x958458f6
#endif
#ifndef SHM_EXEC
#define SHM_EXEC	0100000
#endif

/* ---- checkpoint ---- */

/* A SysV shared memory segment in the image. */
struct cpt_sysv {
	int32_t shmid;
	uint32_t id;		/* its SYSV_SHM record */
};

/* The checkpoint's: every segment written so far. */
struct sysv_cpt {
	struct cpt_sysv *e;
	int n;
	size_t cap;
};

static bool same_ipc_ns(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", pid);
	return !stat(path, &a) && !stat("/proc/self/ns/ipc", &b) &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* The key in an area's name, "/SYSV%08x" (with " (deleted)"). */
static int name_key(const char *path, int32_t *key)
{
	unsigned int k;
	int n = -1;

	if (sscanf(path, "/SYSV%8x%n", &k, &n) != 1 || n != 13 ||
	    (path[13] && strcmp(path + 13, " (deleted)")))
		return -1;
	*key = (int32_t)k;
	return 0;
}

/* Refusals first: everything ckpt cannot make again as it was. */
static int seg_stat(struct cpt_ctx *c, pid_t pid, const struct vma *v,
		    struct shmid_ds *ds, int32_t *key)
{
	if (name_key(v->path, key) || v->ino > INT32_MAX)
		return log_err(c->log, EOPNOTSUPP, "pid %d: area 0x%" PRIx64 ": %s is not a SysV shared memory name",
			       pid, v->start, v->path);
	if (vmflag(v, "ht"))
		return log_err(c->log, EOPNOTSUPP, "pid %d: area 0x%" PRIx64 ": SysV shared memory id %" PRIu64 " is hugetlb (SHM_HUGETLB), not supported",
			       pid, v->start, v->ino);
	if (!same_ipc_ns(pid))
		return log_err(c->log, EOPNOTSUPP, "pid %d: area 0x%" PRIx64 ": SysV shared memory of another IPC namespace is not supported",
			       pid, v->start);
	if (v->perms[3] != 's')
		return log_err(c->log, EOPNOTSUPP, "pid %d: area 0x%" PRIx64 ": a private mapping of SysV shared memory is not supported",
			       pid, v->start);
	if (shmctl((int)v->ino, IPC_STAT, ds) < 0)
		return log_err(c->log, errno, "pid %d: area 0x%" PRIx64 ": SysV shared memory id %" PRIu64 ":",
			       pid, v->start, v->ino);
	if (ds->shm_segsz == 0 || ds->shm_segsz > MAX_SIZE)
		return log_err(c->log, EOPNOTSUPP, "pid %d: SysV shared memory id %" PRIu64 ": %zu bytes, not supported",
			       pid, v->ino, (size_t)ds->shm_segsz);
	if (!(ds->shm_perm.mode & SHM_DEST) && ds->shm_perm.__key != *key)
		return log_err(c->log, EOPNOTSUPP, "pid %d: SysV shared memory id %" PRIu64 ": key 0x%08x, but its areas say 0x%08x",
			       pid, v->ino, ds->shm_perm.__key, *key);
	return 0;
}

/* The record of segment @shmid, as IPC_STAT says, for image object @id. */
static void seg_rec(const struct shmid_ds *ds, int32_t shmid, int32_t key, uint32_t id,
		    struct rec_sysv_shm *s)
{
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->shmid = shmid;
	s->key = key;
	s->mode = ds->shm_perm.mode & 0777;
	s->size = ds->shm_segsz;
	s->uid = ds->shm_perm.uid;
	s->gid = ds->shm_perm.gid;
	s->cpid = ds->shm_cpid;
	s->lpid = ds->shm_lpid;
	s->flags = (ds->shm_perm.mode & SHM_DEST ? SYSV_SHM_DEST : 0) |
		   (ds->shm_perm.mode & SHM_LOCKED ? SYSV_SHM_LOCKED : 0);
}

/* SYSV_SHM and its bytes, read through @fd, the segment's own file. */
static int seg_write(struct cpt_ctx *c, const struct rec_sysv_shm *s, int fd)
{
	int ret = iw_record(&c->w, REC_SYSV_SHM, s, sizeof(*s));

	return ret ? ret : data_runs_save(c, fd, s->size, REC_SYSV_DATA, s->id);
}

static int write_seg(struct cpt_ctx *c, pid_t pid, const struct vma *v,
		     uint32_t id)
{
	struct rec_sysv_shm s;
	struct shmid_ds ds;
	struct stat st;
	int32_t key = 0;
	char mf[128];
	int fd, ret = seg_stat(c, pid, v, &ds, &key);

	if (ret)
		return ret;
	seg_rec(&ds, (int32_t)v->ino, key, id, &s);
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 pid, v->start, v->end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_ino != v->ino ||
	    (uint64_t)st.st_size != s.size) {
		ret = log_err(c->log, fd < 0 ? errno : ESTALE,
			      "pid %d: SysV shared memory id %d through %s:", pid,
			      s.shmid, mf);
		goto out;
	}
	ret = seg_write(c, &s, fd);
	if (ret)
		ret = log_err(c->log, -ret, "pid %d: saving SysV shared memory id %d:",
			      pid, s.shmid);
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

int sysv_ref(struct cpt_ctx *c, pid_t pid, const struct vma *v, uint32_t *id)
{
	struct sysv_cpt *sc = kind_dump_state(c, &kind_sysvshm);
	int ret;

	for (int i = 0; i < sc->n; i++)
		if ((uint64_t)sc->e[i].shmid == v->ino) {
			*id = sc->e[i].id;
			return 0;
		}
	if (VEC_ROOM(sc->e, sc->n, sc->cap))
		return log_err(c->log, ENOMEM, "SysV segments:");
	*id = ++c->next_objref;
	ret = write_seg(c, pid, v, *id);
	if (!ret)
		sc->e[sc->n++] = (struct cpt_sysv){ (int32_t)v->ino, *id };
	return ret;
}

static void sysv_dump_free(struct cpt_ctx *c, void *state)
{
	struct sysv_cpt *sc = state;

	free(sc->e);
}

/* ---- checkpoint: a container's own ipc namespace ---- */

int sysvipc_ids(const char *file, int **ids, int *n)
{
	char path[48], *line = NULL;
	size_t len = 0, cap = 0;
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sysvipc/%s", file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*ids = NULL;
	*n = 0;
	if (getline(&line, &len, f) < 0)	/* the header */
		ret = -EIO;
	while (!ret && getline(&line, &len, f) > 0) {
		int key, id;

		if (sscanf(line, "%d %d", &key, &id) != 2)
			ret = -EINVAL;
		else if (VEC_ROOM(*ids, *n, cap))
			ret = -ENOMEM;
		else
			(*ids)[(*n)++] = id;
	}
	free(line);
	fclose(f);
	if (ret) {
		free(*ids);
		*ids = NULL;
	}
	return ret;
}

static bool seg_saved(const struct sysv_cpt *sc, int shmid)
{
	for (int i = 0; i < sc->n; i++)
		if (sc->e[i].shmid == shmid)
			return true;
	return false;
}

/* A segment no process attaches has no area to read it through: ckpt
 * attaches it read-only for as long as it takes to open its file (its
 * shm_lpid and times are then ckpt's, the only trace), refusing hugetlb,
 * whose file holes do not read as the pages. */
static int unattached_fd(struct cpt_ctx *c, const char *what, int shmid,
			 const struct shmid_ds *ds, int *fd)
{
	char mf[96];
	struct statfs sf;
	char *p = shmat(shmid, NULL, SHM_RDONLY);

	if (p == (void *)-1)
		return log_err(c->log, errno, "%s: SysV shared memory id %d: attaching it to read it:",
			       what, shmid);
	snprintf(mf, sizeof(mf), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)(p + ((ds->shm_segsz + PAGE - 1) & ~(PAGE - 1))));
	*fd = open(mf, O_RDONLY | O_CLOEXEC);
	shmdt(p);
	if (*fd < 0)
		return log_err(c->log, errno, "%s: SysV shared memory id %d: %s:", what, shmid, mf);
	if (fstatfs(*fd, &sf) || sf.f_type == HUGETLBFS_MAGIC) {
		close(*fd);
		return log_err(c->log, EOPNOTSUPP, "%s: SysV shared memory id %d is hugetlb (SHM_HUGETLB), not supported",
			       what, shmid);
	}
	return 0;
}

static int save_unattached(struct cpt_ctx *c, struct sysv_cpt *sc, const char *what,
			   int shmid, bool rmid_forced)
{
	struct rec_sysv_shm s;
	struct shmid_ds ds;
	int fd = -1, ret;

	if (shmctl(shmid, IPC_STAT, &ds) < 0)
		return log_err(c->log, errno, "%s: SysV shared memory id %d:", what, shmid);
	if (ds.shm_nattch)
		return 0;	/* mm saves it, from an area that attaches it */
	/* ckpt's own detach, and at restart its detach once the
	 * processes have attached theirs, would remove it */
	if (rmid_forced)
		return log_err(c->log, EOPNOTSUPP, "%s: SysV shared memory id %d is attached by no process, and kernel.shm_rmid_forced is 1: not supported",
			       what, shmid);
	if (ds.shm_segsz == 0 || ds.shm_segsz > MAX_SIZE)
		return log_err(c->log, EOPNOTSUPP, "%s: SysV shared memory id %d: %zu bytes, not supported",
			       what, shmid, (size_t)ds.shm_segsz);
	if (VEC_ROOM(sc->e, sc->n, sc->cap))
		return log_err(c->log, ENOMEM, "SysV segments:");
	ret = unattached_fd(c, what, shmid, &ds, &fd);
	if (ret)
		return ret;
	seg_rec(&ds, shmid, ds.shm_perm.__key, ++c->next_objref, &s);
	ret = seg_write(c, &s, fd);
	close(fd);
	if (ret)
		return log_err(c->log, -ret, "%s: saving SysV shared memory id %d:", what, shmid);
	sc->e[sc->n++] = (struct cpt_sysv){ shmid, s.id };
	return 0;
}

int sysv_save_unattached(struct cpt_ctx *c, const char *what, bool rmid_forced)
{
	struct sysv_cpt *sc = kind_dump_state(c, &kind_sysvshm);
	int *ids, n, ret = sysvipc_ids("shm", &ids, &n);

	if (ret)
		return log_err(c->log, -ret, "%s: /proc/sysvipc/shm:", what);
	for (int i = 0; i < n && !ret; i++)
		ret = save_unattached(c, sc, what, ids[i], rmid_forced);
	free(ids);
	return ret;
}

int sysv_all_saved(struct cpt_ctx *c, const char *what)
{
	struct sysv_cpt *sc = kind_dump_state(c, &kind_sysvshm);
	int *ids, n, ret = sysvipc_ids("shm", &ids, &n);

	if (ret)
		return log_err(c->log, -ret, "%s: /proc/sysvipc/shm:", what);
	for (int i = 0; i < n && !ret; i++)
		if (!seg_saved(sc, ids[i]))
			ret = log_err(c->log, EOPNOTSUPP, "%s: SysV shared memory id %d is attached only by processes outside the tree, not supported",
				      what, ids[i]);
	free(ids);
	return ret;
}

/* ---- restart: load and validate ---- */

enum seg_how { SEG_REUSE = 1, SEG_CREATE };

struct rst_seg {
	struct rec_sysv_shm s;
	struct rst_data_runs data;	/* its SYSV_DATA, if it has one */
	enum seg_how how;	/* decided by the pre-flight check */
	bool made;		/* ckpt made it: removed if the restart fails */
	void *ours;		/* ckpt's attach, until the processes have
				 * theirs (kernel.shm_rmid_forced would remove
				 * a segment nobody has attached) */
};

struct seg_table {
	struct rst_seg *e;
	int n;
	size_t cap;
	struct id_table ids;	/* index in e, by id */
	struct id_table shmids;	/* ... by shmid */
	bool checked;
	const bool *released;	/* the restart succeeded: ours no longer */
};

static struct rst_seg *seg_by_id(struct rst_ctx *c, uint32_t id)
{
	struct seg_table *st = KCSTATE(c, kind_sysvshm);
	long i = st ? id_find(&st->ids, id) : -1;

	return i < 0 ? NULL : &st->e[i];
}

int sysv_seg_len(struct rst_ctx *c, uint32_t id, uint64_t *len)
{
	struct rst_seg *g = seg_by_id(c, id);

	if (!g)
		return -1;
	*len = (g->s.size + PAGE - 1) & ~(PAGE - 1);
	return 0;
}

static const char *seg_bad(struct seg_table *st, const struct rec_sysv_shm *s)
{
	if (!s->id || s->reserved)
		return "bad id";
	if (id_find(&st->ids, s->id) >= 0 || id_find(&st->shmids, s->shmid) >= 0)
		return "segment saved twice";
	if (s->shmid < 0)
		return "bad shmid";
	if (s->size == 0 || s->size > MAX_SIZE)
		return "bad size";
	if (s->mode & ~0777u)
		return "bad mode";
	if (s->flags & ~SYSV_SHM_FLAGS)
		return "bad flags";
	return NULL;
}

static int load_seg(struct rst_ctx *c, struct seg_table *st, struct rec *r)
{
	const struct rec_sysv_shm *s = r->data;
	struct rst_seg *n;
	const char *why;
	int ret = rec_want(c->log, r, sizeof(*s), "SYSV_SHM");

	if (ret)
		return ret;
	why = r->data_len != sizeof(*s) ? "bad length" : seg_bad(st, s);
	if (why)
		return log_err(c->log, EBADMSG, "SYSV_SHM record %llu: %s",
			       (unsigned long long)r->index, why);
	if (VEC_ROOM(st->e, st->n, st->cap) || id_add(&st->shmids, s->shmid, st->n) ||
	    id_add(&st->ids, s->id, st->n))
		return log_err(c->log, ENOMEM, "SysV segments:");
	n = &st->e[st->n++];
	memset(n, 0, sizeof(*n));
	n->s = *s;
	return 0;
}

static int seg_load_data(struct rst_ctx *c, struct seg_table *st, struct rec *r)
{
	struct rst_seg *g = st->n ? &st->e[st->n - 1] : NULL;

	return data_runs_load(c->log, r, g ? &g->data : NULL, g ? g->s.id : 0,
			      g ? g->s.size : 0, "SYSV_SHM", "segment");
}

static int sysv_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct seg_table *st = kind_ctx_state(c, &kind_sysvshm, sizeof(*st));

	if (!st)
		return log_err(c->log, ENOMEM, "SysV segments:");
	st->released = &c->released;
	return r->type == REC_SYSV_SHM ? load_seg(c, st, r) : seg_load_data(c, st, r);
}

/* ---- restart: the policy, before any process exists ---- */

static int decide(struct rst_ctx *c, struct rst_seg *g)
{
	const struct rec_sysv_shm *s = &g->s;
	struct shmid_ds ds;
	int other;

	if (shmctl(s->shmid, IPC_STAT, &ds) == 0) {
		if (!(s->flags & SYSV_SHM_DEST) && !(ds.shm_perm.mode & SHM_DEST) &&
		    ds.shm_perm.__key == s->key && ds.shm_segsz == s->size) {
			g->how = SEG_REUSE;
			return 0;
		}
		return log_err(c->log, EEXIST,
			       "SysV shared memory id %d is taken by another segment (key 0x%08x, %zu bytes%s)",
			       s->shmid, ds.shm_perm.__key, (size_t)ds.shm_segsz,
			       ds.shm_perm.mode & SHM_DEST ? ", being removed" : "");
	}
	if (errno != EINVAL && errno != EIDRM)
		return log_err(c->log, errno, "SysV shared memory id %d:", s->shmid);
	if (!(s->flags & SYSV_SHM_DEST) && s->key != IPC_PRIVATE) {
		other = shmget(s->key, 0, 0);
		if (other >= 0 || errno == EACCES)
			return log_err(c->log, EEXIST,
				       "SysV shared memory key 0x%08x is used by another segment (id %d), not the image's id %d",
				       s->key, other, s->shmid);
	}
	if (access(NEXT_ID, W_OK))
		return log_err(c->log, errno, "SysV shared memory id %d is gone and cannot be made again with its id: " NEXT_ID ":",
			       s->shmid);
	g->how = SEG_CREATE;
	return 0;
}

static int sysv_check(struct rst_ctx *c, struct rst_task *t)
{
	struct seg_table *st = KCSTATE(c, kind_sysvshm);
	int ret = 0;

	if (!st || st->checked || !c->here)
		return 0;
	st->checked = true;
	/* a container's own ipc namespace is made new and empty at
	 * restart: every segment is made in it (sysv_make_all()); one
	 * joined (--join-ns ipc:PATH) is not ckpt's yet: each segment is
	 * decided there as a process attaches it (sysv_attach()) */
	for (int i = 0; i < st->n && NS_OWN(c, NS_IPC); i++)
		st->e[i].how = SEG_CREATE;
	for (int i = 0; i < st->n && !ret && !NS_OWN(c, NS_IPC) && !IPC_JOINED(c); i++)
		ret = decide(c, &st->e[i]);
	return ret;
}

/* ---- restart: make a segment again, attach it ---- */

static int set_next_id(int id)
{
	char buf[16];
	int fd = open(NEXT_ID, O_WRONLY | O_CLOEXEC), n, ok;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d", id);
	ok = write(fd, buf, n) == n;
	n = errno;
	close(fd);
	return ok ? 0 : -n;
}

/* shmget with the saved id; a segment marked for deletion takes its old
 * key (for its areas' name) only if no one has it. */
static int get_with_id(struct rst_ctx *c, const struct rec_sysv_shm *s)
{
	int key = s->key, id, err, ret;

	for (;;) {
		ret = set_next_id(s->shmid);
		if (ret)
			return log_err(c->log, -ret, "setting " NEXT_ID " to %d:", s->shmid);
		id = shmget(key, s->size, IPC_CREAT | IPC_EXCL | 0600);
		err = errno;
		set_next_id(-1);	/* unused if shmget failed: no one else may get it */
		if (id < 0 && err == EEXIST && (s->flags & SYSV_SHM_DEST) && key) {
			key = IPC_PRIVATE;
			continue;
		}
		break;
	}
	if (id < 0)
		return log_err(c->log, err, "making SysV shared memory id %d (key 0x%08x, %llu bytes) again:",
			       s->shmid, key, (unsigned long long)s->size);
	if (id != s->shmid) {
		shmctl(id, IPC_RMID, NULL);
		return log_err(c->log, EEXIST,
			       "SysV shared memory id %d could not be had again (the kernel gave %d: another segment was made meanwhile?)",
			       s->shmid, id);
	}
	return 0;
}

static int seg_fill(struct rst_ctx *c, struct rst_seg *g)
{
	const struct rec_data_run *run = g->data.runs;
	char *p = shmat(g->s.shmid, NULL, 0);
	off_t from = g->data.off;
	int ret = 0;

	if (p == (void *)-1)
		return log_err(c->log, errno, "attaching SysV shared memory id %d to fill it:",
			       g->s.shmid);
	for (uint32_t i = 0; i < g->data.nr_runs && !ret; i++) {
		uint64_t done = 0;

		while (done < run[i].len) {
			uint64_t n = run[i].len - done;
			ssize_t k = pread(c->img_fd, p + run[i].off + done,
					  n < 0x40000000 ? n : 0x40000000, from);

			if (k <= 0) {
				ret = log_err(c->log, k < 0 ? errno : ENODATA,
					      "filling SysV shared memory id %d from the image:",
					      g->s.shmid);
				break;
			}
			done += k;
			from += k;
		}
	}
	g->ours = p;
	return ret;
}

static int make_seg(struct rst_ctx *c, struct rst_seg *g)
{
	const struct rec_sysv_shm *s = &g->s;
	struct shmid_ds ds;
	int ret = get_with_id(c, s);

	if (ret)
		return ret;
	g->made = true;
	ret = seg_fill(c, g);
	if (!ret && shmctl(s->shmid, IPC_STAT, &ds))
		ret = log_err(c->log, errno, "SysV shared memory id %d:", s->shmid);
	if (ret)
		return ret;
	ds.shm_perm.uid = s->uid;
	ds.shm_perm.gid = s->gid;
	ds.shm_perm.mode = s->mode;
	if (shmctl(s->shmid, IPC_SET, &ds))
		return log_err(c->log, errno, "giving SysV shared memory id %d to uid %u gid %u mode 0%o:",
			       s->shmid, s->uid, s->gid, s->mode);
	if ((s->flags & SYSV_SHM_LOCKED) && shmctl(s->shmid, SHM_LOCK, NULL))
		return log_err(c->log, errno, "SHM_LOCK on SysV shared memory id %d:",
			       s->shmid);
	return 0;
}

int sysv_make_all(struct rst_ctx *c)
{
	struct seg_table *st = KCSTATE(c, kind_sysvshm);
	int ret = 0;

	for (int i = 0; st && i < st->n && !ret; i++)
		if (st->e[i].how == SEG_CREATE && !st->e[i].made)
			ret = make_seg(c, &st->e[i]);
	return ret;
}

/* Part of a segment (the rest was unmapped): attached whole in a gap,
 * the part moved into place, the rest detached. */
static int attach_part(struct rst_ctx *c, struct rst_task *t,
		       const struct rec_vma *v, int shmid, int flags, uint64_t seglen)
{
	struct vma_list busy;
	uint64_t gap, len = v->end - v->start;
	long res;
	/* (the areas queued in a batch before this one mapped first) */
	int ret = remote_flush(&t->rm) ?: proc_maps(t->pid, &busy);

	if (ret)
		return ret < 0 ? log_err(c->log, -ret, "pid %d: reading maps:", t->pid) : ret;
	ret = rst_find_gap(c, &busy, seglen, &gap);
	vma_list_free(&busy);
	if (ret)
		return log_err(c->log, ENOMEM, "pid %d: no room to attach SysV shared memory id %d",
			       t->pid, shmid);
	ret = rcheck(&t->rm, &res, "shmat", SYS_shmat, shmid, gap, flags);
	if (!ret && (uint64_t)res != gap)
		ret = log_err(c->log, EFAULT, "pid %d: SysV shared memory id %d attached at 0x%lx, not 0x%llx",
			      t->pid, shmid, res, (unsigned long long)gap);
	if (!ret)
		ret = rcheck(&t->rm, &res, "mremap", SYS_mremap, gap + v->pgoff, len,
			     len, MREMAP_MAYMOVE | MREMAP_FIXED, v->start);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "munmap", SYS_munmap, gap, seglen);
	return ret;
}

int sysv_attach(struct rst_ctx *c, struct rst_task *t, const struct rec_vma *v,
		int *prot)
{
	struct rst_seg *g = seg_by_id(c, v->shm_id);
	uint64_t seglen;
	int flags, ret;
	long res;

	if (g && !g->how && IPC_JOINED(c) && (ret = decide(c, g)))
		return ret;
	if (!g || !g->how)
		return log_err(c->log, EBADMSG, "pid %d: area 0x%llx: no SYSV_SHM %u",
			       t->pid, (unsigned long long)v->start, v->shm_id);
	if (g->how == SEG_CREATE && !g->made && (ret = make_seg(c, g)))
		return ret;
	seglen = (g->s.size + PAGE - 1) & ~(PAGE - 1);
	/* a read-only attach can never be made writable, as before */
	flags = (v->madv & VMA_MAYWRITE ? 0 : SHM_RDONLY) |
		(v->prot & PROT_EXEC ? SHM_EXEC : 0);
	*prot = PROT_READ | (flags & SHM_RDONLY ? 0 : PROT_WRITE) |
		(flags & SHM_EXEC ? PROT_EXEC : 0);
	if (v->pgoff || v->end - v->start != seglen)
		return attach_part(c, t, v, g->s.shmid, flags, seglen);
	ret = rcheck(&t->rm, &res, "shmat", SYS_shmat, g->s.shmid, v->start, flags);
	if (!ret && (uint64_t)res != v->start)
		ret = log_err(c->log, EFAULT, "pid %d: SysV shared memory id %d attached at 0x%lx, not 0x%llx",
			      t->pid, g->s.shmid, res, (unsigned long long)v->start);
	return ret;
}

/* Every process has attached its segments: one marked for deletion is
 * marked again (it goes with its last attach, as it would have), and
 * those ckpt made are the restored processes' now. */
static int sysv_restore_end(struct rst_ctx *c)
{
	struct seg_table *st = KCSTATE(c, kind_sysvshm);

	for (int i = 0; st && i < st->n; i++) {
		const struct rst_seg *g = &st->e[i];

		if (g->made && (g->s.flags & SYSV_SHM_DEST) &&
		    shmctl(g->s.shmid, IPC_RMID, NULL))
			return log_err(c->log, errno, "marking SysV shared memory id %d for deletion:",
				       g->s.shmid);
	}
	for (int i = 0; st && i < st->n; i++)
		if (st->e[i].ours) {
			shmdt(st->e[i].ours);
			st->e[i].ours = NULL;
		}
	return 0;
}

static void sysv_free_ctx(void *state)
{
	struct seg_table *st = state;

	for (int i = 0; i < st->n; i++) {
		/* the restart failed: what ckpt made goes (with the
		 * half-built processes, if they had attached it) */
		if (st->e[i].ours)
			shmdt(st->e[i].ours);
		if (st->e[i].made && !*st->released)
			shmctl(st->e[i].s.shmid, IPC_RMID, NULL);
		free(st->e[i].data.rec);
	}
	free(st->e);
	id_table_free(&st->ids);
	id_table_free(&st->shmids);
	free(st);
}

static void sysv_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_SYSV_SHM) {
		const struct rec_sysv_shm *s = r->data;

		info_u64(o, "id", s->id);
		info_u64(o, "shmid", (uint32_t)s->shmid);
		info_hex(o, "key", (uint32_t)s->key);
		info_u64(o, "size", s->size);
		info_hex(o, "mode", s->mode);
		info_u64(o, "uid", s->uid);
		info_u64(o, "gid", s->gid);
		info_u64(o, "cpid", s->cpid);
		info_str(o, "flags", s->flags & SYSV_SHM_DEST ?
			 (s->flags & SYSV_SHM_LOCKED ? "dest,locked" : "dest") :
			 s->flags & SYSV_SHM_LOCKED ? "locked" : "");
	} else {
		data_runs_show(o, r);
	}
}

static const struct rec_desc sysvshm_recs[] = {
	{ REC_SYSV_SHM, "SYSV_SHM", sizeof(struct rec_sysv_shm) },
	{ REC_SYSV_DATA, "SYSV_DATA", sizeof(struct rec_file_data) },
	{ 0 }
};

const struct kind_ops kind_sysvshm = {
	.name = "sysvshm",
	.recs = sysvshm_recs,
	.phase = PHASE_IMAGE,
	.dump_size = sizeof(struct sysv_cpt),
	.dump_free = sysv_dump_free,
	.load = sysv_load,
	.check = sysv_check,
	.restore_end = sysv_restore_end,
	.free_ctx = sysv_free_ctx,
	.show = sysv_show,
};
