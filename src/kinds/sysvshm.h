/* sysvshm.h - SysV shared memory segments, for mm.c's VMA_SYSV areas. */
#ifndef CKPT_SYSVSHM_H
#define CKPT_SYSVSHM_H

#include "../kinds.h"
#include "ns.h"

/* Restart: the container joins the ipc namespace --join-ns ipc:PATH
 * names, as it is: the image's segments are found or made there as
 * processes attach them, the rest of its content left. */
#define IPC_JOINED(c)	(!!((c)->ns_join & (1u << NS_IPC)))

/* Checkpoint: the SYSV_SHM record of the segment area @v attaches,
 * written now if the image has not got it yet; refuses (reported) what
 * cannot be made again (hugetlb, another IPC namespace). */
int sysv_ref(struct cpt_ctx *c, pid_t pid, const struct vma *v, uint32_t *id);
/* Restart: the bytes segment @id spans attached (whole pages); -1 if
 * the image has no such segment. */
int sysv_seg_len(struct rst_ctx *c, uint32_t id, uint64_t *len);
/* Attach area @v's segment in the puppet at v->start, made first if it
 * is to be made; *prot: the protection the attach gave. */
int sysv_attach(struct rst_ctx *c, struct rst_task *t, const struct rec_vma *v,
		int *prot);

/* A container's own ipc namespace, which ckpt is in.  Checkpoint: the
 * ids of /proc/sysvipc/@file ("shm", "msg", "sem": the reader's ipc
 * namespace's) into *ids (free()d by the caller), 0 or -errno; every
 * segment no process attaches saved now (the others are saved from
 * their areas), refused with kernel.shm_rmid_forced (@rmid_forced); at
 * the end, every segment was saved (one attached only outside the tree
 * is refused).  @what names the namespace ("pid 1: ipc namespace
 * ipc:[I]") in messages.  Restart, into a new ipc namespace: every
 * segment made now, before any process attaches one. */
int sysvipc_ids(const char *file, int **ids, int *n);
int sysv_save_unattached(struct cpt_ctx *c, const char *what, bool rmid_forced);
int sysv_all_saved(struct cpt_ctx *c, const char *what);
int sysv_make_all(struct rst_ctx *c);

#endif
