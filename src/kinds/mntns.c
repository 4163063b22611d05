/* mntns.c - the kind mntns: a container's own mount namespace (the
 * root's, NS_OWN(c, NS_MNT)), saved as its mounts (MNT), a tmpfs's files
 * after it (MNT_FILE, MNT_DATA), and made again at restart in the root's
 * new mount namespace before the kinds that open files by path.  This
 * file: the records' validation into the model, the pre-flight check,
 * `ckpt info`, the table; mntns_dump.c and mntns_restore.c do the work.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mntns.h"
#include "ns.h"
#include "ckpt.h"

static const char *const how_names[] = {
	[MNT_BIND] = "bind", [MNT_NEW] = "new", [MNT_NEW_TMPFS] = "tmpfs",
	[MNT_PEER] = "peer",
};

/* What a new instance (MNT_NEW) may be. */
static const char *const new_types[] = {
	"proc", "sysfs", "cgroup2", "devpts", "mqueue", "overlay", NULL,
};

struct mntns_rst *mntns_state(struct rst_ctx *c)
{
	return KCSTATE(c, kind_mntns);
}

/* Relative, canonical: no leading or trailing '/', no empty, "." or ".."
 * component ("" is the top itself). */
static bool rel_ok(const char *p)
{
	if (!*p)
		return true;
	if (*p == '/')
		return false;
	for (const char *c = p; c; c = strchr(c, '/')) {
		size_t n;

		c += *c == '/';
		n = strcspn(c, "/");
		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

static bool abs_ok(const char *p)
{
	return p[0] == '/' && (!p[1] || rel_ok(p + 1));
}

static int find_mnt(const struct mntns_rst *st, uint32_t id)
{
	for (uint32_t i = 0; i < st->nr; i++)
		if (st->mnts[i].m->id == id)
			return i;
	return -1;
}

static bool is_new_type(const char *type)
{
	for (int i = 0; new_types[i]; i++)
		if (!strcmp(type, new_types[i]))
			return true;
	return false;
}

static bool group_known(const struct mntns_rst *st, uint32_t g)
{
	for (uint32_t i = 0; i < st->nr; i++)
		if (st->mnts[i].m->shared == g)
			return true;
	return false;
}

/* The strings after a MNT: each exactly its length. */
static int mnt_strings(struct rec *r, struct mnt_model *x)
{
	const struct rec_mnt *m = r->data;
	const uint32_t len[6] = { m->mp_len, m->type_len, m->source_len, m->root_len,
				  m->opts_len, m->host_len };
	const char **out[6] = { &x->mp, &x->type, &x->source, &x->root, &x->opts, &x->host };
	uint64_t off = sizeof(*m);

	for (int i = 0; i < 6; i++) {
		if (len[i] > CKPT_PATH_MAX || !(*out[i] = rec_str(r, off, len[i])))
			return -1;
		off += len[i];
	}
	return off == r->data_len ? 0 : -1;
}

static int load_mnt(struct rst_ctx *c, struct mntns_rst *st, struct rec *r)
{
	const struct rec_mnt *m = r->data;
	struct mnt_model x = { .m = m, .parent = -1, .bind_of = -1 };
	const char *bad = NULL;

	if (st->nr == MNT_MAX)
		bad = "too many mounts";
	else if (mnt_strings(r, &x))
		bad = "bad strings";
	else if (!m->id || find_mnt(st, m->id) >= 0)
		bad = "bad or repeated id";
	else if (m->reserved)
		bad = "reserved not 0";
	else if (m->how < MNT_BIND || m->how > MNT_HOW_MAX || (m->flags & ~MNT_F_ALL) ||
		 m->sb_ro > 1 || (m->prop & ~MNT_P_ALL))
		bad = "bad how, flags or propagation";
	else if (!rel_ok(x.mp) || !rel_ok(x.root))
		bad = "mountpoint or root not a relative canonical path";
	else if (!*x.type)
		bad = "no filesystem type";
	else if (st->nr ? (x.parent = find_mnt(st, m->parent)) < 0 : m->parent || *x.mp)
		bad = "not after its parent (the first, the root, at \"\")";
	else if (m->how == MNT_BIND ? !abs_ok(x.host) : *x.host != 0)
		bad = "bad host path";
	else if ((m->how == MNT_NEW && !is_new_type(x.type)) ||
		 (m->how == MNT_NEW_TMPFS && (strcmp(x.type, "tmpfs") || *x.root)))
		bad = "a filesystem type it cannot be made as";
	else if (m->how == MNT_PEER ? (x.bind_of = find_mnt(st, m->bind_of)) < 0 : m->bind_of != 0)
		bad = "bad bind_of";
	else if (m->master && (m->master == m->shared || !group_known(st, m->master)))
		bad = "a slave of a group no earlier mount is in";
	else if ((m->prop & MNT_P_EXT_SLAVE) && (m->master || m->how != MNT_BIND))
		bad = "a slave outside the container that is not a bind";
	else if ((m->prop & MNT_P_UNBINDABLE) && m->shared)
		bad = "both shared and unbindable";
	else if (!st->nr && m->how == MNT_PEER)
		bad = "the root a bind of another";
	if (bad)
		return log_err(c->log, EBADMSG, "bad MNT record %llu: %s",
			       (unsigned long long)r->index, bad);
	if (MNT_PUSH(st->mnts, st->nr, st->cap, x))
		return log_err(c->log, ENOMEM, "mounts:");
	st->mnts[st->nr - 1].rec = r->data;
	r->data = NULL;
	return 0;
}

static bool type_ok(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFIFO: case S_IFSOCK:
	case S_IFCHR: case S_IFBLK:
		return true;
	}
	return false;
}

static const char *file_bad(struct rec *r, const struct mnt_model *mm, struct mnt_file *x)
{
	const struct rec_mnt_file *f = r->data;
	uint32_t type = f->mode & S_IFMT;

	if (!mm || mm->m->how != MNT_NEW_TMPFS)
		return "not after a tmpfs MNT";
	if (mm->nr_files == MNT_FILES_MAX)
		return "too many files";
	if (f->path_len > CKPT_PATH_MAX || f->target_len > CKPT_PATH_MAX ||
	    r->data_len != sizeof(*f) + f->path_len + f->target_len ||
	    !(x->path = rec_str(r, sizeof(*f), f->path_len)) || !rel_ok(x->path))
		return "bad path";
	if (type == S_IFLNK ? !(x->target = rec_str(r, sizeof(*f) + f->path_len, f->target_len))
			    : f->target_len != 0)
		return "bad symlink target";
	if (!type_ok(f->mode) || (f->mode & ~(S_IFMT | 07777)))
		return "bad mode";
	if (!mm->nr_files != !*x->path || (!*x->path && type != S_IFDIR))
		return "the first file is not the root directory, or another is";
	if (f->link && (f->link > mm->nr_files || type == S_IFDIR || f->size ||
			(mm->files[f->link - 1].f->mode & S_IFMT) != type ||
			mm->files[f->link - 1].f->link))
		return "bad hard link";
	if ((type != S_IFREG && f->size) || f->size > MNT_FILE_SIZE_MAX)
		return "bad size";
	if (type != S_IFCHR && type != S_IFBLK && f->rdev)
		return "bad rdev";
	if (f->atime_ns >= 1000000000 || f->mtime_ns >= 1000000000)
		return "bad times";
	return NULL;
}

static int load_file(struct rst_ctx *c, struct mntns_rst *st, struct rec *r)
{
	struct mnt_model *mm = st->nr ? &st->mnts[st->nr - 1] : NULL;
	struct mnt_file x = { .f = r->data };
	const char *bad = file_bad(r, mm, &x);

	if (bad)
		return log_err(c->log, EBADMSG, "bad MNT_FILE record %llu: %s",
			       (unsigned long long)r->index, bad);
	if (MNT_PUSH(mm->files, mm->nr_files, mm->cap_files, x))
		return log_err(c->log, ENOMEM, "mount files:");
	mm->files[mm->nr_files - 1].rec = r->data;
	r->data = NULL;
	return 0;
}

/* The bytes stay in the image: where they are. */
static int load_data(struct rst_ctx *c, struct mntns_rst *st, struct rec *r)
{
	const struct rec_mnt_data *d = r->data;
	struct mnt_model *mm = st->nr ? &st->mnts[st->nr - 1] : NULL;
	struct mnt_file *f = mm && mm->nr_files ? &mm->files[mm->nr_files - 1] : NULL;
	struct mnt_run run = { d->off, r->off + sizeof(*d), d->len };

	if (!f || !S_ISREG(f->f->mode) || f->f->link)
		return log_err(c->log, EBADMSG, "MNT_DATA record %llu does not follow a regular MNT_FILE",
			       (unsigned long long)r->index);
	if (d->reserved)
		return log_err(c->log, EBADMSG, "bad MNT_DATA record %llu: reserved not 0",
			       (unsigned long long)r->index);
	if (!d->len || d->len > MNT_DATA_MAX || r->data_len != sizeof(*d) + d->len ||
	    d->off < f->next || d->off > f->f->size || d->len > f->f->size - d->off)
		return log_err(c->log, EBADMSG, "bad MNT_DATA record %llu: its %u bytes at %llu are not within file %s's %llu, after the last",
			       (unsigned long long)r->index, d->len, (unsigned long long)d->off,
			       f->path, (unsigned long long)f->f->size);
	if (MNT_PUSH(f->runs, f->nr_runs, f->cap_runs, run))
		return log_err(c->log, ENOMEM, "mount file data:");
	f->next = d->off + d->len;
	return 0;
}

static int mntns_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct mntns_rst *st = kind_ctx_state(c, &kind_mntns, sizeof(*st));
	int ret = rec_want(c->log, r, r->type == REC_MNT ? sizeof(struct rec_mnt) :
				      r->type == REC_MNT_FILE ? sizeof(struct rec_mnt_file) :
				      sizeof(struct rec_mnt_data), rec_type_name(r->type));

	if (ret)
		return ret;
	if (!st)
		return log_err(c->log, ENOMEM, "mounts:");
	if (!c->nr_tasks || t != c->tasks[0])
		return log_err(c->log, EBADMSG, "%s record %llu: not the root's",
			       rec_type_name(r->type), (unsigned long long)r->index);
	if (r->type == REC_MNT)
		return load_mnt(c, st, r);
	if (r->type == REC_MNT_FILE)
		return load_file(c, st, r);
	return load_data(c, st, r);
}

