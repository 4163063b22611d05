/* netns_check.c - what a network namespace may hold that the netns kind
 * does not save, looked for so that the checkpoint fails naming it
 * rather than restart making a namespace without it: policy routing
 * rules other than the kernel's, permanent neighbour (ARP, NDP)
 * entries, queueing disciplines set up on a device (and the classes and
 * filters under them); and which nftables tables there are, iptables-nft's
 * (iptables-save saves them) or nft's own (nft saves them: netns_sys.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/fib_rules.h>
#include <linux/neighbour.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "netns.h"

struct seen {
	struct netns_io *io;
	int family;
	int kernel_rules;	/* the kernel's own policy rules met */
	int err;
};

static int unsaved(struct seen *s, const char *what)
{
	return s->err = log_err(s->io->log, EOPNOTSUPP,
				"pid %d: net namespace net:[%lu]: %s, which ckpt does not save",
				s->io->pid, s->io->ino, what);
}

static int rule_one(void *arg, struct nlmsghdr *h)
{
	struct seen *s = arg;
	struct fib_rule_hdr *r = NLMSG_DATA(h);
	struct rtattr *tb[FRA_MAX + 1];
	uint32_t prio = 0, table;
	char what[96];

	if (h->nlmsg_type != RTM_NEWRULE || h->nlmsg_len < NLMSG_LENGTH(sizeof(*r)))
		return 0;
	nl_parse(h, sizeof(*r), tb, FRA_MAX);
	table = tb[FRA_TABLE] ? *(uint32_t *)RTA_DATA(tb[FRA_TABLE]) : r->table;
	if (tb[FRA_PRIORITY])
		prio = *(uint32_t *)RTA_DATA(tb[FRA_PRIORITY]);
	if (tb[FRA_PROTOCOL] && *(uint8_t *)RTA_DATA(tb[FRA_PROTOCOL]) == RTPROT_KERNEL) {
		s->kernel_rules++;
		return 0;
	}
	snprintf(what, sizeof(what), "an IPv%d policy routing rule (priority %u, table %u)",
		 s->family == AF_INET ? 4 : 6, prio, table);
	return unsaved(s, what);
}

/* Rules beyond the kernel's (local, main and for IPv4 default), or
 * one of those removed. */
static int rules_check(struct netns_io *io, struct nl *nl)
{
	static const int families[] = { AF_INET, AF_INET6 };

	for (int i = 0; i < 2; i++) {
		struct seen s = { .io = io, .family = families[i] };
		struct fib_rule_hdr *r = nl_req(nl, RTM_GETRULE, NLM_F_DUMP, sizeof(*r));
		int ret;

		r->family = families[i];
		ret = nl_dump(nl, rule_one, &s);
		if (s.err)
			return s.err;
		if (ret == -EAFNOSUPPORT)	/* no IPv6 */
			continue;
		if (ret < 0)
			return log_err(io->log, -ret, "pid %d: net namespace net:[%lu]: listing its rules:",
				       io->pid, io->ino);
		if (s.kernel_rules != (families[i] == AF_INET ? 3 : 2))
			return unsaved(&s, families[i] == AF_INET ? "an IPv4 default policy rule removed" :
				       "an IPv6 default policy rule removed");
	}
	return 0;
}

static int neigh_one(void *arg, struct nlmsghdr *h)
{
	struct seen *s = arg;
	struct ndmsg *n = NLMSG_DATA(h);
	char what[64], dev[IF_NAMESIZE];

	if (h->nlmsg_type != RTM_NEWNEIGH || h->nlmsg_len < NLMSG_LENGTH(sizeof(*n)) ||
	    !(n->ndm_state & NUD_PERMANENT) ||
	    (n->ndm_family != AF_INET && n->ndm_family != AF_INET6))
		return 0;
	snprintf(what, sizeof(what), "a permanent neighbour entry on %s",
		 if_indextoname(n->ndm_ifindex, dev) ? dev : "?");
	return unsaved(s, what);
}

