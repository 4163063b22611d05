/* netns.c - the content of a container's own network namespace (issue
 * 15): its devices, addresses, routes, sysctls and iptables rules,
 * through rtnetlink and /proc/sys/net in the namespace ckpt is in.
 *
 * Checkpoint: the root's dump, when its net namespace is its own (ckpt
 * then runs inside it: container.c), saves the namespace it finds
 * itself in (netns_link.c, netns_addr.c, netns_sys.c).  Anything in it
 * ckpt cannot make again fails the checkpoint, named (netns_check.c).
 * Restart: the ns kind has made a new namespace for the root and ckpt
 * has joined it (with --join-ns net:PATH, that one, left as it is);
 * the root's restore makes it again: devices (down), sysctls, devices
 * up, addresses (an IPv6 address of limited lifetime added to a device
 * that is down never gets its prefix route), routes (which need their
 * devices up), iptables.
 * Here are the records' checks at load (each field, then how the
 * records refer to each other: check()) and `ckpt info`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/rtnetlink.h>

#include "../kinds.h"
#include "netns.h"
#include "ns.h"

#define NETNS_MAX_RECS	65536	/* of each type: far past a container's */

int netns_save(struct netns_io *io)
{
	struct nl nl;
	int ret = nl_open(io, &nl);

	if (!ret)
		ret = netns_unsaved_check(io, &nl);
	if (!ret)
		ret = netns_links_save(io, &nl);
	if (!ret)
		ret = netns_addrs_save(io, &nl);
	if (!ret)
		ret = netns_routes_save(io, &nl);
	nl_close(&nl);
	if (!ret)
		ret = netns_sysctls_save(io);
	return ret ? ret : netns_ipt_save(io);
}

int netns_make(struct netns_io *io, const struct netns_img *m)
{
	int32_t *map = calloc(m->nr_links + 1, sizeof(*map));
	struct nl nl = { .fd = -1 };
	int ret = map ? nl_open(io, &nl) : log_err(io->log, ENOMEM, "net devices:");

	if (!ret)
		ret = netns_links_make(io, &nl, m, map);
	if (!ret)
		ret = netns_sysctls_make(io, m);
	if (!ret)
		ret = netns_links_up(io, &nl, m, map);
	if (!ret)
		ret = netns_addrs_make(io, &nl, m, map);
	if (!ret)
		ret = netns_routes_make(io, &nl, m, map);
	nl_close(&nl);
	free(map);
	return ret ? ret : netns_ipt_make(io, m);
}

/* ---- records in, checked ---- */

static int bad(struct ckpt_log *log, const struct rec *r, const char *what)
{
	return log_err(log, EBADMSG, "bad %s record %llu: %s", rec_type_name(r->type),
		       (unsigned long long)r->index, what);
}

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* A fixed-size string field: NUL-terminated, nothing after the NUL. */
static bool str_ok(const char *s, size_t n)
{
	const char *e = memchr(s, 0, n);

	return e && zero(e, n - (e - s));
}

/* @n bytes of an address of @family's size at @a, the rest zero. */
static bool addr_ok(int family, const uint8_t *a, size_t n)
{
	return zero(a + (family == AF_INET ? 4 : 16), n - (family == AF_INET ? 4 : 16));
}

static bool grow(void **p, size_t nr, size_t size)
{
	void *q;

	if (nr & (nr - 1) && nr > 8)
		return true;	/* room left: sizes double from 16 */
	q = realloc(*p, (nr < 8 ? 16 : 2 * nr) * size);
	if (q)
		*p = q;
	return q != NULL;
}

