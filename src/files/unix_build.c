/* unix_build.c - unix sockets at restart: each UNIX_SK record checked
 * on its own and against the others, then, on the first unix fd a
 * process takes, every socket made in ckpt: socketpair() for pairs,
 * bind()+listen() for listeners, connect() for the connections waiting
 * in a backlog, in their order; the data queued for each written from
 * its peer; options and shutdown state last.  A path name's stale socket
 * file (its old owner was killed) is unlinked and bound anew.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unix.h"

#define MAX_BUF		(1U << 30)
#define MAX_TIMEO_NS	(1LL << 50)
#define SCM_MAX_FDS	253	/* the kernel's, per message */

uint32_t usk_msg_len(const struct rst_usk *e, uint32_t i)
{
	uint32_t v;

	memcpy(&v, e->lens + 4 * i, 4);
	return v;
}

static bool name_ok(const struct rec_unix_sk *r, const char *name)
{
	if (!r->name_len)
		return true;
	/* abstract: a leading NUL, the whole of sun_path at most; a path:
	 * absolute, no NUL in it, room for the NUL after it */
	if (!name[0])
		return r->name_len <= (uint32_t)UNIX_NAME_MAX;
	return r->name_len < (uint32_t)UNIX_NAME_MAX && name[0] == '/' &&
	       !memchr(name, 0, r->name_len);
}

/* Connected to itself: a bound datagram socket that connect()ed to its
 * own name, made again the same way. */
static bool self_ok(const struct rec_unix_sk *r)
{
	return r->state == UNIX_ST_CONNECTED && r->type == SOCK_DGRAM && r->name_len;
}

/* What one record says on its own. */
static bool rec_ok(const struct rec_unix_sk *r, uint64_t len)
{
	bool data_ok = !r->nr_msgs || r->state == UNIX_ST_CONNECTED ||
		       r->state == UNIX_ST_PEER_GONE ||
		       (r->state == UNIX_ST_UNCONN && r->name_len && r->type == SOCK_DGRAM);

	return r->id && (r->type == SOCK_STREAM || r->type == SOCK_DGRAM ||
			 r->type == SOCK_SEQPACKET) &&
	       r->state >= UNIX_ST_UNCONN && r->state <= UNIX_ST_REMOTE &&
	       r->shutdown <= 3 && !(r->flags & ~UNIX_FLAGS) &&
	       r->peek_off >= -1 && r->rcvbuf <= MAX_BUF && r->sndbuf <= MAX_BUF &&
	       r->rcvtimeo_ns >= 0 && r->rcvtimeo_ns <= MAX_TIMEO_NS &&
	       r->sndtimeo_ns >= 0 && r->sndtimeo_ns <= MAX_TIMEO_NS &&
	       r->file_mode <= 07777 && r->nr_msgs <= UNIX_MAX_MSGS && r->data_len <= UNIX_MAX_DATA &&
	       len == sizeof(*r) + (uint64_t)r->name_len + 4ULL * r->nr_msgs + r->data_len &&
	       (r->state == UNIX_ST_LISTEN ? r->name_len && r->type != SOCK_DGRAM :
		!r->backlog) && r->backlog <= UNIX_MAX_BACKLOG &&
	       ((r->state == UNIX_ST_CONNECTED || r->state == UNIX_ST_PENDING) ?
		r->peer && (r->peer != r->id || self_ok(r)) : !r->peer) &&
	       (r->state != UNIX_ST_PENDING || r->type != SOCK_DGRAM) && data_ok &&
	       (!(r->flags & UNIX_GHOST) ||
		(r->name_len && (r->state == UNIX_ST_UNCONN || r->state == UNIX_ST_LISTEN))) &&
	       (r->state == UNIX_ST_REMOTE ? r->type == SOCK_DGRAM && r->name_len &&
		(r->flags & UNIX_EXTERNAL) : !(r->flags & UNIX_EXTERNAL) ||
		r->state == UNIX_ST_PEER_GONE);
}

struct rst_usk *usk_by_id(struct unix_table *ut, uint32_t id)
{
	long i = ut ? id_find(&ut->ids, id) : -1;

	return i < 0 ? NULL : &ut->e[i];
}

