/* cgroup_restore.c - the cgroup kind's restart side: the records
 * validated into the model, the groups made before any process exists,
 * each process and thread moved into its groups (cgroup.c says how).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "cgroup.h"
#include "ns_pid.h"
#include "../proc.h"

/* ---- restart: load and validate ---- */

struct rst_prop {
	struct rec_cgroup_prop p;
	char *name;
	char *val;		/* NUL-terminated copy */
};

struct rst_group {
	struct rec_cgroup g;
	int hier;
	char *path;
	struct rst_prop *p;
	int np;
	size_t capp;
	bool exists;		/* here before the restart: used as it is */
	bool made;		/* by this restart: removed if it fails */
};

/* A cgroup namespace of the image: its roots, by hierarchy, and the
 * first process made in it (the others join it). */
struct rst_ns {
	uint32_t nr;
	uint32_t root[MAX_HIERS];
	pid_t owner;
};

/* A directory made only as a parent of a group. */
struct made_dir {
	int hier;
	char *path;
};

struct cg_rst {
	struct hiers hs;
	struct rst_group *g;	/* id = index + 1 */
	int ng;
	size_t capg;
	struct rst_ns *ns;
	int nns;
	size_t capns;
	struct made_dir *made;	/* every directory made, in order */
	int nmade;
	size_t capmade;
	bool checked;
	const bool *released;	/* the restart succeeded: ours no longer */
};

struct cg_thread {
	bool have;
	uint32_t ns;
	int n;
	struct rec_cgroup_ref ref[MAX_HIERS];
};

static bool ctrl_ok(const char *s, size_t n, bool v2)
{
	if (v2 != !n || n > MAX_CTRL)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,=-",
			    s[i]) || !s[i])
			return false;
	return true;
}

static bool name_ok(const char *s, size_t n)
{
	if (!n || n > MAX_NAME || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
			    s[i]) || !s[i])
			return false;
	return true;
}

static int rst_group_find(const struct cg_rst *st, int hier, const char *path)
{
	for (int i = 0; i < st->ng; i++)
		if (st->g[i].hier == hier && !strcmp(st->g[i].path, path))
			return i;
	return -1;
}

/* What restart's --cgroup-root replaces in hierarchy @h: the group
 * checkpoint's --cgroup-root named, else the root process's @own. */
static const char *base_of(const struct cg_rst *st, int h, const char *own)
{
	for (int i = 0; i < st->ng; i++)
		if (st->g[i].hier == h && (st->g[i].g.flags & CGROUP_BASE))
			return st->g[i].path;
	return own;
}

static int load_group(struct rst_ctx *c, struct cg_rst *st, struct rec *r)
{
	const struct rec_cgroup *g = r->data;
	const char *ctrl = (const char *)(g + 1), *why = NULL;
	struct rst_group *n;
	char *cs;
	int ret = rec_want(c->log, r, sizeof(*g), "CGROUP");

	if (ret)
		return ret;
	if (g->ctrl_len > MAX_CTRL || g->path_len > MAX_PATH ||
	    r->data_len != sizeof(*g) + g->ctrl_len + g->path_len)
		why = "bad length";
	else if (g->id != (uint32_t)st->ng + 1 || st->ng >= MAX_GROUPS || g->reserved)
		why = "bad id";
	else if (g->flags & ~CGROUP_FLAGS || g->mode & ~07777u)
		why = "bad flags or mode";
	else if (!ctrl_ok(ctrl, g->ctrl_len, g->flags & CGROUP_V2))
		why = "bad hierarchy";
	else if (!cg_path_ok(ctrl + g->ctrl_len, g->path_len))
		why = "bad path";
	if (why)
		return log_err(c->log, EBADMSG, "CGROUP record %llu: %s",
			       (unsigned long long)r->index, why);
	cs = cg_dupn(ctrl, g->ctrl_len);
	ret = cs ? cg_hier_add(&st->hs, cs, g->flags & CGROUP_V2) : -1;
	free(cs);
	if (ret < 0 || VEC_ROOM(st->g, st->ng, st->capg))
		return log_err(c->log, ENOMEM, "cgroups:");
	n = &st->g[st->ng];
	memset(n, 0, sizeof(*n));
	n->g = *g;
	n->hier = ret;
	n->path = cg_dupn(ctrl + g->ctrl_len, g->path_len);
	if (!n->path)
		return log_err(c->log, ENOMEM, "cgroups:");
	st->ng++;
	if ((g->flags & CGROUP_BASE) && base_of(st, n->hier, NULL) != n->path)
		return log_err(c->log, EBADMSG, "CGROUP record %llu: a second base group in %s",
			       (unsigned long long)r->index, cg_name(&st->hs.e[n->hier]));
	if (rst_group_find(st, n->hier, n->path) != st->ng - 1)
		return log_err(c->log, EBADMSG, "CGROUP record %llu: group %s saved twice",
			       (unsigned long long)r->index, n->path);
	return 0;
}

