/* unix.c - unix sockets (FILE_UNIX, UNIX_SK): stream, datagram and
 * seqpacket; pairs connected inside the tree, listeners with their
 * backlog, sockets bound to a path or an abstract name, and the data
 * queued for each, message by message.
 *
 * Checkpoint: sock_diag (unix_diag) tells every socket's inode, type,
 * state, peer, name and backlog; the tree's fds tell which are ours.  On
 * the first unix fd, every socket of the tree is written at once, each an
 * UNIX_SK record naming its peer or listener by objref.  Queued data is
 * peeked, not read: ckpt takes the socket with pidfd_getfd() and peeks
 * message after message at explicit SO_PEEK_OFF offsets (the target's
 * own peek offset is put back).  Fds in flight (SCM_RIGHTS) are refused,
 * as is a socket whose peer is outside the tree unless the user said
 * --external-unix (then it is restored with its peer gone); stdio
 * connected outside stays the caller's (inherit.c).
 *
 * Restart: ckpt makes every socket itself (socketpair() for pairs,
 * bind()+listen() for listeners, connect() for the connections waiting in
 * a backlog, in their order), writes the data queued for each socket from
 * its peer, then applies options and shutdown state, and each process
 * takes its sockets with pidfd_getfd().  A path name's stale socket file
 * (its old owner was killed) is unlinked and bound anew.  Names of
 * connected sockets are not kept (socketpair() makes unnamed ones). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../files.h"
#include "sockdiag.h"

#define K_ESTABLISHED	1	/* the kernel's sk_state values (TCP_*) */
#define K_CLOSE		7
#define K_LISTEN	10
#define NAME_MAX_LEN	(int)sizeof(((struct sockaddr_un *)0)->sun_path)
#define MAX_MSGS	(1U << 20)
#define MAX_DATA	(CKPT_REC_MAX_META - sizeof(struct rec_unix_sk) - 4096 - 4 * MAX_MSGS)
#define MAX_BUF		(1U << 30)
#define MAX_TIMEO_NS	(1LL << 50)
#define MAX_BACKLOG	(1U << 20)

/* ---- checkpoint ---- */

struct usk {			/* a socket as sock_diag and the tree show it */
	uint64_t ino, peer_ino, vfs_ino;
	uint32_t vfs_dev;
	uint8_t type, kstate, shutdown;
	bool has_vfs, has_peer;
	uint32_t rq, wq;	/* queued bytes; LISTEN: backlog length, max */
	char name[NAME_MAX_LEN];
	int name_len;
	uint32_t *icons;	/* LISTEN: inodes of the clients whose
				 * connections wait in its backlog */
	uint32_t nr_icons;
	pid_t pid;		/* its first holder in the tree; 0: outside */
	int fd;
	uint32_t id;		/* its UNIX_SK record */
	struct usk *listener;	/* a client waiting in a tree listener's
				 * backlog: that listener */
};

struct unix_cpt {
	struct usk *s;		/* every unix socket, sorted by inode */
	size_t n, cap;
	bool written;
};