static int load_link(struct ckpt_log *log, struct netns_img *m, const struct rec *r)
{
	const struct rec_net_link *l = r->data;
	bool veth = l->kind == NET_LINK_VETH, outside = veth && !l->peer;

	if (l->ifindex <= 0 || l->kind < NET_LINK_LOOPBACK || l->kind >= NET_LINK_NR_KINDS)
		return bad(log, r, "ifindex or kind");
	if ((l->flags & ~NET_IFF_SAVED) || l->mtu > (1u << 24) || l->master < 0 || l->peer < 0 ||
	    l->addr_len > sizeof(l->addr) || l->peer_addr_len > sizeof(l->peer_addr) ||
	    !zero(l->addr + l->addr_len, sizeof(l->addr) - l->addr_len) ||
	    !zero(l->peer_addr + l->peer_addr_len, sizeof(l->peer_addr) - l->peer_addr_len))
		return bad(log, r, "flags, MTU, master, peer or address");
	if (!str_ok(l->name, sizeof(l->name)) || !l->name[0] || strchr(l->name, '/') ||
	    !str_ok(l->peer_name, sizeof(l->peer_name)) || strchr(l->peer_name, '/') ||
	    !l->peer_name[0] != !outside || (l->peer_addr_len && !outside))
		return bad(log, r, "name or peer's name");
	if ((l->kind == NET_LINK_MACVLAN) != (l->mode != 0) ||
	    (l->mode & (l->mode - 1)) || l->mode > 8 ||
	    (l->peer && !veth && l->kind != NET_LINK_MACVLAN) ||
	    (l->kind == NET_LINK_MACVLAN && !l->peer))
		return bad(log, r, "mode or peer for its kind");
	for (size_t i = 0; i < m->nr_links; i++)
		if (m->links[i].ifindex == l->ifindex || !strcmp(m->links[i].name, l->name) ||
		    (l->kind == NET_LINK_LOOPBACK && m->links[i].kind == NET_LINK_LOOPBACK))
			return bad(log, r, "a second device of its ifindex or name, or a second lo");
	if (!grow((void **)&m->links, m->nr_links, sizeof(*l)))
		return log_err(log, ENOMEM, "net devices:");
	m->links[m->nr_links++] = *l;
	m->last_link = r->index;
	return 0;
}

/* Right after its bridge's NET_LINK, once. */
static int load_bridge(struct ckpt_log *log, struct netns_img *m, const struct rec *r)
{
	const struct rec_net_bridge *b = r->data;
	const struct rec_net_link *l = m->nr_links ? &m->links[m->nr_links - 1] : NULL;

	if (!l || l->kind != NET_LINK_BRIDGE || (m->nr_br && m->br[m->nr_br - 1].ifindex == l->ifindex) ||
	    r->index != m->last_link + 1)
		return bad(log, r, "not right after a bridge's NET_LINK");
	if (b->stp_state > 1 || b->mcast_snooping > 1 || b->mcast_querier > 1 ||
	    b->nf_call_iptables > 1 || b->nf_call_ip6tables > 1 || b->nf_call_arptables > 1 ||
	    !zero(b->reserved, sizeof(b->reserved)))
		return bad(log, r, "a flag past 1 or reserved bytes");
	if (!grow((void **)&m->br, m->nr_br, sizeof(*m->br)))
		return log_err(log, ENOMEM, "net bridges:");
	m->br[m->nr_br].ifindex = l->ifindex;
	m->br[m->nr_br++].o = *b;
	return 0;
}

/* Right after its port's NET_LINK, once. */
static int load_brport(struct ckpt_log *log, struct netns_img *m, const struct rec *r)
{
	const struct rec_net_brport *p = r->data;
	const struct rec_net_link *l = m->nr_links ? &m->links[m->nr_links - 1] : NULL;
	/* the 0/1 flags, hairpin to mcast_to_unicast, as bytes */
	const uint8_t *flag = (const uint8_t *)p + offsetof(struct rec_net_brport, hairpin);
	const uint8_t *end = (const uint8_t *)p + offsetof(struct rec_net_brport, mcast_router);

	if (!l || !l->master || (m->nr_bp && m->bp[m->nr_bp - 1].ifindex == l->ifindex) ||
	    r->index != m->last_link + 1)
		return bad(log, r, "not right after a bridge port's NET_LINK");
	for (; flag < end; flag++)
		if (*flag > 1)
			return bad(log, r, "a flag past 1");
	if (p->mcast_router > 3 || p->priority > 63 || !zero(p->reserved, sizeof(p->reserved)))
		return bad(log, r, "multicast router, priority or reserved bytes");
	if (!grow((void **)&m->bp, m->nr_bp, sizeof(*m->bp)))
		return log_err(log, ENOMEM, "net bridge ports:");
	m->bp[m->nr_bp].ifindex = l->ifindex;
	m->bp[m->nr_bp++].o = *p;
	return 0;
}

