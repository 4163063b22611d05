/* ipcns.h - the content of a container's own ipc namespace (ipcns.c,
 * ipcns_dump.c, ipcns_restore.c), between its parts. */
#ifndef CKPT_KINDS_IPCNS_H
#define CKPT_KINDS_IPCNS_H

#include "../kinds.h"

#define MQ_MSG_HARD	65536		/* the kernel's HARD_MSGMAX */
#define MQ_SIZE_HARD	(16 << 20)	/* HARD_MSGSIZEMAX */

/* A sysctl of the namespace, a field of rec_ipc_ns (besides kernel/sem,
 * four numbers in one file); ipc_sysctls ends with a NULL name. */
struct ipc_sysctl {
	const char *name;	/* under /proc/sys */
	size_t off;		/* in rec_ipc_ns */
	bool wide;		/* uint64_t, else int32_t */
	bool next_id;		/* *_next_id: set while objects are made */
};
extern const struct ipc_sysctl ipc_sysctls[];

/* Restart: a queue (SysV or POSIX) and its messages, as loaded. */
struct ipc_q {
	void *rec;		/* struct rec_ipc_msq or rec_ipc_mq */
	void **msgs;		/* each message's record payload */
	uint32_t got;		/* loaded so far */
	size_t cap;
};

/* Restart: everything of the namespace, loaded and checked. */
struct ipc_rst {
	struct rec_ipc_ns *ns;
	struct ipc_q *msq;
	int nr_msq;
	size_t cap_msq;
	struct rec_ipc_sem **sem;
	int nr_sem;
	size_t cap_sem;
	struct ipc_q *mq;
	int nr_mq;
	size_t cap_mq;
	uint32_t open;		/* REC_IPC_MSQ or REC_IPC_MQ: the last one's
				 * messages come next; 0 none */
	uint64_t open_bytes;	/* the last IPC_MSQ's message bytes so far */
	struct id_table msq_ids, msq_keys, sem_ids, sem_keys;
	bool checked;
};

/* ipcns_dump.c: the namespace ckpt is in, written (IPC_NS and its
 * objects), for the root @pid; @what names it in messages. */
int ipcns_save(struct cpt_ctx *c, const char *what);
/* ipcns_dump.c: refuses (reported) a POSIX message queue open in @pid. */
int ipcns_mq_fds(struct cpt_ctx *c, pid_t pid);
/* ipcns_restore.c: the namespace ckpt is in (new, empty) made as @st
 * says. */
int ipcns_make(struct rst_ctx *c, const struct ipc_rst *st);

#endif
