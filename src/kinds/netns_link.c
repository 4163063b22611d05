/* netns_link.c - the devices of a network namespace: saved from an
 * RTM_GETLINK dump, made again with RTM_NEWLINK (their ifindex kept
 * when it is free), set with RTM_SETLINK.
 *
 * Supported: the loopback, veth pairs, bridge (its options, its ports
 * with theirs) and macvlan on a device of the namespace.  A veth whose peer is in
 * another namespace is made again with that end in restart's caller's
 * namespace, under its saved name and address and down: what it was
 * attached to out there (a host bridge, addresses) is no part of the
 * container, and whoever started it sets that up again, as they did the
 * first time.  Any other device (dummy, wireguard, tun, vxlan, ipip...) fails
 * the checkpoint, named with its kind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/veth.h>

#include "netns.h"

struct links {
	struct netns_io *io;
	struct rec_net_link *l;
	int32_t *nsid;		/* veth: its peer's netns id, or -1 */
	struct rec_net_bridge *br;	/* a bridge's options */
	struct rec_net_brport *bp;	/* a bridge port's */
	size_t nr, cap;
	int err;
};

static const char *const kind_names[] = {
	[NET_LINK_VETH] = "veth", [NET_LINK_MACVLAN] = "macvlan",
	[NET_LINK_BRIDGE] = "bridge",
};

static int refuse(struct netns_io *io, const char *name, const char *why)
{
	return log_err(io->log, EOPNOTSUPP, "pid %d: net namespace net:[%lu]: device %s %s",
		       io->pid, io->ino, name, why);
}

static uint32_t attr_u32(struct rtattr *a)
{
	return a && RTA_PAYLOAD(a) >= 4 ? *(uint32_t *)RTA_DATA(a) : 0;
}

static uint16_t attr_u16(struct rtattr *a)
{
	return a && RTA_PAYLOAD(a) >= 2 ? *(uint16_t *)RTA_DATA(a) : 0;
}

static uint8_t attr_u8(struct rtattr *a)
{
	return a && RTA_PAYLOAD(a) >= 1 ? *(uint8_t *)RTA_DATA(a) : 0;
}

/* A bridge's options; its VLAN filtering (and the VLANs of its ports
 * that come with it) is not saved: refused. */
static int bridge_opts(struct links *s, const struct rec_net_link *l, struct rtattr *data,
		       struct rec_net_bridge *b)
{
	struct rtattr *tb[IFLA_BR_MAX + 1];

	memset(b, 0, sizeof(*b));
	if (!data)
		return refuse(s->io, l->name, "is a bridge whose options cannot be read");
	nl_parse_nested(data, tb, IFLA_BR_MAX);
	if (attr_u8(tb[IFLA_BR_VLAN_FILTERING]))
		return refuse(s->io, l->name, "is a bridge filtering VLANs, which ckpt does not save");
	b->forward_delay = attr_u32(tb[IFLA_BR_FORWARD_DELAY]);
	b->hello_time = attr_u32(tb[IFLA_BR_HELLO_TIME]);
	b->max_age = attr_u32(tb[IFLA_BR_MAX_AGE]);
	b->ageing_time = attr_u32(tb[IFLA_BR_AGEING_TIME]);
	b->stp_state = attr_u32(tb[IFLA_BR_STP_STATE]);
	b->priority = attr_u16(tb[IFLA_BR_PRIORITY]);
	b->group_fwd_mask = attr_u16(tb[IFLA_BR_GROUP_FWD_MASK]);
	b->mcast_snooping = attr_u8(tb[IFLA_BR_MCAST_SNOOPING]);
	b->mcast_querier = attr_u8(tb[IFLA_BR_MCAST_QUERIER]);
	b->nf_call_iptables = attr_u8(tb[IFLA_BR_NF_CALL_IPTABLES]);
	b->nf_call_ip6tables = attr_u8(tb[IFLA_BR_NF_CALL_IP6TABLES]);
	b->nf_call_arptables = attr_u8(tb[IFLA_BR_NF_CALL_ARPTABLES]);
	if (b->stp_state > 1)
		return refuse(s->io, l->name, "is a bridge whose STP runs in user space");
	return 0;
}