static int load_prop(struct rst_ctx *c, struct cg_rst *st, struct rec *r)
{
	const struct rec_cgroup_prop *p = r->data;
	const char *name = (const char *)(p + 1), *why = NULL;
	struct rst_group *g = st->ng ? &st->g[st->ng - 1] : NULL;
	struct rst_prop *n;
	int ret = rec_want(c->log, r, sizeof(*p), "CGROUP_PROP");

	if (ret)
		return ret;
	if (p->name_len > MAX_NAME || p->value_len > MAX_VALUE ||
	    r->data_len != sizeof(*p) + p->name_len + p->value_len)
		why = "bad length";
	else if (!g || p->group != g->g.id || p->reserved)
		why = "not after its CGROUP";
	else if (g->path[1] == 0 || g->np >= MAX_PROPS)
		why = "a hierarchy's root, or too many files";
	else if (!p->flags || p->flags & ~CGPROP_FLAGS || p->mode & ~0777u ||
		 (!(p->flags & CGPROP_VALUE) && p->value_len))
		why = "bad flags or mode";
	else if (!name_ok(name, p->name_len))
		why = "bad name";
	if (why)
		return log_err(c->log, EBADMSG, "CGROUP_PROP record %llu: %s",
			       (unsigned long long)r->index, why);
	if (VEC_ROOM(g->p, g->np, g->capp))
		return log_err(c->log, ENOMEM, "cgroups:");
	n = &g->p[g->np];
	n->p = *p;
	n->name = cg_dupn(name, p->name_len);
	n->val = cg_dupn(name + p->name_len, p->value_len);
	if (!n->name || !n->val) {
		free(n->name);
		free(n->val);
		return log_err(c->log, ENOMEM, "cgroups:");
	}
	g->np++;
	/* only the files ckpt writes, never tasks or release_agent */
	if (p->flags & CGPROP_VALUE && !cg_known_prop(n->name, g->g.flags & CGROUP_V2))
		return log_err(c->log, EBADMSG, "CGROUP_PROP record %llu: %s is not a file ckpt sets",
			       (unsigned long long)r->index, n->name);
	return 0;
}

/* Group @id is @root or below it. */
static bool below(const struct cg_rst *st, uint32_t id, uint32_t root)
{
	const struct rst_group *g = &st->g[id - 1], *r = &st->g[root - 1];

	return g->hier == r->hier && cg_below(g->path, r->path);
}

/* The namespace @nr's roots are the same for every thread in it. */
static int load_ns(struct rst_ctx *c, struct cg_rst *st, struct cg_thread *m)
{
	struct rst_ns *ns = NULL;

	for (int i = 0; i < st->nns; i++)
		if (st->ns[i].nr == m->ns)
			ns = &st->ns[i];
	if (!ns) {
		if (st->nns >= MAX_GROUPS || VEC_ROOM(st->ns, st->nns, st->capns))
			return log_err(c->log, ENOMEM, "cgroup namespaces:");
		ns = &st->ns[st->nns++];
		memset(ns, 0, sizeof(*ns));
		ns->nr = m->ns;
		for (int i = 0; i < m->n; i++)
			ns->root[st->g[m->ref[i].group - 1].hier] = m->ref[i].ns_root;
	}
	for (int i = 0; i < m->n; i++)
		if (ns->root[st->g[m->ref[i].group - 1].hier] != m->ref[i].ns_root)
			return -1;
	return 0;
}

static const char *member_bad(struct cg_rst *st, struct rst_task *t,
			      struct cg_thread *m)
{
	bool seen[MAX_HIERS] = { false };
	struct cg_thread *main_th;

