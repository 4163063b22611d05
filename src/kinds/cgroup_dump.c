/* cgroup_dump.c - the cgroup kind's checkpoint side (cgroup.c says
 * what it saves).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "cgroup.h"
#include "../unpriv.h"

/* ---- checkpoint ---- */

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

	*hi = cg_hier_add(&s->hs, l->ctrl, l->v2);
	if (*hi < 0)
		return log_err(c->log, ENOMEM, "pid %d: cgroup hierarchies:", pid);
	h = &s->hs.e[*hi];
	/* a root is written without reading anything of it (write_one()):
	 * ten mounts of a machine's hierarchies cost a tiny process's
	 * checkpoint a quarter of a millisecond */
	if (h->fd >= 0 || !l->path[1])
		return 0;
	fd = cg_hier_mount(h);
	if (fd < 0)
		return log_err(c->log, -fd, "pid %d: cgroup hierarchy %s: cannot mount it to read its groups:",
			       pid, cg_name(h));
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

/* The value of file @name of group @dfd, into @buf (MAX_VALUE + 1),
 * and its owner and mode into @st: 1 if read, 0 if the group has no
 * such file. */
static int read_prop(int dfd, const char *name, char *buf, size_t *len,
		     struct stat *st)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, st)) {
		got = -errno;
		close(fd);
		return got;
	}
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

/* Whether v1 hierarchy @h can have file @prop: its controllers' own
 * files and the core's ("cgroup.*", "notify_on_release").  Looking up
 * the others, each absent, was a third of the group's calls. */
static bool prop_here(const struct hier *h, const char *prop)
{
	const char *dot = strchr(prop, '.');
	size_t n = dot ? (size_t)(dot - prop) : 0;

	if (h->v2 || !dot || !strncmp(prop, "cgroup.", 7))
		return true;
	for (const char *c = h->ctrl; *c;) {
		size_t len = strcspn(c, ",");

		if (len == n && !strncmp(c, prop, n))
			return true;
		c += len + (c[len] == ',');
	}
	return false;
}

/* The files of a group: the values of those props_* lists, and the
 * owner and mode of any file changed.  A value the kernel will not
 * read is left out, with a warning. */