/* --external mnt[KEY]:PATH ("KEY:PATH" here): the host bind whose
 * mountpoint in the container is KEY ("/usr") is bound from PATH. */
static int externals(struct rst_ctx *c, struct mntns_rst *st)
{
	for (int k = 0; c->opts && k < c->opts->nr_external; k++) {
		const char *e = c->opts->external[k], *colon = strchr(e, ':');
		uint32_t i;

		if (!colon || e[0] != '/' || colon[1] != '/')
			return log_err(c->log, EINVAL, "--external %s: want mnt[/MOUNTPOINT]:/PATH", e);
		for (i = 0; i < st->nr; i++)
			if ((size_t)(colon - e - 1) == strlen(st->mnts[i].mp) &&
			    !strncmp(e + 1, st->mnts[i].mp, colon - e - 1))
				break;
		if (i == st->nr || st->mnts[i].m->how != MNT_BIND)
			return log_err(c->log, ENOENT, "--external %s: the container has no bind of a host path at %.*s",
				       e, (int)(colon - e), e);
		st->mnts[i].external = colon + 1;
	}
	return 0;
}

/* Before any process: a container's image has its mounts exactly when
 * its mount namespace is its own (made, or joined as it is: --join-ns);
 * the host paths to bind are here. */
static int mntns_check(struct rst_ctx *c, struct rst_task *t)
{
	struct mntns_rst *st = mntns_state(c);
	bool have = st && st->nr, own = NS_OWN(c, NS_MNT) || (c->ns_join & (1u << NS_MNT));
	struct stat sb;
	int ret;

	if (t != c->tasks[0])
		return 0;
	if ((c->head.flags & HEAD_CONTAINER) && own != have)
		return log_err(c->log, EBADMSG, "a container's image has MNT records exactly when its root has a mount namespace of its own");
	if (!have || !NS_OWN(c, NS_MNT))
		return c->opts && c->opts->nr_external ?
			log_err(c->log, EINVAL, "--external: the image has no mounts of the container's own to make") : 0;
	ret = externals(c, st);
	for (uint32_t i = 0; i < st->nr && c->here && !ret; i++) {
		const struct mnt_model *m = &st->mnts[i];
		const char *host = m->external ? m->external : m->host;

		if (m->m->how == MNT_BIND && stat(host, &sb))
			ret = log_err(c->log, errno, "mount /%s (%s): its host path %s, to bind it from:",
				      m->mp, m->type, host);
	}
	return ret;
}