/* A bridge port's options (its IFLA_INFO_SLAVE_DATA); those ckpt does
 * not save, set, are refused. */
static int brport_opts(struct links *s, const struct rec_net_link *l, struct rtattr *linkinfo,
		       struct rec_net_brport *p)
{
	struct rtattr *info[IFLA_INFO_MAX + 1], *tb[IFLA_BRPORT_MAX + 1];

	memset(p, 0, sizeof(*p));
	if (!linkinfo)
		return refuse(s->io, l->name, "is a port whose options cannot be read");
	nl_parse_nested(linkinfo, info, IFLA_INFO_MAX);
	if (!info[IFLA_INFO_SLAVE_KIND] || strcmp(RTA_DATA(info[IFLA_INFO_SLAVE_KIND]), "bridge") ||
	    !info[IFLA_INFO_SLAVE_DATA])
		return refuse(s->io, l->name, "has a master that is not a bridge");
	nl_parse_nested(info[IFLA_INFO_SLAVE_DATA], tb, IFLA_BRPORT_MAX);
	if (attr_u8(tb[IFLA_BRPORT_LOCKED]) || attr_u8(tb[IFLA_BRPORT_VLAN_TUNNEL]) ||
	    attr_u8(tb[IFLA_BRPORT_PROXYARP_WIFI]))
		return refuse(s->io, l->name, "is a bridge port locked, with a VLAN tunnel or wifi proxy ARP, which ckpt does not save");
	p->cost = attr_u32(tb[IFLA_BRPORT_COST]);
	p->priority = attr_u16(tb[IFLA_BRPORT_PRIORITY]);
	p->group_fwd_mask = attr_u16(tb[IFLA_BRPORT_GROUP_FWD_MASK]);
	p->hairpin = attr_u8(tb[IFLA_BRPORT_MODE]);
	p->guard = attr_u8(tb[IFLA_BRPORT_GUARD]);
	p->protect = attr_u8(tb[IFLA_BRPORT_PROTECT]);
	p->fast_leave = attr_u8(tb[IFLA_BRPORT_FAST_LEAVE]);
	p->learning = attr_u8(tb[IFLA_BRPORT_LEARNING]);
	p->unicast_flood = attr_u8(tb[IFLA_BRPORT_UNICAST_FLOOD]);
	p->proxyarp = attr_u8(tb[IFLA_BRPORT_PROXYARP]);
	p->mcast_flood = attr_u8(tb[IFLA_BRPORT_MCAST_FLOOD]);
	p->bcast_flood = attr_u8(tb[IFLA_BRPORT_BCAST_FLOOD]);
	p->isolated = attr_u8(tb[IFLA_BRPORT_ISOLATED]);
	p->neigh_suppress = attr_u8(tb[IFLA_BRPORT_NEIGH_SUPPRESS]);
	p->mcast_to_unicast = attr_u8(tb[IFLA_BRPORT_MCAST_TO_UCAST]);
	p->mcast_router = attr_u8(tb[IFLA_BRPORT_MULTICAST_ROUTER]);
	return 0;
}

/* The kind of device @h is, from its IFLA_LINKINFO: 0 and refused if
 * ckpt cannot make it. */
static int link_kind(struct links *s, struct ifinfomsg *ifi, struct rtattr **tb,
		     struct rec_net_link *l, struct rec_net_bridge *br)
{
	struct rtattr *info[IFLA_INFO_MAX + 1], *mv[IFLA_MACVLAN_MAX + 1];
	const char *kind = "";
	char why[64];