static int load_addr(struct ckpt_log *log, struct netns_img *m, const struct rec *r)
{
	const struct rec_net_addr *a = r->data;
	bool v4 = a->family == AF_INET;

	if ((!v4 && a->family != AF_INET6) || a->prefixlen > (v4 ? 32 : 128) || a->ifindex <= 0)
		return bad(log, r, "family, prefix or ifindex");
	if ((a->flags & ~NET_ADDR_FLAGS) || (a->has & ~NET_ADDR_HAS) ||
	    (!v4 && (a->has & (NET_ADDR_HAS_PEER | NET_ADDR_HAS_BRD))) ||
	    a->preferred > a->valid)
		return bad(log, r, "flags or lifetimes");
	if (!addr_ok(a->family, a->local, 16) || !addr_ok(a->family, a->peer, 16) ||
	    !addr_ok(a->family, a->broadcast, 16) ||
	    (!(a->has & NET_ADDR_HAS_PEER) && !zero(a->peer, 16)) ||
	    (!(a->has & NET_ADDR_HAS_BRD) && !zero(a->broadcast, 16)) ||
	    !str_ok(a->label, sizeof(a->label)) ||
	    (!(a->has & NET_ADDR_HAS_LABEL) && a->label[0]))
		return bad(log, r, "address or label");
	if (!grow((void **)&m->addrs, m->nr_addrs, sizeof(*a)))
		return log_err(log, ENOMEM, "net addresses:");
	m->addrs[m->nr_addrs++] = *a;
	return 0;
}

static int load_route(struct ckpt_log *log, struct netns_img *m, const struct rec *r)
{
	const struct rec_net_route *rt = r->data;
	bool v4 = rt->family == AF_INET;
	unsigned max = v4 ? 32 : 128;

	if ((!v4 && rt->family != AF_INET6) || rt->dst_len > max || rt->src_len > max ||
	    rt->type < 1 || rt->type > RTN_MAX || rt->protocol == RTPROT_KERNEL || !rt->table)
		return bad(log, r, "family, prefix, type, protocol or table");
	if ((rt->flags & ~RTNH_F_ONLINK) || (rt->has & ~NET_ROUTE_HAS) ||
	    (v4 && (rt->has & NET_ROUTE_HAS_PREF)) ||
	    (!(rt->has & NET_ROUTE_HAS_PREF) && rt->pref) || rt->pref == 2 || rt->pref > 3 ||
	    ((rt->has & NET_ROUTE_HAS_OIF) ? rt->oif <= 0 : rt->oif != 0) ||
	    (!(rt->has & NET_ROUTE_HAS_PRIO) && rt->priority))
		return bad(log, r, "flags or attributes");
	if (!addr_ok(rt->family, rt->dst, 16) || !addr_ok(rt->family, rt->src, 16) ||
	    !addr_ok(rt->family, rt->gateway, 16) || !addr_ok(rt->family, rt->prefsrc, 16) ||
	    (!(rt->has & NET_ROUTE_HAS_DST) && !zero(rt->dst, 16)) ||
	    (!(rt->has & NET_ROUTE_HAS_SRC) && !zero(rt->src, 16)) ||
	    (!(rt->has & NET_ROUTE_HAS_GW) && !zero(rt->gateway, 16)) ||
	    (!(rt->has & NET_ROUTE_HAS_PREFSRC) && !zero(rt->prefsrc, 16)))
		return bad(log, r, "an address");
	if (rt->metrics_mask >> NET_RTAX_SLOTS || (rt->metrics_mask & (1u << (RTAX_CC_ALGO - 1))))
		return bad(log, r, "metrics");
	for (int i = 0; i < NET_RTAX_SLOTS; i++)
		if (!(rt->metrics_mask & (1u << i)) && rt->metrics[i])
			return bad(log, r, "a metric not said to be there");
	if (!grow((void **)&m->routes, m->nr_routes, sizeof(*rt)))
		return log_err(log, ENOMEM, "net routes:");
	m->routes[m->nr_routes++] = *rt;
	return 0;
}

