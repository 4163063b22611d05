/* netns_addr.c - the addresses and routes of a network namespace.
 *
 * Saved: every IPv4 and IPv6 address but those the kernel makes by
 * itself (IFA_PROTO kernel_lo, kernel_ra, kernel_ll: ::1, link-local
 * and SLAAC addresses, and IPv6 temporary ones), in the kernel's order
 * (an IPv4 primary before its secondaries); every route of every table
 * but the kernel's own (RTPROT_KERNEL: those of the addresses and the
 * local table; RTPROT_RA, from router advertisements).  A route or an
 * address with what ckpt does not save (multipath, encapsulation, an
 * expiry, a congestion control algorithm, a metric of its own) fails
 * the checkpoint, named.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_addr.h>

#include "netns.h"

#define IFA_PROTO_KERNEL_LO	1	/* not in every uapi header yet */
#define IFA_PROTO_KERNEL_RA	2
#define IFA_PROTO_KERNEL_LL	3

struct walk {
	struct netns_io *io;
	int err;
};

static size_t alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

static int addr_refuse(struct walk *s, const struct ifaddrmsg *ifa, const char *what)
{
	return s->err = log_err(s->io->log, EOPNOTSUPP,
				"pid %d: net namespace net:[%lu]: an address of ifindex %u has %s, which ckpt does not save",
				s->io->pid, s->io->ino, ifa->ifa_index, what);
}

/* @a into @dst if it is an address of the family's size. */
static bool take(struct rtattr *a, uint8_t *dst, size_t n)
{
	if (!a || RTA_PAYLOAD(a) != n)
		return false;
	memcpy(dst, RTA_DATA(a), n);
	return true;
}

static int addr_one(void *arg, struct nlmsghdr *h)
{
	struct walk *s = arg;
	struct ifaddrmsg *ifa = NLMSG_DATA(h);
	struct rtattr *tb[IFA_MAX + 1];
	struct rec_net_addr a = { 0 };
	size_t n;

	if (h->nlmsg_type != RTM_NEWADDR || h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)) ||
	    (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
		return 0;
	nl_parse(h, sizeof(*ifa), tb, IFA_MAX);
	n = alen(ifa->ifa_family);
	a.family = ifa->ifa_family;
	a.prefixlen = ifa->ifa_prefixlen;
	a.scope = ifa->ifa_scope;
	a.ifindex = ifa->ifa_index;
	a.flags = tb[IFA_FLAGS] ? *(uint32_t *)RTA_DATA(tb[IFA_FLAGS]) : ifa->ifa_flags;
	if (tb[IFA_PROTO])
		a.proto = *(uint8_t *)RTA_DATA(tb[IFA_PROTO]);
	if (a.proto == IFA_PROTO_KERNEL_LO || a.proto == IFA_PROTO_KERNEL_RA ||
	    a.proto == IFA_PROTO_KERNEL_LL ||
	    (a.family == AF_INET6 && (a.flags & IFA_F_TEMPORARY)))
		return 0;	/* the kernel makes them again */
	if (tb[IFA_RT_PRIORITY])
		return addr_refuse(s, ifa, "a route metric");
	if (!take(tb[a.family == AF_INET ? IFA_LOCAL : IFA_ADDRESS], a.local, n))
		return addr_refuse(s, ifa, "no local address");
	if (a.family == AF_INET && take(tb[IFA_ADDRESS], a.peer, n))
		a.has |= NET_ADDR_HAS_PEER;
	if (a.family == AF_INET && take(tb[IFA_BROADCAST], a.broadcast, n))
		a.has |= NET_ADDR_HAS_BRD;
	if (tb[IFA_LABEL] && RTA_PAYLOAD(tb[IFA_LABEL]) <= sizeof(a.label)) {
		snprintf(a.label, sizeof(a.label), "%s", (char *)RTA_DATA(tb[IFA_LABEL]));
		a.has |= NET_ADDR_HAS_LABEL;
	}
	a.valid = a.preferred = ~0u;
	if (tb[IFA_CACHEINFO] && RTA_PAYLOAD(tb[IFA_CACHEINFO]) >= sizeof(struct ifa_cacheinfo)) {
		struct ifa_cacheinfo *ci = RTA_DATA(tb[IFA_CACHEINFO]);

		a.valid = ci->ifa_valid;
		a.preferred = ci->ifa_prefered;
	}
	a.flags &= NET_ADDR_FLAGS;
	s->err = iw_record(s->io->w, REC_NET_ADDR, &a, sizeof(a));
	return s->err;
}

