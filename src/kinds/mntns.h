/* mntns.h - the container's own mount namespace (kind mntns), between
 * its parts: mntns.c (the records: load, show, the table), mntns_dump.c
 * (checkpoint: the container's mounts from /proc/PID/mountinfo, a
 * tmpfs's files through a detached copy of it) and mntns_restore.c
 * (restart: the tree built again in the root's new mount namespace,
 * then pivot_root into it).
 *
 * Both sides act on the mount namespace of a given process, so that
 * they work the same whether the engine runs inside the container's
 * other namespaces (the kind's hooks) or outside them (a test driver).
 */
#ifndef CKPT_KINDS_MNTNS_H
#define CKPT_KINDS_MNTNS_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../kinds.h"

#define MNT_MAX		4096	/* mounts of one namespace */
#define MNT_FILES_MAX	(1u << 20)	/* files of one tmpfs */
#define MNT_FILE_SIZE_MAX (1ULL << 40)

/* Restart: a byte run of a file, where its bytes are in the image. */
struct mnt_run {
	uint64_t off, img_off;
	uint32_t len;
};

struct mnt_file {
	const struct rec_mnt_file *f;	/* into rec */
	const char *path, *target;
	struct mnt_run *runs;
	uint32_t nr_runs;
	size_t cap_runs;
	uint64_t next;		/* where the next run may start */
	void *rec;		/* the record's payload */
};

struct mnt_model {
	const struct rec_mnt *m;	/* into rec */
	const char *mp, *type, *source, *root, *opts, *host;
	const char *external;	/* MNT_BIND: --external mnt[/MP]:PATH's
				 * PATH, bound instead of host */
	int parent;		/* index of its parent, -1 for the root */
	int bind_of;		/* MNT_PEER: index of the mount it binds */
	struct mnt_file *files;
	uint32_t nr_files;
	size_t cap_files;
	void *rec;
};

/* Appends @val to @arr: 0 or -ENOMEM (vec.h). */
#define MNT_PUSH(arr, n, cap, val) __extension__ ({			\
	__typeof__(&(arr)[0]) mnt_e_ = VEC_PUSH(arr, n, cap);		\
									\
	if (mnt_e_)							\
		*mnt_e_ = (val);					\
	mnt_e_ ? 0 : -ENOMEM;						\
})

/* The image's mounts (kind_ctx_state of kind_mntns). */
struct mntns_rst {
	struct mnt_model *mnts;
	uint32_t nr;
	size_t cap;
};

/* Checkpoint: the mounts of @pid's mount namespace (as seen from its
 * root) as MNT records, a tmpfs's files after it.  Anything it cannot
 * make again fails it, naming @pid, the mountpoint and the fs type. */
int mntns_save(struct cpt_ctx *c, pid_t pid);

/* Restart: @pid's mount namespace (a copy of ckpt's) made into the
 * saved tree, by a child that joins it: the tree built under a staging
 * mount, then pivot_root into it, the rest detached. */
int mntns_build(struct rst_ctx *c, const struct mntns_rst *st, pid_t pid);

/* The loaded mounts: the model's (NULL if the image has none). */
struct mntns_rst *mntns_state(struct rst_ctx *c);

/* Restart, before any process (a kind's check()): what the container's
 * absolute @path will be once its mounts are made, as lstat() (or with
 * @follow, stat()) would find it there: a tmpfs file from its MNT_FILE,
 * a host bind's through its host path (or --external's).  0 and *st
 * filled; 1: a path the image cannot tell of before restart (proc,
 * sysfs, a new instance, a symlink ckpt does not follow); -ENOENT: no
 * such file; -EINVAL: the image has no mounts of its own (stat() it as
 * ever). */
int mntns_stat(struct rst_ctx *c, const char *path, bool follow, struct stat *st);

#endif
