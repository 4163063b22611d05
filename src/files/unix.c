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
 * own peek offset is put back).  Fds in flight (SCM_RIGHTS) come with the
 * peek into ckpt; after every UNIX_SK, each is written as a FILE and each
 * socket's as a UNIX_SCM (restart: unix_scm.c).  Every queue is peeked
 * before any record is written: a unix socket only in flight is the
 * tree's too (but a listener, refused).  A socket whose peer is
 * outside the tree is refused unless the user said
 * --external-unix (then it is restored with its peer gone); stdio
 * connected outside stays the caller's (inherit.c).
 *
 * Restart: ckpt makes every socket itself (socketpair() for pairs,
 * bind()+listen() for listeners, connect() for the connections waiting in
 * a backlog, in their order), writes the data queued for each socket from
 * its peer, then applies options and shutdown state, and each process
 * takes its sockets with pidfd_getfd().  A path name's stale socket file
 * (its old owner was killed) is unlinked and bound anew.  Names of
 * connected sockets are not kept (socketpair() makes unnamed ones).
 * A socket whose path no longer leads to it (a ghost: its file removed
 * or replaced) is bound to it again, connected to and refilled by name,
 * then its file removed, what was there put back (unix_build.c):
 * getsockname() says what it said, and the path is as it was.
 *
 * The graph of sockets comes from unix_graph.c, the restart's sockets
 * from unix_build.c; here, the records written and the file kind. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
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
#include "unix.h"

/* ---- checkpoint ---- */

const char *unix_type_name(int type)
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
	struct usk *p = usk_find(kind_dump_state(c, &kind_unix), s->peer_ino);
	char name[UNIX_NAME_MAX + 2];

	show_name(p, name, sizeof(name));
	if (!s->peer_ino)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: unix %s socket waits in the backlog of a listener outside the tree (--external-unix accepts it)",
			       s->pid, s->fd, unix_type_name(s->type));
	return log_err(c->log, EOPNOTSUPP,
		       "pid %d fd %d: unix %s socket connected to socket:[%llu] (%s) outside the tree (--external-unix accepts it)",
		       s->pid, s->fd, unix_type_name(s->type),
		       (unsigned long long)s->peer_ino, name);
}

/* The state of @s as the image says it, and whom it names. */
static int usk_state(struct cpt_ctx *c, const struct usk *s, struct rec_unix_sk *r)
{
	struct unix_cpt *u = kind_dump_state(c, &kind_unix);
	struct usk *p = usk_find(u, s->peer_ino);

	if (s->kstate == K_LISTEN) {
		r->state = UNIX_ST_LISTEN;
		r->backlog = s->wq;
		if (!s->name_len || s->type == SOCK_DGRAM || s->wq > UNIX_MAX_BACKLOG)
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
	} else if (unix_peer_gone(s)) {
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
	char cwd[CKPT_PATH_MAX], path[CKPT_PATH_MAX + UNIX_NAME_MAX + 2];
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
	if (!s->has_vfs)
		return log_err(c->log, ENOENT, "pid %d fd %d: unix socket bound to %s, but has no socket file",
			       s->pid, s->fd, path);
	if (strlen(path) >= (size_t)UNIX_NAME_MAX)
		return log_err(c->log, ENAMETOOLONG, "pid %d fd %d: unix socket path %s too long",
			       s->pid, s->fd, path);
	r->name_len = strlen(path);
	memcpy(name, path, r->name_len);
	/* its file removed or replaced: bound again and removed at restart */
	if (stat(path, &st) || st.st_ino != s->vfs_ino ||
	    st.st_dev != makedev(s->vfs_dev >> 20, s->vfs_dev & 0xfffff)) {
		r->flags |= UNIX_GHOST;
		return 0;
	}
	r->file_mode = st.st_mode & 07777;
	r->file_uid = st.st_uid;
	r->file_gid = st.st_gid;
	return 0;
}

#ifndef SCM_PIDFD
#define SCM_PIDFD	4
#endif
#define SCM_MAX_FD	253	/* the kernel's, per message */

void usk_queue_free(struct usk_queue *q)
{
	free(q->lens);
	free(q->data);
	free(q->scm);
	for (uint32_t i = 0; i < q->nr_fds; i++)
		close(q->fds[i]);
	free(q->fds);
}

static int queue_room(struct usk_queue *q, size_t want)
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
	if (q->len + want > UNIX_MAX_DATA)
		return -EFBIG;
	/* doubling: many small datagrams are not copied over and over */
	q->dcap = q->len + want > 2 * q->dcap ? q->len + want : 2 * q->dcap;
	d = realloc(q->data, q->dcap);
	if (!d)
		return -ENOMEM;
	q->data = d;
	return 0;
}