	for (int i = 0; i < m->n; i++) {
		const struct rec_cgroup_ref *r = &m->ref[i];
		int h;

		if (!r->group || r->group > (uint32_t)st->ng)
			return "no such CGROUP";
		h = st->g[r->group - 1].hier;
		if (seen[h])
			return "two groups in one hierarchy";
		seen[h] = true;
		if (!m->ns != !r->ns_root ||
		    (r->ns_root && (r->ns_root > (uint32_t)st->ng ||
				    !below(st, r->group, r->ns_root))))
			return "bad cgroup namespace root";
	}
	main_th = t->nr_threads > 1 ? KTSTATE(&t->threads[0], kind_cgroup) : NULL;
	if (main_th && main_th->ns != m->ns)
		return "a thread in another cgroup namespace than its process";
	return NULL;
}

static int load_member(struct rst_ctx *c, struct rst_task *t, struct cg_rst *st,
		       struct rec *r)
{
	const struct rec_cgroup_member *m = r->data;
	struct cg_thread *th = kind_thread_state(t, &kind_cgroup, sizeof(*th));
	const char *why = NULL;
	int ret = rec_want(c->log, r, sizeof(*m), "CGROUP_MEMBER");

	if (ret)
		return ret;
	if (!th && t->nr_threads)
		return log_err(c->log, ENOMEM, "cgroups:");
	if (!th || th->have)
		why = "not after a THREAD, or repeated";
	else if (m->nr > MAX_HIERS || m->ns > MAX_GROUPS ||
		 r->data_len != sizeof(*m) + m->nr * sizeof(struct rec_cgroup_ref))
		why = "bad length";
	if (!why) {
		th->have = true;
		th->ns = m->ns;
		th->n = m->nr;
		memcpy(th->ref, m + 1, m->nr * sizeof(struct rec_cgroup_ref));
		why = member_bad(st, t, th);
	}
	if (!why && th->ns && load_ns(c, st, th))
		why = "a cgroup namespace with other roots than before";
	if (why)
		return log_err(c->log, EBADMSG, "pid %d: CGROUP_MEMBER record %llu: %s",
			       t->pid, (unsigned long long)r->index, why);
	return 0;
}

int cg_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct cg_rst *st = kind_ctx_state(c, &kind_cgroup, sizeof(*st));

	if (!st)
		return log_err(c->log, ENOMEM, "cgroups:");
	st->released = &c->released;
	if (r->type == REC_CGROUP)
		return load_group(c, st, r);
	if (r->type == REC_CGROUP_PROP)
		return load_prop(c, st, r);
	return load_member(c, t, st, r);
}

static int make_group(struct rst_ctx *c, struct cg_rst *st, int i);

static bool only_root(const struct cg_rst *st, int hier)
{
	for (int i = 0; i < st->ng; i++)
		if (st->g[i].hier == hier && st->g[i].path[1])
			return false;
	return true;
}

/* A hierarchy where the image has nothing but the root, mounted when a
 * process must be moved there (restart is usually there already): 0,
 * or -1 if it cannot be (the processes stay in restart's own group). */
static int mount_root_only(struct rst_ctx *c, struct hier *h)
{
	int fd;

	if (h->fd >= 0)
		return 0;
	if (h->tried)
		return -1;
	h->tried = true;
	fd = cg_hier_mount(h);
	if (fd < 0) {
		log_warn(c->log, "cgroup hierarchy %s cannot be mounted here (%s): the processes stay in restart's own group there",
			 cg_name(h), strerror(-fd));
		return -1;
	}
	h->fd = fd;
	return 0;
}

/* Every hierarchy with groups to find or make mounted; one with only
 * its root in the image waits for mount_root_only(). */
static int mount_all(struct rst_ctx *c, struct cg_rst *st)
{
	for (int i = 0; i < st->hs.n; i++) {
		struct hier *h = &st->hs.e[i];
		int fd;

		if (only_root(st, i))
			continue;
		fd = cg_hier_mount(h);
		if (fd == -EPERM)	/* not root: its groups are not ours */
			return log_err(c->log, EPERM, "cgroup hierarchy %s cannot be mounted without privilege (restart as root, or with --no-cgroups to stay in restart's own groups):",
				       cg_name(h));
		if (fd < 0)
			return log_err(c->log, -fd, "cgroup hierarchy %s cannot be mounted here (a controller this kernel lacks, or has on cgroup v2 only?):",
				       cg_name(h));
		h->fd = fd;
	}
	return 0;
}

