/* sockdiag.c - a sock_diag dump over NETLINK_SOCK_DIAG (sockdiag.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sockdiag.h"

#define BUF_LEN (64 * 1024)

static int send_req(int s, const void *req, size_t req_len)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct nlmsghdr h = {
		.nlmsg_len = NLMSG_LENGTH(req_len),
		.nlmsg_type = SOCK_DIAG_BY_FAMILY,
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.nlmsg_seq = 1,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)req, req_len } };
	struct msghdr m = { .msg_name = &nl, .msg_namelen = sizeof(nl),
			    .msg_iov = iov, .msg_iovlen = 2 };

	return sendmsg(s, &m, 0) < 0 ? -errno : 0;
}

/* One datagram of replies: 1 when the dump is done, 0 for more. */
static int walk(char *buf, ssize_t n, int (*cb)(void *, const void *, uint32_t),
		void *arg)
{
	struct nlmsghdr *h;
	int len = n;

	for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		int ret;

		if (h->nlmsg_type == NLMSG_DONE)
			return 1;
		if (h->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(h);

			return h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) || !e->error ?
			       -EBADMSG : e->error;
		}
		ret = cb(arg, NLMSG_DATA(h), h->nlmsg_len - NLMSG_LENGTH(0));
		if (ret)
			return ret < 0 ? ret : -ret;
	}
	return 0;
}

int sockdiag_dump(const void *req, size_t req_len,
		  int (*cb)(void *arg, const void *msg, uint32_t len), void *arg)
{
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	char *buf = malloc(BUF_LEN);
	int ret = s < 0 || !buf ? -(errno ? errno : ENOMEM) : send_req(s, req, req_len);

	while (!ret) {
		ssize_t n = recv(s, buf, BUF_LEN, 0);

		ret = n < 0 ? -errno : n == 0 ? -EBADMSG : walk(buf, n, cb, arg);
	}
	free(buf);
	if (s >= 0)
		close(s);
	return ret == 1 ? 0 : ret;
}

int sockdiag_attrs(const void *msg, uint32_t len, uint32_t hdr,
		   struct sockdiag_attrs *a)
{
	const char *p = (const char *)msg + NLMSG_ALIGN(hdr);
	int left = (int)len - (int)NLMSG_ALIGN(hdr);

	memset(a, 0, sizeof(*a));
	if (len < hdr)
		return -EBADMSG;
	while (left >= (int)sizeof(struct nlattr)) {
		const struct nlattr *at = (const struct nlattr *)p;
		int type = at->nla_type & NLA_TYPE_MASK;

		if (at->nla_len < sizeof(*at) || at->nla_len > left)
			return -EBADMSG;
		if (type < SOCKDIAG_MAX_ATTR) {
			a->data[type] = p + NLA_HDRLEN;
			a->len[type] = at->nla_len - NLA_HDRLEN;
		}
		p += NLA_ALIGN(at->nla_len);
		left -= NLA_ALIGN(at->nla_len);
	}
	return 0;
}