struct got {			/* the fds one peek brought into ckpt */
	int fd[SCM_MAX_FD];
	int n;
	bool lost;		/* some did not fit (MSG_CTRUNC) */
};

static void got_close(struct got *g)
{
	for (int i = 0; i < g->n; i++)
		close(g->fd[i]);
	g->n = 0;
}

/* The fds in flight that came with a peek, into @g, above stdio (where
 * fdtable would take them for the caller's); pidfds (SO_PASSPIDFD)
 * closed; credentials are not kept. */
static void take_cmsgs(struct msghdr *m, struct got *g)
{
	g->n = 0;
	g->lost = m->msg_flags & MSG_CTRUNC;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
		size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (h->cmsg_level != SOL_SOCKET ||
		    (h->cmsg_type != SCM_RIGHTS && h->cmsg_type != SCM_PIDFD))
			continue;
		for (size_t i = 0; i < n; i++) {
			int fd, hi;

			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
			if (h->cmsg_type != SCM_RIGHTS || g->n == SCM_MAX_FD) {
				close(fd);
				continue;
			}
			hi = fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
			if (hi != fd)
				close(fd);
			if (hi < 0)
				g->lost = true;
			else
				g->fd[g->n++] = hi;
		}
	}
}

/* One peek of up to @len bytes at offset @off: their number or -errno,
 * and the fds that came with them in @g. */
static ssize_t peek_at(int sk, int off, char *buf, size_t len, int flags, struct got *g)
{
	union { char b[CMSG_SPACE(SCM_MAX_FD * sizeof(int)) + 4096]; struct cmsghdr h; } ctl;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
	ssize_t n;

	g->n = 0;
	g->lost = false;
	if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off)))
		return -errno;
	n = recvmsg(sk, &m, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC | flags);
	if (n < 0)
		return -errno;
	take_cmsgs(&m, g);
	return n;
}

/* A stream peek glues messages (skbs) together but stops after the first
 * that carries fds: the bytes before that one, found by halving (a peek
 * of k bytes brings its fds iff it reaches into it).  The fds must go
 * back with the same byte, and a reader gets them with the read that
 * reaches it. */
