/* ipcns_restore.c - restart: the root's new ipc namespace (ckpt has
 * joined it: the ns kind made it) made as the image says.  Each SysV
 * object is made with its id (kernel.*_next_id set for it) and key, by
 * its creator (cuid, cgid: the kernel records who made it), then given
 * its owner and mode; each queue gets its messages in their order, each
 * set its values; each POSIX queue is made with its sizes and messages,
 * then given its owner and mode; the SysV segments are sysvshm.c's.
 * The namespace's limits are opened wide while they are made (one may
 * have been lowered after the objects were made) and set as saved last.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipcns.h"
#include "ns_user.h"
#include "sysvshm.h"

#define IPCMNI		32768	/* the kernel's least ipc_mni */

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static int become(uint32_t uid, uint32_t gid);
static void unbecome(void);

static int sysctl_write(struct rst_ctx *c, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int sysctl_write(struct rst_ctx *c, const char *name, const char *fmt, ...)
{
	char path[64], buf[96];
	uint32_t uid, gid;
	va_list ap;
	int fd, n, err = 0;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	/* a namespace of a user namespace's is writable by its root only,
	 * whatever capabilities the writer has */
	if (c->userns && ns_user_root(c->userns, &uid, &gid) && (err = -become(uid, gid)))
		return log_err(c->log, err, "ipc namespace: becoming its root (%u):", uid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, n) != n)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (c->userns)
		unbecome();
	return err ? log_err(c->log, err, "ipc namespace: writing %s to %s:", buf, path) : 0;
}

/* As wide as the kernel takes while the objects are made. */
static int limits_open(struct rst_ctx *c, const struct ipc_rst *st)
{
	int semmsl = st->ns->sem[0];
	int ret;

	for (int i = 0; i < st->nr_sem; i++)
		if ((int)st->sem[i]->nsems > semmsl)
			semmsl = st->sem[i]->nsems;
	ret = sysctl_write(c, "kernel/msgmax", "%d", INT_MAX);
	if (!ret)	/* a queue's bytes above it need CAP_SYS_RESOURCE */
		ret = sysctl_write(c, "kernel/msgmnb", "%d", INT_MAX);
	if (!ret)
		ret = sysctl_write(c, "kernel/msgmni", "%d", IPCMNI);
	/* POSIX queues' limits (CAP_SYS_RESOURCE would pass them) */
	if (!ret)
		ret = sysctl_write(c, "fs/mqueue/queues_max", "%d", INT_MAX);
	if (!ret)
		ret = sysctl_write(c, "fs/mqueue/msg_max", "%d", MQ_MSG_HARD);
	if (!ret)
		ret = sysctl_write(c, "fs/mqueue/msgsize_max", "%d", MQ_SIZE_HARD);
	if (!ret)
		ret = sysctl_write(c, "kernel/shmmni", "%d", IPCMNI);
	if (!ret)
		ret = sysctl_write(c, "kernel/sem", "%d %d %d %d", semmsl, INT_MAX,
				   st->ns->sem[2], IPCMNI);
	return ret;
}

/* The saved values, the next ids last. */
static int limits_set(struct rst_ctx *c, const struct rec_ipc_ns *ns)
{
	const int32_t *sem = ns->sem;
	int ret = sysctl_write(c, "kernel/sem", "%d %d %d %d", sem[0], sem[1], sem[2], sem[3]);

	for (const struct ipc_sysctl *s = ipc_sysctls; s->name && !ret; s++) {
		const void *f = (const char *)ns + s->off;

		if (s->wide)
			ret = sysctl_write(c, s->name, "%llu",
					   (unsigned long long)*(const uint64_t *)f);
		else if (!s->next_id || *(const int32_t *)f >= 0)
			ret = sysctl_write(c, s->name, "%d", *(const int32_t *)f);
		/* a next id of -1 is what each get left (kernels refuse
		 * writing it) */
	}
	return ret;
}

/* This thread's effective ids, for the kernel to record as an object's
 * creator; the raw calls change this thread's only (glibc's would
 * change every thread's).  Only root can, and need. */
