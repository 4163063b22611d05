/* mntns_dump.c - checkpoint of a mount namespace: its mounts as
 * /proc/PID/mountinfo lists them (those reachable from PID's root), in
 * tree order, each said how to make it again: a bind of the host path
 * that has the same subtree (found in ckpt's own mountinfo, the host's
 * view), a new instance (proc, sysfs, devpts, mqueue, cgroup2, overlay
 * with its options), a tmpfs with its files, or a bind of an earlier
 * mount of the same filesystem.  A tmpfs's files are read through a
 * detached copy of that one mount (open_tree), so that nothing mounted
 * over it or below it hides them. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/mount.h>

#include "mntns.h"
#include "../dataruns.h"
#include "../fdpass.h"

/* One line of mountinfo, unescaped. */
struct mi {
	uint32_t id, parent, dev;
	char *root, *mp, *type, *source, *opts;
	uint32_t flags, shared, master, prop;
	bool sb_ro, done;
	int order;		/* index in the saved order, -1: not yet */
};

struct mi_list {
	struct mi *m;
	size_t n, cap;
	char *buf;
};

static void mi_free(struct mi_list *l)
{
	free(l->m);
	free(l->buf);
}

/* \ooo escapes, in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

static const struct { const char *name; uint32_t flag; } mnt_opts[] = {
	{ "ro", MNT_F_RDONLY }, { "rw", 0 }, { "nosuid", MNT_F_NOSUID },
	{ "nodev", MNT_F_NODEV }, { "noexec", MNT_F_NOEXEC },
	{ "noatime", MNT_F_NOATIME }, { "nodiratime", MNT_F_NODIRATIME },
	{ "relatime", MNT_F_RELATIME }, { "nosymfollow", MNT_F_NOSYMFOLLOW },
};

/* The per-mount options: false for one ckpt does not know (an idmapped
 * mount), which it could not make again. */
static bool parse_flags(char *s, uint32_t *flags)
{
	char *save, *o;

	*flags = 0;
	for (o = strtok_r(s, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(mnt_opts) / sizeof(mnt_opts[0]); i++)
			if (!strcmp(o, mnt_opts[i].name))
				break;
		if (i == sizeof(mnt_opts) / sizeof(mnt_opts[0]))
			return false;
		*flags |= mnt_opts[i].flag;
	}
	return true;
}

/* The super options without "ro"/"rw" (sb_ro says which), in place. */
static void strip_rw(struct mi *m)
{
	char *s = m->opts, *d = m->opts, *o = s;

	for (;;) {
		char *e = o;

		while (*e && *e != ',')
			e += e[0] == '\\' && e[1] ? 2 : 1;
		size_t n = e - o;
		bool end = !*e;

		if (n == 2 && !strncmp(o, "ro", 2))
			m->sb_ro = true;
		else if (!(n == 2 && !strncmp(o, "rw", 2)) && n) {
			if (d != m->opts)
				*d++ = ',';
			memmove(d, o, n);
			d += n;
		}
		if (end)
			break;
		o = e + 1;
	}
	*d = 0;
}

/* One line: "ID PARENT MAJ:MIN ROOT MP OPTS [OPTIONAL...] - TYPE SOURCE
 * SUPEROPTS".  0, or -EINVAL for a line it cannot read. */
