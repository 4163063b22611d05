/* ipcns.c - the content of the root's own ipc namespace (a container's):
 * its sysctls, SysV message queues with their messages, semaphore sets
 * with their values, POSIX message queues with their messages
 * (ipcns_dump.c), and, through sysvshm.c, every SysV shared memory
 * segment in it, attached or not.  Restart makes them again, with their
 * ids and keys, in the new ipc namespace the ns kind made for the root
 * and ckpt joined (ipcns_restore.c).  This file: the records, their
 * validation and `ckpt info`.
 *
 * Restarted with --join-ns ipc:PATH, the container joins that namespace
 * as it is: the records are validated and left.
 *
 * Every process's fds are looked at first: a POSIX message queue open
 * in one is refused (ipcns_dump.c).
 *
 * Not saved, and so documented: semaphore adjustments (semop SEM_UNDO)
 * that processes hold, which the kernel shows nowhere; after restart an
 * exiting process no longer undoes what it did.  Queue and set times
 * and the last sender's/receiver's pids are shown only: the kernel
 * sets them itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model.h"
#include "ipcns.h"
#include "ns.h"
#include "sysvshm.h"

#define IPCMNI_MAX	(1 << 24)	/* ipcmni_extend's; the kernel checks its own */
#define MQ_PRIO_HARD	32768		/* MQ_PRIO_MAX */
#define SEMVMX		32767

#define NSF(n, f, w, x) { n, offsetof(struct rec_ipc_ns, f), w, x }
/* Restart writes them in this order, the next ids last. */
const struct ipc_sysctl ipc_sysctls[] = {
	NSF("kernel/shmmax", shmmax, true, false),
	NSF("kernel/shmall", shmall, true, false),
	NSF("kernel/shmmni", shmmni, false, false),
	NSF("kernel/shm_rmid_forced", shm_rmid_forced, false, false),
	NSF("kernel/msgmax", msgmax, false, false),
	NSF("kernel/msgmnb", msgmnb, false, false),
	NSF("kernel/msgmni", msgmni, false, false),
	NSF("fs/mqueue/queues_max", mq_queues_max, false, false),
	NSF("fs/mqueue/msg_max", mq_msg_max, false, false),
	NSF("fs/mqueue/msg_default", mq_msg_default, false, false),
	NSF("fs/mqueue/msgsize_max", mq_msgsize_max, false, false),
	NSF("fs/mqueue/msgsize_default", mq_msgsize_default, false, false),
	NSF("kernel/shm_next_id", shm_next_id, false, true),
	NSF("kernel/msg_next_id", msg_next_id, false, true),
	NSF("kernel/sem_next_id", sem_next_id, false, true),
	{ 0 },
};

/* ---- checkpoint ---- */

/* "pid 1: ipc namespace ipc:[4026531839]", for every message. */
struct ipc_cpt {
	char what[80];
};

static int ipcns_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct ipc_cpt *st = kind_dump_state(c, &kind_ipcns);
	char ns[48];
	ssize_t n;
	int ret = t->shares_files ? 0 : ipcns_mq_fds(c, t->pid);

	if (ret || t != c->tasks[0] || !NS_OWN(c, NS_IPC))
		return ret;
	n = readlink("/proc/self/ns/ipc", ns, sizeof(ns) - 1);
	ns[n < 0 ? 0 : n] = 0;
	snprintf(st->what, sizeof(st->what), "pid %d: ipc namespace %s", t->pid, ns);
	return ipcns_save(c, st->what);
}

/* Every segment of the namespace is saved: those the tree attaches by
 * mm (sysvshm.c), the others by ipcns_save(). */
static int ipcns_dump_check(struct cpt_ctx *c)
{
	struct ipc_cpt *st = kind_dump_state(c, &kind_ipcns);

	return NS_OWN(c, NS_IPC) && st->what[0] ? sysv_all_saved(c, st->what) : 0;
}

/* ---- restart: load and validate ---- */

