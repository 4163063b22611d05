/* fs.c - working directory, root directory and umask (FS).
 *
 * A chrooted process keeps its root: ckpt (not chrooted itself) reads
 * every path of the process - its cwd, its files, its mappings - as seen
 * from the real root, so at restart all of them are opened first, by
 * those full paths, and the root is changed last (phase STATE, after
 * files and memory): chdir(cwd), then chroot(root), which leaves the cwd
 * where it is, as it was.  A process sharing its fs info with its parent
 * (CLONE_FS) but not its fd table would open its files after its parent
 * had already changed their common root: refused for now.
 *
 * A working directory whose last name was removed (its link reads
 * "PATH (deleted)", and it has no links) is saved by that name, its mode
 * and owner.  At restart a directory is made there again, the process
 * enters it, and it is removed: the process sees the same deleted cwd.
 * If the process has an fd on that directory, it enters the directory
 * that fd is at restart (fchdir), so both stay one.  A deleted /proc/PID
 * directory (a process that has ended) cannot be made again: refused.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kinds.h"
#include "mntns.h"

struct fs_state {
	bool have;
	struct rec_fs fs;
	char *rec;
	const char *cwd, *root;
};

/* An fd of @pid on its deleted cwd @cwd: at restart the process enters
 * the directory that fd is, so the two stay one directory. */
static void cwd_fd(pid_t pid, const struct stat *cwd, struct rec_fs *fs)
{
	char path[64];
	struct dirent *d;
	struct stat st;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		char *end;
		long fd = strtol(d->d_name, &end, 10);

		if (*end || end == d->d_name || fd < 0 || fd > INT_MAX)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%ld", pid, fd);
		if (stat(path, &st) ||
		    st.st_dev != cwd->st_dev || st.st_ino != cwd->st_ino)
			continue;
		fs->flags |= FS_CWD_FD;
		fs->cwd_fd = fd;
		break;
	}
	if (dir)
		closedir(dir);
}

/* Strips " (deleted)" from @cwd if its directory has no name left, and
 * notes its mode and owner for restart. */
static int fs_cwd_deleted(struct cpt_ctx *c, struct cpt_task *t, char *cwd,
			  struct rec_fs *fs)
{
	size_t n = strlen(cwd);
	char link[64];
	struct stat st;

	if (n <= 10 || strcmp(cwd + n - 10, " (deleted)"))
		return 0;
	snprintf(link, sizeof(link), "/proc/%d/cwd", t->pid);
	if (stat(link, &st))
		return log_err(c->log, errno, "pid %d: stat its working directory:", t->pid);
	if (!strncmp(cwd, "/proc/", 6))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: its working directory %s is the /proc directory of a process that has ended: it cannot be made again",
			       t->pid, cwd);
	if (st.st_nlink)
		return access(cwd, F_OK) ?
		       log_err(c->log, EOPNOTSUPP, "pid %d: its working directory %s was deleted",
			       t->pid, cwd) : 0;	/* named "... (deleted)" */
	cwd[n - 10] = '\0';
	fs->flags |= FS_CWD_DELETED;
	fs->cwd_mode = st.st_mode & 07777;
	fs->cwd_uid = st.st_uid;
	fs->cwd_gid = st.st_gid;
	cwd_fd(t->pid, &st, fs);
	return 0;
}

static int fs_links(struct cpt_ctx *c, struct cpt_task *t, char *cwd, char *root,
		    struct rec_fs *fs)
{
	int ret = proc_readlink(t->pid, "cwd", cwd, CKPT_PATH_MAX);

	if (!ret)
		ret = proc_readlink(t->pid, "root", root, CKPT_PATH_MAX);
	if (ret)
		return log_err(c->log, -ret, "pid %d: cwd/root link:", t->pid);
	if (strstr(root, " (deleted)") || root[0] != '/')
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: its root directory %s was deleted or is elsewhere", t->pid,
			       root);
	ret = fs_cwd_deleted(c, t, cwd, fs);
	if (ret)
		return ret;
	if (t->shares_fs && !t->shares_files && strcmp(root, "/"))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: chrooted in %s with its parent's fs info (CLONE_FS) but its own fds, not supported yet",
			       t->pid, root);
	return 0;
}

