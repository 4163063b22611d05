/* packet.c - AF_PACKET sockets (FILE_PACKET): SOCK_RAW, SOCK_DGRAM and
 * the old SOCK_PACKET.
 *
 * Checkpoint reads a socket through ckpt's own copy of it (pidfd_getfd):
 * packet_diag (sock_diag) gives what no getsockopt does, the bound
 * interface, the memberships, the rings' geometry, PACKET_COPY_THRESH;
 * getsockopt the rest.  Packets waiting in its receive queue or in its
 * RX ring are not kept: a packet socket gets no promise of delivery, and
 * the kernel drops what arrives whenever the queue or ring is full, so a
 * restart drops them as an overrun would.  Frames a program has put in
 * its TX ring and asked to be sent are not dropped: such a socket is
 * refused.
 *
 * Restart makes each socket in ckpt and gives it to its process: options
 * that must come before the rings, the rings, bind, the other options,
 * memberships, fanout group, filter.  An area that mapped the rings
 * (VMA_PACKET, mm) is mapped again from the new socket, at the same
 * address: packet_map_ref() and packet_map_check() are mm's questions.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/if_packet.h>
#include <linux/packet_diag.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../files.h"
#include "packet.h"
#include "skutil.h"
#include "sockdiag.h"
#include "sockopt.h"

#ifndef PACKET_VNET_HDR_SZ
#define PACKET_VNET_HDR_SZ	24
#endif
#define MAX_MC		1024
#define MAX_RING	(1ULL << 34)	/* bytes of one ring */

struct opt_def {
	int name;		/* SOL_PACKET option */
	int max;
	bool before_ring;	/* the kernel refuses it once a ring is set */
};

static const struct opt_def opt_defs[PACKET_NR_OPTS] = {
	[PACKET_OPT_VERSION] = { PACKET_VERSION, TPACKET_V3, true },
	[PACKET_OPT_RESERVE] = { PACKET_RESERVE, INT_MAX / 2, true },
	[PACKET_OPT_AUXDATA] = { PACKET_AUXDATA, 1 },
	[PACKET_OPT_ORIGDEV] = { PACKET_ORIGDEV, 1 },
	[PACKET_OPT_VNET_HDR] = { PACKET_VNET_HDR_SZ, 20, true },
	[PACKET_OPT_LOSS] = { PACKET_LOSS, 1, true },
	[PACKET_OPT_TIMESTAMP] = { PACKET_TIMESTAMP, INT_MAX },
	[PACKET_OPT_TX_HAS_OFF] = { PACKET_TX_HAS_OFF, 1, true },
	[PACKET_OPT_QDISC_BYPASS] = { PACKET_QDISC_BYPASS, 1 },
	[PACKET_OPT_IGNORE_OUTGOING] = { PACKET_IGNORE_OUTGOING, 1 },
	[PACKET_OPT_COPY_THRESH] = { PACKET_COPY_THRESH, INT_MAX },
};

static uint64_t ring_bytes(const struct rec_packet_ring *r)
{
	return (uint64_t)r->block_size * r->block_nr;
}

/* ---- checkpoint ---- */

static bool packet_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	(void)c;
	return S_ISSOCK(p->st.st_mode) && sock_family_of(p->pid, p->fd) == AF_PACKET;
}

/* What packet_diag says of one socket. */
struct pk_diag {
	uint32_t ino;
	bool found;
	int err;
	struct rec_packet *rp;
	struct rec_packet_mc *mc;	/* malloc()ed */
};

static void ring_in(struct rec_packet_ring *r, const struct sockdiag_attrs *a,
		    int type)
{
	struct packet_diag_ring d = { 0 };

	if (!a->data[type])
		return;
	memcpy(&d, a->data[type], a->len[type] < sizeof(d) ? a->len[type] : sizeof(d));
	*r = (struct rec_packet_ring){ d.pdr_block_size, d.pdr_block_nr,
		d.pdr_frame_size, d.pdr_frame_nr, d.pdr_retire_tmo,
		d.pdr_sizeof_priv, d.pdr_features, 0 };
}