/* *@path, @from (a group path) or below it, with that prefix made @to:
 * 0, or -ENOMEM. */
static int move_path(char **path, const char *from, const char *to)
{
	const char *rest = cg_below(*path, from);
	char *out;

	if (!rest)
		return 0;	/* elsewhere */
	if (asprintf(&out, "%s%s", strcmp(to, "/") || !*rest ? to : "", rest) < 0)
		return -ENOMEM;
	free(*path);
	*path = out;
	return 0;
}

/* --cgroup-root: in each hierarchy it names, the saved base group and
 * those below it take their place under the new root. */
static int reroot(struct rst_ctx *c, struct cg_rst *st)
{
	struct rst_task *root = c->tasks[0];
	const struct cg_thread *m = root->nr_threads ? KTSTATE(&root->threads[0], kind_cgroup) : NULL;
	int ret = c->opts ? cg_root_args_bad(c->log, c->opts->cgroup_root,
					      c->opts->nr_cgroup_root) : 0;

	for (int i = 0; m && !ret && i < m->n; i++) {
		int h = st->g[m->ref[i].group - 1].hier;
		const char *to = c->opts ? cg_root_for(c->opts->cgroup_root, c->opts->nr_cgroup_root,
						       &st->hs.e[h]) : NULL;
		char *from = to ? strdup(base_of(st, h, st->g[m->ref[i].group - 1].path)) : NULL;

		if (to && !from)
			return log_err(c->log, ENOMEM, "cgroups:");
		if (from && !below(st, m->ref[i].group, rst_group_find(st, h, from) + 1))
			ret = log_err(c->log, EBADMSG, "cgroup %s: the base group %s is not above pid %d's",
				      cg_name(&st->hs.e[h]), from, root->pid);
		for (int j = 0; from && !ret && j < st->ng; j++)
			if (st->g[j].hier == h && move_path(&st->g[j].path, from, to))
				ret = log_err(c->log, ENOMEM, "cgroups:");
		if (from && !ret)
			log_info(c->log, "cgroup %s: %s is now %s",
				 cg_name(&st->hs.e[h]), from, to);
		free(from);
	}
	for (int i = 0; !ret && i < st->ng; i++)
		if (rst_group_find(st, st->g[i].hier, st->g[i].path) != i)
			ret = log_err(c->log, EINVAL, "--cgroup-root: cgroup %s:%s would be two groups of the image",
				      cg_name(&st->hs.e[st->g[i].hier]), st->g[i].path);
	return ret;
}

/* Before any process exists: every hierarchy can be reached here, and
 * each group is there already (a directory) or is made now, so that the
 * files' checks find a directory of a group that was open. */
int cg_check(struct rst_ctx *c, struct rst_task *t)
{
	struct cg_rst *st = KCSTATE(c, kind_cgroup);
	struct stat sb;
	int ret;

	(void)t;
	if (!st || st->checked || !c->here || (c->flags & CKPT_NO_CGROUPS))
		return 0;
	st->checked = true;
	ret = reroot(c, st);
	if (!ret)
		ret = mount_all(c, st);
	for (int i = 0; i < st->ng && !ret; i++) {
		struct rst_group *g = &st->g[i];

		if (st->hs.e[g->hier].fd < 0) {
			g->exists = true;
		} else if (!fstatat(st->hs.e[g->hier].fd, cg_rel(g->path), &sb, 0)) {
			if (!S_ISDIR(sb.st_mode))
				return log_err(c->log, ENOTDIR, "cgroup %s:%s is not a group here",
					       cg_name(&st->hs.e[g->hier]), g->path);
			g->exists = true;
		} else if (errno != ENOENT) {
			return log_err(c->log, errno, "cgroup %s:%s:",
				       cg_name(&st->hs.e[g->hier]), g->path);
		}
	}
	for (int i = 0; i < st->ng && !ret; i++)
		ret = make_group(c, st, i);
	return ret;
}

/* ---- restart: make the groups, move the threads ---- */

static int write_at(int dfd, const char *name, const char *val, size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -errno;
	got = write(fd, val, len);
	got = got < 0 ? -errno : (size_t)got == len ? 0 : -EIO;
	close(fd);
	return got;
}