static int parse_line(char *line, struct mi *m)
{
	char *f[6], *save, *tok;
	unsigned maj, min;
	int i;

	memset(m, 0, sizeof(*m));
	m->order = -1;
	for (i = 0; i < 6 && (tok = strtok_r(i ? NULL : line, " ", &save)); i++)
		f[i] = tok;
	if (i < 6 || sscanf(f[0], "%u", &m->id) != 1 || sscanf(f[1], "%u", &m->parent) != 1 ||
	    sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return -EINVAL;
	m->dev = maj << 20 | min;
	m->root = f[3];
	m->mp = f[4];
	if (!parse_flags(f[5], &m->flags))
		return -EOPNOTSUPP;
	while ((tok = strtok_r(NULL, " ", &save)) && strcmp(tok, "-")) {
		if (!strncmp(tok, "shared:", 7))
			m->shared = strtoul(tok + 7, NULL, 10);
		else if (!strncmp(tok, "master:", 7))
			m->master = strtoul(tok + 7, NULL, 10);
		else if (!strcmp(tok, "unbindable"))
			m->prop |= MNT_P_UNBINDABLE;
	}
	m->type = strtok_r(NULL, " ", &save);
	m->source = strtok_r(NULL, " ", &save);
	m->opts = strtok_r(NULL, " \n", &save);
	if (!tok || !m->type || !m->source || !m->opts)
		return -EINVAL;
	unescape(m->root);
	unescape(m->mp);
	unescape(m->source);
	unescape(m->type);
	strip_rw(m);
	return 0;
}

/* The lines of a mountinfo in l->buf into l->m; @strict: a per-mount
 * option ckpt does not know is refused (the container's), else the
 * mount is left out (the host's, where it does not matter).  0, or
 * -errno (not reported). */
static int mi_parse(struct mi_list *l, bool strict, char **bad)
{
	char *line, *save;

	for (line = strtok_r(l->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mi m;
		int ret = parse_line(line, &m);

		*bad = m.mp;
		if (ret == -EOPNOTSUPP && !strict)
			continue;
		if (ret)
			return ret;
		if (MNT_PUSH(l->m, l->n, l->cap, m))
			return -ENOMEM;
	}
	return 0;
}

/* @pid's mountinfo (0: ckpt's own, the host's view). */
static int mi_read(struct ckpt_log *log, pid_t pid, struct mi_list *l)
{
	char path[64], *bad = NULL;
	int ret;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	ret = file_read(path, &l->buf, NULL);
	if (ret)
		return log_err(log, -ret, "%s:", path);
	ret = mi_parse(l, pid, &bad);
	if (ret == -EOPNOTSUPP)
		return log_err(log, EOPNOTSUPP, "pid %d: mount %s: options ckpt cannot make again (an idmapped mount?)",
			       pid, bad);
	if (ret)
		return log_err(log, -ret, "%s: cannot parse it:", path);
	return 0;
}

/* @sub below @top (or equal), both absolute: the rest, "" or "/x". */
static const char *below(const char *top, const char *sub)
{
	size_t n = strlen(top);

	if (!strcmp(top, "/"))
		return sub[1] ? sub : "";
	if (strncmp(top, sub, n) || (sub[n] && sub[n] != '/'))
		return NULL;
	return sub + n;
}

/* Where the host (ckpt's own mount namespace) has the subtree @m
 * mounts: a mount of the same filesystem whose root holds it. */
static int host_path(struct ckpt_log *log, pid_t pid, const struct mi_list *host,
		     const struct mi *m, char *out, size_t n)
{
	const struct mi *best = NULL;
	struct stat sb;

	for (size_t i = 0; i < host->n; i++) {
		const struct mi *h = &host->m[i];
		const char *rest;

		if (h->dev != m->dev || !(rest = below(h->root, m->root)))
			continue;
		if (!best || strlen(h->root) > strlen(best->root))
			best = h;
	}
	if (!best)
		return 1;
	if ((size_t)snprintf(out, n, "%s%s", !strcmp(best->mp, "/") ? "" : best->mp,
			     below(best->root, m->root)) >= n)
		return log_err(log, ENAMETOOLONG, "pid %d: mount %s (%s): its host path is too long",
			       pid, m->mp, m->type);
	if (!out[0])
		strcpy(out, "/");
	if (stat(out, &sb))
		return log_err(log, errno, "pid %d: mount %s (%s): its host path %s:", pid, m->mp,
			       m->type, out);
	return 0;
}

static const char *const new_types[] = { "proc", "sysfs", "cgroup2", NULL };
static const char *const new_if_own[] = { "devpts", "mqueue", "overlay", NULL };

static bool in(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (!strcmp(s, *l))
			return true;
	return false;
}

static const char *rel(const char *p)
{
	return p + (*p == '/');
}

struct saving {
	struct cpt_ctx *c;
	pid_t pid;
	struct mi_list own, host;
	struct mi **order;	/* the tree, parents first */
	size_t n;
	int sock;		/* to the child that clones the tmpfs mounts */
};

static int refuse(struct saving *s, const struct mi *m, const char *why)
{
	return log_err(s->c->log, EOPNOTSUPP, "pid %d: mount %s (%s): %s", s->pid, m->mp,
		       m->type, why);
}

static bool group_before(struct saving *s, uint32_t g, size_t upto)
{
	for (size_t i = 0; g && i < upto; i++)
		if (s->order[i]->shared == g)
			return true;
	return false;
}

/* What the @upto-th mount @m is made again as a bind of: a later member
 * of a peer group (or a slave of one) binds the group's first mount, made
 * shared before it; any other the earliest saved mount of its filesystem
 * whose root holds its own.  NULL if none does. */
static const struct mi *peer_of(struct saving *s, const struct mi *m, size_t upto)
{
	uint32_t group = m->shared && group_before(s, m->shared, upto) ? m->shared : m->master;

	for (size_t i = 0; i < upto; i++) {
		const struct mi *e = s->order[i];

		if (group ? e->shared == group : e->dev == m->dev)
			return below(e->root, m->root) ? e : NULL;
	}
	return NULL;
}

static bool group_in(struct saving *s, uint32_t g)
{
	for (size_t i = 0; g && i < s->n; i++)
		if (s->order[i]->shared == g)
			return true;
	return false;
}

static bool same_dev_before(struct saving *s, const struct mi *m, size_t upto)
{
	for (size_t i = 0; i < upto; i++)
		if (s->order[i]->dev == m->dev)
			return true;
	return false;
}

static int peer(struct saving *s, size_t i, struct rec_mnt *r, char *peer_root)
{
	const struct mi *m = s->order[i], *p = peer_of(s, m, i);

	if (!p)
		return refuse(s, m, "a bind of part of another mount ckpt cannot make again");
	r->how = MNT_PEER;
	r->bind_of = p->id;
	snprintf(peer_root, CKPT_PATH_MAX, "%s", rel(below(p->root, m->root)));
	return 0;
}

/* How @m (the @i-th) is made again: fills the record, *host. */
static int classify(struct saving *s, size_t i, struct rec_mnt *r, char *host, size_t hn,
		    char *peer_root)
{
	const struct mi *m = s->order[i];
	int ret = 0;

	host[0] = 0;
	if (!strcmp(m->type, "autofs") || !strncmp(m->type, "fuse", 4))
		return refuse(s, m, "ckpt cannot make this kind of mount again");
	if (strstr(m->root, "//deleted"))
		return refuse(s, m, "its source is gone (deleted)");
	if (m->master && !group_in(s, m->master))
		r->prop |= MNT_P_EXT_SLAVE;
	else
		r->master = m->master;
	if (r->master && !group_before(s, r->master, i))
		return refuse(s, m, "a slave of a peer group whose first mount comes after it");
	if (m->master && m->shared && group_before(s, m->shared, i))
		return refuse(s, m, "both a slave and a later member of a peer group");
	/* a later member of a peer group, or a slave of one, binds the
	 * group's first; a proc, sysfs or cgroup2 is a new instance (its
	 * namespaces' own) unless it binds an earlier one; any other that
	 * the host has binds the host's path */
	if ((m->shared && group_before(s, m->shared, i)) || r->master ||
	    (in(m->type, new_types) && same_dev_before(s, m, i))) {
		ret = peer(s, i, r, peer_root);
	} else if (in(m->type, new_types)) {
		r->how = MNT_NEW;
	} else if ((ret = host_path(s->c->log, s->pid, &s->host, m, host, hn)) <= 0) {
		if (ret)
			return ret;
		r->how = MNT_BIND;
	} else if ((ret = 0, same_dev_before(s, m, i))) {
		ret = peer(s, i, r, peer_root);
	} else if (!strcmp(m->type, "tmpfs")) {
		r->how = MNT_NEW_TMPFS;
	} else if (in(m->type, new_if_own)) {
		r->how = MNT_NEW;
	} else {
		return refuse(s, m, "its filesystem is not mounted anywhere on the host, to bind it from");
	}
	if (ret)
		return ret;
	if ((r->prop & MNT_P_EXT_SLAVE) && r->how != MNT_BIND)
		return refuse(s, m, "a slave of a peer group outside the container");
	if (!i && m->shared)
		for (size_t k = 1; k < s->n; k++)
			if (s->order[k]->shared == m->shared || s->order[k]->master == m->shared)
				return refuse(s, m, "the root shares its peer group with other mounts");
	return 0;
}

static bool placed(const struct saving *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->order[i]->id == id)
			return true;
	return false;
}

/* Parents before children, from the root: the mount at "/" whose parent
 * is not in the list (the one over every other at "/"). */
static int tree_order(struct saving *s)
{
	struct mi_list *l = &s->own;

	if (l->n > MNT_MAX)
		return log_err(s->c->log, E2BIG, "pid %d: %zu mounts, more than %d", s->pid, l->n,
			       MNT_MAX);
	s->order = calloc(l->n + 1, sizeof(*s->order));
	if (!s->order)
		return log_err(s->c->log, ENOMEM, "mounts:");
	for (size_t i = 0; i < l->n; i++) {
		bool orphan = true;

		for (size_t k = 0; k < l->n; k++)
			orphan &= l->m[k].id != l->m[i].parent;
		if (orphan && !strcmp(l->m[i].mp, "/")) {
			s->order[s->n++] = &l->m[i];
			l->m[i].done = true;
			break;
		}
	}
	if (!s->n)
		return log_err(s->c->log, EOPNOTSUPP, "pid %d: its root is not a mount point (a chroot?): ckpt saves the mounts of a root it pivoted into",
			       s->pid);
	/* mountinfo's order (the order they were mounted in, which restart
	 * keeps), but a mount moved under one mounted after it comes after
	 * its parent */
	for (size_t before = 0; before != s->n;) {
		before = s->n;
		for (size_t k = 0; k < l->n; k++)
			if (!l->m[k].done && placed(s, l->m[k].parent)) {
				l->m[k].done = true;
				s->order[s->n++] = &l->m[k];
			}
	}
	for (size_t k = 0; k < l->n; k++)
		if (!l->m[k].done)
			return log_err(s->c->log, EOPNOTSUPP, "pid %d: mount %s (%s) is not below its root mount",
				       s->pid, l->m[k].mp, l->m[k].type);
	for (size_t i = 0; i < s->n; i++)
		s->order[i]->order = i;
	return 0;
}

static int write_mnt(struct saving *s, const struct mi *m, struct rec_mnt *r,
		     const char *host, const char *peer_root)
{
	struct cpt_ctx *c = s->c;
	const char *str[6] = { rel(m->mp), m->type, m->source, rel(m->root), m->opts, host };
	uint32_t *len[6] = { &r->mp_len, &r->type_len, &r->source_len, &r->root_len,
			     &r->opts_len, &r->host_len };
	uint64_t total = sizeof(*r);
	int ret;

	if (r->how == MNT_NEW_TMPFS)
		str[3] = "";	/* the subtree saved is the new tmpfs's root */
	if (r->how == MNT_PEER)
		str[3] = peer_root;
	for (int i = 0; i < 6; i++) {
		*len[i] = strlen(str[i]) + 1;
		if (*len[i] > CKPT_PATH_MAX)
			return refuse(s, m, "a name or its options are too long");
		total += *len[i];
	}
	ret = iw_begin(&c->w, REC_MNT, total);
	if (!ret)
		ret = iw_write(&c->w, r, sizeof(*r));
	for (int i = 0; i < 6 && !ret; i++)
		ret = iw_write(&c->w, str[i], *len[i]);
	return ret ? ret : iw_end(&c->w);
}

/* ---- a tmpfs's files ---- */

struct walk {
	struct saving *s;
	const struct mi *m;
	uint32_t nr;		/* files written */
	struct { dev_t dev; ino_t ino; uint32_t n; } *links;
	size_t nr_links, cap_links;
	char path[CKPT_PATH_MAX];
	char target[CKPT_PATH_MAX];	/* the last symlink's */
};

static int walk_refuse(struct walk *w, const char *why)
{
	return log_err(w->s->c->log, EOPNOTSUPP, "pid %d: mount %s (%s): file %s: %s",
		       w->s->pid, w->m->mp, w->m->type, w->path, why);
}

static int write_data(struct walk *w, int fd, uint64_t size)
{
	struct cpt_ctx *c = w->s->c;
	struct data_runs rs = { 0 };
	char *buf = malloc(MNT_DATA_MAX);
	int ret = buf ? data_runs_find(fd, size, &rs) : -ENOMEM;

	for (uint32_t i = 0; i < rs.n && !ret; i++)
		for (uint64_t off = rs.r[i].off; off < rs.r[i].off + rs.r[i].len && !ret;) {
			uint64_t left = rs.r[i].off + rs.r[i].len - off;
			struct rec_mnt_data d = { .off = off };
			ssize_t k = pread(fd, buf, left < MNT_DATA_MAX ? left : MNT_DATA_MAX, off);

			if (k <= 0) {
				ret = k ? -errno : -ENODATA;
				break;
			}
			d.len = k;
			ret = iw_begin(&c->w, REC_MNT_DATA, sizeof(d) + k);
			if (!ret)
				ret = iw_write(&c->w, &d, sizeof(d));
			if (!ret)
				ret = iw_write(&c->w, buf, k);
			if (!ret)
				ret = iw_end(&c->w);
			off += k;
		}
	free(buf);
	data_runs_free(&rs);
	return ret ? log_err(c->log, -ret, "pid %d: mount %s: reading %s:", w->s->pid,
			     w->m->mp, w->path) : 0;
}

/* The file at w->path (@name in @dir), then what a directory holds. */
static int walk_file(struct walk *w, int dir, const char *name);

static int walk_dir(struct walk *w, int fd)
{
	size_t n = strlen(w->path);
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		close(fd);
		return log_err(w->s->c->log, errno, "pid %d: mount %s: %s:", w->s->pid, w->m->mp,
			       w->path);
	}
	while (!ret && (errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n + strlen(e->d_name) + 2 > sizeof(w->path))
			return closedir(d), walk_refuse(w, "a path too long");
		snprintf(w->path + n, sizeof(w->path) - n, "%s%s", n ? "/" : "", e->d_name);
		ret = walk_file(w, dirfd(d), e->d_name);
		w->path[n] = 0;
	}
	if (!ret && errno)
		ret = log_err(w->s->c->log, errno, "pid %d: mount %s: reading %s:", w->s->pid,
			      w->m->mp, w->path);
	closedir(d);
	return ret;
}