int netns_addrs_save(struct netns_io *io, struct nl *nl)
{
	struct walk s = { .io = io };
	struct ifaddrmsg *ifa = nl_req(nl, RTM_GETADDR, NLM_F_DUMP, sizeof(*ifa));
	int ret;

	ifa->ifa_family = AF_UNSPEC;
	ret = nl_dump(nl, addr_one, &s);
	if (ret < 0 && !s.err)
		return log_err(io->log, -ret, "pid %d: net namespace net:[%lu]: listing its addresses:",
			       io->pid, io->ino);
	return ret;
}

/* An address as text, for messages. */
static const char *ntop(int family, const uint8_t *a, char *buf, size_t n)
{
	return inet_ntop(family, a, buf, n) ? buf : "?";
}

int netns_addrs_make(struct netns_io *io, struct nl *nl, const struct netns_img *m,
		     const int32_t *map)
{
	for (size_t i = 0; i < m->nr_addrs; i++) {
		const struct rec_net_addr *a = &m->addrs[i];
		size_t n = alen(a->family);
		struct ifaddrmsg *ifa = nl_req(nl, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE,
					       sizeof(*ifa));
		char buf[INET6_ADDRSTRLEN];
		int ret;

		ifa->ifa_family = a->family;
		ifa->ifa_prefixlen = a->prefixlen;
		ifa->ifa_flags = a->flags & 0xff;
		ifa->ifa_scope = a->scope;
		ifa->ifa_index = netns_ifmap(m, map, a->ifindex);
		nl_put(nl, IFA_LOCAL, a->local, n);
		nl_put(nl, IFA_ADDRESS, a->has & NET_ADDR_HAS_PEER ? a->peer : a->local, n);
		if (a->has & NET_ADDR_HAS_BRD)
			nl_put(nl, IFA_BROADCAST, a->broadcast, n);
		if (a->has & NET_ADDR_HAS_LABEL)
			nl_put(nl, IFA_LABEL, a->label, strlen(a->label) + 1);
		nl_put_u32(nl, IFA_FLAGS, a->flags);
		if (a->proto)
			nl_put(nl, IFA_PROTO, &a->proto, 1);
		if (a->valid != ~0u || a->preferred != ~0u) {
			struct ifa_cacheinfo ci = { .ifa_valid = a->valid,
						    .ifa_prefered = a->preferred };

			nl_put(nl, IFA_CACHEINFO, &ci, sizeof(ci));
		}
		ret = nl_call(nl);
		if (ret)
			return log_err(io->log, -ret, "pid %d: adding address %s/%u to ifindex %d:",
				       io->pid, ntop(a->family, a->local, buf, sizeof(buf)),
				       a->prefixlen, ifa->ifa_index);
	}
	return 0;
}

/* ---- routes ---- */

static int route_refuse(struct walk *s, const struct rtmsg *rt, const char *what)
{
	return s->err = log_err(s->io->log, EOPNOTSUPP,
				"pid %d: net namespace net:[%lu]: a route (IPv%d, table %u, /%u) has %s, which ckpt does not save",
				s->io->pid, s->io->ino, rt->rtm_family == AF_INET ? 4 : 6,
				rt->rtm_table, rt->rtm_dst_len, what);
}

static int route_metrics(struct walk *s, const struct rtmsg *rt, struct rtattr *m,
			 struct rec_net_route *r)
{
	int len = RTA_PAYLOAD(m);