/* A file of several lines written one line a write: the kernel takes one
 * entry a write in devices.allow and net_prio.ifpriomap. */
static int write_lines(struct rst_ctx *c, const char *where, int dfd,
		       const char *name, const char *val)
{
	int ret = 0;

	for (const char *l = val, *e; *l && !ret; l = *e ? e + 1 : e) {
		e = strchrnul(l, '\n');
		if (e == l)
			continue;
		ret = write_at(dfd, name, l, e - l);
		/* a device this machine lacks: its priority cannot be kept */
		if (ret == -ENODEV && !strcmp(name, "net_prio.ifpriomap")) {
			log_warn(c->log, "cgroup %s: net_prio.ifpriomap \"%.*s\" not restored: no such network device here",
				 where, (int)(e - l), l);
			ret = 0;
		}
	}
	return ret;
}

static int set_value(struct rst_ctx *c, const char *where, int dfd,
		     const struct rst_prop *p)
{
	int ret;

	/* a domain is what a group is made as; only "threaded" is written */
	if (!strcmp(p->name, "cgroup.type") && strncmp(p->val, "threaded", 8))
		ret = 0;
	else if (!p->p.value_len || !strcmp(p->val, "\n"))
		ret = strncmp(p->name, "cpuset.", 7) ? 0 : write_at(dfd, p->name, "\n", 1);
	else if (!strcmp(p->name, "devices.list"))
		/* the saved list exactly: all denied, then each allowed */
		ret = write_at(dfd, "devices.deny", "a", 1) ?:
		      write_lines(c, where, dfd, "devices.allow", p->val);
	else if (!strcmp(p->name, "net_prio.ifpriomap"))
		ret = write_lines(c, where, dfd, p->name, p->val);
	else
		ret = write_at(dfd, p->name, p->val, p->p.value_len);
	if (ret)
		log_warn(c->log, "cgroup %s: %s not restored to \"%.*s\": %s", where,
			 p->name, (int)strcspn(p->val, "\n"), p->val, strerror(-ret));
	return 0;
}