static int diag_one(void *arg, const void *msg, uint32_t len)
{
	const struct unix_diag_msg *m = msg;
	struct unix_cpt *u = arg;
	struct sockdiag_attrs a;
	struct usk *s;

	if (len < sizeof(*m) || sockdiag_attrs(msg, len, sizeof(*m), &a))
		return -EBADMSG;
	if (u->n == u->cap) {
		s = realloc(u->s, (u->cap = u->cap ? 2 * u->cap : 256) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		u->s = s;
	}
	s = &u->s[u->n++];
	memset(s, 0, sizeof(*s));
	s->ino = m->udiag_ino;
	s->type = m->udiag_type;
	s->kstate = m->udiag_state;
	if (a.data[UNIX_DIAG_NAME]) {
		s->name_len = a.len[UNIX_DIAG_NAME] < (uint32_t)NAME_MAX_LEN ?
			      (int)a.len[UNIX_DIAG_NAME] : NAME_MAX_LEN;
		memcpy(s->name, a.data[UNIX_DIAG_NAME], s->name_len);
		if (s->name_len && s->name[0])	/* a path: without its NUL */
			s->name_len = strnlen(s->name, s->name_len);
	}
	if (a.data[UNIX_DIAG_VFS] && a.len[UNIX_DIAG_VFS] >= sizeof(struct unix_diag_vfs)) {
		const struct unix_diag_vfs *v = a.data[UNIX_DIAG_VFS];

		s->has_vfs = true;
		s->vfs_ino = v->udiag_vfs_ino;
		s->vfs_dev = v->udiag_vfs_dev;
	}
	if (a.data[UNIX_DIAG_PEER] && a.len[UNIX_DIAG_PEER] >= 4) {
		s->has_peer = true;
		s->peer_ino = *(const uint32_t *)a.data[UNIX_DIAG_PEER];
	}
	if (a.data[UNIX_DIAG_RQLEN] && a.len[UNIX_DIAG_RQLEN] >= sizeof(struct unix_diag_rqlen)) {
		const struct unix_diag_rqlen *q = a.data[UNIX_DIAG_RQLEN];

		s->rq = q->udiag_rqueue;
		s->wq = q->udiag_wqueue;
	}
	if (a.data[UNIX_DIAG_SHUTDOWN] && a.len[UNIX_DIAG_SHUTDOWN] >= 1)
		s->shutdown = *(const uint8_t *)a.data[UNIX_DIAG_SHUTDOWN] & 3;
	if (a.data[UNIX_DIAG_ICONS] && a.len[UNIX_DIAG_ICONS] >= 4) {
		s->nr_icons = a.len[UNIX_DIAG_ICONS] / 4;
		s->icons = malloc(s->nr_icons * 4);
		if (!s->icons)
			return -ENOMEM;
		memcpy(s->icons, a.data[UNIX_DIAG_ICONS], s->nr_icons * 4);
	}
	return 0;
}

static int ino_cmp(const void *a, const void *b)
{
	const struct usk *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static struct usk *usk_find(struct unix_cpt *u, uint64_t ino)
{
	struct usk key = { .ino = ino };

	return ino && u->n ? bsearch(&key, u->s, u->n, sizeof(key), ino_cmp) : NULL;
}

void unix_cpt_free(struct unix_cpt *u)
{
	for (size_t i = 0; u && i < u->n; i++)
		free(u->s[i].icons);
	if (u)
		free(u->s);
	free(u);
}

/* Which sockets the tree's fds hold: the first fd of each. */
static int note_holder(struct cpt_ctx *c, pid_t pid, int fd, void *arg)
{
	struct unix_cpt *u = arg;
	unsigned long long ino;
	char name[32], link[64];
	struct usk *s;

	snprintf(name, sizeof(name), "fd/%d", fd);
	if (proc_readlink(pid, name, link, sizeof(link)) ||
	    sscanf(link, "socket:[%llu]", &ino) != 1 || !(s = usk_find(u, ino)))
		return 0;
	if (!s->pid || (s->pid == pid && fd < s->fd)) {
		s->pid = pid;
		s->fd = fd;
	}
	return 0;
}

static int unix_scan(struct cpt_ctx *c)
{
	struct unix_diag_req req = {
		.sdiag_family = AF_UNIX,
		.udiag_states = ~0U,
		.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_PEER |
			      UDIAG_SHOW_ICONS | UDIAG_SHOW_RQLEN,	/* shutdown: always */
	};
	struct unix_cpt *u = calloc(1, sizeof(*u));
	int ret;

	if (!u)
		return log_err(c->log, ENOMEM, "unix sockets:");
	c->unix_sk = u;
	ret = sockdiag_dump(&req, sizeof(req), diag_one, u);
	if (ret) {
		u->n = 0;	/* knows none, rather than some unsorted */
		return log_err(c->log, -ret, "sock_diag of unix sockets:");
	}
	qsort(u->s, u->n, sizeof(*u->s), ino_cmp);
	ret = files_each_fd(c, note_holder, u);
	/* clients waiting in a listener of the tree: their peer, the server
	 * side not yet accepted, has no inode (sock_diag says 0) */
	for (size_t i = 0; !ret && i < u->n; i++) {
		struct usk *l = &u->s[i];

		for (uint32_t k = 0; l->pid && l->kstate == K_LISTEN && k < l->nr_icons; k++) {
			struct usk *cl = usk_find(u, l->icons[k]);

			if (cl)
				cl->listener = l;
		}
	}
	return ret;
}

/* Its peer is closed: sock_diag names peer 0 for it (as for the server
 * side of a connection not yet accepted, but such a client is not shut
 * down both ways as one whose peer closed is). */
static bool peer_gone(const struct usk *s)
{
	return s->has_peer && !s->peer_ino && !s->listener &&
	       (s->type == SOCK_DGRAM || s->shutdown == 3);
}

/* Connected to a socket that is neither in the tree nor gone. */
static bool peer_outside(struct unix_cpt *u, const struct usk *s)
{
	struct usk *p = usk_find(u, s->peer_ino);

	return s->kstate == K_ESTABLISHED && s->has_peer && !s->listener && !peer_gone(s) &&
	       !(p && p->pid);
}

static const char *type_name(int type)
{
	return type == SOCK_STREAM ? "stream" : type == SOCK_DGRAM ? "dgram" :
	       type == SOCK_SEQPACKET ? "seqpacket" : "?";
}

/* "path", "@abstract" or "unnamed", for messages */
static void show_name(const struct usk *s, char *out, size_t len)
{
	if (!s || !s->name_len)
		snprintf(out, len, "unnamed");
	else
		snprintf(out, len, "%s%.*s", s->name[0] ? "" : "@", s->name_len - !s->name[0],
			 s->name + !s->name[0]);
}

static int refuse_outside(struct cpt_ctx *c, const struct usk *s)
{
	struct usk *p = usk_find(c->unix_sk, s->peer_ino);
	char name[NAME_MAX_LEN + 2];

	show_name(p, name, sizeof(name));
	if (!s->peer_ino)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: unix %s socket waits in the backlog of a listener outside the tree (--external-unix accepts it)",
			       s->pid, s->fd, type_name(s->type));
	return log_err(c->log, EOPNOTSUPP,
		       "pid %d fd %d: unix %s socket connected to socket:[%llu] (%s) outside the tree (--external-unix accepts it)",
		       s->pid, s->fd, type_name(s->type), (unsigned long long)s->peer_ino, name);
}

/* The state of @s as the image says it, and whom it names. */
static int classify(struct cpt_ctx *c, const struct usk *s, struct rec_unix_sk *r)
{
	struct unix_cpt *u = c->unix_sk;
	struct usk *p = usk_find(u, s->peer_ino);

	if (s->kstate == K_LISTEN) {
		r->state = UNIX_ST_LISTEN;
		r->backlog = s->wq;
		if (!s->name_len || s->type == SOCK_DGRAM || s->wq > MAX_BACKLOG)
			return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: unix listener without a name, or with a backlog of %u",
				       s->pid, s->fd, s->wq);
	} else if (s->kstate == K_CLOSE || (s->kstate == K_ESTABLISHED && !s->has_peer)) {
		/* a datagram socket others connect to is "established" too */
		r->state = UNIX_ST_UNCONN;
	} else if (s->kstate != K_ESTABLISHED) {
		return log_err(c->log, EOPNOTSUPP, "pid %d fd %d: unix socket in state %d",
			       s->pid, s->fd, s->kstate);
	} else if (s->listener) {
		r->state = UNIX_ST_PENDING;
		r->peer = s->listener->id;
		if (s->wq)	/* its data waits with the unaccepted server side */
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d fd %d: data sent on a connection that pid %d fd %d has not accepted yet",
				       s->pid, s->fd, s->listener->pid, s->listener->fd);
	} else if (peer_gone(s)) {
		r->state = UNIX_ST_PEER_GONE;
	} else if (p && p->pid) {
		r->state = UNIX_ST_CONNECTED;
		r->peer = p->id;
		if (p->peer_ino != s->ino &&
		    (s->type != SOCK_DGRAM || p->has_peer || !p->name_len))
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d fd %d: unix socket connected to socket:[%llu], which is connected elsewhere",
				       s->pid, s->fd, (unsigned long long)p->ino);
	} else if (c->flags & CKPT_EXTERNAL_UNIX) {
		r->flags |= UNIX_EXTERNAL;
		/* a datagram socket to a path or abstract name (a syslog
		 * client's /dev/log) is connected to it again */
		r->state = s->type == SOCK_DGRAM && p && p->name_len &&
			   (!p->name[0] || p->name[0] == '/') ? UNIX_ST_REMOTE :
			   UNIX_ST_PEER_GONE;
	} else {
		return refuse_outside(c, s);
	}
	return 0;
}

