/* unix_graph.c - every unix socket and who holds it, at checkpoint.
 *
 * sock_diag (unix_diag) tells every socket's inode, type, state, peer,
 * name, queues and a listener's backlog (the inodes of the clients
 * waiting in it); the tree's fds tell which sockets are ours and their
 * first holder.  unix.c writes the records from this graph.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sockdiag.h"
#include "unix.h"

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
		s->name_len = a.len[UNIX_DIAG_NAME] < (uint32_t)UNIX_NAME_MAX ?
			      (int)a.len[UNIX_DIAG_NAME] : UNIX_NAME_MAX;
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

struct usk *usk_find(struct unix_cpt *u, uint64_t ino)
{
	struct usk key = { .ino = ino };

	return ino && u->n ? bsearch(&key, u->s, u->n, sizeof(key), ino_cmp) : NULL;
}

void unix_dump_free(struct cpt_ctx *c, void *state)
{
	struct unix_cpt *u = state;

	for (size_t i = 0; i < u->n; i++) {
		free(u->s[i].icons);
		usk_queue_free(&u->s[i].q);
	}
	free(u->s);
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

int unix_scan(struct cpt_ctx *c)
{
	struct unix_diag_req req = {
		.sdiag_family = AF_UNIX,
		.udiag_states = ~0U,
		.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_PEER |
			      UDIAG_SHOW_ICONS | UDIAG_SHOW_RQLEN,	/* shutdown: always */
	};
	struct unix_cpt *u = kind_dump_state(c, &kind_unix);
	int ret;

	u->scanned = true;
	ret = sockdiag_dump(&req, sizeof(req), diag_one, u);
	if (ret) {
		u->n = 0;	/* knows none, rather than some unsorted */
		return log_err(c->log, -ret, "sock_diag of unix sockets:");
	}
	if (u->n)	/* none in this network namespace: u->s is NULL */
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
bool unix_peer_gone(const struct usk *s)
{
	return s->has_peer && !s->peer_ino && !s->listener &&
	       (s->type == SOCK_DGRAM || s->shutdown == 3);
}

/* Connected to a socket that is neither in the tree nor gone. */
bool unix_peer_outside(struct unix_cpt *u, const struct usk *s)
{
	struct usk *p = usk_find(u, s->peer_ino);

	return s->kstate == K_ESTABLISHED && s->has_peer && !s->listener && !unix_peer_gone(s) &&
	       !(p && p->pid);
}