static int mc_in(struct pk_diag *d, const struct sockdiag_attrs *a)
{
	const struct packet_diag_mclist *m = a->data[PACKET_DIAG_MCLIST];
	uint32_t n = a->len[PACKET_DIAG_MCLIST] / sizeof(*m);

	if (!m || !n)
		return 0;
	if (n > MAX_MC)
		return -E2BIG;
	d->mc = calloc(n, sizeof(*d->mc));
	if (!d->mc)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct packet_diag_mclist e;

		memcpy(&e, m + i, sizeof(e));
		if (e.pdmc_alen > sizeof(e.pdmc_addr))
			return -EBADMSG;
		d->mc[i].ifindex = e.pdmc_index;
		d->mc[i].type = e.pdmc_type;
		d->mc[i].alen = e.pdmc_alen;
		d->mc[i].count = e.pdmc_count;
		memcpy(d->mc[i].addr, e.pdmc_addr, e.pdmc_alen);
	}
	d->rp->nr_mc = n;
	return 0;
}

static int diag_one(void *arg, const void *msg, uint32_t len)
{
	const struct packet_diag_msg *m = msg;
	struct pk_diag *d = arg;
	struct rec_packet *rp = d->rp;
	struct packet_diag_info info;
	struct sockdiag_attrs a;

	if (len < sizeof(*m) || m->pdiag_ino != d->ino || d->found)
		return 0;
	d->found = true;
	if (sockdiag_attrs(msg, len, sizeof(*m), &a) || !a.data[PACKET_DIAG_INFO] ||
	    a.len[PACKET_DIAG_INFO] < sizeof(info)) {
		d->err = -EBADMSG;
		return 0;
	}
	memcpy(&info, a.data[PACKET_DIAG_INFO], sizeof(info));
	rp->type = m->pdiag_type;
	rp->protocol = htons(m->pdiag_num);	/* diag gives host order */
	rp->ifindex = info.pdi_index;
	rp->opt[PACKET_OPT_COPY_THRESH] = info.pdi_copy_thresh;
	ring_in(&rp->rx, &a, PACKET_DIAG_RX_RING);
	ring_in(&rp->tx, &a, PACKET_DIAG_TX_RING);
	d->err = mc_in(d, &a);
	return 0;
}

static int diag_find(uint32_t ino, struct rec_packet *rp,
		     struct rec_packet_mc **mc)
{
	struct packet_diag_req req = {
		.sdiag_family = AF_PACKET, .pdiag_ino = ino,
		.pdiag_show = PACKET_SHOW_INFO | PACKET_SHOW_MCLIST |
			      PACKET_SHOW_RING_CFG,
	};
	struct pk_diag d = { .ino = ino, .rp = rp };
	int ret = sockdiag_dump(&req, sizeof(req), diag_one, &d);

	if (!ret)
		ret = d.err ? d.err : !d.found ? -ENOENT : 0;
	if (ret)
		free(d.mc);
	else if (mc)
		*mc = d.mc;
	else
		free(d.mc);
	return ret;
}

/* The SOL_PACKET options a SOCK_PACKET socket has none of. */
static int get_opts(int sk, struct rec_packet *rp)
{
	int ret = 0;

	/* packet_diag leaves out the group's flags */
	ret = sock_get_int(sk, SOL_PACKET, PACKET_FANOUT, (int *)&rp->fanout);
	for (int i = 0; i < PACKET_NR_OPTS && !ret; i++) {
		if (i == PACKET_OPT_COPY_THRESH)
			continue;	/* no getsockopt: packet_diag's */
		ret = sock_get_int(sk, SOL_PACKET, opt_defs[i].name, &rp->opt[i]);
		if (ret == -ENOPROTOOPT && i == PACKET_OPT_VNET_HDR) {
			/* before Linux 6.2: only the 10-byte header */
			ret = sock_get_int(sk, SOL_PACKET, PACKET_VNET_HDR, &rp->opt[i]);
			rp->opt[i] *= 10;
		}
	}
	return ret;
}

/* A TX frame's status word is its first: TP_STATUS_SEND_REQUEST or
 * SENDING means the program handed it to the kernel, which has not sent
 * it yet.  ckpt maps the ring itself to look (a mapping of its own, read
 * only: nothing of the program's changes). */
static int tx_pending(int sk, const struct rec_packet *rp, uint32_t *n)
{
	uint64_t rx = ring_bytes(&rp->rx), tx = ring_bytes(&rp->tx);
	uint32_t per_block;
	char *m;

	*n = 0;
	if (!tx || !rp->tx.frame_size || !(per_block = rp->tx.block_size / rp->tx.frame_size))
		return 0;
	m = mmap(NULL, rx + tx, PROT_READ, MAP_SHARED, sk, 0);
	if (m == MAP_FAILED)
		return -errno;
	for (uint32_t i = 0; i < rp->tx.frame_nr; i++) {
		uint64_t at = rx + (uint64_t)(i / per_block) * rp->tx.block_size +
			      (uint64_t)(i % per_block) * rp->tx.frame_size;
		uint32_t st = *(volatile uint32_t *)(m + at);

		if (st & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING))
			(*n)++;
	}
	munmap(m, rx + tx);
	return 0;
}