/* The name of a bound, unconnected socket: a path made absolute, checked
 * to be the very socket file it was bound to, with its owner and mode. */
static int own_name(struct cpt_ctx *c, const struct usk *s, struct rec_unix_sk *r,
		    char *name)
{
	char cwd[CKPT_PATH_MAX], path[CKPT_PATH_MAX + NAME_MAX_LEN + 2];
	struct stat st;

	r->name_len = s->name_len;
	memcpy(name, s->name, s->name_len);
	if (!s->name_len || !s->name[0])
		return 0;	/* unbound, or abstract */
	if (s->name[0] == '/') {
		snprintf(path, sizeof(path), "%.*s", s->name_len, s->name);
	} else {
		if (proc_readlink(s->pid, "cwd", cwd, sizeof(cwd)))
			return log_err(c->log, errno, "pid %d: cwd:", s->pid);
		snprintf(path, sizeof(path), "%s/%.*s", cwd, s->name_len, s->name);
	}
	if (stat(path, &st) || !s->has_vfs || st.st_ino != s->vfs_ino ||
	    st.st_dev != makedev(s->vfs_dev >> 20, s->vfs_dev & 0xfffff))
		return log_err(c->log, ENOENT,
			       "pid %d fd %d: unix socket bound to %s, which is no longer its socket file",
			       s->pid, s->fd, path);
	if (strlen(path) >= (size_t)NAME_MAX_LEN)
		return log_err(c->log, ENAMETOOLONG, "pid %d fd %d: unix socket path %s too long",
			       s->pid, s->fd, path);
	r->name_len = strlen(path);
	memcpy(name, path, r->name_len);
	r->file_mode = st.st_mode & 07777;
	r->file_uid = st.st_uid;
	r->file_gid = st.st_gid;
	return 0;
}

