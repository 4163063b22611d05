/* chr.c - character devices reopened by path: the harmless ones (null,
 * zero, full, random, urandom), and terminals that are no pty of the
 * tree's, nor the shell job's, nor the holder's controlling terminal
 * (tty.c leaves them here): a console (5:1) or a virtual terminal or
 * serial line (major 4) reachable by the path it was opened by, reopened
 * without becoming anyone's controlling terminal.  The device numbers
 * must match.
 *
 * A harmless device whose node was removed (the path then ends in
 * " (deleted)") keeps its owner in the FILE's extra bytes (struct
 * rec_path_ghost); at restart ckpt makes the node again by the name it
 * had (beside it, with a suffix, if the name is taken), with its mode
 * and owner, opens it and removes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../files.h"

#define DELETED " (deleted)"
#define DELETED_LEN 10
/* what open() takes of a description's flags (O_ASYNC only F_SETFL sets) */
#define OPEN_FLAGS(fl) (((fl) & ~(O_CREAT | O_EXCL | O_TRUNC | O_ASYNC | O_TMPFILE)) | \
			O_NOCTTY | O_CLOEXEC)

static bool mem_dev(dev_t rdev)
{
	/* mem major 1: null 3, zero 5, full 7, random 8, urandom 9 */
	unsigned int mi = minor(rdev);

	return major(rdev) == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 ||
				    mi == 9);
}

static bool term_dev(dev_t rdev)
{
	return major(rdev) == 4 || rdev == makedev(5, 1);
}

static bool is_deleted(const char *path)
{
	size_t n = strlen(path);

	return n > DELETED_LEN && !strcmp(path + n - DELETED_LEN, DELETED);
}

/* A terminal: still there by its path, the same device. */
static bool term_by_path(const struct fd_probe *p)
{
	struct stat st;

	return term_dev(p->st.st_rdev) && !is_deleted(p->link) && !stat(p->link, &st) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == p->st.st_rdev;
}

static bool chr_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return S_ISCHR(p->st.st_mode) && p->link[0] == '/' &&
	       (mem_dev(p->st.st_rdev) || term_by_path(p));
}

static int chr_dump(struct cpt_ctx *c, const struct fd_probe *p,
		    struct rec_file *f, void **extra, uint32_t *extra_len)
{
	struct rec_path_ghost *g;

	if (!is_deleted(p->link) || !mem_dev(p->st.st_rdev))
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return log_err(c->log, ENOMEM, "pid %d fd %d: deleted %s:", p->pid, p->fd, p->link);
	g->flags = PATH_GHOST;
	g->uid = p->st.st_uid;
	g->gid = p->st.st_gid;
	*extra = g;
	*extra_len = sizeof(*g);
	return 0;
}

static int chr_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_path_ghost g;

	if (f->path[0] != '/' || !S_ISCHR(f->f.mode) ||
	    !(mem_dev(f->f.rdev) || (term_dev(f->f.rdev) && !f->f.extra_len)) ||
	    (f->f.extra_len && f->f.extra_len != sizeof(g)))
		return log_err(c->log, EBADMSG, "FILE %u: bad device", f->f.id);
	if (!f->f.extra_len)
		return 0;
	memcpy(&g, f->extra, sizeof(g));
	if (g.flags != PATH_GHOST || g.reserved || !is_deleted(f->path))
		return log_err(c->log, EBADMSG, "FILE %u: bad deleted device", f->f.id);
	f->priv = strndup(f->path, strlen(f->path) - DELETED_LEN);
	return f->priv ? 0 : log_err(c->log, ENOMEM, "FILE %u:", f->f.id);
}

static int chr_check(struct rst_ctx *c, const struct rst_file *f)
{
	char dir[CKPT_PATH_MAX];
	struct stat st;

	if (f->priv) {
		/* a removed node is made again in its directory */
		snprintf(dir, sizeof(dir), "%s", (const char *)f->priv);
		*(strrchr(dir, '/') + 1) = '\0';
		if (stat(dir, &st) || !S_ISDIR(st.st_mode))
			return log_err(c->log, errno ? errno : ENOTDIR,
				       "deleted %s: its directory %s:", f->path, dir);
		return 0;
	}
	if (stat(f->path, &st))
		return log_err(c->log, errno, "open file %s:", f->path);
	if (!S_ISCHR(st.st_mode) || st.st_rdev != f->f.rdev)
		return log_err(c->log, ESTALE, "open file %s is no longer the same device",
			       f->path);
	return 0;
}

/* The removed node, made again, opened by us and removed: -1 (reported)
 * or our fd. */
static int ghost_node(struct rst_ctx *c, struct rst_task *t, const struct rst_file *f)
{
	char path[CKPT_PATH_MAX + 32];
	struct rec_path_ghost g;
	int ours = -1, err;

	memcpy(&g, f->extra, sizeof(g));
	snprintf(path, sizeof(path), "%s", (const char *)f->priv);
	err = mknod(path, S_IFCHR | 0600, f->f.rdev) ? errno : 0;
	if (err == EEXIST) {
		snprintf(path, sizeof(path), "%s.ckpt-ghost-%u", (const char *)f->priv, f->f.id);
		err = mknod(path, S_IFCHR | 0600, f->f.rdev) ? errno : 0;
	}
	if (err)
		return log_err(c->log, err, "pid %d: making deleted %s again:", t->pid, path);
	if (chown(path, g.uid, g.gid) || chmod(path, f->f.mode & 07777))
		err = errno;
	if (!err && (ours = open(path, OPEN_FLAGS(f->f.flags))) < 0)
		err = errno;
	if (unlink(path) && !err)
		err = errno;
	if (err && ours >= 0)
		close(ours);
	return err ? log_err(c->log, err, "pid %d: deleted device %s:", t->pid, path) : ours;
}

static int chr_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		    long *fd)
{
	int ours, ret;

	if (!f->priv && !term_dev(f->f.rdev))
		return files_open_path(t, f->path, f->f.flags, fd);
	/* opened by ckpt, O_NOCTTY: the process could be a session leader
	 * without a terminal, which it would get */
	ours = f->priv ? ghost_node(c, t, f)
		       : open(f->path, OPEN_FLAGS(f->f.flags));
	if (ours < 0)
		return f->priv ? ours : log_err(c->log, errno, "pid %d: reopening %s:",
						t->pid, f->path);
	ret = files_give(t, ours, fd);
	close(ours);
	if (!ret && (f->f.flags & O_ASYNC))
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	return ret;
}

static void chr_free(struct rst_file *f)
{
	free(f->priv);
}

const struct file_ops file_chr = {
	.kind = FILE_CHR,
	.name = "chr",
	.match = chr_match,
	.dump = chr_dump,
	.load = chr_load,
	.check = chr_check,
	.open = chr_open,
	.free = chr_free,
};