static const char *ns_bad(const struct rec_ipc_ns *ns)
{
	if (ns->reserved)
		return "reserved not 0";
	if (ns->shmmni < 0 || ns->shmmni > IPCMNI_MAX || ns->msgmni < 0 ||
	    ns->msgmni > IPCMNI_MAX || ns->sem[3] < 0 || ns->sem[3] > IPCMNI_MAX)
		return "bad shmmni, msgmni or semmni";
	if (ns->shm_rmid_forced < 0 || ns->shm_rmid_forced > 1)
		return "bad shm_rmid_forced";
	if (ns->msgmax < 0 || ns->msgmnb < 0 || ns->sem[0] < 0 || ns->sem[1] < 0 ||
	    ns->sem[2] < 0)
		return "bad msgmax, msgmnb or sem";
	if (ns->shm_next_id < -1 || ns->msg_next_id < -1 || ns->sem_next_id < -1)
		return "bad next id";
	if (ns->mq_queues_max < 0 || ns->mq_msg_max < 1 || ns->mq_msg_max > MQ_MSG_HARD ||
	    ns->mq_msg_default < 1 || ns->mq_msg_default > MQ_MSG_HARD ||
	    ns->mq_msgsize_max < 128 || ns->mq_msgsize_max > MQ_SIZE_HARD ||
	    ns->mq_msgsize_default < 128 || ns->mq_msgsize_default > MQ_SIZE_HARD)
		return "bad fs.mqueue limits";
	return NULL;
}

static const char *load_ns(struct ipc_rst *st, struct rec *r)
{
	const char *why = r->data_len != sizeof(*st->ns) ? "bad length" :
			  st->ns ? "twice" : ns_bad(r->data);

	if (!why) {
		st->ns = r->data;
		r->data = NULL;
	}
	return why;
}

/* A new queue @rec in *@q (its array), counted in @n; its messages
 * follow if it has any. */
static const char *add_q(struct ipc_rst *st, struct ipc_q **q, int *n, size_t *cap,
			 struct rec *r, uint32_t nr)
{
	struct ipc_q *e = VEC_PUSH(*q, *n, *cap);

	if (!e)
		return "out of memory";
	e->rec = r->data;
	r->data = NULL;
	st->open = nr ? r->type : 0;
	st->open_bytes = 0;
	return NULL;
}

/* @ids, @keys: the tables a SysV object's id and key must be new in
 * (IPC_PRIVATE keys repeat). */
static const char *new_id(struct id_table *ids, struct id_table *keys, int32_t id,
			  int32_t key, size_t index)
{
	int ret = id_add(ids, (uint32_t)id, index);

	if (ret)
		return ret == -EEXIST ? "id saved twice" : "out of memory";
	ret = key == 0 ? 0 : id_add(keys, (uint32_t)key, index);
	return ret == -EEXIST ? "key saved twice" : ret ? "out of memory" : NULL;
}

static const char *load_msq(struct ipc_rst *st, struct rec *r)
{
	const struct rec_ipc_msq *q = r->data;

	if (r->data_len != sizeof(*q))
		return "bad length";
	if (q->id < 0)
		return "bad id";
	if (q->mode & ~0777u)
		return "bad mode";
	if (q->qbytes > INT64_MAX || q->cbytes > (uint64_t)q->nr_msgs * CKPT_REC_MAX_META)
		return "bad sizes";
	return new_id(&st->msq_ids, &st->msq_keys, q->id, q->key, st->nr_msq) ?:
	       add_q(st, &st->msq, &st->nr_msq, &st->cap_msq, r, q->nr_msgs);
}

/* The next message of the queue last loaded, of its kind @type. */
static const char *add_msg(struct ipc_rst *st, uint32_t type, struct rec *r)
{
	struct ipc_q *q = type == REC_IPC_MSQ ? &st->msq[st->nr_msq - 1] :
			  &st->mq[st->nr_mq - 1];
	uint32_t nr = type == REC_IPC_MSQ ? ((struct rec_ipc_msq *)q->rec)->nr_msgs :
		      ((struct rec_ipc_mq *)q->rec)->nr_msgs;

	if (st->open != type)
		return "does not follow a queue that has messages left";
	/* grown as they come: a forged count allocates nothing */
	if (VEC_ROOM(q->msgs, q->got, q->cap))
		return "out of memory";
	q->msgs[q->got++] = r->data;
	r->data = NULL;
	if (q->got == nr)
		st->open = 0;
	return NULL;
}