static int link_of(struct walk *w, const struct stat *sb, uint32_t *link)
{
	*link = 0;
	if (S_ISDIR(sb->st_mode) || sb->st_nlink < 2)
		return 0;
	for (size_t i = 0; i < w->nr_links; i++)
		if (w->links[i].ino == sb->st_ino && w->links[i].dev == sb->st_dev) {
			*link = w->links[i].n;
			return 0;
		}
	return MNT_PUSH(w->links, w->nr_links, w->cap_links,
			((typeof(*w->links)){ sb->st_dev, sb->st_ino, w->nr + 1 }))
		? log_err(w->s->c->log, ENOMEM, "links:") : 0;
}

/* Its record's fields from @sb; a symlink's target into w->target.
 * Refused: extended attributes (@fd, a file or directory open, or by
 * path), a file too big. */
static int describe(struct walk *w, int dir, const char *name, int fd,
		    const struct stat *sb, struct rec_mnt_file *f)
{
	char p[64 + 256];
	ssize_t k;
	int ret;

	snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", dir, name);
	if ((fd >= 0 ? flistxattr(fd, NULL, 0) : llistxattr(p, NULL, 0)) > 0)
		return walk_refuse(w, "it has extended attributes, which ckpt does not save");
	ret = link_of(w, sb, &f->link);
	if (ret)
		return ret;
	f->mode = sb->st_mode;
	f->uid = sb->st_uid;
	f->gid = sb->st_gid;
	f->size = S_ISREG(sb->st_mode) && !f->link ? (uint64_t)sb->st_size : 0;
	f->rdev = S_ISCHR(sb->st_mode) || S_ISBLK(sb->st_mode) ? sb->st_rdev : 0;
	f->atime = sb->st_atim.tv_sec;
	f->atime_ns = sb->st_atim.tv_nsec;
	f->mtime = sb->st_mtim.tv_sec;
	f->mtime_ns = sb->st_mtim.tv_nsec;
	f->path_len = strlen(w->path) + 1;
	if (f->size > MNT_FILE_SIZE_MAX)
		return walk_refuse(w, "too big");
	if (!S_ISLNK(sb->st_mode))
		return 0;
	k = readlinkat(dir, name, w->target, sizeof(w->target) - 1);
	if (k <= 0)
		return log_err(w->s->c->log, k ? errno : EINVAL, "pid %d: mount %s: %s:",
			       w->s->pid, w->m->mp, w->path);
	w->target[k] = 0;
	f->target_len = k + 1;
	return 0;
}