struct queue {			/* messages peeked from a socket */
	uint32_t *lens;
	uint32_t nr, cap;
	char *data;
	size_t len, dcap;
};

static void queue_free(struct queue *q)
{
	free(q->lens);
	free(q->data);
}

static int queue_room(struct queue *q, size_t want)
{
	char *d;

	if (q->nr == q->cap) {
		uint32_t *l = realloc(q->lens, (q->cap = q->cap ? 2 * q->cap : 16) * 4);

		if (!l)
			return -ENOMEM;
		q->lens = l;
	}
	if (q->dcap - q->len >= want)
		return 0;
	if (q->len + want > MAX_DATA)
		return -EFBIG;
	/* doubling: many small datagrams are not copied over and over */
	q->dcap = q->len + want > 2 * q->dcap ? q->len + want : 2 * q->dcap;
	d = realloc(q->data, q->dcap);
	if (!d)
		return -ENOMEM;
	q->data = d;
	return 0;
}

/* Fds in flight come with the peek, into ckpt: closed again. */
static bool fds_in_flight(struct msghdr *m)
{
	bool fds = m->msg_flags & MSG_CTRUNC;

	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		fds = true;
		for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
			close(((int *)CMSG_DATA(h))[i]);
	}
	return fds;
}

/* The next message at @q->len bytes in (a stream: the next bytes):
 * 1 got one, 0 none left, -errno.  A stream reads 0 at its end, and so
 * does a seqpacket socket shut for reading once its @inq bytes are read:
 * else 0 is an empty message. */
static int peek_one(int sk, const struct usk *s, size_t inq, struct queue *q)
{
	bool zero_ends = s->type == SOCK_STREAM ||
			 (s->type == SOCK_SEQPACKET && (s->shutdown & UNIX_SHUT_RD) && q->len >= inq);
	union { char buf[CMSG_SPACE(253 * sizeof(int)) + CMSG_SPACE(64)]; struct cmsghdr h; } ctl;
	size_t room = 64 * 1024;
	int off = q->len, ret;

	for (;;) {
		struct iovec iov;
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		ssize_t n;

		if ((ret = queue_room(q, room)))
			return ret;
		iov = (struct iovec){ q->data + q->len, q->dcap - q->len };
		if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off)))
			return -errno;
		n = recvmsg(sk, &m, MSG_PEEK | MSG_DONTWAIT | (s->type == SOCK_STREAM ? 0 : MSG_TRUNC));
		if (n >= 0 && fds_in_flight(&m))
			return -EXDEV;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0 && zero_ends)
			return 0;
		if ((size_t)n > iov.iov_len) {	/* a datagram longer than room */
			room = n;
			continue;
		}
		q->lens[q->nr++] = n;
		q->len += n;
		return q->nr < MAX_MSGS ? 1 : -E2BIG;
	}
}