static int qdisc_one(void *arg, struct nlmsghdr *h)
{
	struct seen *s = arg;
	struct tcmsg *t = NLMSG_DATA(h);
	struct rtattr *tb[TCA_MAX + 1];
	char what[96], dev[IF_NAMESIZE];

	if (h->nlmsg_type != RTM_NEWQDISC || h->nlmsg_len < NLMSG_LENGTH(sizeof(*t)) ||
	    !t->tcm_handle)	/* the device's default */
		return 0;
	nl_parse(h, sizeof(*t), tb, TCA_MAX);
	snprintf(what, sizeof(what), "a queueing discipline (%.16s) on %s",
		 tb[TCA_KIND] ? (char *)RTA_DATA(tb[TCA_KIND]) : "?",
		 if_indextoname(t->tcm_ifindex, dev) ? dev : "?");
	return unsaved(s, what);
}

/* A dump of @type that refuses what @fn says. */
static int refuse_dump(struct netns_io *io, struct nl *nl, uint16_t type, size_t hlen,
		       int (*fn)(void *, struct nlmsghdr *), const char *what)
{
	struct seen s = { .io = io };
	int ret;

	nl_req(nl, type, NLM_F_DUMP, hlen);
	ret = nl_dump(nl, fn, &s);
	if (ret < 0 && !s.err)
		return log_err(io->log, -ret, "pid %d: net namespace net:[%lu]: listing its %s:", io->pid,
			       io->ino, what);
	return ret;
}

/* ---- nftables ---- */

static int table_one(void *arg, struct nlmsghdr *h)
{
	static const char *const ipt[] = { "filter", "nat", "mangle", "raw", "security" };
	struct seen *s = arg;
	struct nfgenmsg *g = NLMSG_DATA(h);
	struct rtattr *tb[NFTA_TABLE_MAX + 1];
	const char *name;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*g)))
		return 0;
	nl_parse(h, sizeof(*g), tb, NFTA_TABLE_MAX);
	name = tb[NFTA_TABLE_NAME] ? RTA_DATA(tb[NFTA_TABLE_NAME]) : "?";
	if (g->nfgen_family == AF_INET || g->nfgen_family == AF_INET6)
		for (size_t i = 0; i < sizeof(ipt) / sizeof(ipt[0]); i++)
			if (!strcmp(name, ipt[i])) {
				/* iptables-save's to save */
				s->io->nft_ipt[g->nfgen_family == AF_INET6] = true;
				return 0;
			}
	/* nft's to save (netns_sys.c) */
	s->io->nft_native = true;
	return 0;
}

/* No nf_tables here (an old kernel, a module not loaded): no table. */
static int nft_check(struct netns_io *io)
{
	struct seen s = { .io = io };
	struct nl nl;
	struct nfgenmsg *g;
	int ret = nl_open_proto(&nl, NETLINK_NETFILTER);

	if (ret == -EPROTONOSUPPORT)
		return 0;
	if (ret)
		return log_err(io->log, -ret, "pid %d: netfilter netlink socket:", io->pid);
	g = nl_req(&nl, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_GETTABLE, NLM_F_DUMP, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	ret = nl_dump(&nl, table_one, &s);
	nl_close(&nl);
	if (ret < 0 && !s.err && ret != -EOPNOTSUPP && ret != -EPROTONOSUPPORT)
		return log_err(io->log, -ret, "pid %d: net namespace net:[%lu]: listing its nftables tables:",
			       io->pid, io->ino);
	return s.err;
}

int netns_unsaved_check(struct netns_io *io, struct nl *nl)
{
	int ret = rules_check(io, nl);

	if (!ret)
		ret = refuse_dump(io, nl, RTM_GETNEIGH, sizeof(struct ndmsg), neigh_one,
				  "neighbours");
	if (!ret)
		ret = refuse_dump(io, nl, RTM_GETQDISC, sizeof(struct tcmsg), qdisc_one,
				  "queueing disciplines");
	return ret ? ret : nft_check(io);
}
