/* fs.c - working directory and umask (FS). */
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
	const char *cwd;
};

static int fs_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_fs fs = { 0 };
	char cwd[CKPT_PATH_MAX], root[CKPT_PATH_MAX];
	uint64_t um;
	int ret;

	if (t->shares_fs)
		return 0;	/* its parent's, already written */
	ret = proc_readlink(t->pid, "cwd", cwd, sizeof(cwd));
	if (!ret)
		ret = proc_readlink(t->pid, "root", root, sizeof(root));
	if (ret)
		return log_err(c->log, -ret, "pid %d: cwd/root link:", t->pid);
	if (strcmp(root, "/"))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: runs chrooted in %s, not supported yet", t->pid, root);
	if (strstr(cwd, " (deleted)"))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: its working directory %s was deleted", t->pid, cwd);
	ret = proc_status_u64(t->pid, "Umask", 8, &um);
	if (ret)
		return log_err(c->log, -ret, "pid %d: umask:", t->pid);
	fs.umask = um;
	fs.cwd_len = strlen(cwd) + 1;
	return iw_record_str(&c->w, REC_FS, &fs, sizeof(fs), cwd);
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
	if (s->have || fs->umask > 0777 ||
	    r->data_len != sizeof(*fs) + fs->cwd_len)
		return log_err(c->log, EBADMSG, "bad or repeated FS record");
	s->cwd = rec_str(r, sizeof(*fs), fs->cwd_len);
	if (!s->cwd || s->cwd[0] != '/')
		return log_err(c->log, EBADMSG, "FS: bad cwd");
	s->fs = *fs;
	s->rec = r->data;
	r->data = NULL;
	s->have = true;
	return 0;
}

static int fs_check(struct rst_ctx *c, struct rst_task *t)
{
	struct fs_state *s = t->kind_state[kind_index(&kind_fs)];
	struct stat st;

	if (t->t.flags & TASK_SHARES_FS)
		return s ? log_err(c->log, EBADMSG, "pid %d: FS record, but it shares its parent's",
				   t->pid) : 0;
	if (!s || !s->have)
		return log_err(c->log, EBADMSG, "pid %d: image has no FS record", t->pid);
	if (c->here && (stat(s->cwd, &st) || !S_ISDIR(st.st_mode)))
		return log_err(c->log, errno ? errno : ENOTDIR,
			       "working directory %s:", s->cwd);
	return 0;
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
	info_hex(o, "umask", fs->umask);
}

const struct kind_ops kind_fs = {
	.name = "fs",
	.types = { REC_FS },
	.phase = PHASE_STATE,
	.dump = fs_dump,
	.load = fs_load,
	.check = fs_check,
	.restore = fs_restore,
	.free = fs_free,
	.show = fs_show,
};