/* Everything queued for @s, read without consuming it. */
static int peek_queue(struct cpt_ctx *c, const struct usk *s, int sk,
		      struct rec_unix_sk *r, struct queue *q)
{
	int old = -1, inq = 0, ret;
	socklen_t sl = sizeof(old);

	if (getsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &old, &sl) || ioctl(sk, SIOCINQ, &inq))
		return log_err(c->log, errno, "pid %d fd %d: SO_PEEK_OFF:", s->pid, s->fd);
	r->peek_off = old;
	while ((ret = peek_one(sk, s, inq, q)) == 1)
		;
	/* the target's own peek offset, whatever happened */
	if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &old, sizeof(old)) && !ret)
		ret = -errno;
	if (ret == -EXDEV)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: unix socket has file descriptors in flight (SCM_RIGHTS): not supported",
			       s->pid, s->fd);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: peeking unix socket data:",
			       s->pid, s->fd);
	return 0;
}

static int64_t timeo_ns(int sk, int opt)
{
	struct timeval tv = { 0 };
	socklen_t sl = sizeof(tv);

	if (getsockopt(sk, SOL_SOCKET, opt, &tv, &sl))
		return 0;
	return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
}

static int read_options(struct cpt_ctx *c, const struct usk *s, int sk,
			struct rec_unix_sk *r)
{
	int rb = 0, sb = 0, pc = 0;
	socklen_t l1 = sizeof(rb), l2 = sizeof(sb), l3 = sizeof(pc);

	if (getsockopt(sk, SOL_SOCKET, SO_RCVBUF, &rb, &l1) ||
	    getsockopt(sk, SOL_SOCKET, SO_SNDBUF, &sb, &l2) ||
	    getsockopt(sk, SOL_SOCKET, SO_PASSCRED, &pc, &l3))
		return log_err(c->log, errno, "pid %d fd %d: socket options:", s->pid, s->fd);
	r->rcvbuf = rb;
	r->sndbuf = sb;
	r->flags |= pc ? UNIX_PASSCRED : 0;
	r->rcvtimeo_ns = timeo_ns(sk, SO_RCVTIMEO);
	r->sndtimeo_ns = timeo_ns(sk, SO_SNDTIMEO);
	return 0;
}

static int take_socket(struct cpt_ctx *c, const struct usk *s, int *sk)
{
	long pidfd = syscall(SYS_pidfd_open, s->pid, 0);

	*sk = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, s->fd, 0);
	if (*sk < 0)
		log_err(c->log, errno, "pid %d fd %d: taking its socket:", s->pid, s->fd);
	if (pidfd >= 0)
		close(pidfd);
	return *sk < 0 ? -EIO : 0;
}

static int write_one(struct cpt_ctx *c, const struct usk *s)
{
	struct rec_unix_sk r = { .id = s->id, .type = s->type, .peek_off = -1,
				 .shutdown = s->shutdown };
	char name[NAME_MAX_LEN];
	struct queue q = { 0 };
	int sk = -1, ret = classify(c, s, &r);

	if (!ret && (r.state == UNIX_ST_UNCONN || r.state == UNIX_ST_LISTEN))
		ret = own_name(c, s, &r, name);
	if (!ret && r.state == UNIX_ST_REMOTE) {
		const struct usk *p = usk_find(c->unix_sk, s->peer_ino);

		r.name_len = p->name_len;
		memcpy(name, p->name, p->name_len);
	}
	if (!ret)
		ret = take_socket(c, s, &sk);
	if (!ret)
		ret = read_options(c, s, sk, &r);
	/* an unconnected stream or seqpacket socket cannot be read at all */
	if (!ret && r.state != UNIX_ST_LISTEN &&
	    (r.state != UNIX_ST_UNCONN || s->type == SOCK_DGRAM))
		ret = peek_queue(c, s, sk, &r, &q);
	if (!ret && q.nr && r.state == UNIX_ST_REMOTE) {
		/* connecting again would drop it: kept, with the peer gone */
		r.state = UNIX_ST_PEER_GONE;
		r.name_len = 0;
	}
	if (!ret && (r.flags & UNIX_EXTERNAL))
		log_warn(c->log, "pid %d fd %d: unix socket connected outside the tree: %s",
			 s->pid, s->fd, r.state == UNIX_ST_REMOTE ? "connected to its name again at restart" :
			 "restored with its peer gone");
	if (!ret && q.nr && !(r.state == UNIX_ST_PEER_GONE ||
			      (r.state == UNIX_ST_CONNECTED && usk_find(c->unix_sk, s->peer_ino)->peer_ino == s->ino) ||
			      (r.state == UNIX_ST_UNCONN && r.name_len)))
		ret = log_err(c->log, EOPNOTSUPP,
			      "pid %d fd %d: data queued on a unix socket no restored peer can send to",
			      s->pid, s->fd);
	r.nr_msgs = q.nr;
	r.data_len = q.len;
	if (!ret)
		ret = iw_begin(&c->w, REC_UNIX_SK, sizeof(r) + r.name_len + 4ULL * q.nr + q.len);
	if (!ret)
		ret = iw_write(&c->w, &r, sizeof(r));
	if (!ret && r.name_len)
		ret = iw_write(&c->w, name, r.name_len);
	if (!ret && q.nr)
		ret = iw_write(&c->w, q.lens, 4 * q.nr);
	if (!ret && q.len)
		ret = iw_write(&c->w, q.data, q.len);
	if (!ret)
		ret = iw_end(&c->w);
	if (sk >= 0)
		close(sk);
	queue_free(&q);
	return ret;
}

