/* unix_scm.c - fds in flight on unix sockets (SCM_RIGHTS): the
 * UNIX_SCM records (kind unix_scm), restart's side.
 *
 * Checkpoint (unix.c): peeking a socket's queue brings the fds of each
 * message into ckpt, as the very descriptions; each is written as a FILE
 * (from ckpt's copy if no fd of the tree has had it written: a file whose
 * only reference is the one in flight is a description all the same),
 * and one UNIX_SCM per socket names, message by message, those FILEs,
 * after every UNIX_SK.
 *
 * Restart: a description an fd of the tree holds is made as usual by
 * its process; one only in flight is made by the process that held the
 * socket (the record's opener), once its own fds are in place (this kind
 * comes after files), and ckpt keeps a copy of it.  The queues that carry
 * fds (and the options and shutdown state of their sockets and of the
 * peers that write them) wait until every process is built: then ckpt
 * takes a copy of each description from a process that has it and sends
 * each message again with its fds, in order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../model.h"
#include "unix.h"

#define SCM_MAX_FDS	253	/* the kernel's, per message */
#define SCM_PASSES	3	/* fdtable's install passes */

/* A description in flight, once however many messages carry it. */
struct flight {
	uint32_t id;		/* its FILE */
	pid_t opener;		/* of the first record naming it */
	int ours;		/* ckpt's copy, -1 until taken */
};

struct scm_table {
	struct rst_scm **e;	/* the records, in image order */
	int n;
	size_t cap;
	struct flight *f;
	uint32_t nf;
	size_t capf;
	struct id_table fids;	/* index in f by FILE id, while loading */
	bool sorted;		/* f by id, for bsearch: loading is over */
};

static uint32_t id_at(const struct rst_scm *s, uint32_t k)
{
	uint32_t v;

	memcpy(&v, s->ids + 4 * k, 4);
	return v;
}

/* The messages it names exist, in order, each with 1 to 253 fds
 * (a stream's with a byte to carry them), adding up. */
static bool msgs_ok(const struct rst_scm *s, const struct rst_usk *e)
{
	uint64_t sum = 0;

	for (uint32_t k = 0; k < s->r.nr_msgs; k++) {
		struct rec_unix_scm_msg m, prev;

		memcpy(&m, s->msgs + k * sizeof(m), sizeof(m));
		if (k)
			memcpy(&prev, s->msgs + (k - 1) * sizeof(m), sizeof(m));
		if (m.msg >= e->r.nr_msgs || (k && m.msg <= prev.msg) || !m.nr_fds ||
		    m.nr_fds > SCM_MAX_FDS ||
		    (e->r.type == SOCK_STREAM && !usk_msg_len(e, m.msg)))
			return false;
		sum += m.nr_fds;
	}
	return sum == s->r.nr_fds;
}

/* Its socket: a queue some socket of the image writes, and not a ghost
 * (whose queue is written by name while its path leads to it). */
static struct rst_usk *scm_socket(struct rst_ctx *c, const struct rst_scm *s)
{
	struct rst_usk *e = usk_by_id(KCSTATE(c, kind_unix), s->r.sk);

	if (!e || e->scm || (e->r.flags & UNIX_GHOST) || !e->r.nr_msgs ||
	    !(e->r.state == UNIX_ST_CONNECTED || e->r.state == UNIX_ST_PEER_GONE ||
	      e->r.state == UNIX_ST_UNCONN))
		return NULL;
	return e;
}

static int add_flights(struct scm_table *st, const struct rst_scm *s)
{
	for (uint32_t k = 0; k < s->r.nr_fds; k++) {
		uint32_t id = id_at(s, k);
		struct flight *f;

		if (id_find(&st->fids, id) >= 0)
			continue;
		f = VEC_PUSH(st->f, st->nf, st->capf);
		if (!f || id_add(&st->fids, id, st->nf - 1))
			return -ENOMEM;
		*f = (struct flight){ .id = id, .opener = s->r.opener, .ours = -1 };
	}
	return 0;
}

