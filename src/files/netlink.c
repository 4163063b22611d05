/* netlink.c - AF_NETLINK sockets (FILE_NETLINK).
 *
 * Checkpoint reads a socket through ckpt's own copy of it (pidfd_getfd)
 * with getsockname, getpeername and getsockopt (protocol, bound portid,
 * connected peer, every group joined, NETLINK_* options, filter), which
 * work for a socket that is not bound too, where netlink_diag lists only
 * bound ones.  Messages waiting to be read are refused, not dropped: the
 * kernel never drops them silently (an overrun is an ENOBUFS the reader
 * gets), and a kernel's message cannot be sent again from userspace with
 * its sender.  So is a pending error (an overrun), which poll() sees
 * without clearing; and so a dump the kernel is still writing, whose
 * replies wait in the queue.
 *
 * Restart makes each socket in ckpt and gives it to its process: bound to
 * its portid (refused if another socket has it now), its groups joined,
 * connected, its options set.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../files.h"
#include "skutil.h"
#include "sockopt.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif
#define MAX_GROUP_WORDS	1024	/* 32768 groups */

static const struct { uint32_t bit; int name; } nl_opts[] = {
	{ NL_OPT_PKTINFO, NETLINK_PKTINFO },
	{ NL_OPT_BROADCAST_ERROR, NETLINK_BROADCAST_ERROR },
	{ NL_OPT_NO_ENOBUFS, NETLINK_NO_ENOBUFS },
	{ NL_OPT_LISTEN_ALL_NSID, NETLINK_LISTEN_ALL_NSID },
	{ NL_OPT_CAP_ACK, NETLINK_CAP_ACK },
	{ NL_OPT_EXT_ACK, NETLINK_EXT_ACK },
	{ NL_OPT_GET_STRICT_CHK, NETLINK_GET_STRICT_CHK },
};
#define NR_NL_OPTS (int)(sizeof(nl_opts) / sizeof(nl_opts[0]))

/* ---- checkpoint ---- */

static bool netlink_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	(void)c;
	return S_ISSOCK(p->st.st_mode) && sock_family_of(p->pid, p->fd) == AF_NETLINK;
}

static int get_addrs(int sk, struct rec_netlink *rn)
{
	struct sockaddr_nl a = { 0 };
	socklen_t len = sizeof(a);
	int ret = sock_get_int(sk, SOL_SOCKET, SO_PROTOCOL, (int *)&rn->protocol);

	if (!ret)
		ret = sock_get_int(sk, SOL_SOCKET, SO_TYPE, (int *)&rn->type);
	if (ret)
		return ret;
	if (getsockname(sk, (void *)&a, &len))
		return -errno;
	rn->portid = a.nl_pid;
	len = sizeof(a);
	if (getpeername(sk, (void *)&a, &len))
		return -errno;
	rn->dst_portid = a.nl_pid;
	rn->dst_group = a.nl_groups ? __builtin_ffs(a.nl_groups) : 0;
	return 0;
}

static int get_opts(int sk, struct rec_netlink *rn)
{
	int ret = 0;

	for (int i = 0; i < NR_NL_OPTS && !ret; i++) {
		int on = 0;

		ret = sock_get_int(sk, SOL_NETLINK, nl_opts[i].name, &on);
		if (ret == -ENOPROTOOPT) {	/* older kernel: cannot be on */
			ret = 0;
			on = 0;
		}
		if (on)
			rn->flags |= nl_opts[i].bit;
	}
	if (!ret)
		ret = sock_get_int(sk, SOL_SOCKET, SO_RCVBUF, (int *)&rn->rcvbuf);
	if (!ret)
		ret = sock_get_int(sk, SOL_SOCKET, SO_SNDBUF, (int *)&rn->sndbuf);
	return ret;
}

/* Every group joined, as u32 words with the trailing empty ones left
 * out: malloc()ed *groups. */
static int get_groups(int sk, struct rec_netlink *rn, uint32_t **groups)
{
	socklen_t len = MAX_GROUP_WORDS * 4;
	uint32_t *g = calloc(MAX_GROUP_WORDS, 4);
	uint32_t n;

	if (!g)
		return -ENOMEM;
	*groups = g;
	if (getsockopt(sk, SOL_NETLINK, NETLINK_LIST_MEMBERSHIPS, g, &len))
		return -errno;
	if (len > MAX_GROUP_WORDS * 4)
		return -E2BIG;
	for (n = len / 4; n && !g[n - 1]; n--)
		;
	rn->nr_groups = n;
	return 0;
}

