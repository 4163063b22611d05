/* fdtable.c - the fd table (FD) and the open file descriptions it points
 * to (FILE), each written once however many fds share it (the seeds'
 * objref; kcmp(KCMP_FILE) tells which fds share a description).  What
 * each description is, is its file kind's business (files.h): their
 * table is here, with the records and the kind's operations; the
 * checkpoint is fdtable_dump.c, the restart fdtable_restore.c.
 *
 * An fd no kind claims fails the checkpoint naming pid, fd and what it
 * is, unless the user asked to skip such fds (CKPT_SKIP_UNSUPPORTED):
 * then they are not restored.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "../files.h"
#include "../show.h"
#include "fdtable.h"

static const struct file_ops *const file_kinds[] = {
	&file_pipe,	/* before inherit: a pipe inside the tree at fd 0-2 */
	&file_tty,	/* before inherit: a pty inside the tree, the job's tty */
	&file_fifo,	/* and a FIFO, reopened by its name */
	&file_unix,	/* the same for sockets (not those connected outside) */
	&file_packet,	/* before inherit: never a caller's stdio */
	&file_netlink,
	&file_inherit,	/* before inet: a socket at fd 0-2 is the caller's */
	&file_reg,
	&file_memfd,
	&file_deleted,
	&file_dir,
	&file_chr,
	&file_eventfd,
	&file_timerfd,
	&file_signalfd,
	&file_epoll,
	&file_inotify,
	&file_inet,
	&file_pidfd,
	&file_fanotify,
	&file_nsfs,
};
#define NR_FILE_KINDS (int)(sizeof(file_kinds) / sizeof(file_kinds[0]))

const struct file_ops *files_kind_of(uint32_t kind)
{
	for (int i = 0; i < NR_FILE_KINDS; i++)
		if (file_kinds[i]->kind == kind)
			return file_kinds[i];
	return NULL;
}

const struct file_ops *files_kind_claiming(struct cpt_ctx *c, const struct fd_probe *p)
{
	for (int i = 0; i < NR_FILE_KINDS; i++)
		if (file_kinds[i]->match(c, p))
			return file_kinds[i];
	return NULL;
}

static void files_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_FILE_MORE) {
		info_u64(o, "bytes", r->data_len);
	} else if (r->type == REC_FILE) {
		const struct rec_file *f = r->data;
		const struct file_ops *ops = files_kind_of(f->kind);
		const char *path = rec_str(r, sizeof(*f), f->path_len);

		info_u64(o, "id", f->id);
		info_str(o, "kind", ops ? ops->name : "?");
		info_hex(o, "flags", f->flags);
		info_u64(o, "pos", f->pos);
		info_str(o, "path", path ?: "?");
		if (ops && ops->show && path &&
		    r->data_len == sizeof(*f) + f->path_len + f->extra_len)
			ops->show(o, f, path + f->path_len, f->extra_len);
		else if (path && r->data_len == sizeof(*f) + f->path_len && f->extra_len)
			info_str(o, "state", "in the FILE_MORE records after it");
	} else {
		const struct rec_fd *d = r->data;

		info_u64(o, "fd", d->fd);
		info_u64(o, "file", d->file_id);
		info_u64(o, "cloexec", d->cloexec);
	}
}

static const struct rec_desc files_recs[] = {
	{ REC_FILE, "FILE", sizeof(struct rec_file) },
	{ REC_FD, "FD", sizeof(struct rec_fd) },
	{ REC_FILE_MORE, "FILE_MORE", 0 },
	{ 0 }
};

const struct kind_ops kind_files = {
	.name = "files",
	.recs = files_recs,
	.phase = PHASE_IMAGE,
	.dump = files_dump,
	.dump_size = sizeof(struct files_cpt),
	.dump_free = files_dump_free,
	.load = files_load,
	.check = files_check,
	.restore = files_restore,
	.free = files_free,
	.free_ctx = files_free_ctx,
	.show = files_show,
};