	if (tb[IFLA_LINKINFO]) {
		nl_parse_nested(tb[IFLA_LINKINFO], info, IFLA_INFO_MAX);
		if (info[IFLA_INFO_KIND])
			kind = RTA_DATA(info[IFLA_INFO_KIND]);
	}
	if (!*kind && ifi->ifi_type == ARPHRD_LOOPBACK)
		return NET_LINK_LOOPBACK;
	for (int k = NET_LINK_VETH; k < NET_LINK_NR_KINDS; k++)
		if (!strcmp(kind, kind_names[k])) {
			if (k == NET_LINK_BRIDGE)
				return bridge_opts(s, l, info[IFLA_INFO_DATA], br) ?: k;
			if (k != NET_LINK_MACVLAN)
				return k;
			if (!info[IFLA_INFO_DATA])
				return k;
			nl_parse_nested(info[IFLA_INFO_DATA], mv, IFLA_MACVLAN_MAX);
			l->mode = attr_u32(mv[IFLA_MACVLAN_MODE]);
			if (attr_u32(mv[IFLA_MACVLAN_FLAGS]) || attr_u32(mv[IFLA_MACVLAN_MACADDR_COUNT]) ||
			    l->mode == MACVLAN_MODE_SOURCE)
				return refuse(s->io, l->name, "is a macvlan with flags or source addresses, which ckpt does not save");
			return k;
		}
	snprintf(why, sizeof(why), "of kind %s is not supported", *kind ? kind : "(none)");
	return refuse(s->io, l->name, why);
}

static int links_grow(struct links *s)
{
	size_t cap = s->cap ? 2 * s->cap : 16;
	void *a = realloc(s->l, cap * sizeof(*s->l)), *b, *c, *d;

	if (a)
		s->l = a;
	b = a ? realloc(s->nsid, cap * sizeof(*s->nsid)) : NULL;
	if (b)
		s->nsid = b;
	c = b ? realloc(s->br, cap * sizeof(*s->br)) : NULL;
	if (c)
		s->br = c;
	d = c ? realloc(s->bp, cap * sizeof(*s->bp)) : NULL;
	if (!d)
		return s->err = log_err(s->io->log, ENOMEM, "pid %d: net devices:", s->io->pid);
	s->bp = d;
	s->cap = cap;
	return 0;
}

static int link_one(void *arg, struct nlmsghdr *h)
{
	struct links *s = arg;
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	struct rtattr *tb[IFLA_MAX + 1];
	struct rec_net_link l = { .ifindex = ifi->ifi_index };
	struct rec_net_bridge br;
	struct rec_net_brport bp = { 0 };
	int kind;

	if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return 0;
	nl_parse(h, sizeof(*ifi), tb, IFLA_MAX);
	if (tb[IFLA_IFNAME])
		snprintf(l.name, sizeof(l.name), "%s", (char *)RTA_DATA(tb[IFLA_IFNAME]));
	if ((tb[IFLA_IFALIAS] && RTA_PAYLOAD(tb[IFLA_IFALIAS]) > 1) || tb[IFLA_PROP_LIST] ||
	    attr_u32(tb[IFLA_GROUP]))
		return s->err = refuse(s->io, l.name, "has an alias, an alternative name or a group, which ckpt does not save");
	kind = link_kind(s, ifi, tb, &l, &br);
	if (kind < 0)
		return s->err = kind;
	l.kind = kind;
	l.flags = ifi->ifi_flags & NET_IFF_SAVED;
	l.mtu = attr_u32(tb[IFLA_MTU]);
	l.master = attr_u32(tb[IFLA_MASTER]);
	l.txqlen = attr_u32(tb[IFLA_TXQLEN]);
	if (tb[IFLA_ADDRESS] && RTA_PAYLOAD(tb[IFLA_ADDRESS]) <= sizeof(l.addr)) {
		l.addr_len = RTA_PAYLOAD(tb[IFLA_ADDRESS]);
		memcpy(l.addr, RTA_DATA(tb[IFLA_ADDRESS]), l.addr_len);
	}
	if (l.master && brport_opts(s, &l, tb[IFLA_LINKINFO], &bp))
		return s->err;
	if (kind == NET_LINK_VETH || kind == NET_LINK_MACVLAN)
		l.peer = attr_u32(tb[IFLA_LINK]);
	if (kind == NET_LINK_MACVLAN && tb[IFLA_LINK_NETNSID])
		return s->err = refuse(s->io, l.name, "is a macvlan whose lower device is in another namespace");
	if (s->nr == s->cap && links_grow(s))
		return s->err;
	s->nsid[s->nr] = tb[IFLA_LINK_NETNSID] ? (int32_t)attr_u32(tb[IFLA_LINK_NETNSID]) : -1;
	s->br[s->nr] = br;
	s->bp[s->nr] = bp;
	s->l[s->nr++] = l;
	return 0;
}