/* Every socket of the tree: listeners first, the connections waiting in
 * their backlogs last and in their order, as restart connects them. */
static int write_all(struct cpt_ctx *c)
{
	struct unix_cpt *u = c->unix_sk;
	int ret = 0;

	u->written = true;
	for (size_t i = 0; i < u->n; i++)
		if (u->s[i].pid)
			u->s[i].id = ++c->next_objref;
	for (int pass = 0; pass < 2 && !ret; pass++)
		for (size_t i = 0; i < u->n && !ret; i++) {
			struct usk *s = &u->s[i];

			if (s->pid && (s->kstate == K_LISTEN) == !pass && !s->listener)
				ret = write_one(c, s);
		}
	for (size_t i = 0; i < u->n && !ret; i++) {
		struct usk *l = &u->s[i];

		for (uint32_t k = 0; l->pid && l->kstate == K_LISTEN && k < l->nr_icons && !ret; k++) {
			struct usk *cl = usk_find(u, l->icons[k]);

			if (cl && cl->pid)
				ret = write_one(c, cl);
			else if (!(c->flags & CKPT_EXTERNAL_UNIX))
				ret = log_err(c->log, EOPNOTSUPP,
					      "pid %d fd %d: a connection from outside the tree waits in the backlog of this unix socket (use --external-unix to drop it)",
					      l->pid, l->fd);
		}
	}
	return ret;
}

static bool unix_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	unsigned long long ino;
	struct usk *s;

	if (!S_ISSOCK(p->st.st_mode) || sscanf(p->link, "socket:[%llu]", &ino) != 1)
		return false;
	if (!c->unix_sk && unix_scan(c))
		return false;
	s = usk_find(c->unix_sk, ino);
	/* stdio connected outside the tree is the caller's: inherit.c */
	return s && s->pid && !(p->fd <= 2 && peer_outside(c->unix_sk, s));
}

static int unix_dump(struct cpt_ctx *c, const struct fd_probe *p,
		     struct rec_file *f, void **extra, uint32_t *extra_len)
{
	unsigned long long ino = 0;
	int ret = 0;

	sscanf(p->link, "socket:[%llu]", &ino);
	if (!c->unix_sk->written)
		ret = write_all(c);
	f->rdev = usk_find(c->unix_sk, ino)->id;
	return ret;
}

/* ---- restart ---- */

struct rst_usk {
	struct rec_unix_sk r;
	const char *name;
	const char *lens;	/* r.nr_msgs u32s, unaligned */
	const char *data;
	void *rec;
	int fd;			/* ckpt's own, once made */
	int far;		/* PEER_GONE: the end that goes away */
};

struct unix_table {
	struct rst_usk *e;
	int n;
	bool made;
};

static uint32_t msg_len(const struct rst_usk *e, uint32_t i)
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
		return r->name_len <= (uint32_t)NAME_MAX_LEN;
	return r->name_len < (uint32_t)NAME_MAX_LEN && name[0] == '/' &&
	       !memchr(name, 0, r->name_len);
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
	       r->file_mode <= 07777 && r->nr_msgs <= MAX_MSGS && r->data_len <= MAX_DATA &&
	       len == sizeof(*r) + (uint64_t)r->name_len + 4ULL * r->nr_msgs + r->data_len &&
	       (r->state == UNIX_ST_LISTEN ? r->name_len && r->type != SOCK_DGRAM :
		!r->backlog) && r->backlog <= MAX_BACKLOG &&
	       ((r->state == UNIX_ST_CONNECTED || r->state == UNIX_ST_PENDING) ?
		r->peer && r->peer != r->id : !r->peer) &&
	       (r->state != UNIX_ST_PENDING || r->type != SOCK_DGRAM) && data_ok &&
	       (r->state == UNIX_ST_REMOTE ? r->type == SOCK_DGRAM && r->name_len &&
		(r->flags & UNIX_EXTERNAL) : !(r->flags & UNIX_EXTERNAL) ||
		r->state == UNIX_ST_PEER_GONE);
}