static ssize_t stream_before_fds(int sk, int off, char *buf, size_t n)
{
	size_t lo = 1, hi = n;	/* the least k whose peek brings them */
	struct got g;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		ssize_t k = peek_at(sk, off, buf, mid, 0, &g);
		bool fds = g.n || g.lost;

		got_close(&g);
		if (k < 0)
			return k;
		if (fds)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

/* Message @q->nr carries the fds in @g: kept, in order. */
static int queue_fds(struct usk_queue *q, struct got *g)
{
	struct rec_unix_scm_msg *e = VEC_PUSH(q->scm, q->nr_scm, q->cap_scm);

	if (!e)
		return -ENOMEM;
	*e = (struct rec_unix_scm_msg){ .msg = q->nr, .nr_fds = g->n };
	for (int i = 0; i < g->n; i++) {
		if (VEC_ROOM(q->fds, q->nr_fds, q->cap_fds)) {
			got_close(g);
			return -ENOMEM;
		}
		q->fds[q->nr_fds++] = g->fd[i];
		g->fd[i] = -1;
	}
	g->n = 0;
	return 0;
}

/* The next message at @q->len bytes in (a stream: the next bytes, up to
 * a message with fds or from it): 1 got one, 0 none left, -errno.  A
 * stream reads 0 at its end, and so does a seqpacket socket shut for
 * reading once its @inq bytes are read: else 0 is an empty message. */
static int peek_unix_msg(int sk, const struct usk *s, size_t inq, struct usk_queue *q)
{
	bool stream = s->type == SOCK_STREAM;
	bool zero_ends = stream ||
			 (s->type == SOCK_SEQPACKET && (s->shutdown & UNIX_SHUT_RD) && q->len >= inq);
	size_t room = 64 * 1024;
	int off = q->len, ret;
	struct got g;

	for (;;) {
		ssize_t n, before;
		size_t avail;

		if ((ret = queue_room(q, room)))
			return ret;
		avail = q->dcap - q->len;
		n = peek_at(sk, off, q->data + q->len, avail, stream ? 0 : MSG_TRUNC, &g);
		if (n < 0)
			return n == -EAGAIN ? 0 : n;
		if (g.lost || (n == 0 && zero_ends) || (size_t)n > avail) {
			got_close(&g);
			if (g.lost)
				return -EMFILE;
			if (n == 0)
				return 0;
			room = n;	/* a datagram longer than room */
			continue;
		}
		if (stream && g.n) {
			before = stream_before_fds(sk, off, q->data + q->len, n);
			if (before != 0 || (size_t)n == avail)
				got_close(&g);
			if (before < 0)
				return before;
			if (before > 0) {
				n = before;	/* the bytes before it, first */
			} else if ((size_t)n == avail) {
				room = 2 * avail;	/* it may go on */
				continue;
			}
		}
		if (g.n && (ret = queue_fds(q, &g)))
			return ret;
		q->lens[q->nr++] = n;
		q->len += n;
		return q->nr < UNIX_MAX_MSGS ? 1 : -E2BIG;
	}
}

/* Everything queued for @s, read without consuming it; the fds in flight
 * in it come into ckpt (they are the very descriptions). */
static int peek_unix_queue(struct cpt_ctx *c, struct usk *s, int sk, struct usk_queue *q)
{
	int old = -1, inq = 0, ret;
	socklen_t sl = sizeof(old);

	if (getsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &old, &sl) || ioctl(sk, SIOCINQ, &inq))
		return log_err(c->log, errno, "pid %d fd %d: SO_PEEK_OFF:", s->pid, s->fd);
	s->peek_off = old;
	while ((ret = peek_unix_msg(sk, s, inq, q)) == 1)
		;
	/* the target's own peek offset, whatever happened */
	if (setsockopt(sk, SOL_SOCKET, SO_PEEK_OFF, &old, sizeof(old)) && !ret)
		ret = -errno;
	if (ret == -EMFILE)
		return log_err(c->log, EMFILE,
			       "pid %d fd %d: the fds in flight on this unix socket (SCM_RIGHTS) do not fit in ckpt's fd table (RLIMIT_NOFILE)",
			       s->pid, s->fd);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: peeking unix socket data:",
			       s->pid, s->fd);
	return 0;
}

/* The unix sockets in flight on @s that no fd of the tree holds are the
 * tree's too (a connection handed to a worker, its sender's fd closed):
 * written like the others, their own queues peeked in turn. */
static int note_flight(struct cpt_ctx *c, const struct usk *s)
{
	struct unix_cpt *u = kind_dump_state(c, &kind_unix);

	for (uint32_t i = 0; i < s->q.nr_fds; i++) {
		char name[32], link[64];
		unsigned long long ino;
		struct usk *f;

		snprintf(name, sizeof(name), "fd/%d", s->q.fds[i]);
		if (proc_readlink(getpid(), name, link, sizeof(link)) ||
		    sscanf(link, "socket:[%llu]", &ino) != 1 || !(f = usk_find(u, ino)) || f->pid)
			continue;
		if (f->kstate == K_LISTEN)
			return log_err(c->log, EOPNOTSUPP,
				       "pid %d fd %d: a listening unix socket (socket:[%llu]) in flight on this unix socket (SCM_RIGHTS), held by no fd of the tree: not supported",
				       s->pid, s->fd, ino);
		f->pid = s->pid;
		f->fd = s->fd;
		f->in_flight = true;
		f->flight_fd = s->q.fds[i];
		f->id = ++c->next_objref;
	}
	return 0;
}