/* What the kernel cannot give back, or this code cannot make again. */
static int refusal(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		   const struct rec_packet *rp)
{
	uint32_t type = (rp->fanout >> 16) & 0xff, pending;
	int ret;

	if (type == PACKET_FANOUT_CBPF || type == PACKET_FANOUT_EBPF)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: packet socket in a fanout group steered by a BPF program (not supported)",
			       p->pid, p->fd);
	ret = tx_pending(sk, rp, &pending);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: reading the packet socket's TX ring:",
			       p->pid, p->fd);
	if (pending)
		return log_err(c->log, EBUSY,
			       "pid %d fd %d: packet socket has %u frames in its TX ring waiting to be sent; try again",
			       p->pid, p->fd, pending);
	return 0;
}

static int describe(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    struct rec_packet *rp, struct rec_packet_mc **mc,
		    void **filter)
{
	int ret = sk_netns_ours(sk);

	if (ret == 0)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: packet socket of another network namespace (not supported)",
			       p->pid, p->fd);
	if (ret < 0)
		return log_err(c->log, -ret, "pid %d fd %d: packet socket's network namespace:",
			       p->pid, p->fd);
	ret = diag_find(p->st.st_ino, rp, mc);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: packet socket, by packet_diag:",
			       p->pid, p->fd);
	if (rp->type != SOCK_PACKET)
		ret = get_opts(sk, rp);
	else
		rp->opt[PACKET_OPT_COPY_THRESH] = 0;	/* no setsockopt */
	if (!ret)
		ret = sock_get_int(sk, SOL_SOCKET, SO_RCVBUF, (int *)&rp->rcvbuf);
	if (!ret)
		ret = sock_get_int(sk, SOL_SOCKET, SO_SNDBUF, (int *)&rp->sndbuf);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: packet socket options:",
			       p->pid, p->fd);
	ret = skfilter_dump(c->log, p->pid, p->fd, "packet", sk, filter, &rp->nr_filter);
	return ret ? ret : refusal(c, p, sk, rp);
}

static int packet_dump(struct cpt_ctx *c, const struct fd_probe *p,
		       struct rec_file *f, void **extra, uint32_t *extra_len)
{
	struct rec_packet rp = { 0 };
	struct rec_packet_mc *mc = NULL;
	void *filter = NULL;
	int sk = sock_copy(p->pid, p->fd), ret;
	uint32_t len;
	char *out;

	(void)f;
	if (sk < 0)
		return log_err(c->log, -sk, "pid %d fd %d: its socket:", p->pid, p->fd);
	ret = describe(c, p, sk, &rp, &mc, &filter);
	close(sk);
	len = sizeof(rp) + rp.nr_mc * sizeof(*mc) + rp.nr_filter * 8;
	out = ret ? NULL : malloc(len);
	if (!ret && !out)
		ret = log_err(c->log, ENOMEM, "packet socket:");
	if (!ret) {
		memcpy(out, &rp, sizeof(rp));
		if (rp.nr_mc)
			memcpy(out + sizeof(rp), mc, rp.nr_mc * sizeof(*mc));
		if (rp.nr_filter)
			memcpy(out + sizeof(rp) + rp.nr_mc * sizeof(*mc), filter,
			       rp.nr_filter * 8);
		*extra = out;
		*extra_len = len;
	}
	free(mc);
	free(filter);
	return ret;
}

