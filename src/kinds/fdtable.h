/* fdtable.h - the files kind's three parts: fdtable.c (the file kinds,
 * the records and the kind's table), fdtable_dump.c (checkpoint) and
 * fdtable_restore.c (restart). */
#ifndef CKPT_FDTABLE_H
#define CKPT_FDTABLE_H

#include <stdint.h>

#include "../files.h"
#include "../model.h"

/* A file description already in the image, found again through kcmp. */
struct cpt_file {
	pid_t pid;
	int fd;
	uint32_t id;
};

/* The descriptions written so far whose files have one inode key, in
 * kcmp's order of descriptions: one is found among n in log n kcmp
 * calls (a scan of them made 19,000 fds on /dev/null take 18 minutes). */
struct file_group {
	struct cpt_file *f;
	size_t n, cap;
};

/* The checkpoint's: every description written so far, by inode key
 * (descriptions of one file are few; a process's fds are many: only
 * kcmp tells them apart). */
struct files_cpt {
	struct file_group *groups;
	size_t n, cap;
	struct id_table by_ino;	/* inode key -> group */
	struct fd_note *notes;	/* every fd written (files.h) */
	size_t nn, capn;
};

/* The file kind that writes records of @kind, or NULL. */
const struct file_ops *files_kind_of(uint32_t kind);
/* The first file kind that claims the probed fd @p, or NULL. */
const struct file_ops *files_kind_claiming(struct cpt_ctx *c, const struct fd_probe *p);

/* The kind's sides (struct kind_ops). */
int files_dump(struct cpt_ctx *c, struct cpt_task *t);
void files_dump_free(struct cpt_ctx *c, void *state);
int files_load(struct rst_ctx *c, struct rst_task *t, struct rec *r);
int files_check(struct rst_ctx *c, struct rst_task *t);
int files_restore(struct rst_ctx *c, struct rst_task *t);
void files_free(struct rst_task *t, void *state);
void files_free_ctx(void *state);

#endif