/* After every UNIX_SK: the FILE of each fd in flight on @s (written now
 * from ckpt's copy if the image has not got it), then its UNIX_SCM. */
static int write_scm(struct cpt_ctx *c, const struct usk *s)
{
	long ti = id_find(&c->pids, s->pid);
	struct rec_unix_scm r = { .sk = s->id, .opener = s->pid, .nr_msgs = s->q.nr_scm,
				  .nr_fds = s->q.nr_fds };
	uint32_t *ids = calloc(s->q.nr_fds, sizeof(*ids));
	int ret = ids && ti >= 0 ? 0 : log_err(c->log, ENOMEM, "pid %d fd %d: fds in flight:",
					       s->pid, s->fd);

	for (uint32_t k = 0; k < s->q.nr_fds && !ret; k++) {
		ret = files_ref_own(c, c->tasks[ti], s->fd, s->q.fds[k], &ids[k]);
		if (!ret && !ids[k])
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d fd %d: a file in flight on this unix socket (SCM_RIGHTS) cannot be left out",
				      s->pid, s->fd);
	}
	if (!ret)
		ret = iw_begin(&c->w, REC_UNIX_SCM, sizeof(r) + sizeof(*s->q.scm) * (uint64_t)s->q.nr_scm +
			       sizeof(*ids) * (uint64_t)s->q.nr_fds);
	if (!ret)
		ret = iw_write(&c->w, &r, sizeof(r));
	if (!ret)
		ret = iw_write(&c->w, s->q.scm, sizeof(*s->q.scm) * s->q.nr_scm);
	if (!ret)
		ret = iw_write(&c->w, ids, sizeof(*ids) * s->q.nr_fds);
	if (!ret)
		ret = iw_end(&c->w);
	free(ids);
	return ret;
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
	int rb = 0, sb = 0, pc = 0, ps = 0;
	socklen_t l1 = sizeof(rb), l2 = sizeof(sb), l3 = sizeof(pc), l4 = sizeof(ps);

	if (getsockopt(sk, SOL_SOCKET, SO_RCVBUF, &rb, &l1) ||
	    getsockopt(sk, SOL_SOCKET, SO_SNDBUF, &sb, &l2) ||
	    getsockopt(sk, SOL_SOCKET, SO_PASSCRED, &pc, &l3) ||
	    getsockopt(sk, SOL_SOCKET, SO_PASSSEC, &ps, &l4))
		return log_err(c->log, errno, "pid %d fd %d: socket options:", s->pid, s->fd);
	r->rcvbuf = rb;
	r->sndbuf = sb;
	r->flags |= pc ? UNIX_PASSCRED : 0;
	r->flags |= ps ? UNIX_PASSSEC : 0;
	r->rcvtimeo_ns = timeo_ns(sk, SO_RCVTIMEO);
	r->sndtimeo_ns = timeo_ns(sk, SO_SNDTIMEO);
	return 0;
}

static int take_socket(struct cpt_ctx *c, const struct usk *s, int *sk)
{
	long pidfd;

	if (s->in_flight) {
		*sk = fcntl(s->flight_fd, F_DUPFD_CLOEXEC, 3);
		return *sk < 0 ? log_err(c->log, errno, "pid %d fd %d: a socket in flight:",
					 s->pid, s->fd) : 0;
	}
	pidfd = syscall(SYS_pidfd_open, s->pid, 0);

	*sk = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, s->fd, 0);
	if (*sk < 0)
		log_err(c->log, errno, "pid %d fd %d: taking its socket:", s->pid, s->fd);
	if (pidfd >= 0)
		close(pidfd);
	return *sk < 0 ? -EIO : 0;
}