static struct rst_usk *usk_by_id(struct unix_table *ut, uint32_t id)
{
	for (int i = 0; ut && i < ut->n; i++)
		if (ut->e[i].r.id == id)
			return &ut->e[i];
	return NULL;
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
	    usk_by_id(ut, rs->id))
		return log_err(c->log, EBADMSG, "bad UNIX_SK record %llu",
			       (unsigned long long)r->index);
	n = realloc(ut->e, (ut->n + 1) * sizeof(*n));
	if (!n)
		return log_err(c->log, ENOMEM, "unix sockets:");
	ut->e = n;
	n = &ut->e[ut->n];
	memset(n, 0, sizeof(*n));
	n->r = *rs;
	n->name = (const char *)(rs + 1);
	n->lens = n->name + rs->name_len;
	n->data = n->lens + 4 * rs->nr_msgs;
	n->fd = n->far = -1;
	for (uint32_t i = 0; i < rs->nr_msgs; i++)
		sum += msg_len(n, i);
	if (sum != rs->data_len)
		return log_err(c->log, EBADMSG, "UNIX_SK %u: messages of %llu bytes, not %u",
			       rs->id, (unsigned long long)sum, rs->data_len);
	n->rec = r->data;
	r->data = NULL;
	ut->n++;
	return 0;
}

/* What the records say of each other: pairs are mutual, a one-way
 * datagram peer is bound, a pending connection's listener listens. */
