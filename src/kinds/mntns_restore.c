/* mntns_restore.c - restart of a mount namespace: a child of ckpt joins
 * the root's new mount namespace (a copy of ckpt's, so the host's paths
 * are there to bind from) and its pid, net, ipc and cgroup namespaces
 * (a proc, sysfs, mqueue or cgroup2 mount is its mounter's), then forks
 * the builder, which is in the new pid namespace.  The builder makes
 * every mount a slave (nothing it does reaches the host), mounts the
 * saved root on a staging directory of the host's that no saved host
 * path is under, every mount on it in tree order (a tmpfs filled before
 * anything is mounted on it), their flags and propagation, then
 * pivot_root into it and detaches the old root, as container runtimes
 * do: every process of the namespace whose root was the old root (the
 * puppet) has the new one. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mount.h>
#include <linux/openat2.h>

#include "mntns.h"
#include "ns_user.h"

struct build {
	struct ckpt_log log;	/* the builder's own; its first error goes
				 * back to ckpt */
	const struct mntns_rst *st;
	int img_fd;
	int *fds;		/* each mount's root, once made (O_PATH) */
	char *buf;		/* MNT_DATA_MAX bytes, for file data */
	const char *stage;
	/* the root's own user namespace: the builder is in it, its root, so
	 * that what it mounts is the namespace's, as a runtime's mounts in
	 * it were (its root can remount them); ids mapped into it */
	const struct ns_user_maps *userns;
	const struct early_pty *cons;	/* consoles' slaves (console_of()) */
	int nr_cons;
	int cons_tree[MAX_CONSOLES];	/* ... detached copies, or -1 */
	int *host;		/* ... and each host bind's source, opened
				 * before it joins (-1: none): the host's
				 * paths are not all the namespace root's
				 * to reach */
};

static int b_err(struct build *b, int err, const char *what, const struct mnt_model *m)
{
	return log_err(&b->log, err, "mount /%s (%s): %s:", m->mp, m->type, what);
}

/* @path beneath @dir, no symlink followed: the mountpoints and files are
 * made as saved, never where a link made before them points. */
static int beneath(int dir, const char *path, int flags, bool xdev)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   (xdev ? RESOLVE_NO_XDEV : 0),
	};

	return syscall(SYS_openat2, dir, *path ? path : ".", &how, sizeof(how));
}

static unsigned int attr_of(uint32_t f)
{
	unsigned int a = 0;

	a |= f & MNT_F_RDONLY ? MOUNT_ATTR_RDONLY : 0;
	a |= f & MNT_F_NOSUID ? MOUNT_ATTR_NOSUID : 0;
	a |= f & MNT_F_NODEV ? MOUNT_ATTR_NODEV : 0;
	a |= f & MNT_F_NOEXEC ? MOUNT_ATTR_NOEXEC : 0;
	a |= f & MNT_F_NODIRATIME ? MOUNT_ATTR_NODIRATIME : 0;
	a |= f & MNT_F_NOSYMFOLLOW ? MOUNT_ATTR_NOSYMFOLLOW : 0;
	a |= f & MNT_F_NOATIME ? MOUNT_ATTR_NOATIME :
	     f & MNT_F_RELATIME ? MOUNT_ATTR_RELATIME : MOUNT_ATTR_STRICTATIME;
	return a;
}

static int setattr(int fd, uint64_t set, uint64_t clr, uint64_t prop)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr, .propagation = prop };

	return syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &a, sizeof(a));
}

/* The super options, one fsconfig() each: "key=value" or a flag.  A
 * comma escaped with '\' (overlay's paths) is part of its option. */
/* The kernel shows an instance's uid= and gid= (tmpfs, devpts) as the
 * host's; in a user namespace they are given as its own. */