static const char *load_msg(struct ipc_rst *st, struct rec *r)
{
	const struct rec_ipc_msg *m = r->data;
	const struct rec_ipc_msq *q = st->nr_msq ? st->msq[st->nr_msq - 1].rec : NULL;

	if (r->data_len < sizeof(*m) || m->len != r->data_len - sizeof(*m))
		return "bad length";
	if (m->mtype < 1 || m->reserved)
		return "bad type";
	if (st->open != REC_IPC_MSQ)
		return "does not follow a queue that has messages left";
	st->open_bytes += m->len;
	if (st->open_bytes > q->cbytes ||
	    (st->msq[st->nr_msq - 1].got + 1 == q->nr_msgs && st->open_bytes != q->cbytes))
		return "the messages' bytes do not add up to the queue's";
	return add_msg(st, REC_IPC_MSQ, r);
}

static const char *load_sem(struct ipc_rst *st, struct rec *r)
{
	struct rec_ipc_sem *s = r->data;
	const uint16_t *val = (const uint16_t *)(s + 1);
	const char *why;

	if (r->data_len < sizeof(*s) || s->nsems == 0 ||
	    s->nsems != (r->data_len - sizeof(*s)) / 2 || (r->data_len - sizeof(*s)) % 2)
		return "bad length or nsems";
	if (s->id < 0)
		return "bad id";
	if (s->mode & ~0777u)
		return "bad mode";
	for (uint32_t i = 0; i < s->nsems; i++)
		if (val[i] > SEMVMX)
			return "a value above 32767";
	if (VEC_ROOM(st->sem, st->nr_sem, st->cap_sem))
		return "out of memory";
	why = new_id(&st->sem_ids, &st->sem_keys, s->id, s->key, st->nr_sem);

	if (why)
		return why;
	st->sem[st->nr_sem++] = s;
	r->data = NULL;
	return NULL;
}

static const char *load_mq(struct ipc_rst *st, struct rec *r)
{
	const struct rec_ipc_mq *q = r->data;

	if (r->data_len != sizeof(*q))
		return "bad length";
	if (!field_str_ok(q->name, sizeof(q->name)) || !q->name[0] || strchr(q->name, '/') ||
	    !strcmp(q->name, ".") || !strcmp(q->name, ".."))
		return "bad name";
	if (q->mode & ~0777u)
		return "bad mode";
	if (q->maxmsg < 1 || q->maxmsg > MQ_MSG_HARD || q->msgsize < 1 ||
	    q->msgsize > MQ_SIZE_HARD || q->nr_msgs > q->maxmsg)
		return "bad sizes";
	return add_q(st, &st->mq, &st->nr_mq, &st->cap_mq, r, q->nr_msgs);
}

static const char *load_mq_msg(struct ipc_rst *st, struct rec *r)
{
	const struct rec_ipc_mq_msg *m = r->data;
	const struct rec_ipc_mq *q = st->nr_mq ? st->mq[st->nr_mq - 1].rec : NULL;

	if (r->data_len < sizeof(*m) || m->len != r->data_len - sizeof(*m))
		return "bad length";
	if (m->prio >= MQ_PRIO_HARD)
		return "bad priority";
	if (st->open != REC_IPC_MQ)
		return "does not follow a queue that has messages left";
	if (m->len > q->msgsize)
		return "longer than its queue's messages";
	return add_msg(st, REC_IPC_MQ, r);
}

static int ipcns_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct ipc_rst *st = kind_ctx_state(c, &kind_ipcns, sizeof(*st));
	const char *why;

	if (!st)
		return log_err(c->log, ENOMEM, "ipc namespace:");
	if (!t || !c->nr_tasks || t != c->tasks[0] || !(NS_OWN(c, NS_IPC) || IPC_JOINED(c)))
		why = "not of the root's own ipc namespace";
	else if (r->type != REC_IPC_NS && !st->ns)
		why = "before IPC_NS";
	else if (st->open && r->type != REC_IPC_MSG && r->type != REC_IPC_MQ_MSG)
		why = "the last queue's messages are missing";
	else if (r->type == REC_IPC_NS)
		why = load_ns(st, r);
	else if (r->type == REC_IPC_MSQ)
		why = load_msq(st, r);
	else if (r->type == REC_IPC_MSG)
		why = load_msg(st, r);
	else if (r->type == REC_IPC_SEM)
		why = load_sem(st, r);
	else if (r->type == REC_IPC_MQ)
		why = load_mq(st, r);
	else
		why = load_mq_msg(st, r);
	if (why)
		return log_err(c->log, EBADMSG, "%s record %llu: %s", rec_type_name(r->type),
			       (unsigned long long)r->index, why);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	const struct ipc_q *x = a, *y = b;

	return strcmp(((const struct rec_ipc_mq *)x->rec)->name,
		      ((const struct rec_ipc_mq *)y->rec)->name);
}