/* A path under /proc/sys/net/ipv4, ipv6, core or unix, each part a
 * plain name. */
static bool sysctl_path_ok(const char *p)
{
	if (strncmp(p, "ipv4/", 5) && strncmp(p, "ipv6/", 5) && strncmp(p, "core/", 5) &&
	    strncmp(p, "unix/", 5))
		return false;
	for (const char *s = p; *s;) {
		size_t n = strcspn(s, "/");

		if (!n || (n == 1 && s[0] == '.') || (n == 2 && !strncmp(s, "..", 2)))
			return false;
		s += n;
		if (*s == '/' && !*++s)
			return false;
	}
	return true;
}

static int load_sysctl(struct ckpt_log *log, struct netns_img *m, const struct rec *r)
{
	const struct rec_net_sysctl *s = r->data;
	const char *path, *val;

	if (s->path_len > CKPT_PATH_MAX || s->value_len > CKPT_PATH_MAX ||
	    r->data_len != sizeof(*s) + s->path_len + s->value_len)
		return bad(log, r, "lengths");
	path = rec_str(r, sizeof(*s), s->path_len);
	val = rec_str(r, sizeof(*s) + s->path_len, s->value_len);
	if (!path || !val || !sysctl_path_ok(path))
		return bad(log, r, "path or value");
	if (m->nr_sysctls >= NETNS_MAX_RECS)
		return bad(log, r, "too many");
	if (!grow((void **)&m->sysctl_path, m->nr_sysctls, sizeof(char *)) ||
	    !grow((void **)&m->sysctl_val, m->nr_sysctls, sizeof(char *)))
		return log_err(log, ENOMEM, "sysctls:");
	m->sysctl_path[m->nr_sysctls] = strdup(path);
	m->sysctl_val[m->nr_sysctls] = strdup(val);
	m->nr_sysctls++;
	if (!m->sysctl_path[m->nr_sysctls - 1] || !m->sysctl_val[m->nr_sysctls - 1])
		return log_err(log, ENOMEM, "sysctls:");
	return 0;
}

/* nft's own tables as checkpoint writes them: `table FAMILY NAME {`
 * blocks, nothing at their level but them, and no include or define
 * (which would have nft read the host's files as root). */
static bool nft_text_bad(const char *s, size_t len)
{
	int depth = 0;

	for (size_t i = 0; i < len;) {
		size_t e = i, b;

		while (e < len && s[e] != '\n')
			e++;
		b = i + strspn(s + i, " \t");
		if (b < e && ((depth == 0 && s[b] != '}' && strncmp(s + b, "table ", 6)) ||
			      !strncmp(s + b, "include", 7) || !strncmp(s + b, "define", 6)))
			return true;
		for (size_t k = i; k < e; k++)
			depth += (s[k] == '{') - (s[k] == '}');
		if (depth < 0)
			return true;
		i = e + 1;
	}
	return depth != 0;
}