static int write_one(struct cpt_ctx *c, struct usk *s)
{
	struct rec_unix_sk r = { .id = s->id, .type = s->type, .peek_off = -1,
				 .shutdown = s->shutdown };
	char name[UNIX_NAME_MAX];
	struct usk_queue *q = &s->q;
	int sk = -1, ret = usk_state(c, s, &r);

	/* a datagram socket connected to its own name needs that name to
	 * connect to it again */
	if (!ret && (r.state == UNIX_ST_UNCONN || r.state == UNIX_ST_LISTEN ||
		     (r.state == UNIX_ST_CONNECTED && s->peer_ino == s->ino)))
		ret = own_name(c, s, &r, name);
	if (!ret && r.state == UNIX_ST_REMOTE) {
		const struct usk *p = usk_find(kind_dump_state(c, &kind_unix), s->peer_ino);

		r.name_len = p->name_len;
		memcpy(name, p->name, p->name_len);
	}
	if (!ret)
		ret = take_socket(c, s, &sk);
	if (!ret)
		ret = read_options(c, s, sk, &r);
	r.peek_off = s->peeked ? s->peek_off : -1;
	if (!ret && q->nr_scm && (r.flags & UNIX_GHOST))
		ret = log_err(c->log, EOPNOTSUPP,
			      "pid %d fd %d: fds in flight (SCM_RIGHTS) on a unix socket whose path was removed or replaced: not supported",
			      s->pid, s->fd);
	if (!ret && q->nr && r.state == UNIX_ST_REMOTE) {
		/* connecting again would drop it: kept, with the peer gone */
		r.state = UNIX_ST_PEER_GONE;
		r.name_len = 0;
	}
	if (!ret && (r.flags & UNIX_EXTERNAL))
		log_warn(c->log, "pid %d fd %d: unix socket connected outside the tree: %s",
			 s->pid, s->fd, r.state == UNIX_ST_REMOTE ? "connected to its name again at restart" :
			 "restored with its peer gone");
	if (!ret && q->nr && !(r.state == UNIX_ST_PEER_GONE ||
			      (r.state == UNIX_ST_CONNECTED && usk_find(kind_dump_state(c, &kind_unix), s->peer_ino)->peer_ino == s->ino) ||
			      (r.state == UNIX_ST_UNCONN && r.name_len)))
		ret = log_err(c->log, EOPNOTSUPP,
			      "pid %d fd %d: data queued on a unix socket no restored peer can send to",
			      s->pid, s->fd);
	r.nr_msgs = q->nr;
	r.data_len = q->len;
	if (!ret)
		ret = iw_begin(&c->w, REC_UNIX_SK, sizeof(r) + r.name_len + 4ULL * q->nr + q->len);
	if (!ret)
		ret = iw_write(&c->w, &r, sizeof(r));
	if (!ret && r.name_len)
		ret = iw_write(&c->w, name, r.name_len);
	if (!ret && q->nr)
		ret = iw_write(&c->w, q->lens, 4 * q->nr);
	if (!ret && q->len)
		ret = iw_write(&c->w, q->data, q->len);
	if (!ret)
		ret = iw_end(&c->w);
	if (sk >= 0)
		close(sk);
	/* the data is written; the fds in flight wait for its UNIX_SCM */
	free(q->lens);
	free(q->data);
	q->lens = NULL;
	q->data = NULL;
	return ret;
}

/* The queue of @s, peeked (an unconnected stream or seqpacket socket
 * cannot be read at all, nor a listener), and the sockets only in flight
 * in it noted. */
static int peek_one(struct cpt_ctx *c, struct usk *s)
{
	int sk = -1, ret;

	s->peeked = true;
	s->peek_off = -1;
	if (s->kstate == K_LISTEN ||
	    (s->type != SOCK_DGRAM && !(s->kstate == K_ESTABLISHED && s->has_peer)))
		return 0;
	ret = take_socket(c, s, &sk);
	if (!ret)
		ret = peek_unix_queue(c, s, sk, &s->q);
	if (sk >= 0)
		close(sk);
	return ret ? ret : note_flight(c, s);
}

/* Every queue of the tree, those of the sockets in flight in them too,
 * before any state is told: a socket's peer may be one in flight. */
static int peek_every(struct cpt_ctx *c, struct unix_cpt *u)
{
	bool more = true;
	int ret = 0;

	while (more && !ret) {
		more = false;
		for (size_t i = 0; i < u->n && !ret; i++)
			if (u->s[i].pid && !u->s[i].peeked) {
				more = true;
				ret = peek_one(c, &u->s[i]);
			}
	}
	return ret;
}