static int peer_one(void *arg, struct nlmsghdr *h)
{
	struct rec_net_link *l = arg;
	struct rtattr *tb[IFLA_MAX + 1];

	if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
		return 0;
	nl_parse(h, sizeof(struct ifinfomsg), tb, IFLA_MAX);
	if (tb[IFLA_IFNAME])
		snprintf(l->peer_name, sizeof(l->peer_name), "%s", (char *)RTA_DATA(tb[IFLA_IFNAME]));
	if (tb[IFLA_ADDRESS] && RTA_PAYLOAD(tb[IFLA_ADDRESS]) <= sizeof(l->peer_addr)) {
		l->peer_addr_len = RTA_PAYLOAD(tb[IFLA_ADDRESS]);
		memcpy(l->peer_addr, RTA_DATA(tb[IFLA_ADDRESS]), l->peer_addr_len);
	}
	return 1;
}

/* A veth whose peer is in the namespace of id @nsid: its name and
 * address there (IFLA_TARGET_NETNSID), to make it again outside. */
static int veth_outside(struct netns_io *io, struct nl *nl, struct rec_net_link *l,
			int32_t nsid)
{
	struct ifinfomsg *ifi = nl_req(nl, RTM_GETLINK, NLM_F_ACK, sizeof(*ifi));
	int ret;

	ifi->ifi_index = l->peer;
	nl_put(nl, IFLA_TARGET_NETNSID, &nsid, sizeof(nsid));
	ret = nl_dump(nl, peer_one, l);
	if (ret < 0 || !l->peer_name[0])
		return log_err(io->log, ret < 0 ? -ret : ENOENT,
			       "pid %d: net namespace net:[%lu]: device %s: its veth peer (ifindex %d in netns id %d) cannot be read:",
			       io->pid, io->ino, l->name, l->peer, nsid);
	l->peer = 0;
	return 0;
}

int netns_links_save(struct netns_io *io, struct nl *nl)
{
	struct links s = { .io = io };
	struct ifinfomsg *ifi = nl_req(nl, RTM_GETLINK, NLM_F_DUMP, sizeof(*ifi));
	int ret;

	ifi->ifi_family = AF_UNSPEC;
	ret = nl_dump(nl, link_one, &s);
	if (ret < 0 && !s.err)
		ret = log_err(io->log, -ret, "pid %d: net namespace net:[%lu]: listing its devices:",
			      io->pid, io->ino);
	for (size_t i = 0; i < s.nr && !ret; i++)
		if (s.l[i].kind == NET_LINK_VETH && s.nsid[i] >= 0)
			ret = veth_outside(io, nl, &s.l[i], s.nsid[i]);
	for (size_t i = 0; i < s.nr && !ret; i++) {
		ret = iw_record(io->w, REC_NET_LINK, &s.l[i], sizeof(s.l[i]));
		if (!ret && s.l[i].kind == NET_LINK_BRIDGE)
			ret = iw_record(io->w, REC_NET_BRIDGE, &s.br[i], sizeof(s.br[i]));
		if (!ret && s.l[i].master)
			ret = iw_record(io->w, REC_NET_BRPORT, &s.bp[i], sizeof(s.bp[i]));
	}
	free(s.l);
	free(s.nsid);
	free(s.br);
	free(s.bp);
	return ret;
}