static int id_option(struct build *b, const struct mnt_model *m, const char *key, char **val,
		     char mapped[16])
{
	bool gid = !strcmp(key, "gid");
	char *end;
	unsigned long id;
	uint32_t in;

	if (!b->userns || (!gid && strcmp(key, "uid")))
		return 0;
	id = strtoul(*val + 1, &end, 10);
	if (*end || end == *val + 1 || id > UINT32_MAX || !ns_user_id(b->userns, gid, id, &in))
		return log_err(&b->log, EOVERFLOW, "mount /%s (%s): its %s %s is not mapped in its user namespace",
			       m->mp, m->type, key, *val + 1);
	snprintf(mapped, 16, "=%u", in);
	*val = mapped;
	return 0;
}

static int configure(struct build *b, int fs, const struct mnt_model *m)
{
	char opts[CKPT_PATH_MAX + 1], *o = opts, mapped[16];
	int ret = 0;

	snprintf(opts, sizeof(opts), "%s", m->opts);

	while (o && *o && !ret) {
		char *e = o, *eq;

		while (*e && *e != ',')
			e += e[0] == '\\' && e[1] ? 2 : 1;
		bool end = !*e;

		*e = 0;
		eq = strchr(o, '=');
		if (eq)
			*eq = 0;
		if (eq && !ret)
			ret = id_option(b, m, o, &eq, mapped);
		if (!ret && syscall(SYS_fsconfig, fs, eq ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, o,
			    eq ? eq + 1 : NULL, 0))
			ret = log_err(&b->log, errno, "mount /%s (%s): option %s:", m->mp,
				      m->type, o);
		o = end ? NULL : e + 1;
	}
	/* a tmpfs is made read-only once filled (sb_ro_later) */
	if (!ret && m->m->sb_ro && m->m->how != MNT_NEW_TMPFS &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "ro", NULL, 0))
		ret = b_err(b, errno, "read-only", m);
	if (!ret && strcmp(m->source, "none") &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", m->source, 0))
		ret = b_err(b, errno, "source", m);
	return ret;
}

/* A new instance: a detached mount of it; *@fsp its filesystem context,
 * for a tmpfs (closed for any other). */
static int make_new(struct build *b, const struct mnt_model *m, int *fsp)
{
	int fs = syscall(SYS_fsopen, m->type, FSOPEN_CLOEXEC), mfd = -1, ret;

	if (fs < 0)
		return b_err(b, errno, "fsopen", m);
	ret = configure(b, fs, m);
	if (!ret && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		ret = b_err(b, errno, "creating it", m);
	if (!ret && (mfd = syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0)) < 0)
		ret = b_err(b, errno, "fsmount", m);
	if (!ret && m->m->how == MNT_NEW_TMPFS)
		*fsp = fs;
	else
		close(fs);
	return ret ? ret : mfd;
}

/* A bind of /dev/pts/N (runc's /dev/console: the container's console)
 * of a devpts instance just made, where no pty is: the console's slave
 * the tty kind made, if it is that one (its pty is the host's: the tty
 * kind makes it before the session's members are forked, long before
 * the mounts).  An O_PATH of it, or -1 and errno. */
static int console_of(struct build *b, const struct mnt_model *m)
{
	const char *n = m->root + (*m->root == '/');
	char *end;
	unsigned long want = strtoul(n, &end, 10);

	for (int i = 0; *n && !*end && i < b->nr_cons; i++)
		if (b->cons[i].index == want && b->cons_tree[i] >= 0) {
			int fd = b->cons_tree[i];

			b->cons_tree[i] = -1;
			return fd;
		}
	errno = ENOENT;
	return -1;
}

/* Before the builder leaves ckpt's mount namespace, where the consoles'
 * slaves are (open_tree clones only the caller's namespace's): a
 * detached copy of each. */