static int load_ipt(struct ckpt_log *log, struct netns_img *m, const struct rec *r)
{
	const struct rec_net_iptables *p = r->data;
	int fam = p->family == 6 ? 1 : p->family == 1 ? NETNS_NFT : 0;

	if ((p->family != 4 && p->family != 6 && p->family != 1) || !p->len ||
	    p->len != r->data_len - sizeof(*p) || m->ipt[fam] ||
	    memchr((char *)r->data + sizeof(*p), 0, p->len) ||
	    (fam == NETNS_NFT && nft_text_bad((char *)r->data + sizeof(*p), p->len)))
		return bad(log, r, "family or length (once per family, text with no NUL; nft's: tables only)");
	m->ipt[fam] = strndup((char *)r->data + sizeof(*p), p->len);
	m->ipt_len[fam] = p->len;
	return m->ipt[fam] ? 0 : log_err(log, ENOMEM, "iptables:");
}

int netns_load_rec(struct ckpt_log *log, struct netns_img *m, const struct rec *r)
{
	static const size_t sizes[] = {
		[REC_NET_LINK - REC_NET_LINK] = sizeof(struct rec_net_link),
		[REC_NET_ADDR - REC_NET_LINK] = sizeof(struct rec_net_addr),
		[REC_NET_ROUTE - REC_NET_LINK] = sizeof(struct rec_net_route),
		[REC_NET_SYSCTL - REC_NET_LINK] = sizeof(struct rec_net_sysctl),
		[REC_NET_IPTABLES - REC_NET_LINK] = sizeof(struct rec_net_iptables),
		[REC_NET_BRIDGE - REC_NET_LINK] = sizeof(struct rec_net_bridge),
		[REC_NET_BRPORT - REC_NET_LINK] = sizeof(struct rec_net_brport),
	};
	size_t want = sizes[r->type - REC_NET_LINK];
	bool fixed = r->type <= REC_NET_ROUTE || r->type >= REC_NET_BRIDGE;

	if (fixed ? r->data_len != want : r->data_len < want)
		return log_err(log, EBADMSG, "%s record %llu: %zu bytes, need %s%zu",
			       rec_type_name(r->type), (unsigned long long)r->index, r->data_len,
			       fixed ? "" : "at least ", want);
	if (m->nr_links >= NETNS_MAX_RECS || m->nr_addrs >= NETNS_MAX_RECS ||
	    m->nr_routes >= NETNS_MAX_RECS)
		return bad(log, r, "too many");
	switch (r->type) {
	case REC_NET_LINK: return load_link(log, m, r);
	case REC_NET_ADDR: return load_addr(log, m, r);
	case REC_NET_ROUTE: return load_route(log, m, r);
	case REC_NET_SYSCTL: return load_sysctl(log, m, r);
	case REC_NET_BRIDGE: return load_bridge(log, m, r);
	case REC_NET_BRPORT: return load_brport(log, m, r);
	default: return load_ipt(log, m, r);
	}
}

/* The links' references to each other and the addresses' and routes'
 * to links, once every record is in. */
static bool has_link(const struct netns_img *m, int32_t ifindex)
{
	for (size_t k = 0; k < m->nr_links && ifindex; k++)
		if (m->links[k].ifindex == ifindex)
			return true;
	return !ifindex;
}

int netns_img_check(struct ckpt_log *log, const struct netns_img *m)
{

	for (size_t i = 0; i < m->nr_links; i++) {
		const struct rec_net_link *l = &m->links[i], *p = NULL, *b = NULL;

		for (size_t k = 0; k < m->nr_links; k++) {
			if (l->peer && m->links[k].ifindex == l->peer)
				p = &m->links[k];
			if (l->master && m->links[k].ifindex == l->master)
				b = &m->links[k];
		}
		if ((l->peer && (!p || p == l)) ||
		    (p && l->kind == NET_LINK_VETH && (p->kind != NET_LINK_VETH || p->peer != l->ifindex)) ||
		    (p && l->kind == NET_LINK_MACVLAN && p->kind == NET_LINK_MACVLAN) ||
		    (l->master && (!b || b->kind != NET_LINK_BRIDGE || b == l)))
			return log_err(log, EBADMSG, "bad NET_LINK %s: its peer, lower device or bridge is not one of the image's",
				       l->name);
	}
	for (size_t i = 0; i < m->nr_addrs; i++)
		if (!has_link(m, m->addrs[i].ifindex))
			return log_err(log, EBADMSG, "bad NET_ADDR: ifindex %d is no NET_LINK's",
				       m->addrs[i].ifindex);
	for (size_t i = 0; i < m->nr_routes; i++)
		if (!has_link(m, m->routes[i].oif))
			return log_err(log, EBADMSG, "bad NET_ROUTE: ifindex %d is no NET_LINK's",
				       m->routes[i].oif);
	return 0;
}