/* ---- restart ---- */

int32_t netns_ifmap(const struct netns_img *m, const int32_t *map, int32_t i)
{
	if (!i)
		return 0;
	for (size_t k = 0; k < m->nr_links; k++)
		if (m->links[k].ifindex == i)
			return map[k];
	return -1;
}

/* The attributes of a device being made: name, address, MTU, queue. */
static void put_dev(struct nl *nl, const char *name, const uint8_t *addr,
		    uint32_t addr_len, uint32_t mtu, uint32_t txqlen)
{
	nl_put(nl, IFLA_IFNAME, name, strlen(name) + 1);
	if (addr_len)
		nl_put(nl, IFLA_ADDRESS, addr, addr_len);
	if (mtu)
		nl_put_u32(nl, IFLA_MTU, mtu);
	nl_put_u32(nl, IFLA_TXQLEN, txqlen);
}

/* A bridge's saved options, into its IFLA_INFO_DATA. */
static void put_bridge(struct nl *nl, const struct netns_img *m, int32_t ifindex)
{
	const struct rec_net_bridge *b = NULL;

	for (size_t i = 0; i < m->nr_br; i++)
		if (m->br[i].ifindex == ifindex)
			b = &m->br[i].o;
	if (!b)
		return;
	nl_put_u32(nl, IFLA_BR_FORWARD_DELAY, b->forward_delay);
	nl_put_u32(nl, IFLA_BR_HELLO_TIME, b->hello_time);
	nl_put_u32(nl, IFLA_BR_MAX_AGE, b->max_age);
	nl_put_u32(nl, IFLA_BR_AGEING_TIME, b->ageing_time);
	nl_put_u32(nl, IFLA_BR_STP_STATE, b->stp_state);
	nl_put(nl, IFLA_BR_PRIORITY, &b->priority, 2);
	nl_put(nl, IFLA_BR_GROUP_FWD_MASK, &b->group_fwd_mask, 2);
	nl_put(nl, IFLA_BR_MCAST_SNOOPING, &b->mcast_snooping, 1);
	nl_put(nl, IFLA_BR_MCAST_QUERIER, &b->mcast_querier, 1);
	/* only if set: a kernel without bridge netfilter has none */
	if (b->nf_call_iptables)
		nl_put(nl, IFLA_BR_NF_CALL_IPTABLES, &b->nf_call_iptables, 1);
	if (b->nf_call_ip6tables)
		nl_put(nl, IFLA_BR_NF_CALL_IP6TABLES, &b->nf_call_ip6tables, 1);
	if (b->nf_call_arptables)
		nl_put(nl, IFLA_BR_NF_CALL_ARPTABLES, &b->nf_call_arptables, 1);
}

/* RTM_NEWLINK of @l (and of its veth peer @p, in the namespace or, if
 * NULL, outside), as @l->ifindex when @keep. */
static int newlink(struct nl *nl, const struct netns_img *m, const int32_t *map,
		   const struct rec_net_link *l, const struct rec_net_link *p, bool keep)
{
	struct ifinfomsg *ifi = nl_req(nl, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(*ifi));
	size_t info, data, peer;

	ifi->ifi_index = keep ? l->ifindex : 0;
	put_dev(nl, l->name, l->addr, l->addr_len, l->mtu, l->txqlen);
	if (l->kind == NET_LINK_MACVLAN)
		nl_put_u32(nl, IFLA_LINK, netns_ifmap(m, map, l->peer));
	info = nl_nest(nl, IFLA_LINKINFO);
	nl_put(nl, IFLA_INFO_KIND, kind_names[l->kind], strlen(kind_names[l->kind]) + 1);
	data = nl_nest(nl, IFLA_INFO_DATA);
	if (l->kind == NET_LINK_MACVLAN && l->mode)
		nl_put_u32(nl, IFLA_MACVLAN_MODE, l->mode);
	if (l->kind == NET_LINK_BRIDGE)
		put_bridge(nl, m, l->ifindex);
	if (l->kind == NET_LINK_VETH) {
		struct ifinfomsg pi = { .ifi_index = keep && p ? p->ifindex : 0 };

		peer = nl_nest(nl, VETH_INFO_PEER);
		nl_raw(nl, &pi, sizeof(pi));
		if (p)
			put_dev(nl, p->name, p->addr, p->addr_len, p->mtu, p->txqlen);
		else {
			put_dev(nl, l->peer_name, l->peer_addr, l->peer_addr_len, 0, l->txqlen);
			nl_put_u32(nl, IFLA_NET_NS_FD, m->caller_net);
		}
		nl_nest_end(nl, peer);
	}
	nl_nest_end(nl, data);
	nl_nest_end(nl, info);
	return nl_call(nl);
}