static void open_consoles(struct build *b)
{
	for (int i = 0; i < b->nr_cons; i++)
		b->cons_tree[i] = syscall(SYS_open_tree, b->cons[i].fd, "",
					  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
}

/* A detached copy of the host path, or of part of an earlier mount. */
static int make_bind(struct build *b, const struct mnt_model *m)
{
	int fd;

	if (m->m->how == MNT_BIND) {
		const char *host = m->external ? m->external : m->host;
		uint32_t i = m - b->st->mnts;

		if (b->host && b->host[i] >= 0) {
			fd = b->host[i];
			b->host[i] = -1;
			return fd;
		}
		fd = syscall(SYS_open_tree, AT_FDCWD, host, OPEN_TREE_CLOEXEC | OPEN_TREE_CLONE);
		return fd < 0 ? b_err(b, errno, host, m) : fd;
	}
	fd = beneath(b->fds[m->bind_of], m->root, O_PATH, true);
	if (fd < 0 && errno == ENOENT && !strcmp(b->st->mnts[m->bind_of].type, "devpts"))
		return (fd = console_of(b, m)) >= 0 ? fd :
		       b_err(b, errno, "the part of the mount it binds", m);
	if (fd < 0)
		return b_err(b, errno, "the part of the mount it binds", m);
	int t = syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);

	close(fd);
	return t < 0 ? b_err(b, errno, "open_tree", m) : t;
}

/* ---- a tmpfs's files ---- */

static int copy_data(struct build *b, const struct mnt_file *f, int fd)
{
	char *buf = b->buf;
	int ret = 0;

	for (uint32_t i = 0; i < f->nr_runs && !ret; i++) {
		const struct mnt_run *r = &f->runs[i];

		if (pread(b->img_fd, buf, r->len, r->img_off) != (ssize_t)r->len ||
		    pwrite(fd, buf, r->len, r->off) != (ssize_t)r->len)
			ret = -(errno ? errno : EIO);
	}
	if (!ret && ftruncate(fd, f->f->size))
		ret = -errno;
	return ret;
}

/* Split @path into its directory (opened beneath @root) and last name. */
static int parent_of(int root, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	char dir[CKPT_PATH_MAX];

	*name = slash ? slash + 1 : path;
	if (!slash)
		return fcntl(root, F_DUPFD_CLOEXEC, 0);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	return beneath(root, dir, O_PATH | O_DIRECTORY, true);
}

static int owner_set(struct build *b, int dir, const char *name, const struct rec_mnt_file *r)
{
	uint32_t uid = r->uid, gid = r->gid;

	if (b->userns && (!ns_user_id(b->userns, false, uid, &uid) ||
			  !ns_user_id(b->userns, true, gid, &gid))) {
		errno = EOVERFLOW;	/* as the kernel says it */
		return -1;
	}
	return fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
}

static int make_file(struct build *b, int root, const struct mnt_model *m, uint32_t i)
{
	const struct mnt_file *f = &m->files[i];
	const struct rec_mnt_file *r = f->f;
	const char *name;
	int dir = parent_of(root, f->path, &name), fd = -1, ret = 0;

	if (dir < 0)
		return log_err(&b->log, errno, "mount /%s: the directory of %s:", m->mp, f->path);
	if (!*f->path)
		;	/* the root: there */
	else if (r->link) {
		const char *lname;
		int ldir = parent_of(root, m->files[r->link - 1].path, &lname);

		ret = ldir < 0 || linkat(ldir, lname, dir, name, 0) ? -errno : 0;
		if (ldir >= 0)
			close(ldir);
	} else if (S_ISDIR(r->mode)) {
		ret = mkdirat(dir, name, 0700) ? -errno : 0;
	} else if (S_ISLNK(r->mode)) {
		ret = symlinkat(f->target, dir, name) ? -errno : 0;
	} else if (S_ISREG(r->mode)) {
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		ret = fd < 0 ? -errno : copy_data(b, f, fd);
	} else {
		ret = mknodat(dir, name, r->mode & S_IFMT, r->rdev) ? -errno : 0;
	}
	/* owner first: chown clears the set-id bits */
	if (!ret && !r->link && owner_set(b, dir, *f->path ? name : "", r))
		ret = -errno;
	if (!ret && !r->link && !S_ISLNK(r->mode) &&
	    fchmodat(dir, *f->path ? name : ".", r->mode & 07777, 0))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	close(dir);
	return ret ? log_err(&b->log, -ret, "mount /%s: making %s:", m->mp, f->path) : 0;
}

