/* netns_nl.c - the netns kind's rtnetlink: requests built in one buffer,
 * answers and dumps read back, attributes parsed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netns.h"

#define NL_BUF	(64 << 10)

int nl_open_proto(struct nl *nl, int proto)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (nl->fd < 0)
		return -errno;
	/* a dump filtered as asked (by family) */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	nl->cap = NL_BUF;
	nl->buf = malloc(nl->cap);
	if (!nl->buf || bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = nl->buf ? errno : ENOMEM;

		nl_close(nl);
		return -err;
	}
	return 0;
}

int nl_open(struct netns_io *io, struct nl *nl)
{
	int ret = nl_open_proto(nl, NETLINK_ROUTE);

	return ret ? log_err(io->log, -ret, "pid %d: rtnetlink socket:", io->pid) : 0;
}

void nl_close(struct nl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	free(nl->buf);
	nl->fd = -1;
	nl->buf = NULL;
}

void *nl_req(struct nl *nl, uint16_t type, uint16_t flags, size_t hlen)
{
	struct nlmsghdr *h = (struct nlmsghdr *)nl->buf;

	memset(nl->buf, 0, NLMSG_SPACE(hlen));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = ++nl->seq;
	h->nlmsg_len = NLMSG_LENGTH(hlen);
	nl->len = NLMSG_SPACE(hlen);
	return NLMSG_DATA(h);
}

int nl_put(struct nl *nl, uint16_t type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(nl->buf + nl->len);

	if (nl->len + RTA_SPACE(len) > nl->cap)
		return -EMSGSIZE;
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	memset((char *)RTA_DATA(a) + len, 0, RTA_SPACE(len) - RTA_LENGTH(len));
	nl->len += RTA_SPACE(len);
	((struct nlmsghdr *)nl->buf)->nlmsg_len = nl->len;
	return 0;
}

int nl_raw(struct nl *nl, const void *data, size_t len)
{
	if (nl->len + NLMSG_ALIGN(len) > nl->cap)
		return -EMSGSIZE;
	memset(nl->buf + nl->len, 0, NLMSG_ALIGN(len));
	memcpy(nl->buf + nl->len, data, len);
	nl->len += NLMSG_ALIGN(len);
	((struct nlmsghdr *)nl->buf)->nlmsg_len = nl->len;
	return 0;
}

int nl_put_u32(struct nl *nl, uint16_t type, uint32_t v)
{
	return nl_put(nl, type, &v, sizeof(v));
}

size_t nl_nest(struct nl *nl, uint16_t type)
{
	size_t at = nl->len;

	return nl_put(nl, type, NULL, 0) ? 0 : at;
}

void nl_nest_end(struct nl *nl, size_t at)
{
	if (at)
		((struct rtattr *)(nl->buf + at))->rta_len = nl->len - at;
}

static int nl_send(struct nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(nl->fd, nl->buf, nl->len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/* The next datagram of answers: its length, or -errno. */
static ssize_t nl_recv(struct nl *nl)
{
	ssize_t n;

	do
		n = recv(nl->fd, nl->buf, nl->cap, 0);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int nl_call(struct nl *nl)
{
	uint32_t seq = nl->seq;
	int ret;

	((struct nlmsghdr *)nl->buf)->nlmsg_flags |= NLM_F_ACK;
	ret = nl_send(nl);
	if (ret)
		return ret;
	for (;;) {
		ssize_t n = nl_recv(nl);
		struct nlmsghdr *h = (struct nlmsghdr *)nl->buf;

		if (n < 0)
			return n;
		for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq || h->nlmsg_type != NLMSG_ERROR)
				continue;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
				return -EIO;
			return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
		}
	}
}

int nl_dump(struct nl *nl, int (*fn)(void *arg, struct nlmsghdr *h), void *arg)
{
	uint32_t seq = nl->seq;
	int ret = nl_send(nl), stop = 0;

	while (!ret) {
		ssize_t n = nl_recv(nl);
		struct nlmsghdr *h = (struct nlmsghdr *)nl->buf;

		if (n < 0)
			return n;
		for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return stop;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				/* a get request (NLM_F_ACK) ends so */
				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EIO;
				return e->error ? e->error : stop;
			}
			/* the rest of the dump is read, not to leave it
			 * queued for the next request */
			if (!stop)
				stop = fn(arg, h);
		}
	}
	return ret;
}

static void parse(struct rtattr *a, int len, struct rtattr **tb, int max)
{
	memset(tb, 0, sizeof(*tb) * (max + 1));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		unsigned short type = a->rta_type & ~NLA_F_NESTED;

		if (type <= max)
			tb[type] = a;
	}
}

void nl_parse(struct nlmsghdr *h, size_t hlen, struct rtattr **tb, int max)
{
	int len = (int)h->nlmsg_len - (int)NLMSG_SPACE(hlen);

	parse((struct rtattr *)((char *)NLMSG_DATA(h) + NLMSG_ALIGN(hlen)),
	      len < 0 ? 0 : len, tb, max);
}

void nl_parse_nested(struct rtattr *a, struct rtattr **tb, int max)
{
	parse(RTA_DATA(a), RTA_PAYLOAD(a), tb, max);
}