static int walk_file(struct walk *w, int dir, const char *name)
{
	struct cpt_ctx *c = w->s->c;
	struct rec_mnt_file f = { 0 };
	struct stat sb;
	int fd = -1, ret;

	if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return log_err(c->log, errno, "pid %d: mount %s: %s:", w->s->pid, w->m->mp,
			       w->path);
	if (w->nr == MNT_FILES_MAX)
		return walk_refuse(w, "too many files");
	/* only files and directories are opened: opening a device node
	 * could do what its driver does on open */
	if (S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode)) {
		fd = openat(dir, *name ? name : ".", O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
			    O_NONBLOCK | O_NOCTTY | O_NOATIME);
		if (fd < 0)
			return log_err(c->log, errno, "pid %d: mount %s: %s:", w->s->pid,
				       w->m->mp, w->path);
	}
	ret = describe(w, dir, name, fd, &sb, &f);
	if (!ret)
		ret = iw_begin(&c->w, REC_MNT_FILE, sizeof(f) + f.path_len + f.target_len);
	if (!ret)
		ret = iw_write(&c->w, &f, sizeof(f));
	if (!ret)
		ret = iw_write(&c->w, w->path, f.path_len);
	if (!ret && f.target_len)
		ret = iw_write(&c->w, w->target, f.target_len);
	if (!ret)
		ret = iw_end(&c->w);
	w->nr++;
	if (!ret && f.size)
		ret = write_data(w, fd, f.size);
	if (!ret && S_ISDIR(sb.st_mode))
		return walk_dir(w, fd);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* ---- the detached copies, made by a child in the namespace ---- */