/* The fd of @pid on the socket @link names, -1 if none. */
static int fd_of_link(pid_t pid, const char *link)
{
	char path[300], buf[64];
	struct dirent *e;
	int found = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	while (d && found < 0 && (e = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, e->d_name);
		n = readlink(path, buf, sizeof(buf) - 1);
		if (n > 0 && (buf[n] = 0, !strcmp(buf, link)))
			found = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

int packet_map_ref(struct cpt_ctx *c, pid_t pid, const char *link,
		   uint64_t start, uint64_t len, uint64_t pgoff, uint32_t *id)
{
	struct rec_packet rp = { 0 };
	unsigned int ino = 0;
	int fd = fd_of_link(pid, link), ret;

	if (fd < 0 || !(*id = files_known(c, pid, fd)))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: area 0x%llx maps %s, which it holds at no fd saved (not supported)",
			       pid, (unsigned long long)start, link);
	if (sock_family_of(pid, fd) != AF_PACKET)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: area 0x%llx maps %s, not a packet socket's rings (not supported)",
			       pid, (unsigned long long)start, link);
	sscanf(link, "socket:[%u]", &ino);
	ret = diag_find(ino, &rp, NULL);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: packet socket, by packet_diag:",
			       pid, fd);
	/* the kernel maps a ring only whole, from its start */
	if (pgoff || len != ring_bytes(&rp.rx) + ring_bytes(&rp.tx))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: area 0x%llx maps part of the rings of packet socket fd %d (not supported)",
			       pid, (unsigned long long)start, fd);
	return 0;
}

/* ---- restart ---- */

struct pk_rst {
	struct rec_packet rp;
	const struct rec_packet_mc *mc;
	const void *filter;
};

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static bool ring_ok(const struct rec_packet_ring *r, int version)
{
	if (!r->block_nr)
		return zero(r, sizeof(*r));
	if (r->reserved || !r->block_size || r->block_size % 4096 ||
	    r->frame_size < TPACKET_ALIGNMENT || r->frame_size % TPACKET_ALIGNMENT ||
	    r->frame_size > r->block_size || ring_bytes(r) > MAX_RING ||
	    r->frame_nr != (uint64_t)r->block_nr * (r->block_size / r->frame_size))
		return false;
	return version == TPACKET_V3 ||
	       (!r->retire_tmo && !r->sizeof_priv && !r->features);
}

static bool mc_ok(const struct rec_packet_mc *m)
{
	return m->ifindex > 0 && m->type <= PACKET_MR_UNICAST &&
	       m->alen <= sizeof(m->addr) && m->count >= 1 && m->count <= 65535 &&
	       !m->reserved && zero(m->addr + m->alen, sizeof(m->addr) - m->alen);
}

static bool opts_ok(const struct rec_packet *rp)
{
	for (int i = 0; i < PACKET_OPT_SLOTS; i++) {
		int max = i < PACKET_NR_OPTS ? opt_defs[i].max : 0;

		if (rp->opt[i] < 0 || rp->opt[i] > max ||
		    (rp->type == SOCK_PACKET && rp->opt[i]))
			return false;
	}
	return rp->opt[PACKET_OPT_VNET_HDR] == 0 || rp->opt[PACKET_OPT_VNET_HDR] == 10 ||
	       rp->opt[PACKET_OPT_VNET_HDR] == 12 || rp->opt[PACKET_OPT_VNET_HDR] == 20;
}

static bool fanout_ok(const struct rec_packet *rp)
{
	uint32_t type = (rp->fanout >> 16) & 0xff, flags = rp->fanout >> 24;

	return !rp->fanout ||
	       (rp->type != SOCK_PACKET && rp->protocol && type <= PACKET_FANOUT_QM &&
		!(flags & ~((PACKET_FANOUT_FLAG_ROLLOVER | PACKET_FANOUT_FLAG_UNIQUEID |
			     PACKET_FANOUT_FLAG_DEFRAG) >> 8)));
}

static bool packet_ok(const struct rec_packet *rp, uint32_t extra_len)
{
	if ((rp->type != SOCK_RAW && rp->type != SOCK_DGRAM && rp->type != SOCK_PACKET) ||
	    rp->ifindex < 0 || rp->reserved || rp->nr_mc > MAX_MC ||
	    rp->nr_filter > SKFILTER_MAX || rp->rcvbuf > INT_MAX || rp->sndbuf > INT_MAX ||
	    extra_len != sizeof(*rp) + rp->nr_mc * sizeof(struct rec_packet_mc) +
			 rp->nr_filter * 8)
		return false;
	if (rp->type == SOCK_PACKET && (rp->rx.block_nr || rp->tx.block_nr || rp->nr_mc))
		return false;
	return opts_ok(rp) && fanout_ok(rp) &&
	       ring_ok(&rp->rx, rp->opt[PACKET_OPT_VERSION]) &&
	       ring_ok(&rp->tx, rp->opt[PACKET_OPT_VERSION]);
}

