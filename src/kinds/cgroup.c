/* cgroup.c - the cgroups of every thread, the groups themselves and the
 * cgroup namespace (CGROUP, CGROUP_PROP, CGROUP_MEMBER).
 *
 * Checkpoint: each thread's /proc/PID/task/TID/cgroup names its group in
 * every hierarchy (v1 threads may each be in their own); every group met
 * is written once (CGROUP: hierarchy, path, its directory's owner and
 * mode), its parents before it, with the files a user sets (CGROUP_PROP:
 * memory and cpu limits, pids.max, cpuset, devices.list,
 * net_prio.ifpriomap..., and the owner and mode of any file changed from
 * the hierarchy root's), and so are the groups below the root process's
 * own (empty ones too), unless that group is the root of its hierarchy
 * or ckpt's own (then they are the caller's, not the tree's).  A process
 * in a cgroup namespace other than ckpt's names it (the N-th met) with
 * its root in each hierarchy, read by a child of ckpt that joins the
 * namespace and reads the process's cgroup file.  Hierarchies are
 * reached through a detached mount of each (fsmount): nothing shows in
 * any mount table.  A hierarchy where the tree is only in the root is not
 * mounted at all: the root is written without its owner (the machine's,
 * never made again), and any process starts there.  A hierarchy that
 * cannot be mounted (one being torn down) is refused unless the process
 * is in its root.
 *
 * Restart, before any process exists (check): each hierarchy with a
 * group below its root in the image is mounted so (one that cannot be,
 * a controller this kernel lacks or has on v2 alone, refuses the
 * restart); one with only its root, when a process must be moved back
 * there (one that cannot be mounted then is warned of and left); a
 * group that exists is used as it is (the usual case on the same machine
 * after checkpoint --kill); one missing is made with its saved files,
 * parents first (so the files' checks find a group's directory an fd
 * was open on), and removed again if the restart fails.  Then two kinds,
 * for the order: kind_cgroup, early in phase IMAGE (before memory is
 * built, so its pages are charged to the group), moves the main thread
 * (and the namespace is made or joined by the puppet while it still has
 * CAP_SYS_ADMIN); kind_cgroup_threads, in phase STATE once the threads
 * exist (each made in its main thread's groups), moves each thread that
 * is in another group than its main thread.  ckpt moves them from outside
 * (the tasks file), with its own privilege.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "../proc.h"

/* What a user sets in a group, in the order it is written back: a
 * cpuset needs its cpus and mems before anything joins it, use_hierarchy
 * goes before the limits and children. */
static const char *const props_v1[] = {
	"cpuset.cpus", "cpuset.mems", "cpuset.cpu_exclusive",
	"cpuset.mem_exclusive", "memory.use_hierarchy",
	"memory.limit_in_bytes", "memory.memsw.limit_in_bytes",
	"memory.soft_limit_in_bytes", "memory.swappiness",
	"memory.move_charge_at_immigrate", "memory.oom_control",
	"memory.kmem.tcp.limit_in_bytes", "cpu.shares", "cpu.cfs_period_us",
	"cpu.cfs_quota_us", "cpu.rt_period_us", "cpu.rt_runtime_us",
	"pids.max", "blkio.weight", "net_cls.classid", "net_prio.ifpriomap",
	"devices.list", "hugetlb.2MB.limit_in_bytes",
	"hugetlb.1GB.limit_in_bytes", "notify_on_release",
	"cgroup.clone_children", NULL
};

static const char *const props_v2[] = {
	"cgroup.type", "cgroup.subtree_control", "cpuset.cpus", "cpuset.mems", "memory.min",
	"memory.low", "memory.high", "memory.max", "memory.swap.max",
	"pids.max", "cpu.max", "cpu.weight", "io.weight", NULL
};

const char *const *cg_props(bool v2)
{
	return v2 ? props_v2 : props_v1;
}