/* Times last, children before their directory (making a file changes
 * its directory's). */
static int set_times(struct build *b, int root, const struct mnt_model *m)
{
	for (uint32_t i = m->nr_files; i-- > 0;) {
		const struct rec_mnt_file *r = m->files[i].f;
		struct timespec ts[2] = { { r->atime, r->atime_ns }, { r->mtime, r->mtime_ns } };
		const char *name;
		int dir;

		if (r->link)
			continue;	/* its first name's are its own */
		dir = parent_of(root, m->files[i].path, &name);
		if (dir < 0 || utimensat(dir, *m->files[i].path ? name : ".", ts,
					 AT_SYMLINK_NOFOLLOW)) {
			int err = errno;

			if (dir >= 0)
				close(dir);
			return log_err(&b->log, err, "mount /%s: times of %s:", m->mp,
				       m->files[i].path);
		}
		close(dir);
	}
	return 0;
}

/* Its files, then read-only if it was. */
static int fill(struct build *b, int mfd, int fs, const struct mnt_model *m)
{
	int ret = 0;

	for (uint32_t i = 0; i < m->nr_files && !ret; i++)
		ret = make_file(b, mfd, m, i);
	if (!ret)
		ret = set_times(b, mfd, m);
	if (!ret && m->m->sb_ro &&
	    (syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "ro", NULL, 0) ||
	     syscall(SYS_fsconfig, fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0)))
		ret = b_err(b, errno, "making it read-only", m);
	return ret;
}

/* ---- the tree ---- */

static bool first_of_group(const struct mntns_rst *st, uint32_t i)
{
	for (uint32_t k = 0; k < i; k++)
		if (st->mnts[k].m->shared == st->mnts[i].m->shared)
			return false;
	return true;
}

/* Its propagation, once attached.  A later member of a peer group was
 * made as a bind of the group's first, so it is in the group; a slave a
 * bind of its master group's first, made a slave now; a bind of a host
 * path a slave of the host's group if the host's mount is shared; any
 * other private.  The root is not made shared before pivot_root. */
static int propagate(struct build *b, uint32_t i, int fd)
{
	const struct mnt_model *m = &b->st->mnts[i];
	const struct rec_mnt *r = m->m;
	bool later = r->shared && !first_of_group(b->st, i);

	if (later)
		return 0;
	if (r->master ? setattr(fd, 0, 0, MS_SLAVE) :
	    !(r->prop & MNT_P_EXT_SLAVE) && setattr(fd, 0, 0, MS_PRIVATE))
		return b_err(b, errno, "its propagation", m);
	if (r->shared && i && setattr(fd, 0, 0, MS_SHARED))
		return b_err(b, errno, "making it shared", m);
	if ((r->prop & MNT_P_UNBINDABLE) && setattr(fd, 0, 0, MS_UNBINDABLE))
		return b_err(b, errno, "making it unbindable", m);
	return 0;
}

static int mount_one(struct build *b, uint32_t i)
{
	const struct mnt_model *m = &b->st->mnts[i];
	int how = m->m->how, mfd, tgt, fs = -1, ret = 0;

	mfd = how == MNT_BIND || how == MNT_PEER ? make_bind(b, m) : make_new(b, m, &fs);
	if (mfd < 0)
		return mfd;
	tgt = i ? beneath(b->fds[0], m->mp, O_PATH, false)
		: open(b->stage, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tgt < 0)
		ret = b_err(b, errno, "its mountpoint", m);
	else if (syscall(SYS_move_mount, mfd, "", tgt, "",
			 MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH))
		ret = b_err(b, errno, "move_mount", m);
	if (tgt >= 0)
		close(tgt);
	if (!ret && how == MNT_NEW_TMPFS)
		ret = fill(b, mfd, fs, m);
	if (fs >= 0)
		close(fs);
	if (!ret && setattr(mfd, attr_of(m->m->flags),
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			    MOUNT_ATTR_NOEXEC | MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME |
			    MOUNT_ATTR_NOSYMFOLLOW, 0))
		ret = b_err(b, errno, "its flags", m);
	if (!ret)
		ret = propagate(b, i, mfd);
	if (ret)
		close(mfd);
	else
		b->fds[i] = mfd;
	return ret;
}