static int usk_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct unix_table *ut = kind_ctx_state(c, &kind_unix, sizeof(*ut));
	const struct rec_unix_sk *rs = r->data;
	struct rst_usk *n;
	uint64_t sum = 0;
	int ret = rec_want(c->log, r, sizeof(*rs), "UNIX_SK");

	if (!ut)
		return log_err(c->log, ENOMEM, "unix sockets:");
	if (ret)
		return ret;
	if (!rec_ok(rs, r->data_len) || !name_ok(rs, (const char *)(rs + 1)) ||
	    ((rs->flags & UNIX_GHOST) && !((const char *)(rs + 1))[0]) ||
	    usk_by_id(ut, rs->id))
		return log_err(c->log, EBADMSG, "bad UNIX_SK record %llu",
			       (unsigned long long)r->index);
	if (VEC_ROOM(ut->e, ut->n, ut->cap))
		return log_err(c->log, ENOMEM, "unix sockets:");
	n = &ut->e[ut->n];
	memset(n, 0, sizeof(*n));
	n->r = *rs;
	n->name = (const char *)(rs + 1);
	n->lens = n->name + rs->name_len;
	n->data = n->lens + 4 * rs->nr_msgs;
	n->fd = n->far = -1;
	for (uint32_t i = 0; i < rs->nr_msgs; i++)
		sum += usk_msg_len(n, i);
	if (sum != rs->data_len)
		return log_err(c->log, EBADMSG, "UNIX_SK %u: messages of %llu bytes, not %u",
			       rs->id, (unsigned long long)sum, rs->data_len);
	if (id_add(&ut->ids, rs->id, ut->n))
		return log_err(c->log, ENOMEM, "unix sockets:");
	n->rec = r->data;
	r->data = NULL;
	ut->n++;
	return 0;
}

/* What the records say of each other: pairs are mutual, a one-way
 * datagram peer is bound, a pending connection's listener listens. */
int unix_cross_check(struct rst_ctx *c, struct unix_table *ut)
{
	for (int i = 0; ut && i < ut->n; i++) {
		const struct rst_usk *e = &ut->e[i], *p = usk_by_id(ut, e->r.peer);
		bool ok = true;
		int queued = 0;

		if (e->r.state == UNIX_ST_CONNECTED)
			ok = p && p->r.type == e->r.type &&
			     ((p->r.state == UNIX_ST_CONNECTED && p->r.peer == e->r.id) ||
			      (e->r.type == SOCK_DGRAM && p->r.state == UNIX_ST_UNCONN &&
			       p->r.name_len && !e->r.nr_msgs));
		else if (e->r.state == UNIX_ST_PENDING)
			ok = p && p->r.state == UNIX_ST_LISTEN && p->r.type == e->r.type;
		else if (e->r.state == UNIX_ST_LISTEN)
			for (int k = 0; k < ut->n; k++)
				queued += ut->e[k].r.state == UNIX_ST_PENDING &&
					  ut->e[k].r.peer == e->r.id;
		if (!ok || queued > (int)e->r.backlog + 1)
			return log_err(c->log, EBADMSG, "UNIX_SK %u: bad peer %u", e->r.id,
				       e->r.peer);
	}
	return 0;
}

/* A path name's socket file outlives its killed owner: it goes. */
static int bind_name(struct rst_ctx *c, struct rst_usk *e)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	bool path = e->name[0];
	struct stat st;

	memcpy(a.sun_path, e->name, e->r.name_len);
	if (path && !lstat(a.sun_path, &st)) {
		if (!S_ISSOCK(st.st_mode))
			return log_err(c->log, EEXIST, "unix socket %s: in the way, not a socket",
				       a.sun_path);
		if (unlink(a.sun_path))
			return log_err(c->log, errno, "unix socket %s: unlinking the old one:",
				       a.sun_path);
	}
	if (bind(e->fd, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) +
		 e->r.name_len + path))
		return log_err(c->log, errno, "unix socket %s%s: bind:", path ? "" : "@",
			       a.sun_path + !path);
	if (path && !(e->r.flags & UNIX_GHOST) &&
	    (chown(a.sun_path, e->r.file_uid, e->r.file_gid) ||
		     chmod(a.sun_path, e->r.file_mode)))
		return log_err(c->log, errno, "unix socket %s:", a.sun_path);
	return 0;
}