static int send_fd(int sock, int fd)
{
	char c = fd < 0 ? 'n' : 'y';

	return fd_send(sock, &c, 1, &fd, fd >= 0, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	unsigned int nfd = 1;
	int fd = -1;
	char c;

	if (fd_recv(sock, &c, 1, 0, &fd, &nfd) != 1 || c != 'y' || !nfd) {
		if (nfd)
			close(fd);
		return -1;
	}
	return fd;
}

/* The cloner's own mountinfo, read through /proc/self of ckpt's /proc
 * (@proc; the namespace's /proc may be of another pid namespace). */
static int own_mounts(int proc, struct mi_list *l)
{
	int fd = openat(proc, "mountinfo", O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, len = 0;
	char *bad;
	ssize_t k = 1;

	mi_free(l);
	*l = (struct mi_list){ .buf = malloc(cap) };
	while (fd >= 0 && l->buf && k > 0) {
		if (len + 1 == cap) {
			char *b = realloc(l->buf, cap *= 2);

			if (!b)
				break;
			l->buf = b;
		}
		k = read(fd, l->buf + len, cap - 1 - len);
		len += k > 0 ? k : 0;
	}
	if (fd >= 0)
		close(fd);
	if (fd < 0 || !l->buf || k)
		return -1;
	l->buf[len] = 0;
	return mi_parse(l, false, &bad);
}

static bool ancestor(const struct mi_list *l, const struct mi *a, const struct mi *of)
{
	for (size_t depth = 0; depth < l->n; depth++) {
		const struct mi *p = NULL;

		for (size_t i = 0; i < l->n && !p; i++)
			if (l->m[i].id == of->parent)
				p = &l->m[i];
		if (!p)
			return false;
		if (p == a)
			return true;
		of = p;
	}
	return false;
}

/* The outermost mount of @l over @want (on its mountpoint or on a
 * directory above it, and not one it is mounted on): the one its path
 * reaches first, which umount2() of that path finds. */
static const struct mi *cover(const struct mi_list *l, const struct mi *want)
{
	const struct mi *best = NULL;

	for (size_t i = 0; i < l->n; i++) {
		const struct mi *c = &l->m[i];

		if (c != want && below(c->mp, want->mp) && !ancestor(l, c, want) &&
		    (!best || strlen(c->mp) <= strlen(best->mp)))
			best = c;
	}
	return best;
}

/* A detached copy of the tmpfs @m alone, in the cloner's copy of the
 * namespace: what covers it (a mount stacked on its mountpoint or on a
 * directory above it) is detached there first, the copy's mounts being
 * private.  -1 if it cannot be reached. */
static int reach(int proc, int root, const struct mi *m)
{
	const char *mp = rel(m->mp);
	struct mi_list l = { 0 };
	int fd = -1;

	for (int tries = 0; tries < 64; tries++) {
		const struct mi *want = NULL, *over;
		struct statx sx;

		if (own_mounts(proc, &l))
			break;
		for (size_t i = 0; i < l.n && !want; i++)
			if (l.m[i].dev == m->dev && !strcmp(l.m[i].mp, m->mp))
				want = &l.m[i];
		if (!want)
			break;
		over = cover(&l, want);
		if (over) {
			if (umount2(over->mp, MNT_DETACH))
				break;
			continue;
		}
		if (!statx(root, mp, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) &&
		    (sx.stx_mask & STATX_MNT_ID) && sx.stx_mnt_id == want->id)
			fd = syscall(SYS_open_tree, root, mp, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
				     AT_EMPTY_PATH);
		break;
	}
	mi_free(&l);
	return fd;
}

/* A private copy of the namespace @ns: the cloner's, its root. */
static int private_copy(int ns)
{
	if (setns(ns, CLONE_NEWNS) || unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* A copy of a namespace owned by another user namespace than the
 * copier's has every mount locked (none can be detached from it): the
 * copier joins @pid's own user namespace, if it has one, first. */
static int join_userns(pid_t pid)
{
	char path[64];
	struct stat a, b;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	if (stat(path, &a) || stat("/proc/self/ns/user", &b))
		return -1;
	if (a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWUSER))
		ret = -1;
	if (fd >= 0)
		close(fd);
	return ret;
}

/* The child: for each tmpfs to save, in order, a detached copy of that
 * one mount, made in a private copy of @pid's mount namespace of its own
 * (open_tree clones only mounts of the caller's namespace; what covers
 * one tmpfs is detached in its copy alone). */
static void cloner(struct saving *s, const struct rec_mnt *how)
{
	char path[64];
	int proc = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC), ns;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", s->pid);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (proc < 0 || ns < 0 || join_userns(s->pid))
		_exit(1);
	for (size_t i = 0; i < s->n; i++) {
		int root, fd = -1;

		if (how[i].how != MNT_NEW_TMPFS)
			continue;
		root = private_copy(ns);
		if (root >= 0) {
			fd = reach(proc, root, s->order[i]);
			close(root);
		}
		if (send_fd(s->sock, fd))
			_exit(1);
		if (fd >= 0)
			close(fd);
	}
	_exit(0);
}

static int save_all(struct saving *s, struct rec_mnt *how, char (*host)[CKPT_PATH_MAX],
		    char (*proot)[CKPT_PATH_MAX])
{
	int sv[2], ret = 0, st;
	pid_t k;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return log_err(s->c->log, errno, "socketpair:");
	k = fork();
	if (k == 0) {
		close(sv[0]);
		s->sock = sv[1];
		cloner(s, how);
	}
	close(sv[1]);
	if (k < 0)
		ret = log_err(s->c->log, errno, "fork:");
	for (size_t i = 0; i < s->n && !ret; i++) {
		const struct mi *m = s->order[i];
		struct walk w = { .s = s, .m = m };
		int fd;

		ret = write_mnt(s, m, &how[i], host[i], proot[i]);
		if (ret || how[i].how != MNT_NEW_TMPFS)
			continue;
		fd = recv_fd(sv[0]);
		if (fd < 0) {
			ret = log_err(s->c->log, EOPNOTSUPP, "pid %d: mount %s (tmpfs): cannot reach it alone to read its files",
				      s->pid, m->mp);
			break;
		}
		ret = walk_file(&w, fd, "");
		close(fd);
		free(w.links);
	}
	close(sv[0]);
	if (k > 0)
		while (waitpid(k, &st, 0) < 0 && errno == EINTR)
			;
	return ret;
}

int mntns_save(struct cpt_ctx *c, pid_t pid)
{
	struct saving s = { .c = c, .pid = pid };
	struct rec_mnt *how = NULL;
	char (*host)[CKPT_PATH_MAX] = NULL, (*proot)[CKPT_PATH_MAX] = NULL;
	int ret;

	ret = mi_read(c->log, pid, &s.own);
	if (!ret)
		ret = mi_read(c->log, 0, &s.host);
	if (!ret)
		ret = tree_order(&s);
	if (!ret) {
		how = calloc(s.n, sizeof(*how));
		host = calloc(s.n, sizeof(*host));
		proot = calloc(s.n, sizeof(*proot));
		if (!how || !host || !proot)
			ret = log_err(c->log, ENOMEM, "mounts:");
	}
	for (size_t i = 0; i < s.n && !ret; i++) {
		const struct mi *m = s.order[i];

		how[i] = (struct rec_mnt){
			.id = m->id, .parent = i ? m->parent : 0, .flags = m->flags,
			.sb_ro = m->sb_ro, .shared = m->shared, .prop = m->prop,
			.dev = m->dev,
		};
		ret = classify(&s, i, &how[i], host[i], sizeof(host[i]), proot[i]);
	}
	if (!ret)
		ret = save_all(&s, how, host, proot);
	free(how);
	free(host);
	free(proot);
	free(s.order);
	mi_free(&s.own);
	mi_free(&s.host);
	return ret;
}