static int mntns_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	if (t != c->tasks[0] || !NS_OWN(c, NS_MNT))
		return 0;
	return mntns_save(c, t->pid);
}

static int mntns_restore(struct rst_ctx *c, struct rst_task *t)
{
	const struct mntns_rst *st = mntns_state(c);

	if (t != c->tasks[0] || !NS_OWN(c, NS_MNT))
		return 0;
	return mntns_build(c, st, t->rm.pid);
}

static void mntns_free_ctx(void *state)
{
	struct mntns_rst *st = state;

	for (uint32_t i = 0; st && i < st->nr; i++) {
		for (uint32_t k = 0; k < st->mnts[i].nr_files; k++) {
			free(st->mnts[i].files[k].runs);
			free(st->mnts[i].files[k].rec);
		}
		free(st->mnts[i].files);
		free(st->mnts[i].rec);
	}
	if (st)
		free(st->mnts);
	free(state);
}

static void show_mnt(struct info_out *o, const struct rec *r)
{
	const struct rec_mnt *m = r->data;
	struct mnt_model x;

	info_u64(o, "id", m->id);
	info_u64(o, "parent", m->parent);
	info_str(o, "how", m->how >= MNT_BIND && m->how <= MNT_HOW_MAX ? how_names[m->how] : "?");
	info_hex(o, "flags", m->flags);
	info_u64(o, "sb_ro", m->sb_ro);
	info_u64(o, "shared", m->shared);
	info_u64(o, "master", m->master);
	info_hex(o, "prop", m->prop);
	info_u64(o, "bind_of", m->bind_of);
	info_hex(o, "dev", m->dev);
	if (mnt_strings((struct rec *)r, &x))
		return;
	info_str(o, "mountpoint", x.mp);
	info_str(o, "type", x.type);
	info_str(o, "source", x.source);
	info_str(o, "root", x.root);
	info_str(o, "options", x.opts);
	info_str(o, "host", x.host);
}