void netns_img_free(struct netns_img *m)
{
	for (size_t i = 0; i < m->nr_sysctls; i++) {
		free(m->sysctl_path[i]);
		free(m->sysctl_val[i]);
	}
	free(m->sysctl_path);
	free(m->sysctl_val);
	free(m->links);
	free(m->br);
	free(m->bp);
	free(m->addrs);
	free(m->routes);
	for (int fam = 0; fam < 3; fam++)
		free(m->ipt[fam]);
	if (m->caller_open)
		close(m->caller_net);
	memset(m, 0, sizeof(*m));
}

/* ---- the kind ---- */

/* The net namespace ckpt is in (at checkpoint, the container's): its
 * inode, for messages.  /proc/self: ckpt's pid may not be its pid in
 * the namespace of the /proc it sees. */
static unsigned long net_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (unsigned long)st.st_ino;
}

/* The root's, when its net namespace is its own: ckpt is in it. */
static int netns_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct netns_io io = { .log = c->log, .w = &c->w, .pid = t->pid };

	if (t != c->tasks[0] || !NS_OWN(c, NS_NET))
		return 0;
	io.ino = net_ino();
	return netns_save(&io);
}

static int netns_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct netns_img *m = kind_ctx_state(c, &kind_netns, sizeof(*m));

	if (!m)
		return log_err(c->log, ENOMEM, "net namespace:");
	if (t != c->tasks[0])
		return log_err(c->log, EBADMSG, "%s record %llu: not the root's", rec_type_name(r->type),
			       (unsigned long long)r->index);
	return netns_load_rec(c->log, m, r);
}

/* Every record in: how they refer to each other; and, to restart here,
 * restart's caller's namespace held for a veth's outer end (ckpt leaves
 * it when it joins the new one). */
static int netns_check(struct rst_ctx *c, struct rst_task *t)
{
	struct netns_img *m = KCSTATE(c, kind_netns);
	int ret;

	if (t != c->tasks[0])
		return 0;
	if (!m)		/* a namespace has its lo at least */
		return NS_OWN(c, NS_NET) ? log_err(c->log, EBADMSG, "the root's own net namespace has no NET_LINK record") : 0;
	ret = netns_img_check(c->log, m);
	if (!ret && !NS_OWN(c, NS_NET) && !(c->ns_join & (1u << NS_NET)))
		ret = log_err(c->log, EBADMSG, "the image has NET records and the root's net namespace is not its own");
	/* --join-ns net:PATH: that namespace as it is, nothing made */
	if (ret || !c->here || m->caller_open || !NS_OWN(c, NS_NET))
		return ret;
	ret = netns_ipt_check(c->log, m);
	if (ret)
		return ret;
	m->caller_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (m->caller_net < 0)
		return log_err(c->log, errno, "/proc/self/ns/net:");
	m->caller_open = true;
	return 0;
}

static int netns_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct netns_img *m = KCSTATE(c, kind_netns);
	struct netns_io io = { .log = c->log, .pid = t->pid };

	if (t != c->tasks[0] || !m || !NS_OWN(c, NS_NET))
		return 0;
	io.ino = net_ino();
	return netns_make(&io, m);
}

static void netns_free_ctx(void *state)
{
	netns_img_free(state);
	free(state);
}

/* ---- ckpt info ---- */

static const char *const link_kinds[] = {
	[NET_LINK_LOOPBACK] = "loopback", [NET_LINK_VETH] = "veth",
	[NET_LINK_MACVLAN] = "macvlan", [NET_LINK_BRIDGE] = "bridge",
};