static int cross_check(struct rst_ctx *c, struct unix_table *ut)
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
	if (path && (chown(a.sun_path, e->r.file_uid, e->r.file_gid) ||
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

/* The messages queued for @e, sent by whoever can: its peer, the end
 * that goes away, or (to a bound datagram socket) a stand-in. */
static int fill(struct rst_ctx *c, struct unix_table *ut, struct rst_usk *e)
{
	const struct rst_usk *p = usk_by_id(ut, e->r.peer);
	int w = e->r.state == UNIX_ST_PEER_GONE ? e->far : p ? p->fd : -1, tmp = -1, ret = 0;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
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
		uint32_t len = msg_len(e, i), done = 0;

		do {
			ssize_t n = sendto(w, e->data + off + done, len - done,
					   MSG_DONTWAIT | MSG_NOSIGNAL, alen ? (struct sockaddr *)&a : NULL,
					   alen);

			if (n < 0 || (e->r.type != SOCK_STREAM && (uint32_t)n != len))
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
static int finish(struct rst_ctx *c, struct rst_usk *e)
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
	    (e->r.rcvtimeo_ns && setsockopt(e->fd, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof(rt))) ||
	    (e->r.sndtimeo_ns && setsockopt(e->fd, SOL_SOCKET, SO_SNDTIMEO, &st, sizeof(st))) ||
	    (e->r.peek_off >= 0 &&
	     setsockopt(e->fd, SOL_SOCKET, SO_PEEK_OFF, &e->r.peek_off, sizeof(int))) ||
	    (e->r.shutdown && shutdown(e->fd, how[e->r.shutdown]) && errno != ENOTCONN))
		ret = log_err(c->log, errno, "UNIX_SK %u: options:", e->r.id);
	return ret;
}

static int make_one(struct rst_ctx *c, struct unix_table *ut, struct rst_usk *e, int step)
{
	struct rst_usk *p = usk_by_id(ut, e->r.peer);
	int ret = 0;

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

static int make_all(struct rst_ctx *c, struct unix_table *ut)
{
	int ret = cross_check(c, ut);

	ut->made = true;
	for (int step = 0; step < 2 && !ret; step++)
		for (int i = 0; i < ut->n && !ret; i++)
			ret = make_one(c, ut, &ut->e[i], step);
	for (int i = 0; i < ut->n && !ret; i++)
		if (ut->e[i].r.nr_msgs)
			ret = fill(c, ut, &ut->e[i]);
	for (int i = 0; i < ut->n && !ret; i++)
		ret = finish(c, &ut->e[i]);
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
	free(ut);
}

static const char *state_name(uint32_t s)
{
	static const char *const n[] = { "?", "unconnected", "listen", "connected",
					 "pending", "peer-gone", "remote" };

	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static void usk_show(struct info_out *o, const struct rec *r)
{
	const struct rec_unix_sk *rs = r->data;
	char name[NAME_MAX_LEN + 2] = "";

	if (rs->name_len < (uint32_t)NAME_MAX_LEN &&
	    r->data_len >= sizeof(*rs) + rs->name_len && rs->name_len)
		snprintf(name, sizeof(name), "%s%.*s", ((const char *)(rs + 1))[0] ? "" : "@",
			 (int)rs->name_len - !((const char *)(rs + 1))[0],
			 (const char *)(rs + 1) + !((const char *)(rs + 1))[0]);
	info_u64(o, "id", rs->id);
	info_str(o, "type", type_name(rs->type));
	info_str(o, "state", state_name(rs->state));
	info_u64(o, "peer", rs->peer);
	info_str(o, "name", name);
	info_u64(o, "shutdown", rs->shutdown);
	info_u64(o, "messages", rs->nr_msgs);
	info_u64(o, "bytes", rs->data_len);
}

const struct kind_ops kind_unix = {
	.name = "unix",
	.types = { REC_UNIX_SK },
	.phase = PHASE_IMAGE,
	.load = usk_load,
	.free_ctx = usk_free_ctx,
	.show = usk_show,
};

/* ---- the sockets, as a file kind ---- */

static int unix_load(struct rst_ctx *c, struct rst_file *f)
{
	struct unix_table *ut = KCSTATE(c, kind_unix);

	if (f->f.extra_len || f->f.rdev > UINT32_MAX || !usk_by_id(ut, f->f.rdev))
		return log_err(c->log, EBADMSG, "FILE %u: no UNIX_SK %llu", f->f.id,
			       (unsigned long long)f->f.rdev);
	return cross_check(c, ut);
}

/* Before any process exists: a path to bind again is free, or the socket
 * file its killed owner left (which bind_name() unlinks), in a directory
 * that is there. */
static int unix_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct rst_usk *e = usk_by_id(KCSTATE(c, kind_unix), f->f.rdev);
	char path[NAME_MAX_LEN + 1] = "", *slash;
	struct stat st;

	if (!e || !e->r.name_len || !e->name[0] ||
	    (e->r.state != UNIX_ST_UNCONN && e->r.state != UNIX_ST_LISTEN))
		return 0;
	memcpy(path, e->name, e->r.name_len);
	if (!lstat(path, &st) && !S_ISSOCK(st.st_mode))
		return log_err(c->log, EEXIST, "unix socket %s: in the way, not a socket", path);
	slash = strrchr(path, '/');
	*slash = 0;
	if (stat(slash == path ? "/" : path, &st) || !S_ISDIR(st.st_mode))
		return log_err(c->log, ENOENT, "unix socket %s/%s: no such directory", path,
			       slash + 1);
	return 0;
}

static int unix_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		     long *fd)
{
	struct unix_table *ut = KCSTATE(c, kind_unix);
	struct rst_usk *e = usk_by_id(ut, f->f.rdev);
	int ret = 0;

	if (!e)
		return log_err(c->log, EBADMSG, "FILE %u: no UNIX_SK %llu", f->f.id,
			       (unsigned long long)f->f.rdev);
	if (!ut->made && (ret = make_all(c, ut)))
		return ret;
	if (e->fd < 0)
		return log_err(c->log, EIO, "UNIX_SK %u: not made", e->r.id);
	ret = files_give(t, e->fd, fd);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "fcntl(F_SETFL)", SYS_fcntl, *fd, F_SETFL,
			     f->f.flags & ~O_ACCMODE);
	return ret;
}

static void unix_show(struct info_out *o, const struct rec_file *f,
		      const void *extra, uint32_t extra_len)
{
	info_u64(o, "socket", f->rdev);
}

const struct file_ops file_unix = {
	.kind = FILE_UNIX,
	.name = "unix",
	.match = unix_match,
	.dump = unix_dump,
	.load = unix_load,
	.check = unix_check,
	.open = unix_open,
	.show = unix_show,
};