static int write_props(struct cpt_ctx *c, const struct hier *h, int dfd,
		       const char *path, uint32_t id)
{
	char *buf = malloc(MAX_VALUE + 1);
	int ret = 0, got, nr = 0;
	struct dirent *e;
	struct stat st;
	size_t len = 0;
	DIR *d;

	if (!buf)
		return log_err(c->log, ENOMEM, "cgroups:");
	for (const char *const *p = cg_props(h->v2); *p && !ret; p++) {
		if (!prop_here(h, *p))
			continue;
		got = read_prop(dfd, *p, buf, &len, &st);
		if (got < 0)
			log_warn(c->log, "cgroup %s:%s: %s not saved: %s", cg_name(h), path,
				 *p, strerror(-got));
		if (got <= 0)
			continue;
		ret = write_prop(c, id, CGPROP_VALUE |
				 (owner_changed(h->fd, *p, &st) ? CGPROP_OWNER : 0),
				 &st, *p, buf, len);
		nr++;
	}
	free(buf);
	d = ret ? NULL : fdopendir(dup(dfd));
	if (!ret && !d)
		return log_err(c->log, errno, "cgroup %s:%s: listing its files:", cg_name(h), path);
	while (!ret && d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || cg_known_prop(e->d_name, h->v2) ||
		    fstatat(dfd, e->d_name, &st, 0) || !S_ISREG(st.st_mode) ||
		    !owner_changed(h->fd, e->d_name, &st))
			continue;
		if (++nr > MAX_PROPS)
			ret = log_err(c->log, E2BIG, "cgroup %s:%s: more than %d files changed",
				      cg_name(h), path, MAX_PROPS);
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
	const char *base = cg_root_for(c->opts->cgroup_root, c->opts->nr_cgroup_root, h);
	struct rec_cgroup g = { .flags = (h->v2 ? CGROUP_V2 : 0) |
					 (base && !strcmp(base, path) ? CGROUP_BASE : 0) };
	/* a root's, unread: what the kernel gives every hierarchy's root
	 * (a --cgroup-root may make the root's group elsewhere with it) */
	struct stat st = { .st_mode = S_IFDIR | 0555 };
	int dfd = -1, ret;

	*id = group_find(s, hi, path);
	if (*id)
		return 0;
	if (s->ng >= MAX_GROUPS)
		return log_err(c->log, E2BIG, "more than %d cgroups to save", MAX_GROUPS);
	if (strlen(path) > MAX_PATH || path[0] != '/' || strstr(path, "/..") ||
	    strchr(path, '\n'))
		return log_err(c->log, EINVAL, "cgroup %s:%s: outside ckpt's cgroup namespace, a path too long or with a newline: not supported",
			       cg_name(h), path);
	/* a root is the machine's, never made again: its owner and files
	 * are not written, and its hierarchy is mounted only if needed */
	if (path[1]) {
		dfd = openat(h->fd, cg_rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || fstat(dfd, &st)) {
			ret = log_err(c->log, errno, "cgroup %s:%s:", cg_name(h), path);
			if (dfd >= 0)
				close(dfd);
			return ret;
		}
	}
	if (VEC_ROOM(s->g, s->ng, s->capg) || !(s->g[s->ng].path = strdup(path))) {
		if (dfd >= 0)
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
	if (!ret && path[1])
		ret = write_props(c, h, dfd, path, g.id);
	if (dfd >= 0)
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
	int dfd = openat(s->hs.e[hi].fd, cg_rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char sub[MAX_PATH + 2];
	struct dirent *e;
	uint32_t id;
	int ret = 0;
	DIR *d;

	if (dfd < 0)
		return log_err(c->log, errno, "cgroup %s:%s:", cg_name(&s->hs.e[hi]), path);
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return log_err(c->log, errno, "cgroup %s:%s:", cg_name(&s->hs.e[hi]), path);
	}
	while (!ret && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (depth >= MAX_DEPTH)
			ret = log_err(c->log, E2BIG, "cgroup %s:%s: groups nested more than %d deep",
				      cg_name(&s->hs.e[hi]), path, MAX_DEPTH);
		else if (snprintf(sub, sizeof(sub), "%s/%s", path[1] ? path : "",
				  e->d_name) > MAX_PATH)
			ret = log_err(c->log, ENAMETOOLONG, "cgroup %s:%s/%s:",
				      cg_name(&s->hs.e[hi]), path, e->d_name);
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
	if (cg_parse(mine, own, &nown) || cg_parse(root_cg, l, &n))
		ret = log_err(c->log, EINVAL, "cannot parse a cgroup file");
	for (int i = 0; i < n && !ret; i++) {
		bool ours = false;

		for (int j = 0; j < nown; j++)
			ours |= own[j].v2 == l[i].v2 && !strcmp(own[j].ctrl, l[i].ctrl) &&
				!strcmp(own[j].path, l[i].path);
		hi = cg_hier_find(&s->hs, l[i].ctrl, l[i].v2);
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
	if (cg_parse(full, a, &na) || cg_parse(view, b, &nb) || na != nb)
		return log_err(c->log, EINVAL, "pid %d: its cgroups read from its cgroup namespace do not match",
			       pid);
	for (int i = 0; i < na && !ret; i++) {
		size_t fl = strlen(a[i].path), vl = strlen(b[i].path);
		int hi = cg_hier_find(&s->hs, a[i].ctrl, a[i].v2);

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

/* A --cgroup-root of the root process: its group or one above it. */
static int base_bad(struct cpt_ctx *c, const struct hier *h, pid_t pid, const char *path)
{
	const char *b = cg_root_for(c->opts->cgroup_root, c->opts->nr_cgroup_root, h);

	if (!b || cg_below(path, b))
		return 0;
	return log_err(c->log, EINVAL, "--cgroup-root %s: pid %d is in cgroup %s:%s, not below it",
		       b, pid, cg_name(h), path);
}

/* Every group the process's threads are in, and (the root process)
 * those below its own. */
int cg_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct cg_cpt *s = kind_dump_state(c, &kind_cgroup);
	struct cg_line l[MAX_HIERS];
	char name[64], *buf, *keep = NULL;
	int ret = 0, n, hi;
	uint32_t id;

	/* an ordinary user cannot mount a hierarchy to read its groups;
	 * restart leaves the processes in the restarting user's own */
	if (unpriv_needs_ns()) {
		if (t == c->tasks[0])
			log_warn(c->log, "pid %d: cgroups not saved: reading them needs CAP_SYS_ADMIN (restart leaves the processes in its own)",
				 t->pid);
		return 0;
	}
	if (!s->walked)	/* the root process, first */
		ret = cg_root_args_bad(c->log, c->opts->cgroup_root, c->opts->nr_cgroup_root);

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
		if (!ret && cg_parse(buf, l, &n))
			ret = log_err(c->log, EINVAL, "pid %d: cannot parse its cgroups", t->pid);
		for (int i = 0; i < n && !ret; i++) {
			ret = hier_open(c, s, t->pid, &l[i], &hi);
			if (!ret && !s->walked)
				ret = base_bad(c, &s->hs.e[hi], t->pid, l[i].path);
			if (!ret)
				ret = write_group(c, s, hi, l[i].path, &id);
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

int cg_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			  struct cpt_thread *th)
{
	struct cg_cpt *s = kind_dump_state(c, &kind_cgroup);
	struct rec_cgroup_ref refs[MAX_HIERS];
	struct rec_cgroup_member m = { .ns = s->cur_ns };
	struct cg_line l[MAX_HIERS];
	char name[64], *buf;
	int n, ret;

	if (unpriv_needs_ns())	/* cg_dump() says why */
		return 0;
	snprintf(name, sizeof(name), "task/%d/cgroup", th->tid);
	ret = proc_read(t->pid, name, &buf, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d: tid %d: its cgroups:", t->pid, th->tid);
	if (cg_parse(buf, l, &n))
		ret = log_err(c->log, EINVAL, "pid %d: cannot parse its cgroups", t->pid);
	for (int i = 0; i < n && !ret; i++) {
		int hi = cg_hier_find(&s->hs, l[i].ctrl, l[i].v2);
		struct rec_cgroup_ref *r = &refs[m.nr];

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

void cg_dump_free(struct cpt_ctx *c, void *state)
{
	struct cg_cpt *s = state;

	(void)c;
	cg_hiers_free(&s->hs);
	for (int i = 0; i < s->ng; i++)
		free(s->g[i].path);
	free(s->g);
	free(s->ns);
}