static int connect_name(struct rst_ctx *c, struct rst_usk *e, const struct rst_usk *to)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	bool path = to->name[0];

	memcpy(a.sun_path, to->name, to->r.name_len);
	if (connect(e->fd, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) +
		    to->r.name_len + path))
		return log_err(c->log, errno, "UNIX_SK %u: connecting to %s%s:", e->r.id,
			       path ? "" : "@", a.sun_path + !path);
	return 0;
}

static int new_socket(struct rst_ctx *c, struct rst_usk *e)
{
	e->fd = socket(AF_UNIX, e->r.type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	return e->fd < 0 ? log_err(c->log, errno, "UNIX_SK %u: socket:", e->r.id) : 0;
}

static int new_pair(struct rst_ctx *c, struct rst_usk *e, int *other)
{
	int sv[2];

	if (socketpair(AF_UNIX, e->r.type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		return log_err(c->log, errno, "UNIX_SK %u: socketpair:", e->r.id);
	e->fd = sv[0];
	*other = sv[1];
	return 0;
}

static int set_buf(int fd, int force, int opt, uint32_t want)
{
	int cur = 0, half = want / 2;
	socklen_t sl = sizeof(cur);

	if (!getsockopt(fd, SOL_SOCKET, opt, &cur, &sl) && (uint32_t)cur == want)
		return 0;
	/* the kernel doubles what it is given */
	if (setsockopt(fd, SOL_SOCKET, force, &half, sizeof(half)) &&
	    setsockopt(fd, SOL_SOCKET, opt, &half, sizeof(half)))
		return -errno;
	return 0;
}

/* One message, with @nr fds (ckpt's copies) if @nr: sent whole. */
static ssize_t send_one(int w, const char *data, uint32_t len, const struct sockaddr_un *a,
			socklen_t alen, const int *fds, uint32_t nr)
{
	union { char b[CMSG_SPACE(SCM_MAX_FDS * sizeof(int))]; struct cmsghdr h; } ctl;
	struct iovec iov = { (void *)data, len };
	struct msghdr m = { .msg_name = alen ? (void *)a : NULL, .msg_namelen = alen,
			    .msg_iov = &iov, .msg_iovlen = 1 };

	if (nr) {
		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.b;
		m.msg_controllen = CMSG_SPACE(nr * sizeof(int));
		ctl.h.cmsg_level = SOL_SOCKET;
		ctl.h.cmsg_type = SCM_RIGHTS;
		ctl.h.cmsg_len = CMSG_LEN(nr * sizeof(int));
		memcpy(CMSG_DATA(&ctl.h), fds, nr * sizeof(int));
	}
	return sendmsg(w, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* The fds of message @i of @e: how many, from *@at on in @fds. */
static uint32_t fds_of(const struct rst_usk *e, const int *fds, uint32_t i, uint32_t *k,
		       uint32_t *at)
{
	struct rec_unix_scm_msg m;

	if (!fds || *k >= e->scm->r.nr_msgs)
		return 0;
	memcpy(&m, e->scm->msgs + *k * sizeof(m), sizeof(m));
	if (m.msg != i)
		return 0;
	(*k)++;
	*at += m.nr_fds;
	return m.nr_fds;
}

/* The messages queued for @e, sent by whoever can: its peer, the end
 * that goes away, or (to a bound datagram socket) a stand-in. */
int usk_refill(struct rst_ctx *c, struct unix_table *ut, struct rst_usk *e, const int *fds)
{
	const struct rst_usk *p = usk_by_id(ut, e->r.peer);
	int w = e->r.state == UNIX_ST_PEER_GONE ? e->far : p ? p->fd : -1, tmp = -1, ret = 0;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	uint32_t k = 0, at = 0;
	socklen_t alen = 0;
	size_t off = 0;

	if (e->r.state == UNIX_ST_UNCONN) {
		w = tmp = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		memcpy(a.sun_path, e->name, e->r.name_len);
		alen = offsetof(struct sockaddr_un, sun_path) + e->r.name_len + !!e->name[0];
	}
	if (w < 0 || set_buf(w, SO_SNDBUFFORCE, SO_SNDBUF,
			     (e->r.data_len + 1024ULL * e->r.nr_msgs + 65536) * 2 > MAX_BUF ?
			     MAX_BUF : (e->r.data_len + 1024 * e->r.nr_msgs + 65536) * 2))
		ret = log_err(c->log, errno, "UNIX_SK %u: refilling:", e->r.id);
	for (uint32_t i = 0; i < e->r.nr_msgs && !ret; i++) {
		uint32_t len = usk_msg_len(e, i), done = 0, from = at;
		uint32_t nr = fds_of(e, fds, i, &k, &at);

		do {
			ssize_t n = send_one(w, e->data + off + done, len - done, &a, alen,
					     fds ? fds + from : NULL, done ? 0 : nr);

			/* fds go with the first byte: that send is whole */
			if (n < 0 || ((e->r.type != SOCK_STREAM || nr) && (uint32_t)n != len))
				ret = log_err(c->log, n < 0 ? errno : EMSGSIZE,
					      "UNIX_SK %u: putting back message %u of %u:", e->r.id,
					      i + 1, e->r.nr_msgs);
			else
				done += n;
		} while (!ret && done < len);
		off += len;
	}
	if (tmp >= 0)
		close(tmp);
	return ret;
}

/* Options and shutdown state, once the data is back. */
static int usk_finish(struct rst_ctx *c, struct rst_usk *e)
{
	static const int how[4] = { -1, SHUT_RD, SHUT_WR, SHUT_RDWR };
	int one = 1, ret = 0;
	struct timeval rt = { e->r.rcvtimeo_ns / 1000000000, e->r.rcvtimeo_ns % 1000000000 / 1000 };
	struct timeval st = { e->r.sndtimeo_ns / 1000000000, e->r.sndtimeo_ns % 1000000000 / 1000 };

	if (e->far >= 0)
		close(e->far);
	e->far = -1;
	if (set_buf(e->fd, SO_RCVBUFFORCE, SO_RCVBUF, e->r.rcvbuf) ||
	    set_buf(e->fd, SO_SNDBUFFORCE, SO_SNDBUF, e->r.sndbuf) ||
	    ((e->r.flags & UNIX_PASSCRED) &&
	     setsockopt(e->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one))) ||
	    ((e->r.flags & UNIX_PASSSEC) &&
	     setsockopt(e->fd, SOL_SOCKET, SO_PASSSEC, &one, sizeof(one))) ||
	    (e->r.rcvtimeo_ns && setsockopt(e->fd, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof(rt))) ||
	    (e->r.sndtimeo_ns && setsockopt(e->fd, SOL_SOCKET, SO_SNDTIMEO, &st, sizeof(st))) ||
	    (e->r.peek_off >= 0 &&
	     setsockopt(e->fd, SOL_SOCKET, SO_PEEK_OFF, &e->r.peek_off, sizeof(int))) ||
	    (e->r.shutdown && shutdown(e->fd, how[e->r.shutdown]) && errno != ENOTCONN))
		ret = log_err(c->log, errno, "UNIX_SK %u: options:", e->r.id);
	return ret;
}

/* Does @e reach @p by @p's name (a pending connection, or a one-way
 * datagram client)? */
static bool by_name(const struct rst_usk *e, const struct rst_usk *p)
{
	return p && (e->r.state == UNIX_ST_PENDING ||
		     (e->r.state == UNIX_ST_CONNECTED && p->r.state != UNIX_ST_CONNECTED));
}

static int make_one(struct rst_ctx *c, struct unix_table *ut, struct rst_usk *e, int step)
{
	struct rst_usk *p = usk_by_id(ut, e->r.peer);
	int ret = 0;

	/* a ghost and those that reach it by name: ghost_make() */
	if ((e->r.flags & UNIX_GHOST) || (by_name(e, p) && (p->r.flags & UNIX_GHOST)))
		return 0;
	switch (e->r.state) {
	case UNIX_ST_UNCONN:
	case UNIX_ST_LISTEN:
		if (step)
			return 0;
		ret = new_socket(c, e);
		if (!ret && e->r.name_len)
			ret = bind_name(c, e);
		if (!ret && e->r.state == UNIX_ST_LISTEN && listen(e->fd, e->r.backlog))
			ret = log_err(c->log, errno, "UNIX_SK %u: listen:", e->r.id);
		return ret;
	case UNIX_ST_PEER_GONE:
		return step ? 0 : new_pair(c, e, &e->far);
	case UNIX_ST_REMOTE:	/* outside the tree: its name is its peer's */
		if (step)
			return 0;
		ret = new_socket(c, e);
		return ret ? ret : connect_name(c, e, e);
	case UNIX_ST_CONNECTED:
		if (p == e) {
			if (step)
				return 0;
			ret = new_socket(c, e);
			if (!ret)
				ret = bind_name(c, e);
			return ret ? ret : connect_name(c, e, e);
		}
		if (p->r.state == UNIX_ST_CONNECTED)
			return step || e->fd >= 0 ? 0 : new_pair(c, e, &p->fd);
		/* one way, to a bound datagram socket: */
		__attribute__((fallthrough));
	default:		/* PENDING: in its listener's backlog, in order */
		if (step != 1)
			return 0;
		ret = new_socket(c, e);
		return ret ? ret : connect_name(c, e, p);
	}
}

/* What was at a ghost's path while it is bound there. */
struct ghost_spot {
	char path[UNIX_NAME_MAX + 1];
	char aside[UNIX_NAME_MAX + 48];	/* the file there, moved aside */
	char dir[UNIX_NAME_MAX + 1];	/* the directory made for it */
	bool moved, made_dir;
};

/* Frees @e's path for its bind: whatever is there moved aside, a missing
 * directory made. */
static int ghost_clear(struct rst_ctx *c, const struct rst_usk *e, struct ghost_spot *g)
{
	struct stat st;
	char *slash;

	memset(g, 0, sizeof(*g));
	memcpy(g->path, e->name, e->r.name_len);
	snprintf(g->dir, sizeof(g->dir), "%s", g->path);
	slash = strrchr(g->dir, '/');
	*(slash == g->dir ? slash + 1 : slash) = 0;
	if (stat(g->dir, &st)) {
		if (mkdir(g->dir, 0700))
			return log_err(c->log, errno, "unix socket %s: making %s:", g->path,
				       g->dir);
		g->made_dir = true;
	}
	if (!lstat(g->path, &st)) {
		snprintf(g->aside, sizeof(g->aside), "%s.ckpt-aside-%u", g->path, e->r.id);
		if (rename(g->path, g->aside))
			return log_err(c->log, errno, "unix socket %s: moving aside what is there:",
				       g->path);
		g->moved = true;
	}
	return 0;
}

/* The ghost's file goes, what was there comes back. */
static int ghost_restore(struct rst_ctx *c, const struct ghost_spot *g, bool bound)
{
	int ret = 0;

	if (bound && unlink(g->path))
		ret = log_err(c->log, errno, "unix socket %s: removing it again:", g->path);
	if (g->moved && rename(g->aside, g->path) && !ret)
		ret = log_err(c->log, errno, "unix socket %s: putting back %s:", g->path,
			      g->aside);
	if (g->made_dir && rmdir(g->dir) && !ret)
		ret = log_err(c->log, errno, "unix socket %s: removing %s again:", g->path,
			      g->dir);
	return ret;
}

/* A ghost bound to its path again, listening, reached by name by its
 * clients and its senders, in their order, while the name leads to it. */
static int ghost_make(struct rst_ctx *c, struct unix_table *ut, struct rst_usk *g)
{
	struct ghost_spot spot;
	bool bound = false;
	int ret = new_socket(c, g) ?: ghost_clear(c, g, &spot);

	if (ret)
		return ret;
	ret = bind_name(c, g);
	bound = !ret;
	if (!ret && g->r.state == UNIX_ST_LISTEN && listen(g->fd, g->r.backlog))
		ret = log_err(c->log, errno, "UNIX_SK %u: listen:", g->r.id);
	for (int i = 0; i < ut->n && !ret; i++) {
		struct rst_usk *e = &ut->e[i];

		if (e->r.peer == g->r.id && by_name(e, g))
			ret = new_socket(c, e) ?: connect_name(c, e, g);
	}
	if (!ret && g->r.nr_msgs)
		ret = usk_refill(c, ut, g, NULL);
	return ghost_restore(c, &spot, bound) ?: ret;
}

/* The sockets whose queue carries fds, and their peers that write it:
 * the files are all there only once every process is built. */
static void mark_late(struct unix_table *ut)
{
	for (int i = 0; i < ut->n; i++) {
		struct rst_usk *e = &ut->e[i], *p = usk_by_id(ut, e->r.peer);

		if (!e->scm)
			continue;
		e->late = true;
		if (p && e->r.state == UNIX_ST_CONNECTED)
			p->late = true;
	}
}

int unix_finish_late(struct rst_ctx *c, struct unix_table *ut)
{
	int ret = 0;

	for (int i = 0; i < ut->n && !ret; i++)
		if (ut->e[i].late)
			ret = usk_finish(c, &ut->e[i]);
	return ret;
}

int unix_make_all(struct rst_ctx *c, struct unix_table *ut)
{
	int ret = unix_cross_check(c, ut);

	ut->made = true;
	mark_late(ut);
	for (int step = 0; step < 2 && !ret; step++)
		for (int i = 0; i < ut->n && !ret; i++)
			ret = make_one(c, ut, &ut->e[i], step);
	for (int i = 0; i < ut->n && !ret; i++)
		if (ut->e[i].r.flags & UNIX_GHOST)
			ret = ghost_make(c, ut, &ut->e[i]);
	for (int i = 0; i < ut->n && !ret; i++)
		if (ut->e[i].r.nr_msgs && !(ut->e[i].r.flags & UNIX_GHOST) && !ut->e[i].scm)
			ret = usk_refill(c, ut, &ut->e[i], NULL);
	for (int i = 0; i < ut->n && !ret; i++)
		if (!ut->e[i].late)
			ret = usk_finish(c, &ut->e[i]);
	return ret;
}

static void usk_free_ctx(void *state)
{
	struct unix_table *ut = state;

	for (int i = 0; i < ut->n; i++) {
		if (ut->e[i].fd >= 0)
			close(ut->e[i].fd);
		if (ut->e[i].far >= 0)
			close(ut->e[i].far);
		free(ut->e[i].rec);
	}
	free(ut->e);
	id_table_free(&ut->ids);
	free(ut);
}

static const char *usk_state_name(uint32_t s)
{
	static const char *const n[] = { "?", "unconnected", "listen", "connected",
					 "pending", "peer-gone", "remote" };

	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static void usk_show(struct info_out *o, const struct rec *r)
{
	const struct rec_unix_sk *rs = r->data;
	char name[UNIX_NAME_MAX + 2] = "";

	if (rs->name_len < (uint32_t)UNIX_NAME_MAX &&
	    r->data_len >= sizeof(*rs) + rs->name_len && rs->name_len)
		snprintf(name, sizeof(name), "%s%.*s", ((const char *)(rs + 1))[0] ? "" : "@",
			 (int)rs->name_len - !((const char *)(rs + 1))[0],
			 (const char *)(rs + 1) + !((const char *)(rs + 1))[0]);
	info_u64(o, "id", rs->id);
	info_str(o, "type", unix_type_name(rs->type));
	info_str(o, "state", usk_state_name(rs->state));
	info_u64(o, "peer", rs->peer);
	info_str(o, "name", name);
	info_u64(o, "shutdown", rs->shutdown);
	info_u64(o, "messages", rs->nr_msgs);
	info_u64(o, "bytes", rs->data_len);
}

static const struct rec_desc unix_recs[] = {
	{ REC_UNIX_SK, "UNIX_SK", sizeof(struct rec_unix_sk) },
	{ 0 }
};

const struct kind_ops kind_unix = {
	.name = "unix",
	.recs = unix_recs,
	.phase = PHASE_IMAGE,
	.dump_size = sizeof(struct unix_cpt),	/* unix_graph.c */
	.dump_free = unix_dump_free,
	.load = usk_load,
	.free_ctx = usk_free_ctx,
	.show = usk_show,
};