static void hw_str(char *buf, const uint8_t *a, uint32_t n)
{
	buf[0] = 0;
	for (uint32_t i = 0; i < n && i < 32; i++)
		sprintf(buf + 3 * i - !!i, "%s%02x", i ? ":" : "", a[i]);
}

static void show_link(struct info_out *o, const struct rec_net_link *l)
{
	char hw[100];

	info_i64(o, "ifindex", l->ifindex);
	info_str(o, "name", str_ok(l->name, sizeof(l->name)) ? l->name : "?");
	info_str(o, "kind", l->kind > 0 && l->kind < NET_LINK_NR_KINDS ? link_kinds[l->kind] : "?");
	info_hex(o, "flags", l->flags);
	info_u64(o, "mtu", l->mtu);
	info_u64(o, "txqlen", l->txqlen);
	hw_str(hw, l->addr, l->addr_len);
	info_str(o, "address", hw);
	if (l->master)
		info_i64(o, "master", l->master);
	if (l->peer)
		info_i64(o, l->kind == NET_LINK_VETH ? "peer" : "lower", l->peer);
	if (l->mode)
		info_u64(o, "mode", l->mode);
	if (l->peer_name[0] && str_ok(l->peer_name, sizeof(l->peer_name))) {
		info_str(o, "peer_outside", l->peer_name);
		hw_str(hw, l->peer_addr, l->peer_addr_len < 8 ? l->peer_addr_len : 8);
		info_str(o, "peer_address", hw);
	}
}

static void show_ip(struct info_out *o, const char *key, int family, const uint8_t *a)
{
	char buf[INET6_ADDRSTRLEN];

	if (family != AF_INET && family != AF_INET6)
		return;
	info_str(o, key, inet_ntop(family, a, buf, sizeof(buf)) ? buf : "?");
}

static void show_addr(struct info_out *o, const struct rec_net_addr *a)
{
	info_i64(o, "ifindex", a->ifindex);
	show_ip(o, "local", a->family, a->local);
	info_u64(o, "prefixlen", a->prefixlen);
	info_u64(o, "scope", a->scope);
	info_hex(o, "flags", a->flags);
	if (a->has & NET_ADDR_HAS_PEER)
		show_ip(o, "peer", a->family, a->peer);
	if (a->has & NET_ADDR_HAS_BRD)
		show_ip(o, "broadcast", a->family, a->broadcast);
	if ((a->has & NET_ADDR_HAS_LABEL) && str_ok(a->label, sizeof(a->label)))
		info_str(o, "label", a->label);
	if (a->proto)
		info_u64(o, "proto", a->proto);
	if (a->valid != ~0u)
		info_u64(o, "valid", a->valid);
	if (a->preferred != ~0u)
		info_u64(o, "preferred", a->preferred);
}

static void show_route(struct info_out *o, const struct rec_net_route *r)
{
	info_u64(o, "table", r->table);
	info_u64(o, "type", r->type);
	if (r->has & NET_ROUTE_HAS_DST)
		show_ip(o, "dst", r->family, r->dst);
	else
		info_str(o, "dst", "default");
	info_u64(o, "dst_len", r->dst_len);
	if (r->has & NET_ROUTE_HAS_SRC)
		show_ip(o, "src", r->family, r->src);
	if (r->has & NET_ROUTE_HAS_GW)
		show_ip(o, "via", r->family, r->gateway);
	if (r->has & NET_ROUTE_HAS_OIF)
		info_i64(o, "oif", r->oif);
	if (r->has & NET_ROUTE_HAS_PREFSRC)
		show_ip(o, "prefsrc", r->family, r->prefsrc);
	if (r->has & NET_ROUTE_HAS_PRIO)
		info_u64(o, "metric", r->priority);
	info_u64(o, "protocol", r->protocol);
	info_u64(o, "scope", r->scope);
	if (r->metrics_mask)
		info_hex(o, "metrics", r->metrics_mask);
}