static int ipcns_check(struct rst_ctx *c, struct rst_task *t)
{
	struct ipc_rst *st = KCSTATE(c, kind_ipcns);

	if (t != c->tasks[0])
		return 0;
	if (!st || !st->ns)
		return NS_OWN(c, NS_IPC) || IPC_JOINED(c) ? log_err(c->log, EBADMSG, "pid %d: its own ipc namespace has no IPC_NS record",
						   t->pid) : 0;
	if (st->checked)
		return 0;
	st->checked = true;
	if (st->open)
		return log_err(c->log, EBADMSG, "%s: the last queue's messages are missing",
			       rec_type_name(st->open));
	/* in name order from now on: no name twice, and restart makes
	 * them in that order (it does not matter) */
	if (st->nr_mq > 1)
		qsort(st->mq, st->nr_mq, sizeof(*st->mq), name_cmp);
	for (int i = 1; i < st->nr_mq; i++)
		if (!name_cmp(&st->mq[i - 1], &st->mq[i]))
			return log_err(c->log, EBADMSG, "IPC_MQ: /%s saved twice",
				       ((struct rec_ipc_mq *)st->mq[i].rec)->name);
	for (const struct ipc_sysctl *s = ipc_sysctls; s->name && c->here; s++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/sys/%s", s->name);
		if (access(path, F_OK))
			return log_err(c->log, errno, "pid %d: its ipc namespace cannot be made again here (%s):",
				       t->pid, path);
	}
	return 0;
}

/* ---- restart ---- */

/* The root's, once: the new ipc namespace ckpt joined is made as it
 * was before any process attaches a segment. */
static int ipcns_restore(struct rst_ctx *c, struct rst_task *t)
{
	const struct ipc_rst *st = KCSTATE(c, kind_ipcns);

	if (t != c->tasks[0] || !NS_OWN(c, NS_IPC) || !st || !st->ns)
		return 0;
	return ipcns_make(c, st);
}

static void q_free(struct ipc_q *q, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t nr = q[i].got;

		for (uint32_t j = 0; j < nr; j++)
			free(q[i].msgs[j]);
		free(q[i].msgs);
		free(q[i].rec);
	}
	free(q);
}

static void ipcns_free_ctx(void *state)
{
	struct ipc_rst *st = state;

	free(st->ns);
	q_free(st->msq, st->nr_msq);
	q_free(st->mq, st->nr_mq);
	for (int i = 0; i < st->nr_sem; i++)
		free(st->sem[i]);
	free(st->sem);
	id_table_free(&st->msq_ids);
	id_table_free(&st->msq_keys);
	id_table_free(&st->sem_ids);
	id_table_free(&st->sem_keys);
	free(st);
}

/* ---- ckpt info ---- */

static void show_ns(struct info_out *o, const struct rec_ipc_ns *ns)
{
	char sem[64];

	for (const struct ipc_sysctl *s = ipc_sysctls; s->name; s++) {
		const void *f = (const char *)ns + s->off;
		char key[48];

		/* kernel.msgmax as msgmax, fs.mqueue.msg_max as mq_msg_max */
		snprintf(key, sizeof(key), "%s%s", strncmp(s->name, "fs/mqueue/", 10) ? "" : "mq_",
			 strrchr(s->name, '/') + 1);
		if (s->wide)
			info_u64(o, key, *(const uint64_t *)f);
		else
			info_i64(o, key, *(const int32_t *)f);
	}
	snprintf(sem, sizeof(sem), "%d %d %d %d", ns->sem[0], ns->sem[1], ns->sem[2], ns->sem[3]);
	info_str(o, "sem", sem);
}