static int make_one(struct netns_io *io, struct nl *nl, const struct netns_img *m,
		    int32_t *map, size_t i)
{
	const struct rec_net_link *l = &m->links[i], *p = NULL;
	size_t pi = 0;
	int ret;

	if (l->kind == NET_LINK_LOOPBACK) {
		map[i] = if_nametoindex("lo");
		return map[i] ? 0 : log_err(io->log, ENODEV, "pid %d: no lo in the new net namespace",
					    io->pid);
	}
	if (l->kind == NET_LINK_VETH && l->peer) {
		for (pi = 0; pi < m->nr_links && m->links[pi].ifindex != l->peer; pi++)
			;
		if (pi < i)	/* made with its peer */
			return 0;
		p = &m->links[pi];
	}
	if (l->kind == NET_LINK_VETH && !p && !m->caller_open)
		return log_err(io->log, EINVAL, "pid %d: device %s: its veth peer %s goes to restart's caller's net namespace, which is not open",
			       io->pid, l->name, l->peer_name);
	ret = newlink(nl, m, map, l, p, true);
	if (ret == -EBUSY || ret == -EEXIST)	/* the ifindex is taken */
		ret = newlink(nl, m, map, l, p, false);
	if (ret)
		return log_err(io->log, -ret, "pid %d: making device %s (%s%s%s):", io->pid, l->name,
			       kind_names[l->kind], p || l->kind != NET_LINK_VETH ? "" : ", peer outside ",
			       p || l->kind != NET_LINK_VETH ? "" : l->peer_name);
	map[i] = if_nametoindex(l->name);
	if (p)
		map[pi] = if_nametoindex(p->name);
	if (!map[i] || (p && !map[pi]))
		return log_err(io->log, ENODEV, "pid %d: device %s made, then not found", io->pid,
			       l->name);
	return 0;
}

/* RTM_SETLINK: @l's flags but up, its MTU, address and master. */
static int setlink(struct netns_io *io, struct nl *nl, const struct netns_img *m,
		   const int32_t *map, size_t i)
{
	const struct rec_net_link *l = &m->links[i];
	struct ifinfomsg *ifi = nl_req(nl, RTM_NEWLINK, 0, sizeof(*ifi));
	int ret;

	ifi->ifi_index = map[i];
	ifi->ifi_flags = l->flags & ~IFF_UP;
	ifi->ifi_change = NET_IFF_SAVED & ~IFF_UP;
	if (l->kind == NET_LINK_LOOPBACK)
		ifi->ifi_change &= ~(IFF_NOARP | IFF_MULTICAST);
	else if (l->addr_len)
		nl_put(nl, IFLA_ADDRESS, l->addr, l->addr_len);
	if (l->mtu)
		nl_put_u32(nl, IFLA_MTU, l->mtu);
	nl_put_u32(nl, IFLA_TXQLEN, l->txqlen);
	if (l->master)
		nl_put_u32(nl, IFLA_MASTER, netns_ifmap(m, map, l->master));
	ret = nl_call(nl);
	return ret ? log_err(io->log, -ret, "pid %d: setting device %s:", io->pid, l->name) : 0;
}