/* Every socket of the tree: listeners first, the connections waiting in
 * their backlogs last and in their order, as restart connects them. */
static int write_every_usk(struct cpt_ctx *c)
{
	struct unix_cpt *u = kind_dump_state(c, &kind_unix);
	int ret = 0;

	u->written = true;
	for (size_t i = 0; i < u->n; i++)
		if (u->s[i].pid)
			u->s[i].id = ++c->next_objref;
	ret = peek_every(c, u);
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
	for (size_t i = 0; i < u->n && !ret; i++)
		if (u->s[i].q.nr_scm)
			ret = write_scm(c, &u->s[i]);
	return ret;
}

static bool unix_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	struct unix_cpt *u = kind_dump_state(c, &kind_unix);
	unsigned long long ino;
	struct usk *s;

	if (!S_ISSOCK(p->st.st_mode) || sscanf(p->link, "socket:[%llu]", &ino) != 1)
		return false;
	if (!u->scanned && unix_scan(c))
		return false;
	s = usk_find(u, ino);
	/* stdio connected outside the tree is the caller's: inherit.c */
	return s && s->pid && !(p->fd <= 2 && unix_peer_outside(u, s));
}

static int unix_dump(struct cpt_ctx *c, const struct fd_probe *p,
		     struct rec_file *f, void **extra, uint32_t *extra_len)
{
	struct unix_cpt *u = kind_dump_state(c, &kind_unix);
	unsigned long long ino = 0;
	int ret = 0;

	sscanf(p->link, "socket:[%llu]", &ino);
	if (!u->written)
		ret = write_every_usk(c);
	f->rdev = usk_find(u, ino)->id;
	return ret;
}

/* ---- the sockets, as a file kind ---- */

static int unix_load(struct rst_ctx *c, struct rst_file *f)
{
	struct unix_table *ut = KCSTATE(c, kind_unix);

	if (f->f.extra_len || f->f.rdev > UINT32_MAX || !usk_by_id(ut, f->f.rdev))
		return log_err(c->log, EBADMSG, "FILE %u: no UNIX_SK %llu", f->f.id,
			       (unsigned long long)f->f.rdev);
	return unix_cross_check(c, ut);
}

/* A ghost's directory may be gone too: it is made for the bind, if its
 * own directory is there.  @dir is cut at its last slash. */
static int ghost_dir_check(struct rst_ctx *c, char *dir, const char *base)
{
	char *slash = strrchr(dir, '/');
	struct stat st;

	if (slash)
		*slash = 0;
	if (!slash || stat(slash == dir ? "/" : dir, &st) || !S_ISDIR(st.st_mode))
		return log_err(c->log, ENOENT, "unix socket %s/.../%s: no such directory", dir,
			       base);
	return 0;
}

/* Before any process exists: a path to bind again is free, or the socket
 * file its killed owner left (which bind_name() unlinks), in a directory
 * that is there. */
static int unix_check(struct rst_ctx *c, const struct rst_file *f)
{
	struct rst_usk *e = usk_by_id(KCSTATE(c, kind_unix), f->f.rdev);
	char path[UNIX_NAME_MAX + 1] = "", *slash;
	struct stat st;

	if (!e || !e->r.name_len || !e->name[0] ||
	    (e->r.state != UNIX_ST_UNCONN && e->r.state != UNIX_ST_LISTEN))
		return 0;
	memcpy(path, e->name, e->r.name_len);
	if (!(e->r.flags & UNIX_GHOST) && !lstat(path, &st) && !S_ISSOCK(st.st_mode))
		return log_err(c->log, EEXIST, "unix socket %s: in the way, not a socket", path);
	slash = strrchr(path, '/');
	*slash = 0;
	if (stat(slash == path ? "/" : path, &st) || !S_ISDIR(st.st_mode))
		return (e->r.flags & UNIX_GHOST) ? ghost_dir_check(c, path, slash + 1) :
		       log_err(c->log, ENOENT, "unix socket %s/%s: no such directory", path,
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
	if (!ut->made && (ret = unix_make_all(c, ut)))
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