	for (struct rtattr *a = RTA_DATA(m); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		unsigned type = a->rta_type;

		if (type == RTAX_CC_ALGO)
			return route_refuse(s, rt, "a congestion control algorithm");
		if (type < 1 || type > NET_RTAX_SLOTS || RTA_PAYLOAD(a) != 4)
			return route_refuse(s, rt, "an unknown metric");
		r->metrics[type - 1] = *(uint32_t *)RTA_DATA(a);
		r->metrics_mask |= 1u << (type - 1);
	}
	return 0;
}

/* The attributes of a route into @r: -errno (reported) for one ckpt
 * does not save. */
static int route_attrs(struct walk *s, struct nlmsghdr *h, struct rec_net_route *r)
{
	struct rtmsg *rt = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_SPACE(sizeof(*rt));
	size_t n = alen(rt->rtm_family);
	struct rtattr *a = RTM_RTA(rt);
	char what[32];

	for (; len > 0 && RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		bool ok = true;

		switch (a->rta_type) {
		case RTA_DST: ok = take(a, r->dst, n); r->has |= NET_ROUTE_HAS_DST; break;
		case RTA_SRC: ok = take(a, r->src, n); r->has |= NET_ROUTE_HAS_SRC; break;
		case RTA_GATEWAY: ok = take(a, r->gateway, n); r->has |= NET_ROUTE_HAS_GW; break;
		case RTA_PREFSRC: ok = take(a, r->prefsrc, n); r->has |= NET_ROUTE_HAS_PREFSRC; break;
		case RTA_OIF: ok = RTA_PAYLOAD(a) == 4; r->oif = *(int32_t *)RTA_DATA(a);
			r->has |= NET_ROUTE_HAS_OIF; break;
		case RTA_PRIORITY: ok = RTA_PAYLOAD(a) == 4; r->priority = *(uint32_t *)RTA_DATA(a);
			r->has |= NET_ROUTE_HAS_PRIO; break;
		case RTA_TABLE: ok = RTA_PAYLOAD(a) == 4; r->table = *(uint32_t *)RTA_DATA(a); break;
		case RTA_PREF: ok = RTA_PAYLOAD(a) == 1; r->pref = *(uint8_t *)RTA_DATA(a);
			r->has |= NET_ROUTE_HAS_PREF; break;
		case RTA_METRICS:
			if (route_metrics(s, rt, a, r))
				return s->err;
			break;
		case RTA_CACHEINFO:	/* the kernel's counters */
			break;
		case RTA_MULTIPATH: return route_refuse(s, rt, "several next hops");
		case RTA_EXPIRES: return route_refuse(s, rt, "an expiry");
		default:
			snprintf(what, sizeof(what), "attribute %u", a->rta_type);
			return route_refuse(s, rt, what);
		}
		if (!ok)
			return route_refuse(s, rt, "an attribute of a bad size");
	}
	return 0;
}

static int route_one(void *arg, struct nlmsghdr *h)
{
	struct walk *s = arg;
	struct rtmsg *rt = NLMSG_DATA(h);
	struct rec_net_route r = { 0 };

	if (h->nlmsg_type != RTM_NEWROUTE || h->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)) ||
	    (rt->rtm_family != AF_INET && rt->rtm_family != AF_INET6) ||
	    rt->rtm_protocol == RTPROT_KERNEL || rt->rtm_protocol == RTPROT_RA ||
	    (rt->rtm_flags & RTM_F_CLONED))
		return 0;
	r.family = rt->rtm_family;
	r.dst_len = rt->rtm_dst_len;
	r.src_len = rt->rtm_src_len;
	r.tos = rt->rtm_tos;
	r.protocol = rt->rtm_protocol;
	r.scope = rt->rtm_scope;
	r.type = rt->rtm_type;
	r.table = rt->rtm_table;
	r.flags = rt->rtm_flags & RTNH_F_ONLINK;
	if (route_attrs(s, h, &r))
		return s->err;
	s->err = iw_record(s->io->w, REC_NET_ROUTE, &r, sizeof(r));
	return s->err;
}