static int become(uint32_t uid, uint32_t gid)
{
	if (geteuid() != 0 || (uid == 0 && gid == 0))
		return 0;
	if (syscall(SYS_setresgid, -1, gid, -1))
		return -errno;
	if (syscall(SYS_setresuid, -1, uid, -1)) {
		int err = errno;

		syscall(SYS_setresgid, -1, 0, -1);
		return -err;
	}
	return 0;
}

static void unbecome(void)
{
	if (getuid() == 0) {
		syscall(SYS_setresuid, -1, 0, -1);
		syscall(SYS_setresgid, -1, 0, -1);
	}
}

/* msgget (@nsems < 0) or semget with @id, made by @cuid/@cgid. */
static int get_with_id(struct rst_ctx *c, const char *what, int id, int key, int nsems,
		       uint32_t cuid, uint32_t cgid)
{
	const char *next = nsems < 0 ? "kernel/msg_next_id" : "kernel/sem_next_id";
	int got = -1, err, ret = sysctl_write(c, next, "%d", id);

	if (ret)
		return ret;
	ret = become(cuid, cgid);
	if (!ret)
		got = nsems < 0 ? msgget(key, IPC_CREAT | IPC_EXCL | 0600) :
		      semget(key, nsems, IPC_CREAT | IPC_EXCL | 0600);
	err = ret ? -ret : errno;
	unbecome();
	/* the kernel sets it back to -1 once it is used; left as it is
	 * if the get failed, which fails the restart */
	if (got < 0)
		return log_err(c->log, err, "making %s %d (key 0x%08x) again as uid %u gid %u:",
			       what, id, (uint32_t)key, cuid, cgid);
	if (got != id) {
		if (nsems < 0)
			msgctl(got, IPC_RMID, NULL);
		else
			semctl(got, 0, IPC_RMID);
		return log_err(c->log, EEXIST, "%s %d could not be had again: the kernel gave %d",
			       what, id, got);
	}
	return 0;
}

static int fill_msq(struct rst_ctx *c, const struct ipc_q *e)
{
	const struct rec_ipc_msq *q = e->rec;
	struct { long mtype; char text[]; } *m = malloc(sizeof(long) + q->cbytes + 1);
	int ret = 0;

	if (!m)
		return log_err(c->log, ENOMEM, "SysV message queue %d:", q->id);
	for (uint32_t i = 0; i < q->nr_msgs && !ret; i++) {
		const struct rec_ipc_msg *h = e->msgs[i];

		m->mtype = h->mtype;
		memcpy(m->text, h + 1, h->len);
		if (msgsnd(q->id, m, h->len, IPC_NOWAIT))
			ret = log_err(c->log, errno, "SysV message queue %d: message %u of %u:",
				      q->id, i, q->nr_msgs);
	}
	free(m);
	return ret;
}

static int make_msq(struct rst_ctx *c, const struct ipc_q *e)
{
	const struct rec_ipc_msq *q = e->rec;
	struct msqid_ds ds;
	int ret = get_with_id(c, "SysV message queue", q->id, q->key, -1, q->cuid, q->cgid);

	if (ret)
		return ret;
	if (msgctl(q->id, IPC_STAT, &ds))
		return log_err(c->log, errno, "SysV message queue %d:", q->id);
	/* room for every message, whatever its limit was lowered to */
	ds.msg_qbytes = q->qbytes > q->cbytes ? q->qbytes : q->cbytes;
	if (msgctl(q->id, IPC_SET, &ds))
		return log_err(c->log, errno, "SysV message queue %d: %lu bytes:", q->id,
			       (unsigned long)ds.msg_qbytes);
	ret = fill_msq(c, e);
	ds.msg_perm.uid = q->uid;
	ds.msg_perm.gid = q->gid;
	ds.msg_perm.mode = q->mode;
	ds.msg_qbytes = q->qbytes;
	if (!ret && msgctl(q->id, IPC_SET, &ds))
		ret = log_err(c->log, errno, "SysV message queue %d: giving it to uid %u gid %u mode 0%o:",
			      q->id, q->uid, q->gid, q->mode);
	return ret;
}