/* A group just made: its files' values, then owners and modes. */
static int set_props(struct rst_ctx *c, struct cg_rst *st, struct rst_group *g)
{
	const struct hier *h = &st->hs.e[g->hier];
	char where[MAX_CTRL + MAX_PATH + 2];
	int dfd = openat(h->fd, cg_rel(g->path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	snprintf(where, sizeof(where), "%s:%s", cg_name(h), g->path);
	if (dfd < 0)
		return log_err(c->log, errno, "cgroup %s:", where);
	for (int i = 0; i < g->np && !ret; i++)
		if (g->p[i].p.flags & CGPROP_VALUE)
			ret = set_value(c, where, dfd, &g->p[i]);
	for (int i = 0; i < g->np && !ret; i++) {
		const struct rst_prop *p = &g->p[i];

		if (!(p->p.flags & CGPROP_OWNER))
			continue;
		if (fchownat(dfd, p->name, p->p.uid, p->p.gid, 0) ||
		    fchmodat(dfd, p->name, p->p.mode, 0))
			ret = log_err(c->log, errno, "cgroup %s: owner and mode of %s:",
				      where, p->name);
	}
	if (!ret && (fchown(dfd, g->g.uid, g->g.gid) || fchmod(dfd, g->g.mode)))
		ret = log_err(c->log, errno, "cgroup %s: its owner and mode:", where);
	close(dfd);
	return ret;
}

static int note_made(struct rst_ctx *c, struct cg_rst *st, int hier,
		     const char *path)
{
	char *p = strdup(path);

	if (!p || VEC_ROOM(st->made, st->nmade, st->capmade)) {
		free(p);
		return log_err(c->log, ENOMEM, "cgroups:");
	}
	st->made[st->nmade++] = (struct made_dir){ hier, p };
	return 0;
}

/* A cpuset group made new (the image has no values for it: a parent
 * ckpt makes, or a group --cgroup-root moved from a hierarchy's root)
 * takes its parent's cpus and mems, without which nothing can join it. */
static int cpuset_inherit(struct rst_ctx *c, const struct hier *h, const char *path)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
	const char *slash = strrchr(path, '/');
	char parent[MAX_PATH + 1], name[MAX_PATH + 32], val[4096];
	int ret = 0;

	if (h->v2 || !cg_names(h, "cpuset", 6))
		return 0;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	for (int i = 0; i < 2 && !ret; i++) {
		int fd;
		ssize_t n;

		snprintf(name, sizeof(name), "%s/%s", cg_rel(parent[0] ? parent : "/"), files[i]);
		fd = openat(h->fd, name, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, val, sizeof(val));
		if (fd >= 0)
			close(fd);
		snprintf(name, sizeof(name), "%s/%s", cg_rel(path), files[i]);
		if (n < 0 || (n > 1 && (ret = write_at(h->fd, name, val, n))))
			return log_err(c->log, n < 0 ? errno : -ret, "cgroup %s:%s: its %s from its parent:",
				       cg_name(h), path, files[i]);
	}
	return 0;
}

/* The parent of a group about to be made: a saved group made first,
 * or a plain directory. */
static int make_parent(struct rst_ctx *c, struct cg_rst *st, int hier,
		       const char *path)
{
	const struct hier *h = &st->hs.e[hier];
	char parent[MAX_PATH + 1];
	const char *slash = strrchr(path, '/');
	int j, ret;

	if (slash == path)
		return 0;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	j = rst_group_find(st, hier, parent);
	if (j >= 0)
		return make_group(c, st, j);
	if (!faccessat(h->fd, cg_rel(parent), F_OK, 0))
		return 0;
	ret = make_parent(c, st, hier, parent);
	if (!ret && mkdirat(h->fd, cg_rel(parent), 0755) && errno != EEXIST)
		return log_err(c->log, errno, "cgroup %s:%s: making it:", cg_name(h), parent);
	if (!ret)
		ret = note_made(c, st, hier, parent);
	return ret ? ret : cpuset_inherit(c, h, parent);
}

static int make_group(struct rst_ctx *c, struct cg_rst *st, int i)
{
	struct rst_group *g = &st->g[i];
	const struct hier *h = &st->hs.e[g->hier];
	int ret;

	if (g->exists || g->made)
		return 0;
	ret = make_parent(c, st, g->hier, g->path);
	if (ret)
		return ret;
	if (mkdirat(h->fd, cg_rel(g->path), 0700)) {
		if (errno != EEXIST)
			return log_err(c->log, errno, "cgroup %s:%s: making it:",
				       cg_name(h), g->path);
		g->exists = true;	/* made meanwhile by someone else */
		return 0;
	}
	g->made = true;
	log_info(c->log, "cgroup %s:%s made", cg_name(h), g->path);
	ret = note_made(c, st, g->hier, g->path);
	if (!ret)
		ret = cpuset_inherit(c, h, g->path);
	return ret ? ret : set_props(c, st, g);
}

/* @tid into group @id: v1 moves a thread, v2 a process (or a thread of
 * a threaded group). */
static int join(struct rst_ctx *c, struct cg_rst *st, uint32_t id, pid_t tid,
		bool thread)
{
	const struct rst_group *g = &st->g[id - 1];
	struct hier *h = &st->hs.e[g->hier];
	char file[MAX_PATH + 32], num[16];
	int n = snprintf(num, sizeof(num), "%d", tid), ret;

	if (h->fd < 0 && mount_root_only(c, h))	/* it said why */
		return 0;
	snprintf(file, sizeof(file), "%s/%s", cg_rel(g->path),
		 !h->v2 ? "tasks" : thread ? "cgroup.threads" : "cgroup.procs");
	ret = write_at(h->fd, file, num, n);
	if (ret)
		return log_err(c->log, -ret, "tid %d: joining cgroup %s:%s:", tid,
			       cg_name(h), g->path);
	return 0;
}

/* The puppet makes its cgroup namespace, rooted where it stands (in each
 * hierarchy's saved root), or joins the one its first process made. */
static int enter_ns(struct rst_ctx *c, struct cg_rst *st, struct rst_task *t,
		    const struct cg_thread *m)
{
	struct rst_ns *ns = NULL;
	long fd;
	int ret = 0;

	for (int i = 0; i < st->nns; i++)
		if (st->ns[i].nr == m->ns)
			ns = &st->ns[i];
	if (!ns)
		return log_err(c->log, EINVAL, "pid %d: cgroup namespace %u unknown",
			       t->pid, m->ns);
	if (!ns->owner) {
		for (int i = 0; i < m->n && !ret; i++)
			ret = join(c, st, m->ref[i].ns_root, t->pid, false);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "unshare(CLONE_NEWCGROUP)", SYS_unshare,
				     CLONE_NEWCGROUP);
		ns->owner = t->pid;
		return ret;
	}
	ret = ns_pidfd_give(c, t, ns->owner, 0, &fd);
	if (ret)
		return ret;
	ret = rcheck(&t->rm, NULL, "setns(CLONE_NEWCGROUP)", SYS_setns, fd,
		     CLONE_NEWCGROUP);
	return rcheck(&t->rm, NULL, "close", SYS_close, fd) ?: ret;
}