int netns_routes_save(struct netns_io *io, struct nl *nl)
{
	static const int families[] = { AF_INET, AF_INET6 };

	for (int i = 0; i < 2; i++) {
		struct walk s = { .io = io };
		struct rtmsg *rt = nl_req(nl, RTM_GETROUTE, NLM_F_DUMP, sizeof(*rt));
		int ret;

		rt->rtm_family = families[i];
		ret = nl_dump(nl, route_one, &s);
		if (ret < 0 && !s.err)
			return log_err(io->log, -ret, "pid %d: net namespace net:[%lu]: listing its routes:",
				       io->pid, io->ino);
		if (ret)
			return ret;
	}
	return 0;
}

static int route_make(struct nl *nl, const struct netns_img *m, const int32_t *map,
		      const struct rec_net_route *r)
{
	struct rtmsg *rt = nl_req(nl, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, sizeof(*rt));
	size_t n = alen(r->family), at;

	rt->rtm_family = r->family;
	rt->rtm_dst_len = r->dst_len;
	rt->rtm_src_len = r->src_len;
	rt->rtm_tos = r->tos;
	rt->rtm_table = r->table < 256 ? r->table : RT_TABLE_UNSPEC;
	rt->rtm_protocol = r->protocol;
	rt->rtm_scope = r->scope;
	rt->rtm_type = r->type;
	rt->rtm_flags = r->flags;
	nl_put_u32(nl, RTA_TABLE, r->table);
	if (r->has & NET_ROUTE_HAS_DST)
		nl_put(nl, RTA_DST, r->dst, n);
	if (r->has & NET_ROUTE_HAS_SRC)
		nl_put(nl, RTA_SRC, r->src, n);
	if (r->has & NET_ROUTE_HAS_GW)
		nl_put(nl, RTA_GATEWAY, r->gateway, n);
	if (r->has & NET_ROUTE_HAS_PREFSRC)
		nl_put(nl, RTA_PREFSRC, r->prefsrc, n);
	if (r->has & NET_ROUTE_HAS_OIF)
		nl_put_u32(nl, RTA_OIF, netns_ifmap(m, map, r->oif));
	if (r->has & NET_ROUTE_HAS_PRIO)
		nl_put_u32(nl, RTA_PRIORITY, r->priority);
	if (r->has & NET_ROUTE_HAS_PREF)
		nl_put(nl, RTA_PREF, &r->pref, 1);
	if (r->metrics_mask) {
		at = nl_nest(nl, RTA_METRICS);
		for (int i = 0; i < NET_RTAX_SLOTS; i++)
			if (r->metrics_mask & (1u << i))
				nl_put_u32(nl, i + 1, r->metrics[i]);
		nl_nest_end(nl, at);
	}
	return nl_call(nl);
}

/* A route through a gateway another route reaches is refused until that
 * one is made: rounds until none is left or a round makes none. */
int netns_routes_make(struct netns_io *io, struct nl *nl, const struct netns_img *m,
		      const int32_t *map)
{
	size_t left = m->nr_routes, bad = 0;
	bool *done = calloc(m->nr_routes + 1, sizeof(*done));
	int err = 0;

	if (!done)
		return log_err(io->log, ENOMEM, "pid %d: routes:", io->pid);
	while (left) {
		size_t made = 0;

		for (size_t i = 0; i < m->nr_routes; i++) {
			int ret = done[i] ? 0 : route_make(nl, m, map, &m->routes[i]);

			if (done[i])
				continue;
			if (ret && ret != -EEXIST) {
				bad = i;
				err = -ret;
				continue;
			}
			done[i] = true;
			made++;
			left--;
		}
		if (!made)
			break;
	}
	free(done);
	if (left) {
		const struct rec_net_route *r = &m->routes[bad];
		char buf[INET6_ADDRSTRLEN];

		return log_err(io->log, err, "pid %d: adding the route to %s/%u (table %u):", io->pid,
			       ntop(r->family, r->dst, buf, sizeof(buf)), r->dst_len, r->table);
	}
	return 0;
}