static void show_perm(struct info_out *o, int32_t id, int32_t key, uint32_t mode,
		      uint32_t uid, uint32_t gid)
{
	info_i64(o, "id", id);
	info_hex(o, "key", (uint32_t)key);
	info_hex(o, "mode", mode);
	info_u64(o, "uid", uid);
	info_u64(o, "gid", gid);
}

static void show_sem(struct info_out *o, const struct rec *r)
{
	const struct rec_ipc_sem *s = r->data;
	const uint16_t *val = (const uint16_t *)(s + 1);
	uint32_t n = (r->data_len - sizeof(*s)) / 2;
	char buf[128] = "";
	size_t k = 0;

	show_perm(o, s->id, s->key, s->mode, s->uid, s->gid);
	info_u64(o, "cuid", s->cuid);
	info_u64(o, "cgid", s->cgid);
	info_u64(o, "nsems", s->nsems);
	info_i64(o, "otime", s->otime);
	info_i64(o, "ctime", s->ctime);
	for (uint32_t i = 0; i < n && i < s->nsems && k < sizeof(buf) - 16; i++)
		k += snprintf(buf + k, sizeof(buf) - k, "%s%u", i ? "," : "", val[i]);
	if (n > 0 && k >= sizeof(buf) - 16)
		snprintf(buf + k, sizeof(buf) - k, ",...");
	info_str(o, "values", buf);
}

static void ipcns_show(struct info_out *o, const struct rec *r)
{
	const struct rec_ipc_msq *q = r->data;
	const struct rec_ipc_mq *mq = r->data;
	const struct rec_ipc_msg *m = r->data;
	const struct rec_ipc_mq_msg *mm = r->data;

	switch (r->type) {
	case REC_IPC_NS:
		show_ns(o, r->data);
		break;
	case REC_IPC_MSQ:
		show_perm(o, q->id, q->key, q->mode, q->uid, q->gid);
		info_u64(o, "cuid", q->cuid);
		info_u64(o, "cgid", q->cgid);
		info_u64(o, "msgs", q->nr_msgs);
		info_u64(o, "qbytes", q->qbytes);
		info_u64(o, "cbytes", q->cbytes);
		info_i64(o, "stime", q->stime);
		info_i64(o, "rtime", q->rtime);
		info_i64(o, "ctime", q->ctime);
		info_u64(o, "lspid", q->lspid);
		info_u64(o, "lrpid", q->lrpid);
		break;
	case REC_IPC_MSG:
		info_i64(o, "mtype", m->mtype);
		info_u64(o, "len", m->len);
		break;
	case REC_IPC_SEM:
		show_sem(o, r);
		break;
	case REC_IPC_MQ:
		info_str(o, "name", field_str_ok(mq->name, sizeof(mq->name)) ? mq->name : "?");
		info_hex(o, "mode", mq->mode);
		info_u64(o, "uid", mq->uid);
		info_u64(o, "gid", mq->gid);
		info_i64(o, "maxmsg", mq->maxmsg);
		info_i64(o, "msgsize", mq->msgsize);
		info_u64(o, "msgs", mq->nr_msgs);
		break;
	default:
		info_u64(o, "prio", mm->prio);
		info_u64(o, "len", mm->len);
	}
}

static const struct rec_desc ipcns_recs[] = {
	{ REC_IPC_NS, "IPC_NS", sizeof(struct rec_ipc_ns) },
	{ REC_IPC_MSQ, "IPC_MSQ", sizeof(struct rec_ipc_msq) },
	{ REC_IPC_MSG, "IPC_MSG", sizeof(struct rec_ipc_msg) },
	{ REC_IPC_SEM, "IPC_SEM", sizeof(struct rec_ipc_sem) },
	{ REC_IPC_MQ, "IPC_MQ", sizeof(struct rec_ipc_mq) },
	{ REC_IPC_MQ_MSG, "IPC_MQ_MSG", sizeof(struct rec_ipc_mq_msg) },
	{ 0 },
};

const struct kind_ops kind_ipcns = {
	.name = "ipcns",
	.recs = ipcns_recs,
	.phase = PHASE_IMAGE,
	.dump = ipcns_dump,
	.dump_check = ipcns_dump_check,
	.load = ipcns_load,
	.check = ipcns_check,
	.restore = ipcns_restore,
	.free_ctx = ipcns_free_ctx,
	.show = ipcns_show,
	.dump_size = sizeof(struct ipc_cpt),
};