static void show_file(struct info_out *o, const struct rec *r)
{
	const struct rec_mnt_file *f = r->data;
	const char *p = rec_str(r, sizeof(*f), f->path_len);

	info_str(o, "path", p ? p : "?");
	info_hex(o, "mode", f->mode);
	info_u64(o, "uid", f->uid);
	info_u64(o, "gid", f->gid);
	info_u64(o, "size", f->size);
	info_u64(o, "link", f->link);
	if (f->target_len && (p = rec_str(r, sizeof(*f) + f->path_len, f->target_len)))
		info_str(o, "target", p);
}

static void mntns_show(struct info_out *o, const struct rec *r)
{
	const struct rec_mnt_data *d = r->data;

	if (r->type == REC_MNT)
		show_mnt(o, r);
	else if (r->type == REC_MNT_FILE)
		show_file(o, r);
	else
		info_u64(o, "off", d->off), info_u64(o, "len", d->len);
}

static const struct rec_desc mntns_recs[] = {
	{ REC_MNT, "MNT", sizeof(struct rec_mnt) },
	{ REC_MNT_FILE, "MNT_FILE", sizeof(struct rec_mnt_file) },
	{ REC_MNT_DATA, "MNT_DATA", sizeof(struct rec_mnt_data) },
	{ 0 },
};