static int fs_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_fs fs = { 0 };
	char cwd[CKPT_PATH_MAX], root[CKPT_PATH_MAX];
	uint64_t um;
	int ret = fs_links(c, t, cwd, root, &fs);

	if (ret || t->shares_fs)
		return ret;	/* its parent's, already written */
	ret = proc_status_u64(t->pid, "Umask", 8, &um);
	if (ret)
		return log_err(c->log, -ret, "pid %d: umask:", t->pid);
	fs.umask = um;
	fs.cwd_len = strlen(cwd) + 1;
	fs.root_len = strlen(root) + 1;
	ret = iw_begin(&c->w, REC_FS, sizeof(fs) + fs.cwd_len + fs.root_len);
	if (!ret)
		ret = iw_write(&c->w, &fs, sizeof(fs));
	if (!ret)
		ret = iw_write(&c->w, cwd, fs.cwd_len);
	if (!ret)
		ret = iw_write(&c->w, root, fs.root_len);
	return ret ? ret : iw_end(&c->w);
}

/* The FS record's fixed part: an image written before the deleted-cwd
 * fields has 16 bytes of it (umask, the two lengths, 0), the strings
 * right after; the lengths say which (0 if neither fits). */
static size_t fs_fixed(const struct rec *r, struct rec_fs *out)
{
	const struct rec_fs *fs = r->data;
	uint64_t strs = (uint64_t)fs->cwd_len + fs->root_len;
	size_t fixed = r->data_len == FS_OLD_SIZE + strs ? FS_OLD_SIZE :
		       r->data_len == sizeof(*fs) + strs ? sizeof(*fs) : 0;

	memset(out, 0, sizeof(*out));
	memcpy(out, fs, fixed ? fixed : FS_OLD_SIZE);
	return fixed;
}

static int fs_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct fs_state *s = kind_state(t, &kind_fs, sizeof(*s));
	struct rec_fs f, *fs = &f;
	int ret = rec_want(c->log, r, FS_OLD_SIZE, "FS");
	size_t fixed;

	if (!s)
		return log_err(c->log, ENOMEM, "fs state:");
	if (ret)
		return ret;
	fixed = fs_fixed(r, fs);
	if (!fixed || s->have || fs->umask > 0777 ||
	    (fs->flags & ~(FS_CWD_DELETED | FS_CWD_FD)) || fs->cwd_mode > 07777 ||
	    (fs->flags & FS_CWD_FD ? !(fs->flags & FS_CWD_DELETED) || fs->cwd_fd > INT_MAX :
	     fs->cwd_fd != 0) ||
	    fs->cwd_len > CKPT_PATH_MAX || fs->root_len > CKPT_PATH_MAX)
		return log_err(c->log, EBADMSG, "bad or repeated FS record");
	s->cwd = rec_str(r, fixed, fs->cwd_len);
	s->root = rec_str(r, fixed + fs->cwd_len, fs->root_len);
	if (!s->cwd || s->cwd[0] != '/' || !s->root || s->root[0] != '/')
		return log_err(c->log, EBADMSG, "FS: bad cwd or root");
	s->fs = *fs;
	s->rec = r->data;
	r->data = NULL;
	s->have = true;
	return 0;
}

static int dir_check(struct rst_ctx *c, const char *what, const char *path)
{
	struct stat st;
	int ret = mntns_stat(c, path, true, &st);

	if (ret == 1)
		return 0;
	if (ret == -EINVAL)
		ret = stat(path, &st) ? -errno : 0;
	if (ret || !S_ISDIR(st.st_mode))
		return log_err(c->log, ret ? -ret : ENOTDIR, "%s %s:", what, path);
	return 0;
}