static int waiting(struct cpt_ctx *c, const struct fd_probe *p, int sk)
{
	struct pollfd pf = { .fd = sk, .events = POLLIN };

	if (poll(&pf, 1, 0) < 0)
		return log_err(c->log, errno, "pid %d fd %d: poll:", p->pid, p->fd);
	if (pf.revents & POLLERR)
		return log_err(c->log, EBUSY,
			       "pid %d fd %d: netlink socket has an error waiting to be read (messages lost to an overrun?); not supported",
			       p->pid, p->fd);
	if (pf.revents & POLLIN)
		return log_err(c->log, EBUSY,
			       "pid %d fd %d: netlink socket has messages waiting to be read (not supported; try again once it has read them)",
			       p->pid, p->fd);
	return 0;
}

static int describe(struct cpt_ctx *c, const struct fd_probe *p, int sk,
		    struct rec_netlink *rn, uint32_t **groups, void **filter)
{
	int ret = sk_netns_ours(sk);

	if (ret == 0)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d fd %d: netlink socket of another network namespace (not supported)",
			       p->pid, p->fd);
	if (ret < 0)
		return log_err(c->log, -ret, "pid %d fd %d: netlink socket's network namespace:",
			       p->pid, p->fd);
	ret = get_addrs(sk, rn);
	if (!ret)
		ret = get_opts(sk, rn);
	if (!ret)
		ret = get_groups(sk, rn, groups);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: reading netlink socket:",
			       p->pid, p->fd);
	ret = skfilter_dump(c->log, p->pid, p->fd, "netlink", sk, filter, &rn->nr_filter);
	return ret ? ret : waiting(c, p, sk);
}

static int netlink_dump(struct cpt_ctx *c, const struct fd_probe *p,
			struct rec_file *f, void **extra, uint32_t *extra_len)
{
	struct rec_netlink rn = { 0 };
	uint32_t *groups = NULL, len;
	void *filter = NULL;
	int sk = sock_copy(p->pid, p->fd), ret;
	char *out;

	(void)f;
	if (sk < 0)
		return log_err(c->log, -sk, "pid %d fd %d: its socket:", p->pid, p->fd);
	ret = describe(c, p, sk, &rn, &groups, &filter);
	close(sk);
	len = sizeof(rn) + rn.nr_groups * 4 + rn.nr_filter * 8;
	out = ret ? NULL : malloc(len);
	if (!ret && !out)
		ret = log_err(c->log, ENOMEM, "netlink socket:");
	if (!ret) {
		memcpy(out, &rn, sizeof(rn));
		memcpy(out + sizeof(rn), groups, rn.nr_groups * 4);
		if (rn.nr_filter)
			memcpy(out + sizeof(rn) + rn.nr_groups * 4, filter, rn.nr_filter * 8);
		*extra = out;
		*extra_len = len;
	}
	free(groups);
	free(filter);
	return ret;
}

/* ---- restart ---- */

static bool netlink_ok(const struct rec_netlink *rn, uint32_t extra_len)
{
	return rn->protocol < 32 && (rn->type == SOCK_RAW || rn->type == SOCK_DGRAM) &&
	       rn->dst_group <= 32 && !(rn->flags & ~NL_OPT_ALL) &&
	       rn->nr_groups <= MAX_GROUP_WORDS && rn->nr_filter <= SKFILTER_MAX &&
	       rn->rcvbuf <= INT_MAX && rn->sndbuf <= INT_MAX &&
	       (!(rn->dst_portid || rn->dst_group) || rn->portid) &&
	       extra_len == sizeof(*rn) + rn->nr_groups * 4 + rn->nr_filter * 8;
}

static int netlink_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_netlink *rn;

	if (f->f.extra_len < sizeof(*rn) || strncmp(f->path, "socket:", 7))
		return log_err(c->log, EBADMSG, "FILE %u: bad netlink socket", f->f.id);
	rn = malloc(f->f.extra_len);	/* aligned, groups and filter with it */
	if (!rn)
		return log_err(c->log, ENOMEM, "netlink socket:");
	memcpy(rn, f->extra, f->f.extra_len);
	f->priv = rn;
	if (!netlink_ok(rn, f->f.extra_len))
		return log_err(c->log, EBADMSG, "FILE %u: bad netlink socket", f->f.id);
	return 0;
}