const struct kind_ops kind_mntns = {
	.name = "mntns",
	.recs = mntns_recs,
	.phase = PHASE_IMAGE,
	.dump = mntns_dump,
	.load = mntns_load,
	.check = mntns_check,
	.restore = mntns_restore,
	.free_ctx = mntns_free_ctx,
	.show = mntns_show,
};

/* ---- paths of the container, before its mounts exist ---- */

/* The mount of @st whose mountpoint holds @path (relative), the last
 * (topmost) of the deepest: *rest, the path below it. */
static int mount_of(const struct mntns_rst *st, const char *path, const char **rest)
{
	int best = -1;
	size_t len = 0;

	for (uint32_t i = 0; i < st->nr; i++) {
		const char *mp = st->mnts[i].mp;
		size_t n = strlen(mp);

		if (n && (strncmp(path, mp, n) || (path[n] && path[n] != '/')))
			continue;
		if (best < 0 || n >= len) {
			best = i;
			len = n;
		}
	}
	*rest = path + len + (path[len] == '/');
	return best;
}

static void file_stat(const struct rec_mnt_file *f, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = f->mode;
	st->st_uid = f->uid;
	st->st_gid = f->gid;
	st->st_size = f->size;
	st->st_rdev = f->rdev;
	st->st_nlink = 1;
	st->st_atim = (struct timespec){ f->atime, f->atime_ns };
	st->st_mtim = (struct timespec){ f->mtime, f->mtime_ns };
}

/* @rest in mount @i (following MNT_PEER to the mount it binds). */
static int stat_in(const struct mntns_rst *st, int i, const char *rest, bool follow,
		   struct stat *out)
{
	char buf[2][CKPT_PATH_MAX + 1];
	const struct mnt_model *m;

	/* a bind_of is always an earlier mount: this ends */
	for (int k = 0; st->mnts[i].m->how == MNT_PEER; k ^= 1) {
		if ((size_t)snprintf(buf[k], sizeof(buf[k]), "%s%s%s", st->mnts[i].root,
				     *st->mnts[i].root && *rest ? "/" : "", rest) >= sizeof(buf[k]))
			return 1;
		rest = buf[k];
		i = st->mnts[i].bind_of;
	}
	m = &st->mnts[i];
	if (m->m->how == MNT_BIND) {
		const char *h = m->external ? m->external : m->host;
		char host[CKPT_PATH_MAX + 1];

		if ((size_t)snprintf(host, sizeof(host), "%s%s%s", h,
				     strcmp(h, "/") && *rest ? "/" : "", rest) >= sizeof(host))
			return 1;
		return (follow ? stat(host, out) : lstat(host, out)) ? -errno : 0;
	}
	if (m->m->how != MNT_NEW_TMPFS)
		return 1;
	for (uint32_t k = 0; k < m->nr_files; k++) {
		const struct rec_mnt_file *f = m->files[k].f;

		if (strcmp(m->files[k].path, rest))
			continue;
		if (S_ISLNK(f->mode) && follow)
			return 1;
		file_stat(f->link ? m->files[f->link - 1].f : f, out);
		return 0;
	}
	return -ENOENT;
}

int mntns_stat(struct rst_ctx *c, const char *path, bool follow, struct stat *st)
{
	const struct mntns_rst *s = mntns_state(c);
	const char *rest;
	int i;

	if (!s || !s->nr || !NS_OWN(c, NS_MNT))
		return -EINVAL;
	if (path[0] != '/')
		return -ENOENT;
	i = mount_of(s, path + 1, &rest);
	return i < 0 ? 1 : stat_in(s, i, rest, follow, st);
}
