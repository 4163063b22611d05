/* unpriv.h - ckpt run by an ordinary user: what it does without
 * privilege (unpriv.c), and what an image may not give such a user
 * (privcheck.c).  README "Running as an ordinary user" says what works.
 */
#ifndef CKPT_UNPRIV_H
#define CKPT_UNPRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "log.h"
#include "proc.h"

struct rst_ctx;
struct rst_task;
struct rec;

/* ckpt runs as an ordinary user (effective uid not 0): whatever
 * namespace it is in, an image gives no more than that user has. */
bool unpriv_user(void);
/* ... and has no CAP_SYS_ADMIN: restart makes a user namespace (the
 * user's own uid and gid mapped to themselves) with its pid namespace,
 * where it has what set_tid and PR_SET_MM_MAP need. */
bool unpriv_needs_ns(void);
/* The user namespace denies setgroups (an ordinary user's always does):
 * the groups are those inherited from ckpt, and cannot be set. */
bool unpriv_groups_fixed(void);

/* Checkpoint.  /proc/PID/map_files needs CAP_CHECKPOINT_RESTORE in the
 * first user namespace.  unpriv_vma_stat: the file at @v's path, if it
 * is the one maps names (device and inode), else -ESTALE; -errno. */
int unpriv_vma_stat(const struct vma *v, struct stat *st);
/* The file of @v (a memfd, a deleted file) as an fd of the tree has it:
 * "/proc/PID/fd/N" in @path; -ENOENT if none has it open. */
struct cpt_ctx;
int unpriv_vma_fd(struct cpt_ctx *c, const struct vma *v, char *path, size_t len);
/* The refusal of an area only map_files can save, naming pid and
 * address (returns -EPERM). */
int unpriv_map_refused(struct ckpt_log *log, pid_t pid, const struct vma *v,
		       const char *what);

/* Restart: the user namespace of a pid namespace cloned with
 * CLONE_NEWUSER.  The child waits (unpriv_ns_wait) until the parent has
 * written its uid and gid maps (unpriv_ns_map); @sync is a pipe. */
int unpriv_ns_wait(int sync[2]);
int unpriv_ns_map(struct ckpt_log *log, pid_t child, int sync[2]);

#endif
