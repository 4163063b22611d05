/* cgroup.c - the cgroups of every thread, the groups themselves and the
 * cgroup namespace (CGROUP, CGROUP_PROP, CGROUP_MEMBER).
 *
 * Checkpoint: each thread's /proc/PID/task/TID/cgroup names its group in
 * every hierarchy (v1 threads may each be in their own); every group met
 * is written once (CGROUP: hierarchy, path, its directory's owner and
 * mode) with the files a user sets (CGROUP_PROP: memory and cpu limits,
 * pids.max, cpuset, devices.list, net_prio.ifpriomap..., and the owner
 * and mode of any file changed from the hierarchy root's), and so are
 * the groups below the root process's own (empty ones too), unless that
 * group is the root of its hierarchy or ckpt's own (the caller's, not
 * the tree's).  A process in a cgroup namespace other than ckpt's names
 * it (the N-th met) with its root in each hierarchy, read by a child of
 * ckpt that joins the namespace and reads the process's cgroup file.
 * Hierarchies are reached through a detached mount of each (fsmount):
 * nothing shows in any mount table.
 *
 * Restart: each hierarchy is mounted so before any process exists (one
 * that cannot be, a controller this kernel lacks or has on v2 alone,
 * refuses the restart).  A group that exists is used as it is (the
 * usual case on the same machine after checkpoint --kill); one missing
 * is made with its saved files, parents first, and removed again if the
 * restart fails.  Two kinds, for the order: kind_cgroup, early in phase
 * IMAGE (before memory is built, so its pages are charged to the group;
 * before files, which may be open on a group's directory), makes the
 * groups and moves the main thread (and the namespace is made or joined
 * by the puppet while it still has CAP_SYS_ADMIN); kind_cgroup_threads,
 * in phase STATE once the threads exist, moves each thread that is in
 * another group than its main thread.  ckpt moves them from outside
 * (the tasks file), with its own privilege.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kinds.h"

#define MAX_GROUPS	4096	/* groups in an image */
#define MAX_HIERS	64	/* hierarchies */
#define MAX_PROPS	256	/* files of a group */
#define MAX_DEPTH	64	/* below the root process's group */
#define MAX_VALUE	65536	/* bytes of a file's value */
#define MAX_PATH	4096
#define MAX_CTRL	256
#define MAX_NAME	255

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
	"cgroup.subtree_control", "cpuset.cpus", "cpuset.mems", "memory.min",
	"memory.low", "memory.high", "memory.max", "memory.swap.max",
	"pids.max", "cpu.max", "cpu.weight", "io.weight", NULL
};