static void netlink_free(struct rst_file *f)
{
	free(f->priv);
}

static int join_groups(int sk, const struct rec_netlink *rn)
{
	const uint32_t *g = (const uint32_t *)(rn + 1);
	int ret = 0;

	for (uint32_t i = 0; i < rn->nr_groups * 32 && !ret; i++)
		if (g[i / 32] & (1u << (i % 32)))
			ret = sock_set_int(sk, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, i + 1);
	return ret;
}

static int set_opts(int sk, const struct rec_netlink *rn)
{
	int ret = 0;

	for (int i = 0; i < NR_NL_OPTS && !ret; i++)
		if (rn->flags & nl_opts[i].bit)
			ret = sock_set_int(sk, SOL_NETLINK, nl_opts[i].name, 1);
	return ret;
}

/* The socket built in order; *what names the step that failed. */
static int build(int sk, const struct rec_netlink *rn, const char **what)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = rn->portid };
	int ret = 0;

	*what = "binding it to its portid";
	if (rn->portid && bind(sk, (void *)&a, sizeof(a)))
		ret = -errno;
	if (!ret && (*what = "joining its groups"))
		ret = join_groups(sk, rn);
	a.nl_pid = rn->dst_portid;
	a.nl_groups = rn->dst_group ? 1u << (rn->dst_group - 1) : 0;
	if (!ret && (rn->dst_portid || rn->dst_group) && (*what = "connecting it") &&
	    connect(sk, (void *)&a, sizeof(a)))
		ret = -errno;
	if (!ret && (*what = "its options"))
		ret = set_opts(sk, rn);
	if (!ret && (*what = "its filter"))
		ret = skfilter_set(sk, (const char *)(rn + 1) + rn->nr_groups * 4,
				   rn->nr_filter);
	if (!ret && (*what = "its buffer sizes"))
		ret = sk_bufs_set(sk, rn->rcvbuf, rn->sndbuf);
	return ret;
}

static int netlink_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
			long *fd)
{
	const struct rec_netlink *rn = f->priv;
	const char *what = "making it";
	int sk = socket(AF_NETLINK, rn->type | SOCK_CLOEXEC, rn->protocol), ret;

	ret = sk < 0 ? -errno : build(sk, rn, &what);
	if (!ret && (what = "its file flags") &&
	    fcntl(sk, F_SETFL, f->f.flags & ~O_ACCMODE))
		ret = -errno;
	if (!ret)
		ret = files_give(t, sk, fd);
	if (sk >= 0)
		close(sk);
	if (ret == -EADDRINUSE)
		return log_err(c->log, EADDRINUSE,
			       "pid %d: restoring netlink socket %s (protocol %u): its portid %u is taken by another socket",
			       t->pid, f->path, rn->protocol, rn->portid);
	if (ret)
		return log_err(c->log, -ret, "pid %d: restoring netlink socket %s (protocol %u), %s:",
			       t->pid, f->path, rn->protocol, what);
	return 0;
}

static void netlink_show(struct info_out *o, const struct rec_file *f,
			 const void *extra, uint32_t extra_len)
{
	struct rec_netlink rn;
	uint32_t g;

	(void)f;
	if (extra_len < sizeof(rn))
		return;
	memcpy(&rn, extra, sizeof(rn));
	info_u64(o, "protocol", rn.protocol);
	info_u64(o, "portid", rn.portid);
	if (rn.dst_portid || rn.dst_group) {
		info_u64(o, "dst_portid", rn.dst_portid);
		info_u64(o, "dst_group", rn.dst_group);
	}
	if (rn.nr_groups && extra_len >= sizeof(rn) + 4) {
		memcpy(&g, (const char *)extra + sizeof(rn), 4);
		info_hex(o, "groups", g);
	}
	if (rn.flags)
		info_hex(o, "options", rn.flags);
	if (rn.nr_filter)
		info_u64(o, "filter", rn.nr_filter);
}

const struct file_ops file_netlink = {
	.kind = FILE_NETLINK,
	.name = "netlink",
	.match = netlink_match,
	.dump = netlink_dump,
	.load = netlink_load,
	.open = netlink_open,
	.free = netlink_free,
	.show = netlink_show,
};