bool cg_known_prop(const char *name, bool v2)
{
	for (const char *const *p = cg_props(v2); *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

/* ---- hierarchies (both sides) ---- */

static int fs_set(int fs, const char *key, const char *val)
{
	return fsconfig(fs, val ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG,
			key, val, 0);
}

/* Whether @dir is reached through the mount of mountinfo id @id (not
 * one stacked on it, a bind of a subgroup or a tmpfs). */
static bool top_mount_is(const char *dir, unsigned long long id)
{
	struct statx stx;

	return !statx(AT_FDCWD, dir, AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx) &&
	       (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == id;
}

/* A detached copy of a cgroup2 mount already in ckpt's mount table, of
 * the hierarchy's root as ckpt's cgroup namespace sees it (what fsmount
 * would give), writable; -1 if there is none.  Why not fsopen: making
 * the cgroup2 context costs 6-20 ms when none was made in the last half
 * second (a tiny checkpoint's whole budget), a copy 0.05 ms.  @opts gets
 * the superblock options of a cgroup2 mount seen ("" if none), for
 * fsopen's context: made without them, it would clear nsdelegate,
 * memory_recursiveprot... on the host's cgroup2 root. */
static int cg2_clone_mounted(char *opts, size_t n)
{
	struct mount_attr at = {
		.attr_clr = MOUNT_ATTR_RDONLY,
		.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	};
	char *buf, *save = NULL;
	int m = -1;

	*opts = 0;
	if (file_read("/proc/self/mountinfo", &buf, NULL))
		return -1;
	for (char *l = strtok_r(buf, "\n", &save); l && m < 0;
	     l = strtok_r(NULL, "\n", &save)) {
		char root[8], dir[MAX_PATH], src[256], sopts[256];
		char *sep = strstr(l, " - cgroup2 ");
		unsigned long long id;

		if (!sep)
			continue;
		if (!*opts && sscanf(sep + 11, "%255s %255s", src, sopts) == 2)
			snprintf(opts, n, "%s", sopts);
		/* id parent major:minor root dir ...; a dir with a space
		 * or a non-root view is left to fsopen */
		if (sscanf(l, "%llu %*d %*s %7s %4095s", &id, root, dir) != 3 ||
		    strcmp(root, "/") || strchr(dir, '\\') || !top_mount_is(dir, id))
			continue;
		m = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (m >= 0 && mount_setattr(m, "", AT_EMPTY_PATH, &at, sizeof(at))) {
			close(m);
			m = -1;
		}
	}
	free(buf);
	return m;
}

/* The options of a cgroup2 superblock set again on @fs (rw and ro are
 * the mount's, not the hierarchy's). */
static int cg2_opts(int fs, char *opts)
{
	char *save = NULL;
	int ret = 0;

	for (char *o = strtok_r(opts, ",", &save); o && !ret; o = strtok_r(NULL, ",", &save))
		if (strcmp(o, "rw") && strcmp(o, "ro"))
			ret = fs_set(fs, o, NULL);
	return ret;
}

/* A mount of hierarchy @h's root, attached nowhere: the same hierarchy
 * as any mount of it (v1 is found by its exact set of controllers and
 * name, or made anew for a name alone). */
int cg_hier_mount(struct hier *h)
{
	char buf[MAX_CTRL + 1], opts[256] = "", *save = NULL;
	bool ctrl = false;
	int fs, m, ret = 0;

	if (h->v2 && (m = cg2_clone_mounted(opts, sizeof(opts))) >= 0)
		return m;
	fs = fsopen(h->v2 ? "cgroup2" : "cgroup", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (h->v2)
		ret = cg2_opts(fs, opts);
	snprintf(buf, sizeof(buf), "%s", h->ctrl);
	for (char *tok = strtok_r(buf, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "name=", 5)) {
			ret = fs_set(fs, "name", tok + 5);
		} else {
			ret = fs_set(fs, tok, NULL);
			ctrl = true;
		}
	}
	if (!ret && !h->v2 && !ctrl)
		ret = fs_set(fs, "none", NULL);
	if (!ret)
		ret = fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	m = ret ? -1 : fsmount(fs, FSMOUNT_CLOEXEC,
			       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	ret = m < 0 ? -errno : m;
	close(fs);
	return ret;
}

int cg_hier_find(const struct hiers *hs, const char *ctrl, bool v2)
{
	for (int i = 0; i < hs->n; i++)
		if (hs->e[i].v2 == v2 && !strcmp(hs->e[i].ctrl, ctrl))
			return i;
	return -1;
}

/* The index of hierarchy @ctrl, added (not mounted) if new; -1 out of
 * memory or too many. */
int cg_hier_add(struct hiers *hs, const char *ctrl, bool v2)
{
	int i = cg_hier_find(hs, ctrl, v2);
	char *dup;

	if (i >= 0)
		return i;
	if (hs->n >= MAX_HIERS || VEC_ROOM(hs->e, hs->n, hs->cap))
		return -1;
	dup = strdup(ctrl);
	if (!dup)
		return -1;
	hs->e[hs->n] = (struct hier){ dup, v2, -1, false };
	return hs->n++;
}

void cg_hiers_free(struct hiers *hs)
{
	for (int i = 0; i < hs->n; i++) {
		free(hs->e[i].ctrl);
		if (hs->e[i].fd >= 0)
			close(hs->e[i].fd);
	}
	free(hs->e);
}

/* A group's path from its hierarchy's root, for the *at() calls. */
const char *cg_rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

/* Splits @buf (a /proc/PID/cgroup) into up to MAX_HIERS lines. */
int cg_parse(char *buf, struct cg_line *l, int *n)
{
	char *save = NULL;

	*n = 0;
	for (char *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b || *n >= MAX_HIERS)
			return -EINVAL;
		*a = *b = 0;
		l[*n] = (struct cg_line){ a + 1, b + 1, !strcmp(line, "0") && !a[1] };
		(*n)++;
	}
	return 0;
}

char *cg_dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

/* ---- ckpt info ---- */

/* A value on one line: "a 1\nb 2\n" shows as "a 1; b 2". */
static void show_str(struct info_out *o, const char *key, const char *s, size_t n)
{
	char *d = malloc(2 * n + 1);
	size_t k = 0;

	for (size_t i = 0; d && i < n; i++) {
		if (s[i] != '\n') {
			d[k++] = s[i];
		} else if (i + 1 < n) {
			d[k++] = ';';
			d[k++] = ' ';
		}
	}
	if (d)
		d[k] = 0;
	info_str(o, key, d ? d : "?");
	free(d);
}

static void cg_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_CGROUP) {
		const struct rec_cgroup *g = r->data;
		const char *s = (const char *)(g + 1);

		info_u64(o, "id", g->id);
		show_str(o, "hierarchy", g->flags & CGROUP_V2 ? "(v2)" : s,
			 g->flags & CGROUP_V2 ? 4 : g->ctrl_len);
		show_str(o, "path", s + g->ctrl_len, g->path_len);
		info_u64(o, "uid", g->uid);
		info_u64(o, "gid", g->gid);
		info_hex(o, "mode", g->mode);
	} else if (r->type == REC_CGROUP_PROP) {
		const struct rec_cgroup_prop *p = r->data;
		const char *s = (const char *)(p + 1);

		info_u64(o, "group", p->group);
		show_str(o, "name", s, p->name_len);
		if (p->flags & CGPROP_VALUE)
			show_str(o, "value", s + p->name_len, p->value_len);
		if (p->flags & CGPROP_OWNER) {
			info_u64(o, "uid", p->uid);
			info_u64(o, "gid", p->gid);
			info_hex(o, "mode", p->mode);
		}
	} else {
		const struct rec_cgroup_member *m = r->data;
		const struct rec_cgroup_ref *ref = (const void *)(m + 1);
		char buf[MAX_HIERS * 24] = "";
		size_t n = 0;

		for (uint32_t i = 0; i < m->nr && n < sizeof(buf); i++)
			n += snprintf(buf + n, sizeof(buf) - n, ref[i].ns_root ? "%s%u(ns root %u)" : "%s%u",
				      i ? " " : "", ref[i].group, ref[i].ns_root);
		info_u64(o, "ns", m->ns);
		info_str(o, "groups", buf);
	}
}

static const struct rec_desc cgroup_recs[] = {
	{ REC_CGROUP, "CGROUP", sizeof(struct rec_cgroup) },
	{ REC_CGROUP_MEMBER, "CGROUP_MEMBER", sizeof(struct rec_cgroup_member) },
	{ REC_CGROUP_PROP, "CGROUP_PROP", sizeof(struct rec_cgroup_prop) },
	{ 0 }
};

const struct kind_ops kind_cgroup = {
	.name = "cgroup",
	.recs = cgroup_recs,
	.phase = PHASE_IMAGE,
	.dump_size = sizeof(struct cg_cpt),
	.dump_free = cg_dump_free,
	.dump = cg_dump,
	.dump_thread = cg_dump_thread,
	.load = cg_load,
	.check = cg_check,
	.restore = cg_restore,
	.free_ctx = cg_free_ctx,
	.show = cg_show,
};

const struct kind_ops kind_cgroup_threads = {
	.name = "cgroup_threads",
	.phase = PHASE_STATE,
	.restore_thread = cg_restore_thread,
};

const char *cg_below(const char *path, const char *base)
{
	size_t n = strcmp(base, "/") ? strlen(base) : 0;
	const char *rest = path + n;

	if (strncmp(path, base, n) || (*rest && *rest != '/'))
		return NULL;
	return strcmp(rest, "/") ? rest : "";
}

/* "/" or "/a/b": no empty, "." or ".." part, nothing odd. */
bool cg_path_ok(const char *s, size_t n)
{
	if (!n || n > MAX_PATH || s[0] != '/')
		return false;
	if (n == 1)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (!s[i] || s[i] == '\n')
			return false;
		if (s[i] == '/' && (i + 1 == n || s[i + 1] == '/' ||
		    (s[i + 1] == '.' && (i + 2 == n || s[i + 2] == '/' ||
		     (s[i + 2] == '.' && (i + 3 == n || s[i + 3] == '/'))))))
			return false;
	}
	return true;
}

bool cg_names(const struct hier *h, const char *ctrl, size_t n)
{
	for (const char *p = h->ctrl; !h->v2 && *p;) {
		size_t k = strcspn(p, ",");

		if (k == n && !strncmp(p, ctrl, n))
			return true;
		p += k + !!p[k];
	}
	return false;
}

const char *cg_root_for(const char *const *args, int n, const struct hier *h)
{
	const char *any = NULL;

	for (int i = 0; i < n; i++) {
		const char *colon = args[i][0] == '/' ? NULL : strchr(args[i], ':');

		if (!colon)
			any = args[i];
		else if (cg_names(h, args[i], colon - args[i]))
			return colon + 1;
	}
	return any;
}

int cg_root_args_bad(struct ckpt_log *log, const char *const *args, int n)
{
	for (int i = 0; i < n; i++) {
		const char *a = args[i], *colon = strchr(a, ':');
		const char *p = a[0] == '/' ? a : colon && colon != a ? colon + 1 : NULL;

		if (!p || !cg_path_ok(p, strlen(p)))
			return log_err(log, EINVAL,
				       "--cgroup-root %s: want [CONTROLLER:]/PATH (no empty, . or .. part)", a);
	}
	return 0;
}