static int scm_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct scm_table *st = kind_ctx_state(c, &kind_unix_scm, sizeof(*st));
	const struct rec_unix_scm *h = r->data;
	struct rst_scm *s;
	struct rst_usk *e;
	int ret = rec_want(c->log, r, sizeof(*h), "UNIX_SCM");

	if (!st)
		return log_err(c->log, ENOMEM, "fds in flight:");
	if (ret)
		return ret;
	if (!h->nr_msgs || h->nr_msgs > UNIX_MAX_MSGS || h->nr_fds > SCM_MAX_FDS * h->nr_msgs ||
	    r->data_len != sizeof(*h) + sizeof(struct rec_unix_scm_msg) * (uint64_t)h->nr_msgs +
			   4ULL * h->nr_fds || st->sorted)
		return log_err(c->log, EBADMSG, "bad UNIX_SCM record %llu",
			       (unsigned long long)r->index);
	s = calloc(1, sizeof(*s));
	if (!s || VEC_ROOM(st->e, st->n, st->cap)) {
		free(s);
		return log_err(c->log, ENOMEM, "fds in flight:");
	}
	st->e[st->n++] = s;
	s->r = *h;
	s->msgs = (const char *)(h + 1);
	s->ids = s->msgs + sizeof(struct rec_unix_scm_msg) * h->nr_msgs;
	s->rec = r->data;
	r->data = NULL;
	e = scm_socket(c, s);
	if (!e || !msgs_ok(s, e))
		return log_err(c->log, EBADMSG, "UNIX_SCM %llu: bad socket %u or messages",
			       (unsigned long long)r->index, h->sk);
	for (uint32_t k = 0; k < h->nr_fds; k++)
		if (!files_by_id(c, id_at(s, k)))
			return log_err(c->log, EBADMSG, "UNIX_SCM of socket %u: no FILE %u",
				       h->sk, id_at(s, k));
	e->scm = s;
	return add_flights(st, s) ? log_err(c->log, ENOMEM, "fds in flight:") : 0;
}

static int flight_cmp(const void *a, const void *b)
{
	const struct flight *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct flight *flight_of(struct scm_table *st, uint32_t id)
{
	struct flight key = { .id = id };

	if (!st->sorted && st->nf)
		qsort(st->f, st->nf, sizeof(*st->f), flight_cmp);
	st->sorted = true;
	return st->nf ? bsearch(&key, st->f, st->nf, sizeof(key), flight_cmp) : NULL;
}

/* Before any process exists: a file only in flight has a process of the
 * tree to make it. */
static int scm_check(struct rst_ctx *c, struct rst_task *t)
{
	struct scm_table *st = KCSTATE(c, kind_unix_scm);

	if (!st || t != c->tasks[0])
		return 0;
	flight_of(st, 0);
	for (uint32_t i = 0; i < st->nf; i++) {
		const struct rst_file *f = files_by_id(c, st->f[i].id);
		struct rst_task *o = rst_task_by_pid(c, st->f[i].opener);

		if (f->has_fd)
			continue;
		if (!o || (o->t.flags & TASK_ZOMBIE))
			return log_err(c->log, EBADMSG, "FILE %u: in flight, but pid %d is no live process of the image",
				       f->f.id, st->f[i].opener);
		if (!f->ops->open)
			return log_err(c->log, EBADMSG, "FILE %u: in flight, but a %s file cannot be made again",
				       f->f.id, f->ops->name);
	}
	return 0;
}

/* A description only in flight, made in @t: ckpt keeps a copy, @t
 * none. */
static int open_flight(struct rst_ctx *c, struct rst_task *t, struct flight *fl,
		       struct rst_file *f)
{
	long fd = -1, dummy, pidfd;
	int ret = f->ops->open(c, t, f, &fd);

	if (!ret) {
		pidfd = syscall(SYS_pidfd_open, t->pid, 0);
		fl->ours = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		if (fl->ours < 0)
			ret = log_err(c->log, errno, "pid %d: FILE %u, in flight: taking it:",
				      t->pid, f->f.id);
		if (pidfd >= 0)
			close(pidfd);
	}
	if (fd >= 0)
		rcall(&t->rm, &dummy, SYS_close, fd);
	return ret;
}

/* @t's fds are in place: the files in flight it makes, in install
 * order (an epoll after its targets). */
static int scm_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct scm_table *st = KCSTATE(c, kind_unix_scm);
	int ret = 0;

	if (!st)
		return 0;
	flight_of(st, 0);
	for (int pass = 0; pass < SCM_PASSES; pass++)
		for (uint32_t i = 0; i < st->nf && !ret; i++) {
			struct flight *fl = &st->f[i];
			struct rst_file *f = files_by_id(c, fl->id);

			if (!f->has_fd && fl->opener == t->pid && fl->ours < 0 &&
			    f->ops->pass == pass)
				ret = open_flight(c, t, fl, f);
		}
	return ret;
}