static bool known_prop(const char *name, bool v2)
{
	for (const char *const *p = v2 ? props_v2 : props_v1; *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

/* ---- hierarchies (both sides) ---- */

struct hier {
	char *ctrl;		/* as /proc/PID/cgroup names it; "" for v2 */
	bool v2;
	int fd;			/* its root, a detached mount; -1 */
};

struct hiers {
	struct hier *e;
	int n;
	size_t cap;
};

static int fs_set(int fs, const char *key, const char *val)
{
	return fsconfig(fs, val ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG,
			key, val, 0);
}

/* A mount of hierarchy @h's root, attached nowhere: the same hierarchy
 * as any mount of it (v1 is found by its exact set of controllers and
 * name, or made anew for a name alone). */
static int hier_mount(struct hier *h)
{
	char buf[MAX_CTRL + 1], *save = NULL;
	bool ctrl = false;
	int fs, m, ret = 0;

	fs = fsopen(h->v2 ? "cgroup2" : "cgroup", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
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

static int hier_find(const struct hiers *hs, const char *ctrl, bool v2)
{
	for (int i = 0; i < hs->n; i++)
		if (hs->e[i].v2 == v2 && !strcmp(hs->e[i].ctrl, ctrl))
			return i;
	return -1;
}

/* The index of hierarchy @ctrl, added (not mounted) if new; -1 out of
 * memory or too many. */
static int hier_add(struct hiers *hs, const char *ctrl, bool v2)
{
	int i = hier_find(hs, ctrl, v2);
	char *dup;

	if (i >= 0)
		return i;
	if (hs->n >= MAX_HIERS || VEC_ROOM(hs->e, hs->n, hs->cap))
		return -1;
	dup = strdup(ctrl);
	if (!dup)
		return -1;
	hs->e[hs->n] = (struct hier){ dup, v2, -1 };
	return hs->n++;
}

static void hiers_free(struct hiers *hs)
{
	for (int i = 0; i < hs->n; i++) {
		free(hs->e[i].ctrl);
		if (hs->e[i].fd >= 0)
			close(hs->e[i].fd);
	}
	free(hs->e);
}

/* A group's path from its hierarchy's root, for the *at() calls. */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

/* One line of a /proc cgroup file, split in place. */
struct cg_line {
	char *ctrl;
	char *path;
	bool v2;
};

/* Splits @buf (a /proc/PID/cgroup) into up to MAX_HIERS lines. */
static int parse_cgroups(char *buf, struct cg_line *l, int *n)
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

/* ---- checkpoint ---- */

struct cpt_group {
	int hier;
	char *path;
};

struct cg_cpt {
	struct hiers hs;
	struct cpt_group *g;	/* written so far; id = index + 1 */
	int ng;
	size_t capg;
	uint64_t *ns;		/* the cgroup namespaces met; N = index + 1 */
	int nns;
	size_t capns;
	bool walked;
	/* the process being written: its namespace, and that namespace's
	 * root group in each hierarchy (by hierarchy index) */
	uint32_t cur_ns;
	uint32_t cur_root[MAX_HIERS];
};

static int group_find(const struct cg_cpt *s, int hier, const char *path)
{
	for (int i = 0; i < s->ng; i++)
		if (s->g[i].hier == hier && !strcmp(s->g[i].path, path))
			return i + 1;
	return 0;
}

static int hier_open(struct cpt_ctx *c, struct cg_cpt *s, pid_t pid,
		     const struct cg_line *l, int *hi)
{
	struct hier *h;
	int fd;

	*hi = hier_add(&s->hs, l->ctrl, l->v2);
	if (*hi < 0)
		return log_err(c->log, ENOMEM, "pid %d: cgroup hierarchies:", pid);
	h = &s->hs.e[*hi];
	if (h->fd >= 0)
		return 0;
	fd = hier_mount(h);
	/* the root of a hierarchy that cannot be reached (one being
	 * destroyed) is where any process starts: nothing to keep */
	if (fd < 0 && !l->path[1]) {
		log_warn(c->log, "pid %d: cgroup hierarchy %s cannot be mounted (%s): its place there, the root, is not saved",
			 pid, h->v2 ? "(v2)" : h->ctrl, strerror(-fd));
		return 1;
	}
	if (fd < 0)
		return log_err(c->log, -fd, "pid %d: cgroup hierarchy %s: cannot mount it to read its groups:",
			       pid, h->v2 ? "(v2)" : h->ctrl);
	h->fd = fd;
	return 0;
}

/* A file's value as written back: memory.oom_control reads several
 * lines, of which oom_kill_disable is the setting; subtree_control
 * reads "cpu memory", written "+cpu +memory". */
static int prop_value(const char *name, char *buf, size_t *len)
{
	char tmp[MAX_CTRL * 2], *save = NULL;
	size_t n = 0;

	if (!strcmp(name, "memory.oom_control")) {
		char *p = strstr(buf, "oom_kill_disable ");

		if (!p)
			return -EINVAL;
		*len = snprintf(buf, *len + 1, "%d", atoi(p + 17));
		return 0;
	}
	if (strcmp(name, "cgroup.subtree_control"))
		return 0;
	if (*len >= sizeof(tmp) / 2)
		return -E2BIG;
	for (char *tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save))
		n += snprintf(tmp + n, sizeof(tmp) - n, "%s+%s", n ? " " : "", tok);
	memcpy(buf, tmp, n + 1);
	*len = n;
	return 0;
}

/* The value of file @name of group @dfd, into @buf (MAX_VALUE + 1):
 * 1 if read, 0 if the group has no such file. */
static int read_prop(int dfd, const char *name, char *buf, size_t *len)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	*len = 0;
	while ((got = read(fd, buf + *len, MAX_VALUE - *len)) > 0)
		*len += got;
	close(fd);
	if (got < 0)
		return -errno;
	if (*len >= MAX_VALUE)
		return -EFBIG;
	buf[*len] = 0;
	got = prop_value(name, buf, len);
	return got ? got : 1;
}

static int write_prop(struct cpt_ctx *c, uint32_t id, uint32_t flags,
		      const struct stat *st, const char *name,
		      const char *val, size_t len)
{
	struct rec_cgroup_prop p = {
		.group = id, .flags = flags, .uid = st->st_uid,
		.gid = st->st_gid, .mode = st->st_mode & 0777,
		.name_len = strlen(name), .value_len = len,
	};
	int ret = iw_begin(&c->w, REC_CGROUP_PROP, sizeof(p) + p.name_len + len);

	if (!ret)
		ret = iw_write(&c->w, &p, sizeof(p));
	if (!ret)
		ret = iw_write(&c->w, name, p.name_len);
	if (!ret && len)
		ret = iw_write(&c->w, val, len);
	return ret ? ret : iw_end(&c->w);
}

/* Whether a file's owner or mode differs from the same file's in the
 * hierarchy's root (the kernel's defaults there). */
static bool owner_changed(int root, const char *name, const struct stat *st)
{
	struct stat rs;

	if (fstatat(root, name, &rs, 0))
		return st->st_uid || st->st_gid;
	return st->st_uid != rs.st_uid || st->st_gid != rs.st_gid ||
	       (st->st_mode & 0777) != (rs.st_mode & 0777);
}

/* The files of a group: the values of those props_* lists, and the
 * owner and mode of any file changed. */
static int write_props(struct cpt_ctx *c, const struct hier *h, int dfd,
		       uint32_t id)
{
	char *buf = malloc(MAX_VALUE + 1);
	int ret = buf ? 0 : -ENOMEM, nr = 0;
	struct dirent *e;
	struct stat st;
	size_t len = 0;
	DIR *d;

	for (const char *const *p = h->v2 ? props_v2 : props_v1; *p && !ret; p++) {
		ret = read_prop(dfd, *p, buf, &len);
		if (ret == 1 && !fstatat(dfd, *p, &st, 0)) {
			ret = write_prop(c, id, CGPROP_VALUE |
					 (owner_changed(h->fd, *p, &st) ? CGPROP_OWNER : 0),
					 &st, *p, buf, len);
			nr++;
		} else if (ret > 0) {
			ret = -errno;
		}
		if (ret < 0)
			ret = log_err(c->log, -ret, "cgroup %s: reading %s:", h->ctrl, *p);
	}
	free(buf);
	d = ret ? NULL : fdopendir(dup(dfd));
	if (!ret && !d)
		return log_err(c->log, errno, "cgroup %s: listing a group:", h->ctrl);
	while (!ret && d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || known_prop(e->d_name, h->v2) ||
		    fstatat(dfd, e->d_name, &st, 0) || !S_ISREG(st.st_mode) ||
		    !owner_changed(h->fd, e->d_name, &st))
			continue;
		if (++nr > MAX_PROPS)
			ret = log_err(c->log, E2BIG, "cgroup %s: more than %d files changed",
				      h->ctrl, MAX_PROPS);
		else
			ret = write_prop(c, id, CGPROP_OWNER, &st, e->d_name, NULL, 0);
	}
	if (d)
		closedir(d);
	return ret;
}

/* Group @path of hierarchy @hi, written if it is new: its id. */
static int write_one(struct cpt_ctx *c, struct cg_cpt *s, int hi,
		     const char *path, uint32_t *id)
{
	const struct hier *h = &s->hs.e[hi];
	struct rec_cgroup g = { .flags = h->v2 ? CGROUP_V2 : 0 };
	struct stat st;
	int dfd, ret;

	*id = group_find(s, hi, path);
	if (*id)
		return 0;
	if (s->ng >= MAX_GROUPS)
		return log_err(c->log, E2BIG, "more than %d cgroups to save", MAX_GROUPS);
	if (strlen(path) > MAX_PATH || path[0] != '/' || strstr(path, "/.."))
		return log_err(c->log, EINVAL, "cgroup %s:%s: outside ckpt's cgroup namespace, or a path too long",
			       h->ctrl, path);
	dfd = openat(h->fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st)) {
		ret = log_err(c->log, errno, "cgroup %s:%s:", h->ctrl, path);
		if (dfd >= 0)
			close(dfd);
		return ret;
	}
	if (VEC_ROOM(s->g, s->ng, s->capg) || !(s->g[s->ng].path = strdup(path))) {
		close(dfd);
		return log_err(c->log, ENOMEM, "cgroups:");
	}
	s->g[s->ng].hier = hi;
	*id = g.id = ++s->ng;
	g.uid = st.st_uid;
	g.gid = st.st_gid;
	g.mode = st.st_mode & 07777;
	g.ctrl_len = strlen(h->ctrl);
	g.path_len = strlen(path);
	ret = iw_begin(&c->w, REC_CGROUP, sizeof(g) + g.ctrl_len + g.path_len);
	if (!ret)
		ret = iw_write(&c->w, &g, sizeof(g));
	if (!ret)
		ret = iw_write(&c->w, h->ctrl, g.ctrl_len);
	if (!ret)
		ret = iw_write(&c->w, path, g.path_len);
	if (!ret)
		ret = iw_end(&c->w);
	/* the root's files are the machine's, never made again */
	if (!ret && path[1])
		ret = write_props(c, h, dfd, g.id);
	close(dfd);
	return ret;
}

