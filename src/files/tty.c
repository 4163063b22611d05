/* tty.c - terminals (TTY records, FILE_TTY descriptions).
 *
 * A pty pair whose master is held in the tree (TTY_PTY) is made anew at
 * restart by ckpt itself (/dev/ptmx), with the saved termios, window
 * size, packet mode and lock state; each process takes its master or a
 * slave description from ckpt with pidfd_getfd(), and the session leader
 * that had the slave as its controlling terminal gets it back
 * (TIOCSCTTY), with the foreground group (TIOCSPGRP).  Its index
 * (/dev/pts/N) is another one then: no path is trusted.  The bytes queued
 * in the pty, the slave's output for the master and input for the
 * slave, are read out and put back at once (ptyq.c), and saved in
 * TTY_DATA records (not in packet mode: refused).
 *
 * A pty slave whose master was closed (hung up, its /dev/pts/N gone) is
 * a TTY_HUNGUP: a new pair whose master ckpt closes once all is built.
 * The slave's owner and mode come back with it (TTY_OWNER).
 *
 * Any other terminal is outside the tree.  At fds 0-2 it is stdio that
 * restart's own replaces (inherit.c), unless the tree is a shell job
 * (CKPT_SHELL_JOB): then every fd of the job's controlling terminal, at
 * any number, is the TTY_JOB, and at restart opens restart's terminal
 * (/dev/tty), which gets the job's termios and hands the foreground to
 * the job's group.  A console or virtual terminal opened by its path is
 * reopened by it (chr.c); if it is its holder's controlling terminal, it
 * is a TTY_CTTY_PATH, which its session's leader, in the tree, takes
 * again (as a pty's), with its foreground group.  An outside terminal at
 * fd > 2 is refused otherwise.
 *
 * The checkpoint's side is tty_dump.c, the restart's tty_restore.c;
 * here, the tables that name them and how `ckpt info` shows the records.
 */
#include <string.h>

#include "../../include/ckpt.h"
#include "tty.h"

static void ttyk_show(struct info_out *o, const struct rec *r)
{
	const struct rec_tty *t = r->data;
	const struct rec_tty_data *d = r->data;

	if (r->type == REC_TTY_DATA) {
		info_u64(o, "tty", d->tty_id);
		info_str(o, "to", d->dir == TTY_TO_MASTER ? "master" :
				  d->dir == TTY_TO_SLAVE ? "slave" : "?");
		info_u64(o, "bytes", d->len);
		if (d->partial)
			info_u64(o, "partial", d->partial);
		return;
	}

	info_u64(o, "id", t->id);
	info_str(o, "kind", t->kind == TTY_PTY ? "pty" : t->kind == TTY_JOB ? "job" :
			    t->kind == TTY_HUNGUP ? "hungup" :
			    t->kind == TTY_CTTY_PATH ? "ctty_path" :
			    t->kind == TTY_ORPHAN ? "orphan" : "?");
	info_u64(o, "index", t->index);
	info_hex(o, "flags", t->flags);
	info_u64(o, "sid", t->sid);
	info_u64(o, "fg_pgrp", t->fg_pgrp);
	info_hex(o, "lflag", t->lflag);
	info_u64(o, "rows", t->ws_row);
	info_u64(o, "cols", t->ws_col);
	if (r->data_len >= sizeof(*t) && (t->flags & TTY_OWNER)) {
		info_u64(o, "slave_uid", t->slave_uid);
		info_u64(o, "slave_gid", t->slave_gid);
		info_hex(o, "slave_mode", t->slave_mode);
	}
}

static void tty_file_show(struct info_out *o, const struct rec_file *f,
			  const void *extra, uint32_t extra_len)
{
	struct rec_tty_file x;

	if (extra_len != sizeof(x))
		return;
	memcpy(&x, extra, sizeof(x));
	info_u64(o, "tty", x.tty_id);
	info_str(o, "role", x.role == TTY_MASTER ? "master" : x.role == TTY_SLAVE ? "slave"
			    : x.role == TTY_TERM ? "terminal" : "?");
}

static const struct rec_desc tty_recs[] = {
	{ REC_TTY, "TTY", sizeof(struct rec_tty) },
	{ REC_TTY_DATA, "TTY_DATA", sizeof(struct rec_tty_data) },
	{ 0 }
};

const struct kind_ops kind_tty = {
	.name = "tty",
	.recs = tty_recs,
	.phase = PHASE_STATE,	/* controlling terminals, once groups exist */
	.rst_batch = true,
	.dump_size = sizeof(struct tty_cpt),
	.dump_free = tty_dump_free,
	.load = ttyk_load,
	.check = ttyk_check,
	.restore = ttyk_restore,
	.session_made = ttyk_session_made,
	.restore_built = ttyk_built,
	.free_ctx = ttyk_free_ctx,
	.show = ttyk_show,
};

const struct file_ops file_tty = {
	.kind = FILE_TTY,
	.name = "tty",
	.match = tty_match,
	.dump = tty_dump,
	.load = tty_file_load,
	.check = tty_file_check,
	.open = tty_file_open,
	.show = tty_file_show,
};
