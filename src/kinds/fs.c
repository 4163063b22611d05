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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "../kinds.h"

struct fs_state {
	bool have;
	struct rec_fs fs;
	char *rec;
	const char *cwd, *root;
};

static int fs_links(struct cpt_ctx *c, struct cpt_task *t, char *cwd, char *root)
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
	if (strstr(cwd, " (deleted)"))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: its working directory %s was deleted", t->pid, cwd);
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
	int ret = fs_links(c, t, cwd, root);

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

static int fs_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct fs_state *s = kind_state(t, &kind_fs, sizeof(*s));
	const struct rec_fs *fs = r->data;
	int ret = rec_want(c->log, r, sizeof(*fs), "FS");

	if (!s)
		return log_err(c->log, ENOMEM, "fs state:");
	if (ret)
		return ret;
	if (s->have || fs->umask > 0777 || fs->reserved ||
	    fs->cwd_len > CKPT_PATH_MAX || fs->root_len > CKPT_PATH_MAX ||
	    r->data_len != sizeof(*fs) + fs->cwd_len + fs->root_len)
		return log_err(c->log, EBADMSG, "bad or repeated FS record");
	s->cwd = rec_str(r, sizeof(*fs), fs->cwd_len);
	s->root = rec_str(r, sizeof(*fs) + fs->cwd_len, fs->root_len);
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

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return log_err(c->log, errno ? errno : ENOTDIR, "%s %s:", what, path);
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
	return dir_check(c, "working directory", s->cwd) ?:
	       dir_check(c, "root directory", s->root);
}

static int fs_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct fs_state *s = t->kind_state[kind_index(&kind_fs)];
	uint64_t addr;
	int ret;

	if (!s)
		return 0;	/* shares its parent's (CLONE_FS) */
	(void)c;
	ret = rst_scratch_put(t, 0, s->cwd, s->fs.cwd_len, &addr);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "chdir", SYS_chdir, addr);
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
	const struct rec_fs *fs = r->data;

	info_str(o, "cwd", rec_str(r, sizeof(*fs), fs->cwd_len) ?: "?");
	if (fs->cwd_len <= CKPT_PATH_MAX)
		info_str(o, "root", rec_str(r, sizeof(*fs) + fs->cwd_len, fs->root_len) ?: "?");
	info_hex(o, "umask", fs->umask);
}

static const struct rec_desc fs_recs[] = {
	{ REC_FS, "FS", sizeof(struct rec_fs) },
	{ 0 }
};

const struct kind_ops kind_fs = {
	.name = "fs",
	.recs = fs_recs,
	.phase = PHASE_STATE,
	.dump = fs_dump,
	.load = fs_load,
	.check = fs_check,
	.restore = fs_restore,
	.free = fs_free,
	.show = fs_show,
};