/* Group @path and, first, each of its parents (made again as they were
 * if they too are missing at restart): @path's id. */
static int write_group(struct cpt_ctx *c, struct cg_cpt *s, int hi,
		       const char *path, uint32_t *id)
{
	char *p = strdup(path);
	int ret = p ? 0 : log_err(c->log, ENOMEM, "cgroups:");

	*id = p ? group_find(s, hi, path) : 0;
	if (*id) {
		free(p);
		return 0;
	}
	for (char *slash = p; !ret && (slash = strchr(slash + 1, '/'));) {
		*slash = 0;
		ret = write_one(c, s, hi, p, id);
		*slash = '/';
	}
	if (!ret)
		ret = write_one(c, s, hi, p, id);
	free(p);
	return ret;
}

/* The groups below @path (empty ones too), parents first. */
static int walk(struct cpt_ctx *c, struct cg_cpt *s, int hi, const char *path,
		int depth)
{
	int dfd = openat(s->hs.e[hi].fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char sub[MAX_PATH + 2];
	struct dirent *e;
	uint32_t id;
	int ret = 0;
	DIR *d;

	if (dfd < 0)
		return log_err(c->log, errno, "cgroup %s:%s:", s->hs.e[hi].ctrl, path);
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return log_err(c->log, errno, "cgroup %s:%s:", s->hs.e[hi].ctrl, path);
	}
	while (!ret && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (depth >= MAX_DEPTH)
			ret = log_err(c->log, E2BIG, "cgroup %s:%s: groups nested more than %d deep",
				      s->hs.e[hi].ctrl, path, MAX_DEPTH);
		else if (snprintf(sub, sizeof(sub), "%s/%s", path[1] ? path : "",
				  e->d_name) > MAX_PATH)
			ret = log_err(c->log, ENAMETOOLONG, "cgroup %s:%s/%s:",
				      s->hs.e[hi].ctrl, path, e->d_name);
		else
			ret = write_group(c, s, hi, sub, &id);
		if (!ret)
			ret = walk(c, s, hi, sub, depth + 1);
	}
	closedir(d);
	return ret;
}