/* A port's options, once it is its bridge's (IFLA_INFO_SLAVE_DATA). */
static int set_brport(struct netns_io *io, struct nl *nl, const struct netns_img *m,
		      const int32_t *map, const struct netns_brport *p)
{
	struct ifinfomsg *ifi = nl_req(nl, RTM_NEWLINK, 0, sizeof(*ifi));
	const struct rec_net_brport *o = &p->o;
	size_t info, data;
	int ret;

	ifi->ifi_index = netns_ifmap(m, map, p->ifindex);
	info = nl_nest(nl, IFLA_LINKINFO);
	data = nl_nest(nl, IFLA_INFO_SLAVE_DATA);
	nl_put_u32(nl, IFLA_BRPORT_COST, o->cost);
	nl_put(nl, IFLA_BRPORT_PRIORITY, &o->priority, 2);
	nl_put(nl, IFLA_BRPORT_GROUP_FWD_MASK, &o->group_fwd_mask, 2);
	nl_put(nl, IFLA_BRPORT_MODE, &o->hairpin, 1);
	nl_put(nl, IFLA_BRPORT_GUARD, &o->guard, 1);
	nl_put(nl, IFLA_BRPORT_PROTECT, &o->protect, 1);
	nl_put(nl, IFLA_BRPORT_FAST_LEAVE, &o->fast_leave, 1);
	nl_put(nl, IFLA_BRPORT_LEARNING, &o->learning, 1);
	nl_put(nl, IFLA_BRPORT_UNICAST_FLOOD, &o->unicast_flood, 1);
	nl_put(nl, IFLA_BRPORT_PROXYARP, &o->proxyarp, 1);
	nl_put(nl, IFLA_BRPORT_MCAST_FLOOD, &o->mcast_flood, 1);
	nl_put(nl, IFLA_BRPORT_BCAST_FLOOD, &o->bcast_flood, 1);
	nl_put(nl, IFLA_BRPORT_ISOLATED, &o->isolated, 1);
	nl_put(nl, IFLA_BRPORT_NEIGH_SUPPRESS, &o->neigh_suppress, 1);
	nl_put(nl, IFLA_BRPORT_MCAST_TO_UCAST, &o->mcast_to_unicast, 1);
	nl_put(nl, IFLA_BRPORT_MULTICAST_ROUTER, &o->mcast_router, 1);
	nl_nest_end(nl, data);
	nl_nest_end(nl, info);
	ret = nl_call(nl);
	return ret ? log_err(io->log, -ret, "pid %d: setting the bridge port options of ifindex %d:",
			     io->pid, ifi->ifi_index) : 0;
}

int netns_links_make(struct netns_io *io, struct nl *nl, const struct netns_img *m,
		     int32_t *map)
{
	int ret = 0;

	/* a macvlan after the device it sits on */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < m->nr_links && !ret; i++)
			if ((m->links[i].kind == NET_LINK_MACVLAN) == pass)
				ret = make_one(io, nl, m, map, i);
	for (size_t i = 0; i < m->nr_links && !ret; i++)
		ret = setlink(io, nl, m, map, i);
	for (size_t i = 0; i < m->nr_bp && !ret; i++)
		ret = set_brport(io, nl, m, map, &m->bp[i]);
	return ret;
}

int netns_links_up(struct netns_io *io, struct nl *nl, const struct netns_img *m,
		   const int32_t *map)
{
	for (size_t i = 0; i < m->nr_links; i++) {
		struct ifinfomsg *ifi;
		int ret;

		if (!(m->links[i].flags & IFF_UP))
			continue;
		ifi = nl_req(nl, RTM_NEWLINK, 0, sizeof(*ifi));
		ifi->ifi_index = map[i];
		ifi->ifi_flags = ifi->ifi_change = IFF_UP;
		ret = nl_call(nl);
		if (ret)
			return log_err(io->log, -ret, "pid %d: setting device %s up:", io->pid,
				       m->links[i].name);
	}
	return 0;
}
