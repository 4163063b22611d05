/* netns.h - between the parts of the netns kind (netns.c: the kind, the
 * records' checks; netns_nl.c: rtnetlink; netns_link.c: devices;
 * netns_addr.c: addresses and routes; netns_sys.c: sysctls and
 * iptables; netns_check.c: what is not saved, refused).  Every part acts on the network namespace the calling
 * process is in: at checkpoint ckpt runs inside the container's, at
 * restart it has joined the new one the ns kind made.
 */
#ifndef CKPT_KINDS_NETNS_H
#define CKPT_KINDS_NETNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "../image.h"
#include "../log.h"

/* What restart makes again: the records as loaded (validated). */
struct netns_img {
	struct rec_net_link *links;
	size_t nr_links;
	struct netns_br {	/* a bridge's options (NET_BRIDGE) */
		int32_t ifindex;
		struct rec_net_bridge o;
	} *br;
	size_t nr_br;
	struct netns_brport {	/* a bridge port's options (NET_BRPORT) */
		int32_t ifindex;
		struct rec_net_brport o;
	} *bp;
	size_t nr_bp;
	uint64_t last_link;	/* the index of the last NET_LINK record */
	struct rec_net_addr *addrs;
	size_t nr_addrs;
	struct rec_net_route *routes;
	size_t nr_routes;
	char **sysctl_path, **sysctl_val;
	size_t nr_sysctls;
	/* iptables, ip6tables, nftables' own tables (NETNS_NFT):
	 * NUL-terminated */
	char *ipt[3];
	size_t ipt_len[3];
	int caller_net;		/* restart's caller's namespace (an fd) for a
				 * veth's outer end, if caller_open */
	bool caller_open;
};

/* The firewall text of nft's own tables, beside iptables' and
 * ip6tables' (netns_img.ipt[], NET_IPTABLES family 1) */
#define NETNS_NFT	2

/* The save and make of the current namespace: pid and ns for messages. */
struct netns_io {
	struct ckpt_log *log;
	struct img_writer *w;	/* saving */
	pid_t pid;
	unsigned long ino;	/* the namespace's inode: net:[ino] */
	bool nft_ipt[2];	/* nftables has iptables' (ip6tables') tables */
	bool nft_native;	/* ... and tables of its own (nft's) */
};

/* netns_nl.c: an rtnetlink socket and its requests. */
struct nl {
	int fd;
	uint32_t seq;
	char *buf;		/* the request being built, then replies */
	size_t len, cap;
};

int nl_open(struct netns_io *io, struct nl *nl);
/* A netlink socket of @proto: 0 or -errno, not reported. */
int nl_open_proto(struct nl *nl, int proto);
void nl_close(struct nl *nl);
/* A new request of @type with @flags (NLM_F_REQUEST added), then its
 * fixed header of @hlen bytes (zeroed); returns it. */
void *nl_req(struct nl *nl, uint16_t type, uint16_t flags, size_t hlen);
/* An attribute to the request; nl_nest()/nl_nest_end() around nested
 * ones. */
int nl_put(struct nl *nl, uint16_t type, const void *data, size_t len);
/* Bytes as they are (a header nested in an attribute). */
int nl_raw(struct nl *nl, const void *data, size_t len);
int nl_put_u32(struct nl *nl, uint16_t type, uint32_t v);
size_t nl_nest(struct nl *nl, uint16_t type);
void nl_nest_end(struct nl *nl, size_t at);
/* Send the request and read the kernel's answer: 0 or -errno (not
 * reported: the caller says what it was doing). */
int nl_call(struct nl *nl);
/* Send a dump request; each message is handed to @fn until it returns
 * nonzero.  -errno of the socket or the dump, or @fn's. */
int nl_dump(struct nl *nl, int (*fn)(void *arg, struct nlmsghdr *h),
	    void *arg);
/* The attributes of a message after its @hlen-byte header, by type
 * (@max and below; later ones win): tb[type] or NULL. */
void nl_parse(struct nlmsghdr *h, size_t hlen, struct rtattr **tb, int max);
void nl_parse_nested(struct rtattr *a, struct rtattr **tb, int max);

/* netns_link.c */
int netns_links_save(struct netns_io *io, struct nl *nl);
/* Make the devices, with their addresses, MTUs and masters, down. */
int netns_links_make(struct netns_io *io, struct nl *nl,
		     const struct netns_img *m, int32_t *map);
/* Then up, those saved up. */
int netns_links_up(struct netns_io *io, struct nl *nl,
		   const struct netns_img *m, const int32_t *map);
/* The ifindex restart gave saved ifindex @i (0 stays 0): -1 if none. */
int32_t netns_ifmap(const struct netns_img *m, const int32_t *map, int32_t i);

/* netns_addr.c */
int netns_addrs_save(struct netns_io *io, struct nl *nl);
int netns_addrs_make(struct netns_io *io, struct nl *nl,
		     const struct netns_img *m, const int32_t *map);
int netns_routes_save(struct netns_io *io, struct nl *nl);
int netns_routes_make(struct netns_io *io, struct nl *nl,
		      const struct netns_img *m, const int32_t *map);

/* netns_check.c: what the namespace holds that ckpt does not save
 * (policy rules, permanent neighbours, qdiscs, nftables tables not
 * iptables'): refused, named. */
int netns_unsaved_check(struct netns_io *io, struct nl *nl);

/* netns_sys.c */
int netns_sysctls_save(struct netns_io *io);
int netns_sysctls_make(struct netns_io *io, const struct netns_img *m);
int netns_ipt_save(struct netns_io *io);
/* What `*-save` wrote (@text[0] IPv4, [1] IPv6) and nft's own tables
 * (@text[NETNS_NFT]) make the namespace's nftables rules again, tried in
 * a namespace of a child's own: 0, or refused (reported). */
int netns_ipt_verify(struct netns_io *io, char *const text[3], const size_t len[3]);
int netns_ipt_make(struct netns_io *io, const struct netns_img *m);
/* Restart, before any process exists: *-restore is here for the rules
 * of the image, if any. */
int netns_ipt_check(struct ckpt_log *log, const struct netns_img *m);

/* netns.c: the whole of the current namespace saved into io->w, or
 * made again from @m (restart's caller's namespace, for a veth's outer
 * end, in m->caller_net). */
int netns_save(struct netns_io *io);
int netns_make(struct netns_io *io, const struct netns_img *m);
/* One record into @m, validated: 0, -EBADMSG (reported) or -ENOMEM. */
int netns_load_rec(struct ckpt_log *log, struct netns_img *m,
		   const struct rec *r);
/* How the records refer to each other (peers, masters, ifindexes),
 * once all are in: 0 or -EBADMSG (reported). */
int netns_img_check(struct ckpt_log *log, const struct netns_img *m);
void netns_img_free(struct netns_img *m);

#endif