/* The groups below the root process's own, in each hierarchy where that
 * is neither the root nor ckpt's own group. */
static int walk_root(struct cpt_ctx *c, struct cg_cpt *s, char *root_cg)
{
	struct cg_line l[MAX_HIERS], own[MAX_HIERS];
	char *mine = NULL;
	int n, nown, ret, hi;

	ret = proc_read(getpid(), "cgroup", &mine, NULL);
	if (ret)
		return log_err(c->log, -ret, "ckpt's own cgroups:");
	if (parse_cgroups(mine, own, &nown) || parse_cgroups(root_cg, l, &n))
		ret = log_err(c->log, EINVAL, "cannot parse a cgroup file");
	for (int i = 0; i < n && !ret; i++) {
		bool ours = false;

		for (int j = 0; j < nown; j++)
			ours |= own[j].v2 == l[i].v2 && !strcmp(own[j].ctrl, l[i].ctrl) &&
				!strcmp(own[j].path, l[i].path);
		hi = hier_find(&s->hs, l[i].ctrl, l[i].v2);
		if (!ours && hi >= 0 && s->hs.e[hi].fd >= 0 && l[i].path[1])
			ret = walk(c, s, hi, l[i].path, 0);
	}
	free(mine);
	return ret;
}

static int ns_ino(pid_t pid, pid_t tid, uint64_t *ino)
{
	char p[64];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%d/task/%d/ns/cgroup", pid, tid);
	if (stat(p, &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

/* The process's cgroup file as a process in its cgroup namespace reads
 * it (paths from the namespace's root): a child of ckpt joins the
 * namespace to read it. */
static int ns_view(pid_t pid, char *buf, size_t size)
{
	char p[64];
	int pfd[2], nsfd, st;
	size_t n = 0;
	ssize_t got;
	pid_t k;

	snprintf(p, sizeof(p), "/proc/%d/ns/cgroup", pid);
	nsfd = open(p, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return -errno;
	if (pipe2(pfd, O_CLOEXEC)) {
		close(nsfd);
		return -errno;
	}
	k = fork();
	if (k == 0) {
		int fd;

		snprintf(p, sizeof(p), "/proc/%d/cgroup", pid);
		if (setns(nsfd, CLONE_NEWCGROUP) || (fd = open(p, O_RDONLY)) < 0)
			_exit(1);
		while ((got = read(fd, buf, size)) > 0)
			if (write(pfd[1], buf, got) != got)
				_exit(1);
		_exit(got < 0);
	}
	close(nsfd);
	close(pfd[1]);
	while (k > 0 && n < size - 1 && (got = read(pfd[0], buf + n, size - 1 - n)) > 0)
		n += got;
	close(pfd[0]);
	if (k < 0)
		return -errno;
	if (waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st) || n >= size - 1)
		return -EIO;
	buf[n] = 0;
	return 0;
}

/* Each hierarchy's root of the process's cgroup namespace: its group's
 * path (@full, ckpt's view) less the path the namespace shows. */
static int ns_roots(struct cpt_ctx *c, struct cg_cpt *s, pid_t pid, char *full)
{
	struct cg_line a[MAX_HIERS], b[MAX_HIERS];
	char view[8192], root[MAX_PATH + 1];
	int na, nb, ret = ns_view(pid, view, sizeof(view));

	if (ret)
		return log_err(c->log, -ret, "pid %d: reading its cgroups from its cgroup namespace:", pid);
	if (parse_cgroups(full, a, &na) || parse_cgroups(view, b, &nb) || na != nb)
		return log_err(c->log, EINVAL, "pid %d: its cgroups read from its cgroup namespace do not match",
			       pid);
	for (int i = 0; i < na && !ret; i++) {
		size_t fl = strlen(a[i].path), vl = strlen(b[i].path);
		int hi = hier_find(&s->hs, a[i].ctrl, a[i].v2);

		if (hi >= 0 && s->hs.e[hi].fd < 0 && !a[i].path[1])
			continue;
		if (strcmp(a[i].ctrl, b[i].ctrl) || b[i].path[0] != '/' || hi < 0)
			return log_err(c->log, EINVAL, "pid %d: its cgroups read from its cgroup namespace do not match",
				       pid);
		if (!strncmp(b[i].path, "/..", 3))
			return log_err(c->log, EINVAL, "pid %d: cgroup %s:%s is outside the root of its cgroup namespace: not supported",
				       pid, a[i].ctrl, a[i].path);
		if (vl == 1)	/* at the namespace's root */
			vl = 0;
		else if (vl > fl || strcmp(a[i].path + fl - vl, b[i].path))
			return log_err(c->log, EINVAL, "pid %d: cgroup %s: %s is not below its namespace's view %s",
				       pid, a[i].ctrl, a[i].path, b[i].path);
		snprintf(root, sizeof(root), "%.*s", (int)(fl - vl), a[i].path);
		ret = write_group(c, s, hi, root[0] ? root : "/", &s->cur_root[hi]);
	}
	return ret;
}

/* The process's cgroup namespace: 0 (ckpt's), or its number. */
static int dump_ns(struct cpt_ctx *c, struct cg_cpt *s, struct cpt_task *t,
		   char *cg)
{
	uint64_t mine, its, th;
	int ret = ns_ino(getpid(), getpid(), &mine);

	if (!ret)
		ret = ns_ino(t->pid, t->pid, &its);
	if (ret)
		return log_err(c->log, -ret, "pid %d: its cgroup namespace:", t->pid);
	for (int j = 1; j < t->nr_threads; j++)
		if (ns_ino(t->pid, t->threads[j].tid, &th) || th != its)
			return log_err(c->log, EINVAL, "pid %d: thread %d is in another cgroup namespace than its process: not supported",
				       t->pid, t->threads[j].tid);
	s->cur_ns = 0;
	memset(s->cur_root, 0, sizeof(s->cur_root));
	if (its == mine)
		return 0;
	for (int i = 0; i < s->nns; i++)
		if (s->ns[i] == its)
			s->cur_ns = i + 1;
	if (!s->cur_ns) {
		if (VEC_ROOM(s->ns, s->nns, s->capns))
			return log_err(c->log, ENOMEM, "cgroup namespaces:");
		s->ns[s->nns++] = its;
		s->cur_ns = s->nns;
	}
	return ns_roots(c, s, t->pid, cg);
}

/* Every group the process's threads are in, and (the root process)
 * those below its own. */
static int cg_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct cg_cpt *s = kind_dump_state(c, &kind_cgroup);
	struct cg_line l[MAX_HIERS];
	char name[64], *buf, *keep = NULL;
	int ret = 0, n, hi;
	uint32_t id;

	for (int j = 0; j < t->nr_threads && !ret; j++) {
		snprintf(name, sizeof(name), "task/%d/cgroup", t->threads[j].tid);
		ret = proc_read(t->pid, name, &buf, NULL);
		if (ret)
			return log_err(c->log, -ret, "pid %d: tid %d: its cgroups:", t->pid,
				       t->threads[j].tid);
		if (!j)
			keep = strdup(buf);
		if (!j && !keep)
			ret = -ENOMEM;
		if (!ret && parse_cgroups(buf, l, &n))
			ret = log_err(c->log, EINVAL, "pid %d: cannot parse its cgroups", t->pid);
		for (int i = 0; i < n && !ret; i++) {
			ret = hier_open(c, s, t->pid, &l[i], &hi);
			if (!ret)
				ret = write_group(c, s, hi, l[i].path, &id);
			else if (ret > 0)
				ret = 0;
		}
		free(buf);
	}
	if (!ret)
		ret = dump_ns(c, s, t, keep);
	free(keep);
	keep = NULL;
	if (!ret && !s->walked) {
		s->walked = true;
		ret = proc_read(t->pid, "cgroup", &keep, NULL);
		if (!ret)
			ret = walk_root(c, s, keep);
		free(keep);
	}
	return ret;
}

static int cg_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			  struct cpt_thread *th)
{
	struct cg_cpt *s = kind_dump_state(c, &kind_cgroup);
	struct rec_cgroup_ref refs[MAX_HIERS];
	struct rec_cgroup_member m = { .ns = s->cur_ns };
	struct cg_line l[MAX_HIERS];
	char name[64], *buf;
	int n, ret;

	snprintf(name, sizeof(name), "task/%d/cgroup", th->tid);
	ret = proc_read(t->pid, name, &buf, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d: tid %d: its cgroups:", t->pid, th->tid);
	if (parse_cgroups(buf, l, &n))
		ret = log_err(c->log, EINVAL, "pid %d: cannot parse its cgroups", t->pid);
	for (int i = 0; i < n && !ret; i++) {
		int hi = hier_find(&s->hs, l[i].ctrl, l[i].v2);
		struct rec_cgroup_ref *r = &refs[m.nr];

		if (hi >= 0 && s->hs.e[hi].fd < 0 && !l[i].path[1])
			continue;	/* hier_open() said why */
		r->group = hi < 0 ? 0 : group_find(s, hi, l[i].path);
		r->ns_root = hi < 0 || !m.ns ? 0 : s->cur_root[hi];
		m.nr++;
		/* a thread that moved while held, or a hierarchy mounted
		 * meanwhile */
		if (!r->group || (m.ns && !r->ns_root))
			ret = log_err(c->log, EAGAIN, "pid %d: tid %d: cgroup %s:%s changed while checkpointed",
				      t->pid, th->tid, l[i].ctrl, l[i].path);
	}
	free(buf);
	if (!ret)
		ret = iw_begin(&c->w, REC_CGROUP_MEMBER, sizeof(m) + m.nr * sizeof(refs[0]));
	if (!ret)
		ret = iw_write(&c->w, &m, sizeof(m));
	if (!ret)
		ret = iw_write(&c->w, refs, m.nr * sizeof(refs[0]));
	return ret ? ret : iw_end(&c->w);
}

static void cg_dump_free(struct cpt_ctx *c, void *state)
{
	struct cg_cpt *s = state;

	(void)c;
	hiers_free(&s->hs);
	for (int i = 0; i < s->ng; i++)
		free(s->g[i].path);
	free(s->g);
	free(s->ns);
}

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

/* "/" or "/a/b": no empty, "." or ".." part, nothing odd. */
static bool path_ok(const char *s, size_t n)
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

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static int rst_group_find(const struct cg_rst *st, int hier, const char *path)
{
	for (int i = 0; i < st->ng; i++)
		if (st->g[i].hier == hier && !strcmp(st->g[i].path, path))
			return i;
	return -1;
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
	else if (!path_ok(ctrl + g->ctrl_len, g->path_len))
		why = "bad path";
	if (why)
		return log_err(c->log, EBADMSG, "CGROUP record %llu: %s",
			       (unsigned long long)r->index, why);
	cs = dupn(ctrl, g->ctrl_len);
	ret = cs ? hier_add(&st->hs, cs, g->flags & CGROUP_V2) : -1;
	free(cs);
	if (ret < 0 || VEC_ROOM(st->g, st->ng, st->capg))
		return log_err(c->log, ENOMEM, "cgroups:");
	n = &st->g[st->ng];
	memset(n, 0, sizeof(*n));
	n->g = *g;
	n->hier = ret;
	n->path = dupn(ctrl + g->ctrl_len, g->path_len);
	if (!n->path)
		return log_err(c->log, ENOMEM, "cgroups:");
	st->ng++;
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
	n->name = dupn(name, p->name_len);
	n->val = dupn(name + p->name_len, p->value_len);
	if (!n->name || !n->val) {
		free(n->name);
		free(n->val);
		return log_err(c->log, ENOMEM, "cgroups:");
	}
	g->np++;
	/* only the files ckpt writes, never tasks or release_agent */
	if (p->flags & CGPROP_VALUE && !known_prop(n->name, g->g.flags & CGROUP_V2))
		return log_err(c->log, EBADMSG, "CGROUP_PROP record %llu: %s is not a file ckpt sets",
			       (unsigned long long)r->index, n->name);
	return 0;
}

/* Group @id is @root or below it. */
static bool below(const struct cg_rst *st, uint32_t id, uint32_t root)
{
	const struct rst_group *g = &st->g[id - 1], *r = &st->g[root - 1];
	size_t n = strlen(r->path);

	return g->hier == r->hier &&
	       (n == 1 || (!strncmp(g->path, r->path, n) &&
			   (!g->path[n] || g->path[n] == '/')));
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

static int cg_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
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

/* Every hierarchy mounted (one that cannot be, where the image has
 * nothing but its root, is left: every process starts there). */
static int mount_all(struct rst_ctx *c, struct cg_rst *st)
{
	for (int i = 0; i < st->hs.n; i++) {
		struct hier *h = &st->hs.e[i];
		int fd = hier_mount(h);

		if (fd < 0 && only_root(st, i)) {
			log_warn(c->log, "cgroup hierarchy %s cannot be mounted here (%s): the processes stay in restart's own group there",
				 h->v2 ? "(v2)" : h->ctrl, strerror(-fd));
			continue;
		}
		if (fd < 0)
			return log_err(c->log, -fd, "cgroup hierarchy %s cannot be mounted here (a controller this kernel lacks, or has on cgroup v2 only?):",
				       h->v2 ? "(v2)" : h->ctrl);
		h->fd = fd;
	}
	return 0;
}

/* Before any process exists: every hierarchy can be reached here, and
 * each group is there already (a directory) or is made now, so that the
 * files' checks find a directory of a group that was open. */
static int cg_check(struct rst_ctx *c, struct rst_task *t)
{
	struct cg_rst *st = KCSTATE(c, kind_cgroup);
	struct stat sb;
	int ret;

	(void)t;
	if (!st || st->checked || !c->here)
		return 0;
	st->checked = true;
	ret = mount_all(c, st);
	for (int i = 0; i < st->ng && !ret; i++) {
		struct rst_group *g = &st->g[i];

		if (st->hs.e[g->hier].fd < 0) {
			g->exists = true;
		} else if (!fstatat(st->hs.e[g->hier].fd, rel(g->path), &sb, 0)) {
			if (!S_ISDIR(sb.st_mode))
				return log_err(c->log, ENOTDIR, "cgroup %s:%s is not a group here",
					       st->hs.e[g->hier].ctrl, g->path);
			g->exists = true;
		} else if (errno != ENOENT) {
			return log_err(c->log, errno, "cgroup %s:%s:",
				       st->hs.e[g->hier].ctrl, g->path);
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

	if (!p->p.value_len || !strcmp(p->val, "\n"))
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
	int dfd = openat(h->fd, rel(g->path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	snprintf(where, sizeof(where), "%s:%s", h->ctrl, g->path);
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
	if (!faccessat(h->fd, rel(parent), F_OK, 0))
		return 0;
	ret = make_parent(c, st, hier, parent);
	if (!ret && mkdirat(h->fd, rel(parent), 0755) && errno != EEXIST)
		return log_err(c->log, errno, "cgroup %s:%s: making it:", h->ctrl, parent);
	return ret ? ret : note_made(c, st, hier, parent);
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
	if (mkdirat(h->fd, rel(g->path), 0700)) {
		if (errno != EEXIST)
			return log_err(c->log, errno, "cgroup %s:%s: making it:",
				       h->ctrl, g->path);
		g->exists = true;	/* made meanwhile by someone else */
		return 0;
	}
	g->made = true;
	log_info(c->log, "cgroup %s:%s made", h->ctrl, g->path);
	ret = note_made(c, st, g->hier, g->path);
	return ret ? ret : set_props(c, st, g);
}

/* @tid into group @id: v1 moves a thread, v2 a process (or a thread of
 * a threaded group). */
static int join(struct rst_ctx *c, struct cg_rst *st, uint32_t id, pid_t tid,
		bool thread)
{
	const struct rst_group *g = &st->g[id - 1];
	const struct hier *h = &st->hs.e[g->hier];
	char file[MAX_PATH + 32], num[16];
	int n = snprintf(num, sizeof(num), "%d", tid), ret;

	if (h->fd < 0)	/* mount_all() said why */
		return 0;
	snprintf(file, sizeof(file), "%s/%s", rel(g->path),
		 !h->v2 ? "tasks" : thread ? "cgroup.threads" : "cgroup.procs");
	ret = write_at(h->fd, file, num, n);
	if (ret)
		return log_err(c->log, -ret, "tid %d: joining cgroup %s:%s:", tid,
			       h->v2 ? "(v2)" : h->ctrl, g->path);
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
	ret = rcheck(&t->rm, &fd, "pidfd_open", SYS_pidfd_open, ns->owner, 0);
	if (ret)
		return ret;
	ret = rcheck(&t->rm, NULL, "setns(CLONE_NEWCGROUP)", SYS_setns, fd,
		     CLONE_NEWCGROUP);
	return rcheck(&t->rm, NULL, "close", SYS_close, fd) ?: ret;
}

/* Phase IMAGE, before memory and files: the process (its main thread:
 * the others are made later, in its groups). */
static int cg_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct cg_rst *st = KCSTATE(c, kind_cgroup);
	const struct cg_thread *m;
	int ret = 0;

	if (!st)
		return 0;
	m = t->nr_threads ? KTSTATE(&t->threads[0], kind_cgroup) : NULL;
	if (ret || !m || !m->have)
		return ret;
	if (m->ns)
		ret = enter_ns(c, st, t, m);
	for (int i = 0; i < m->n && !ret; i++)
		ret = join(c, st, m->ref[i].group, t->pid, false);
	return ret;
}

/* Phase STATE: each thread in a group its main thread is not in. */
static int cg_restore_thread(struct rst_ctx *c, struct rst_task *t,
			     struct rst_thread *th)
{
	struct cg_rst *st = KCSTATE(c, kind_cgroup);
	const struct cg_thread *m = KTSTATE(th, kind_cgroup);
	const struct cg_thread *main_th = KTSTATE(&t->threads[0], kind_cgroup);
	int ret = 0;

	if (!st || !m || !m->have || th == &t->threads[0])
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

static void cg_free_ctx(void *state)
{
	struct cg_rst *st = state;

	/* the restart failed: the groups it made go, children first (the
	 * half-built processes in them are dead by now) */
	for (int i = st->nmade - 1; i >= 0; i--) {
		const struct hier *h = &st->hs.e[st->made[i].hier];

		if (!*st->released && h->fd >= 0)
			unlinkat(h->fd, rel(st->made[i].path), AT_REMOVEDIR);
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
	hiers_free(&st->hs);
	free(st);
}

/* ---- ckpt info ---- */

static void show_str(struct info_out *o, const char *key, const char *s, size_t n)
{
	char *d = dupn(s, n);

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