static void show_bridge(struct info_out *o, const struct rec_net_bridge *b)
{
	info_u64(o, "forward_delay", b->forward_delay);
	info_u64(o, "hello_time", b->hello_time);
	info_u64(o, "max_age", b->max_age);
	info_u64(o, "ageing_time", b->ageing_time);
	info_u64(o, "stp_state", b->stp_state);
	info_u64(o, "priority", b->priority);
	info_hex(o, "group_fwd_mask", b->group_fwd_mask);
	info_u64(o, "mcast_snooping", b->mcast_snooping);
	info_u64(o, "mcast_querier", b->mcast_querier);
	info_u64(o, "nf_call_iptables", b->nf_call_iptables);
	info_u64(o, "nf_call_ip6tables", b->nf_call_ip6tables);
	info_u64(o, "nf_call_arptables", b->nf_call_arptables);
}

static void show_brport(struct info_out *o, const struct rec_net_brport *p)
{
	static const char *const flags[] = {
		"hairpin", "guard", "protect", "fast_leave", "learning", "unicast_flood",
		"proxyarp", "mcast_flood", "bcast_flood", "isolated", "neigh_suppress",
		"mcast_to_unicast",
	};
	const uint8_t *v = (const uint8_t *)p + offsetof(struct rec_net_brport, hairpin);

	info_u64(o, "cost", p->cost);
	info_u64(o, "priority", p->priority);
	info_hex(o, "group_fwd_mask", p->group_fwd_mask);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		info_u64(o, flags[i], v[i]);
	info_u64(o, "mcast_router", p->mcast_router);
}

static void netns_show(struct info_out *o, const struct rec *r)
{
	const struct rec_net_sysctl *s = r->data;
	const struct rec_net_iptables *p = r->data;
	const char *path, *val;

	switch (r->type) {
	case REC_NET_LINK: show_link(o, r->data); break;
	case REC_NET_ADDR: show_addr(o, r->data); break;
	case REC_NET_ROUTE: show_route(o, r->data); break;
	case REC_NET_BRIDGE: show_bridge(o, r->data); break;
	case REC_NET_BRPORT: show_brport(o, r->data); break;
	case REC_NET_SYSCTL:
		path = s->path_len <= CKPT_PATH_MAX ? rec_str(r, sizeof(*s), s->path_len) : NULL;
		val = path && s->value_len <= CKPT_PATH_MAX ?
			rec_str(r, sizeof(*s) + s->path_len, s->value_len) : NULL;
		info_str(o, "path", path ? path : "?");
		if (val) {
			char v[128];

			snprintf(v, sizeof(v), "%.*s", (int)strcspn(val, "\n"), val);
			info_str(o, "value", v);
		}
		break;
	case REC_NET_IPTABLES:
		info_u64(o, "family", p->family);
		info_u64(o, "len", p->len);
		break;
	}
}

static const struct rec_desc netns_recs[] = {
	{ REC_NET_LINK, "NET_LINK", sizeof(struct rec_net_link) },
	{ REC_NET_ADDR, "NET_ADDR", sizeof(struct rec_net_addr) },
	{ REC_NET_ROUTE, "NET_ROUTE", sizeof(struct rec_net_route) },
	{ REC_NET_SYSCTL, "NET_SYSCTL", sizeof(struct rec_net_sysctl) },
	{ REC_NET_IPTABLES, "NET_IPTABLES", sizeof(struct rec_net_iptables) },
	{ REC_NET_BRIDGE, "NET_BRIDGE", sizeof(struct rec_net_bridge) },
	{ REC_NET_BRPORT, "NET_BRPORT", sizeof(struct rec_net_brport) },
	{ 0 },
};

const struct kind_ops kind_netns = {
	.name = "netns",
	.recs = netns_recs,
	.phase = PHASE_IMAGE,
	.dump = netns_dump,
	.load = netns_load,
	.check = netns_check,
	.restore = netns_restore,
	.show = netns_show,
	.free_ctx = netns_free_ctx,
};