/* A deleted cwd is made again in its parent: that must be there. */
static int parent_check(struct rst_ctx *c, struct rst_task *t, const char *cwd)
{
	char parent[CKPT_PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", cwd);
	slash = strrchr(parent, '/');
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (dir_check(c, "directory of the deleted working directory", parent))
		return log_err(c->log, ENOENT, "pid %d: cannot make its deleted working directory %s again",
			       t->pid, cwd);
	return 0;
}

static int fs_check(struct rst_ctx *c, struct rst_task *t)
{
	struct fs_state *s = t->kind_state[kind_index(&kind_fs)];

	if (t->t.flags & TASK_SHARES_FS)
		return s ? log_err(c->log, EBADMSG, "pid %d: FS record, but it shares its parent's",
				   t->pid) : 0;
	if (!s || !s->have)
		return log_err(c->log, EBADMSG, "pid %d: image has no FS record", t->pid);
	if (!c->here)
		return 0;
	errno = 0;
	if (s->fs.flags & FS_CWD_FD)
		return dir_check(c, "root directory", s->root);
	if (s->fs.flags & FS_CWD_DELETED)
		return parent_check(c, t, s->cwd) ?: dir_check(c, "root directory", s->root);
	return dir_check(c, "working directory", s->cwd) ?:
	       dir_check(c, "root directory", s->root);
}

/* The process enters a directory made by that name (or, if the name is
 * taken now, a name of its own beside it), which is then removed. */
static int fs_deleted_cwd(struct rst_ctx *c, struct rst_task *t, struct fs_state *s)
{
	char path[CKPT_PATH_MAX + 32];
	uint64_t addr;
	int ret;

	snprintf(path, sizeof(path), "%s", s->cwd);
	ret = mkdir(path, 0700) ? errno : 0;
	if (ret == EEXIST) {
		snprintf(path, sizeof(path), "%s.ckpt-cwd-%d", s->cwd, t->pid);
		ret = mkdir(path, 0700) ? errno : 0;
	}
	if (ret)
		return log_err(c->log, ret, "pid %d: make its deleted working directory %s again:",
			       t->pid, path);
	if (chown(path, s->fs.cwd_uid, s->fs.cwd_gid) || chmod(path, s->fs.cwd_mode))
		ret = log_err(c->log, errno, "pid %d: owner/mode of %s:", t->pid, path);
	else
		ret = rst_scratch_put(t, 0, path, strlen(path) + 1, &addr) ?:
		      rcheck(&t->rm, NULL, "chdir", SYS_chdir, addr) ?:
		      remote_flush(&t->rm);	/* (in it before it is removed) */
	if (rmdir(path) && !ret)
		ret = log_err(c->log, errno, "pid %d: remove %s again:", t->pid, path);
	return ret;
}

static int fs_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct fs_state *s = t->kind_state[kind_index(&kind_fs)];
	uint64_t addr;
	int ret;

	if (!s)
		return 0;	/* shares its parent's (CLONE_FS) */
	if (s->fs.flags & FS_CWD_FD)
		ret = rcheck(&t->rm, NULL, "fchdir", SYS_fchdir, s->fs.cwd_fd);
	else if (s->fs.flags & FS_CWD_DELETED)
		ret = fs_deleted_cwd(c, t, s);
	else
		ret = rst_scratch_put(t, 0, s->cwd, s->fs.cwd_len, &addr) ?:
		      rcheck(&t->rm, NULL, "chdir", SYS_chdir, addr);
	if (!ret && strcmp(s->root, "/"))
		ret = rst_scratch_put(t, 0, s->root, s->fs.root_len, &addr) ?:
		      rcheck(&t->rm, NULL, "chroot", SYS_chroot, addr);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "umask", SYS_umask, s->fs.umask);
	return ret;
}

static void fs_free(struct rst_task *t, void *state)
{
	struct fs_state *s = state;

	(void)t;
	free(s->rec);
	free(s);
}

static void fs_show(struct info_out *o, const struct rec *r)
{
	struct rec_fs f, *fs = &f;
	size_t fixed = fs_fixed(r, fs);

	info_str(o, "cwd", fixed ? rec_str(r, fixed, fs->cwd_len) ?: "?" : "?");
	if (fixed && fs->cwd_len <= CKPT_PATH_MAX)
		info_str(o, "root", rec_str(r, fixed + fs->cwd_len, fs->root_len) ?: "?");
	info_hex(o, "umask", fs->umask);
	if (fs->flags & FS_CWD_DELETED)
		info_str(o, "cwd_deleted", "yes");
}

static const struct rec_desc fs_recs[] = {
	{ REC_FS, "FS", FS_OLD_SIZE },
	{ 0 }
};

const struct kind_ops kind_fs = {
	.name = "fs",
	.recs = fs_recs,
	.phase = PHASE_STATE,
	.rst_batch = true,
	.dump = fs_dump,
	.load = fs_load,
	.check = fs_check,
	.restore = fs_restore,
	.free = fs_free,
	.show = fs_show,
};