/* Every process built: the queues that carry fds, each message with
 * ckpt's copies of its files, then their sockets' options. */
static int scm_restore_built(struct rst_ctx *c)
{
	struct scm_table *st = KCSTATE(c, kind_unix_scm);
	struct unix_table *ut = KCSTATE(c, kind_unix);
	int ret = 0, *fds;

	if (!st)
		return 0;
	for (uint32_t i = 0; i < st->nf && !ret; i++)
		if (st->f[i].ours < 0)
			ret = files_copy(c, st->f[i].id, &st->f[i].ours);
	for (int i = 0; i < st->n && !ret; i++) {
		const struct rst_scm *s = st->e[i];
		struct rst_usk *e = usk_by_id(ut, s->r.sk);

		if (!ut || !ut->made || !e || e->fd < 0)
			return log_err(c->log, EIO, "UNIX_SK %u: fds in flight, but not made",
				       s->r.sk);
		fds = malloc(s->r.nr_fds * sizeof(int));
		if (!fds)
			return log_err(c->log, ENOMEM, "fds in flight:");
		for (uint32_t k = 0; k < s->r.nr_fds; k++)
			fds[k] = flight_of(st, id_at(s, k))->ours;
		ret = usk_refill(c, ut, e, fds);
		free(fds);
	}
	return ret ? ret : ut ? unix_finish_late(c, ut) : 0;
}

static void scm_free_ctx(void *state)
{
	struct scm_table *st = state;

	for (int i = 0; i < st->n; i++) {
		free(st->e[i]->rec);
		free(st->e[i]);
	}
	for (uint32_t i = 0; i < st->nf; i++)
		if (st->f[i].ours >= 0)
			close(st->f[i].ours);
	free(st->e);
	free(st->f);
	id_table_free(&st->fids);
	free(st);
}

static void scm_show(struct info_out *o, const struct rec *r)
{
	const struct rec_unix_scm *h = r->data;

	info_u64(o, "socket", h->sk);
	info_u64(o, "opener", h->opener);
	info_u64(o, "messages", h->nr_msgs);
	info_u64(o, "fds", h->nr_fds);
}

static const struct rec_desc scm_recs[] = {
	{ REC_UNIX_SCM, "UNIX_SCM", sizeof(struct rec_unix_scm) },
	{ 0 }
};

/* After files: a process's own fds are in place before it makes the
 * files in flight (an epoll's targets). */
const struct kind_ops kind_unix_scm = {
	.name = "unix_scm",
	.recs = scm_recs,
	.phase = PHASE_IMAGE,
	.load = scm_load,
	.check = scm_check,
	.restore = scm_restore,
	.restore_built = scm_restore_built,
	.free_ctx = scm_free_ctx,
	.show = scm_show,
};