static int make_sem(struct rst_ctx *c, const struct rec_ipc_sem *s)
{
	struct semid_ds ds;
	int ret = get_with_id(c, "SysV semaphore set", s->id, s->key, s->nsems, s->cuid, s->cgid);

	if (ret)
		return ret;
	if (semctl(s->id, 0, SETALL, (union semun){ .array = (unsigned short *)(s + 1) }))
		return log_err(c->log, errno, "SysV semaphore set %d: SETALL:", s->id);
	if (semctl(s->id, 0, IPC_STAT, (union semun){ .buf = &ds }))
		return log_err(c->log, errno, "SysV semaphore set %d:", s->id);
	ds.sem_perm.uid = s->uid;
	ds.sem_perm.gid = s->gid;
	ds.sem_perm.mode = s->mode;
	if (semctl(s->id, 0, IPC_SET, (union semun){ .buf = &ds }))
		return log_err(c->log, errno, "SysV semaphore set %d: giving it to uid %u gid %u mode 0%o:",
			       s->id, s->uid, s->gid, s->mode);
	return 0;
}

static int make_mq(struct rst_ctx *c, const struct ipc_q *e)
{
	const struct rec_ipc_mq *q = e->rec;
	struct mq_attr a = { .mq_maxmsg = q->maxmsg, .mq_msgsize = q->msgsize };
	char name[sizeof(q->name) + 1];
	int ret = 0;
	mqd_t fd;

	snprintf(name, sizeof(name), "/%s", q->name);
	fd = mq_open(name, O_CREAT | O_EXCL | O_WRONLY | O_NONBLOCK | O_CLOEXEC, 0600, &a);
	if (fd < 0)
		return log_err(c->log, errno, "making POSIX message queue %s (%ld messages of %ld bytes) again%s:",
			       name, (long)q->maxmsg, (long)q->msgsize,
			       errno == EMFILE ? " (past ckpt's RLIMIT_MSGQUEUE)" : "");
	for (uint32_t i = 0; i < q->nr_msgs && !ret; i++) {
		const struct rec_ipc_mq_msg *m = e->msgs[i];

		if (mq_send(fd, (const char *)(m + 1), m->len, m->prio))
			ret = log_err(c->log, errno, "POSIX message queue %s: message %u of %u:",
				      name, i, q->nr_msgs);
	}
	/* the mode after: mq_open's is masked by ckpt's umask */
	if (!ret && (fchown(fd, q->uid, q->gid) || fchmod(fd, q->mode)))
		ret = log_err(c->log, errno, "POSIX message queue %s: giving it to uid %u gid %u mode 0%o:",
			      name, q->uid, q->gid, q->mode);
	close(fd);
	return ret;
}

/* The queues' bytes are charged to ckpt's user against its
 * RLIMIT_MSGQUEUE, which CAP_SYS_RESOURCE does not lift: raised while
 * they are made (as far as ckpt may: to its hard limit without
 * CAP_SYS_RESOURCE), as they were made by their processes under their
 * own. */
static int make_mqs(struct rst_ctx *c, const struct ipc_rst *st)
{
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY }, old, hard;
	int ret = 0;

	if (!st->nr_mq)
		return 0;
	if (getrlimit(RLIMIT_MSGQUEUE, &old))
		return log_err(c->log, errno, "RLIMIT_MSGQUEUE:");
	hard = (struct rlimit){ old.rlim_max, old.rlim_max };
	if (setrlimit(RLIMIT_MSGQUEUE, &inf) && setrlimit(RLIMIT_MSGQUEUE, &hard))
		return log_err(c->log, errno, "raising RLIMIT_MSGQUEUE to make POSIX message queues:");
	for (int i = 0; i < st->nr_mq && !ret; i++)
		ret = make_mq(c, &st->mq[i]);
	setrlimit(RLIMIT_MSGQUEUE, &old);
	return ret;
}

int ipcns_make(struct rst_ctx *c, const struct ipc_rst *st)
{
	int ret = limits_open(c, st);

	for (int i = 0; i < st->nr_msq && !ret; i++)
		ret = make_msq(c, &st->msq[i]);
	for (int i = 0; i < st->nr_sem && !ret; i++)
		ret = make_sem(c, st->sem[i]);
	if (!ret)
		ret = make_mqs(c, st);
	if (!ret)
		ret = sysv_make_all(c);
	if (!ret)
		ret = limits_set(c, st->ns);
	return ret;
}