static int packet_load(struct rst_ctx *c, struct rst_file *f)
{
	struct pk_rst *r;
	const char *x = f->extra;

	if (f->f.extra_len < sizeof(r->rp) || strncmp(f->path, "socket:", 7))
		return log_err(c->log, EBADMSG, "FILE %u: bad packet socket", f->f.id);
	r = calloc(1, sizeof(*r));
	if (!r)
		return log_err(c->log, ENOMEM, "packet socket:");
	f->priv = r;
	memcpy(&r->rp, x, sizeof(r->rp));
	if (!packet_ok(&r->rp, f->f.extra_len))
		return log_err(c->log, EBADMSG, "FILE %u: bad packet socket", f->f.id);
	r->mc = malloc(r->rp.nr_mc * sizeof(*r->mc) + 1);	/* aligned */
	r->filter = malloc(r->rp.nr_filter * 8 + 1);
	if (!r->mc || !r->filter)
		return log_err(c->log, ENOMEM, "packet socket:");
	memcpy((void *)r->mc, x + sizeof(r->rp), r->rp.nr_mc * sizeof(*r->mc));
	memcpy((void *)r->filter, x + sizeof(r->rp) + r->rp.nr_mc * sizeof(*r->mc),
	       r->rp.nr_filter * 8);
	for (uint32_t i = 0; i < r->rp.nr_mc; i++)
		if (!mc_ok(&r->mc[i]))
			return log_err(c->log, EBADMSG, "FILE %u: bad packet socket membership %u",
				       f->f.id, i);
	return 0;
}

static void packet_free(struct rst_file *f)
{
	struct pk_rst *r = f->priv;

	if (!r)
		return;
	free((void *)r->mc);
	free((void *)r->filter);
	free(r);
}

int packet_map_check(struct rst_ctx *c, struct rst_task *t, uint32_t id,
		     uint64_t len, uint64_t pgoff)
{
	const struct rst_file *f = files_by_id(c, id);
	const struct pk_rst *r = f && f->f.kind == FILE_PACKET ? f->priv : NULL;

	if (!r || files_fd_of(c, t, id) < 0 || pgoff ||
	    len != ring_bytes(&r->rp.rx) + ring_bytes(&r->rp.tx))
		return log_err(c->log, EBADMSG,
			       "pid %d: an area maps packet socket FILE %u, which it has no fd of, or not its rings",
			       t->pid, id);
	return 0;
}

/* Options a new socket has as saved are left alone. */
static int set_opt(int sk, const struct rec_packet *rp, int i)
{
	int name = opt_defs[i].name, now = 0, ret;

	if (i == PACKET_OPT_COPY_THRESH)	/* no getsockopt */
		return rp->opt[i] ? sock_set_int(sk, SOL_PACKET, name, rp->opt[i]) : 0;
	ret = sock_get_int(sk, SOL_PACKET, name, &now);
	if (ret == -ENOPROTOOPT && i == PACKET_OPT_VNET_HDR)	/* before 6.2 */
		return rp->opt[i] == 10 ? sock_set_int(sk, SOL_PACKET, PACKET_VNET_HDR, 1) :
		       rp->opt[i] ? -EOPNOTSUPP : 0;
	if (ret || now == rp->opt[i])
		return ret;
	return sock_set_int(sk, SOL_PACKET, name, rp->opt[i]);
}

static int set_ring(int sk, int name, const struct rec_packet_ring *r)
{
	struct tpacket_req3 q = { r->block_size, r->block_nr, r->frame_size,
				  r->frame_nr, r->retire_tmo, r->sizeof_priv,
				  r->features };

	if (!r->block_nr)
		return 0;
	return setsockopt(sk, SOL_PACKET, name, &q, sizeof(q)) ? -errno : 0;
}

static int do_bind(int sk, const struct rec_packet *rp)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_ifindex = rp->ifindex };
	struct sockaddr sa = { .sa_family = AF_PACKET };
	char name[IF_NAMESIZE];

	if (!rp->ifindex)
		return 0;
	if (rp->type != SOCK_PACKET)	/* protocol 0: the socket's own */
		return bind(sk, (void *)&ll, sizeof(ll)) ? -errno : 0;
	/* SOCK_PACKET binds by the interface's name, which sa_data holds
	 * without its NUL if it must */
	if (!if_indextoname(rp->ifindex, name))
		return -errno;
	if (strlen(name) > sizeof(sa.sa_data))
		return -ENAMETOOLONG;
	memcpy(sa.sa_data, name, strlen(name));
	return bind(sk, &sa, sizeof(sa)) ? -errno : 0;
}