/* Whether @pid already is in group @id (as the puppet usually is, made
 * in restart's own groups after checkpoint --kill): a move, even to
 * where it stands, waits for an RCU grace period, 1-2 ms each here. */
static bool already_in(const struct cg_rst *st, uint32_t id,
		       const struct cg_line *l, int n)
{
	const struct rst_group *g = &st->g[id - 1];
	const struct hier *h = &st->hs.e[g->hier];

	for (int i = 0; i < n; i++)
		if (l[i].v2 == h->v2 && !strcmp(l[i].ctrl, h->ctrl))
			return !strcmp(l[i].path, g->path);
	return false;
}

/* Phase IMAGE, before memory and files: the process (its main thread:
 * the others are made later, in its groups). */
int cg_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct cg_rst *st = KCSTATE(c, kind_cgroup);
	const struct cg_thread *m;
	struct cg_line l[MAX_HIERS];
	char *buf = NULL;
	int ret = 0, n = 0;

	if (!st || (c->flags & CKPT_NO_CGROUPS))
		return 0;
	m = t->nr_threads ? KTSTATE(&t->threads[0], kind_cgroup) : NULL;
	if (ret || !m || !m->have)
		return ret;
	if (m->ns)
		ret = enter_ns(c, st, t, m);
	/* no /proc file, or one that does not parse: every group joined */
	if (!ret && !proc_read(t->pid, "cgroup", &buf, NULL) && cg_parse(buf, l, &n))
		n = 0;
	for (int i = 0; i < m->n && !ret; i++)
		if (!already_in(st, m->ref[i].group, l, n))
			ret = join(c, st, m->ref[i].group, t->pid, false);
	free(buf);
	return ret;
}

/* Phase STATE: each thread in a group its main thread is not in. */
int cg_restore_thread(struct rst_ctx *c, struct rst_task *t,
			     struct rst_thread *th)
{
	struct cg_rst *st = KCSTATE(c, kind_cgroup);
	const struct cg_thread *m = KTSTATE(th, kind_cgroup);
	const struct cg_thread *main_th = KTSTATE(&t->threads[0], kind_cgroup);
	int ret = 0;

	if (!st || !m || !m->have || th == &t->threads[0] ||
	    (c->flags & CKPT_NO_CGROUPS))
		return 0;
	for (int i = 0; i < m->n && !ret; i++) {
		bool same = false;

		for (int j = 0; main_th && j < main_th->n; j++)
			same |= main_th->ref[j].group == m->ref[i].group;
		if (!same)
			ret = join(c, st, m->ref[i].group, th->tid, true);
	}
	return ret;
}

void cg_free_ctx(void *state)
{
	struct cg_rst *st = state;

	/* the restart failed: the groups it made go, children first (the
	 * half-built processes in them are dead by now) */
	for (int i = st->nmade - 1; i >= 0; i--) {
		const struct hier *h = &st->hs.e[st->made[i].hier];

		if (!*st->released && h->fd >= 0)
			unlinkat(h->fd, cg_rel(st->made[i].path), AT_REMOVEDIR);
		free(st->made[i].path);
	}
	free(st->made);
	for (int i = 0; i < st->ng; i++) {
		for (int j = 0; j < st->g[i].np; j++) {
			free(st->g[i].p[j].name);
			free(st->g[i].p[j].val);
		}
		free(st->g[i].p);
		free(st->g[i].path);
	}
	free(st->g);
	free(st->ns);
	cg_hiers_free(&st->hs);
	free(st);
}