/* A directory of the host's to build on: no saved host path or option
 * is under it (it is hidden while the tree is built). */
static const char *staging(const struct mntns_rst *st)
{
	static const char *const dirs[] = { "/mnt", "/tmp", "/run", "/var/tmp", "/media",
					    "/srv", "/opt", "/home", NULL };

	for (int d = 0; dirs[d]; d++) {
		size_t n = strlen(dirs[d]);
		struct stat sb;
		bool clash = stat(dirs[d], &sb) || !S_ISDIR(sb.st_mode);

		for (uint32_t i = 0; i < st->nr && !clash; i++) {
			const char *h = st->mnts[i].external ? st->mnts[i].external
							     : st->mnts[i].host;

			clash = (!strncmp(h, dirs[d], n) && (!h[n] || h[n] == '/')) ||
				strstr(st->mnts[i].opts, dirs[d]);
		}
		if (!clash)
			return dirs[d];
	}
	return NULL;
}

static int pivot(struct build *b)
{
	const struct mnt_model *root = &b->st->mnts[0];

	if (fchdir(b->fds[0]) || syscall(SYS_pivot_root, ".", "."))
		return log_err(&b->log, errno, "pivot_root into the restored root:");
	/* the old root is over the new one now: detach it (every mount of
	 * it a slave since build() began, so the host's are untouched; a
	 * recursive MS_SLAVE on "." here would reach the new root's, whose
	 * peer groups are the container's) */
	if (umount2(".", MNT_DETACH) || chdir("/"))
		return log_err(&b->log, errno, "detaching the old root:");
	if (root->m->shared && mount(NULL, "/", NULL, MS_SHARED, NULL))
		return log_err(&b->log, errno, "making the root shared:");
	return 0;
}

static int build(struct build *b)
{
	int ret = 0;

	b->stage = staging(b->st);
	if (!b->stage)
		return log_err(&b->log, EBUSY, "no directory to build the mounts on");
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
		return log_err(&b->log, errno, "making the new mount namespace a slave:");
	for (uint32_t i = 0; i < b->st->nr && !ret; i++)
		ret = mount_one(b, i);
	return ret ? ret : pivot(b);
}

/* ---- ckpt's side ---- */

static const char *const join[] = { "pid", "net", "ipc", "cgroup", "mnt" };
static const int join_flag[] = { CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWCGROUP,
				 CLONE_NEWNS };
#define NR_JOIN	(sizeof(join) / sizeof(join[0]))

struct report {
	int err;
	char msg[512];
};