static int add_mc(int sk, const struct rec_packet_mc *m)
{
	struct {
		struct packet_mreq q;
		uint8_t more[32 - 8];
	} r = { { m->ifindex, m->type, m->alen, { 0 } }, { 0 } };
	int ret = 0;

	memcpy(r.q.mr_address, m->addr, m->alen);
	for (uint32_t i = 0; i < m->count && !ret; i++)
		if (setsockopt(sk, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &r, sizeof(r)))
			ret = -errno;
	return ret;
}

/* The socket built in order; *what names the step that failed. */
static int build(int sk, const struct pk_rst *r, const char **what)
{
	const struct rec_packet *rp = &r->rp;
	int ret = 0;

	*what = "an option";
	for (int i = 0; i < PACKET_NR_OPTS && !ret; i++)
		if (opt_defs[i].before_ring && rp->type != SOCK_PACKET)
			ret = set_opt(sk, rp, i);
	if (!ret && (*what = "its RX ring"))
		ret = set_ring(sk, PACKET_RX_RING, &rp->rx);
	if (!ret && (*what = "its TX ring"))
		ret = set_ring(sk, PACKET_TX_RING, &rp->tx);
	if (!ret && (*what = "binding it to its interface"))
		ret = do_bind(sk, rp);
	if (!ret)
		*what = "an option";
	for (int i = 0; i < PACKET_NR_OPTS && !ret; i++)
		if (!opt_defs[i].before_ring && rp->type != SOCK_PACKET)
			ret = set_opt(sk, rp, i);
	if (!ret && (*what = "a membership"))
		for (uint32_t i = 0; i < rp->nr_mc && !ret; i++)
			ret = add_mc(sk, &r->mc[i]);
	/* a unique id is the kernel's choice: the group is joined by the
	 * id it got, without the flag */
	if (!ret && rp->fanout && (*what = "joining its fanout group"))
		ret = sock_set_int(sk, SOL_PACKET, PACKET_FANOUT,
				   rp->fanout & ~(PACKET_FANOUT_FLAG_UNIQUEID << 16));
	if (!ret && (*what = "its filter"))
		ret = skfilter_set(sk, r->filter, rp->nr_filter);
	if (!ret && (*what = "its buffer sizes"))
		ret = sk_bufs_set(sk, rp->rcvbuf, rp->sndbuf);
	return ret;
}

static int packet_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		       long *fd)
{
	const struct pk_rst *r = f->priv;
	const char *what = "making it";
	int sk = socket(AF_PACKET, r->rp.type | SOCK_CLOEXEC, r->rp.protocol), ret;

	ret = sk < 0 ? -errno : build(sk, r, &what);
	if (!ret && (what = "its file flags") &&
	    fcntl(sk, F_SETFL, f->f.flags & ~O_ACCMODE))
		ret = -errno;
	if (!ret)
		ret = files_give(t, sk, fd);
	if (sk >= 0)
		close(sk);
	if (ret)
		return log_err(c->log, -ret, "pid %d: restoring packet socket %s, %s:",
			       t->pid, f->path, what);
	return 0;
}

static void packet_show(struct info_out *o, const struct rec_file *f,
			const void *extra, uint32_t extra_len)
{
	struct rec_packet rp;

	(void)f;
	if (extra_len < sizeof(rp))
		return;
	memcpy(&rp, extra, sizeof(rp));
	info_str(o, "type", rp.type == SOCK_RAW ? "raw" : rp.type == SOCK_DGRAM ? "dgram" :
			    rp.type == SOCK_PACKET ? "packet" : "?");
	info_hex(o, "protocol", ntohs(rp.protocol));
	info_u64(o, "ifindex", rp.ifindex);
	info_u64(o, "version", rp.opt[PACKET_OPT_VERSION] + 1);
	if (rp.fanout)
		info_hex(o, "fanout", rp.fanout);
	if (rp.rx.block_nr)
		info_u64(o, "rx_ring", ring_bytes(&rp.rx));
	if (rp.tx.block_nr)
		info_u64(o, "tx_ring", ring_bytes(&rp.tx));
	info_u64(o, "memberships", rp.nr_mc);
	if (rp.nr_filter)
		info_u64(o, "filter", rp.nr_filter);
}

const struct file_ops file_packet = {
	.kind = FILE_PACKET,
	.name = "packet",
	.match = packet_match,
	.dump = packet_dump,
	.load = packet_load,
	.open = packet_open,
	.free = packet_free,
	.show = packet_show,
};