/* The builder's failure, for ckpt to report. */
static void send_report(int fd, const struct ckpt_log *log)
{
	struct report r = { .err = log->err ? log->err : EIO };

	snprintf(r.msg, sizeof(r.msg), "%s", log->msg);
	if (write(fd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
}

static int wait_exit(pid_t k)
{
	int st;

	while (waitpid(k, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Whether @fd is the namespace we are in already (the host's, which
 * the builder in a user namespace of the container's may not join). */
static bool is_ours(int fd, const char *name)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	return !fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* Before the builder joins a user namespace: a detached copy of each
 * host path bound, as ckpt, which may reach them all (the bundle runc
 * restores from is under a directory only the host's root may enter). */
static int open_host_binds(struct build *b)
{
	for (uint32_t i = 0; i < b->st->nr; i++) {
		const struct mnt_model *m = &b->st->mnts[i];

		if (m->m->how == MNT_BIND)
			b->host[i] = make_bind(b, m);
		if (m->m->how == MNT_BIND && b->host[i] < 0)
			return b->host[i];
	}
	return 0;
}

/* Into @pid's user namespace, as its root. */
static int join_user(struct build *b, pid_t pid)
{
	char path[64];
	int fd;

	/* no groups of ckpt's (there, setgroups may be denied) */
	if (syscall(SYS_setgroups, 0, NULL))
		return log_err(&b->log, errno, "setgroups:");
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWUSER))
		return log_err(&b->log, errno, "joining pid %d's user namespace:", pid);
	close(fd);
	if (syscall(SYS_setresgid, 0, 0, 0) || syscall(SYS_setresuid, 0, 0, 0))
		return log_err(&b->log, errno, "becoming the root of pid %d's user namespace:",
			       pid);
	return 0;
}

/* The child: joins the root's namespaces, forks the builder into its pid
 * namespace, and exits as the builder did. */
static void joiner(struct build b, pid_t pid, int rep)
{
	int ns[NR_JOIN];
	char path[64];
	pid_t k;

	for (size_t i = 0; i < NR_JOIN; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, join[i]);
		ns[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (ns[i] < 0 && errno != ENOENT)
			log_err(&b.log, errno, "%s:", path);
	}
	/* (its namespaces opened first: /proc is ckpt's) */
	open_consoles(&b);
	if (b.userns && !b.log.err && !open_host_binds(&b))
		join_user(&b, pid);
	for (size_t i = 0; i < NR_JOIN && !b.log.err; i++)
		if (ns[i] >= 0 && !is_ours(ns[i], join[i]) && setns(ns[i], join_flag[i]))
			log_err(&b.log, errno, "joining pid %d's %s namespace:", pid, join[i]);
	if (b.log.err)
		send_report(rep, &b.log), _exit(1);
	k = fork();
	if (k == 0) {
		if (build(&b))
			send_report(rep, &b.log), _exit(1);
		_exit(0);
	}
	if (k < 0)
		log_err(&b.log, errno, "fork:"), send_report(rep, &b.log), _exit(1);
	_exit(wait_exit(k));
}

int mntns_build(struct rst_ctx *c, const struct mntns_rst *st, pid_t pid)
{
	/* made before the fork: ckpt may have threads, whose locks a
	 * child cannot take */
	struct build b = { .log = { .fd = -1 }, .st = st, .img_fd = c->img_fd,
			   .userns = c->userns, .host = malloc(st->nr * sizeof(int) + 1),
			   .fds = calloc(st->nr, sizeof(int)), .buf = malloc(MNT_DATA_MAX) };
	struct report r = { 0 };
	int p[2], code;
	ssize_t n;
	pid_t k = -1;

	for (uint32_t i = 0; b.host && i < st->nr; i++)
		b.host[i] = -1;
	if (!b.fds || !b.buf || !b.host || pipe2(p, O_CLOEXEC)) {
		free(b.fds);
		free(b.buf);
		free(b.host);
		return log_err(c->log, b.buf && b.fds && b.host ? errno : ENOMEM,
			       "restoring mounts:");
	}
	b.cons = c->early_pty;
	b.nr_cons = c->nr_early_pty;
	k = fork();
	if (k == 0) {
		close(p[0]);
		joiner(b, pid, p[1]);
	}
	free(b.fds);
	free(b.buf);
	free(b.host);
	close(p[1]);
	if (k < 0) {
		close(p[0]);
		return log_err(c->log, errno, "fork:");
	}
	n = read(p[0], &r, sizeof(r));
	close(p[0]);
	code = wait_exit(k);
	if (n == (ssize_t)sizeof(r))
		return log_err(c->log, r.err, "pid %d: restoring its mounts: %s", pid,
			       r.msg);
	if (code)
		return log_err(c->log, EIO, "pid %d: restoring its mounts: the builder failed (%d)",
			       pid, code);
	return 0;
}
