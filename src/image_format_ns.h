/* image_format_ns.h - the records of namespaces: uts, user, time,
 * pid, ipc (SysV and POSIX queues), mount, network.
 * Included by image_format.h, which has the records' framing and the
 * pinned sizes: include that, not this. */
#ifndef CKPT_IMAGE_FORMAT_NS_H
#define CKPT_IMAGE_FORMAT_NS_H

#include <stdint.h>

/* REC_NS_UTS: the root process was in a uts namespace of its own (not
 * ckpt's): restart makes a new one with these names, and every process
 * of the tree joins it.  After the root's TASK, once. */
struct rec_ns_uts {
	char nodename[65];	/* NUL-terminated, as uname() gives them */
	char domainname[65];
	uint8_t reserved[6];
};

/* REC_NS: a container's image (HEAD_CONTAINER): which of its init's
 * namespaces are its own (made again at restart, their content saved by
 * their kinds) and which it shared with ckpt's caller (the host's: left
 * as restart finds them), a bit 1 << NS_x (kinds/ns.h) each.  After the
 * root's TASK, once. */
struct rec_ns {
	uint32_t own;
	uint32_t shared;
	uint64_t reserved;
};

/* REC_NS_USER: a container's own user namespace (NS has it own), a
 * child of ckpt's caller's: its uid and gid maps, each extent's lower ids
 * as the caller's namespace sees them (nr_uid extents, then nr_gid), and
 * whether setgroups() is denied in it.  The ids of the other records
 * (CREDS, files, ipc objects) are the caller's too.  Where setgroups is
 * denied every process of it has the supplementary groups its maker had
 * (the caller's ids, nr_groups of them after the extents); else
 * nr_groups is 0.  Right after NS, once: restart reads it before it
 * makes the root, whose pid namespace the new user namespace owns. */
#define NS_USER_MAX_EXTENTS	340	/* the kernel's */
#define NS_USER_MAX_GROUPS	65536	/* NGROUPS_MAX */
#define NS_USER_SETGROUPS_DENY	0x1
struct rec_ns_user_extent {
	uint32_t first;		/* in the namespace */
	uint32_t lower;		/* in its parent */
	uint32_t count;
};
struct rec_ns_user {
	uint32_t nr_uid, nr_gid;
	uint32_t flags;
	uint32_t nr_groups;
	/* struct rec_ns_user_extent[nr_uid + nr_gid], uint32_t[nr_groups] */
};

/* REC_NS_TIME: a container's own time namespace, as its clocks read at
 * the checkpoint: restart sets the new namespace's offsets so that they
 * go on from there (they stand still while it is not running).  After
 * NS, once. */
struct rec_ns_time {
	int64_t monotonic_ns;
	int64_t boottime_ns;
};

/* REC_NSPID: a process of the tree in a pid namespace nested below the
 * root's (depth levels down), or one that forks its children into one
 * (unshare(CLONE_NEWPID)).  Level i+1 (i < depth) is named by the pid,
 * as the root's namespace sees it, of its init (a process of the tree,
 * pid 1 there); @pid[i] is the process's pid at that level.  After its
 * TASK, before its THREADs; unused levels 0.  Restart forks it with
 * clone3(set_tid) of every level, its namespaces made by their inits'
 * parents. */
#define NSPID_LEVELS	8
struct rec_nspid {
	uint32_t depth;		/* 0..NSPID_LEVELS */
	/* its pid_for_children, when not its own: the init of that
	 * namespace (a child of it, one level down); else 0 */
	uint32_t children;
	uint32_t ns[NSPID_LEVELS];
	uint32_t pid[NSPID_LEVELS];
};

/* REC_NSTID: a thread (not the main one) of a process with a NSPID of
 * depth > 0: its tid at levels 1..depth (the rest 0).  After its
 * THREAD. */
struct rec_nstid {
	uint32_t tid[NSPID_LEVELS];
};

/* REC_IPC_NS: the root process was in an ipc namespace of its own: the
 * namespace's sysctls (kernel.shm*, msg*, sem, *_next_id, and
 * fs.mqueue.*), after the root's TASK, once; its objects follow (the
 * SysV segments in SYSV_SHM records).  Restart makes them in the new
 * namespace, then writes these. */
struct rec_ipc_ns {
	uint64_t shmmax, shmall;
	int32_t shmmni, shm_rmid_forced;	/* 0..IPCMNI, 0..1 */
	int32_t msgmax, msgmnb, msgmni;		/* >= 0, msgmni <= IPCMNI */
	int32_t sem[4];		/* semmsl, semmns, semopm, semmni (<= IPCMNI) */
	int32_t shm_next_id, msg_next_id, sem_next_id;	/* -1: none */
	int32_t mq_queues_max;	/* >= 0 */
	int32_t mq_msg_max, mq_msg_default;	/* 1..65536 */
	int32_t mq_msgsize_max, mq_msgsize_default;	/* 128..16 MiB */
	uint32_t reserved;
};

/* REC_IPC_MSQ: a SysV message queue, made again with its id and key;
 * its nr_msgs messages follow in order, one IPC_MSG each. */
struct rec_ipc_msq {
	int32_t id;		/* msqid, >= 0 */
	int32_t key;
	uint32_t mode;		/* 0777 */
	uint32_t uid, gid, cuid, cgid;
	uint32_t nr_msgs;
	uint64_t qbytes;	/* msg_qbytes, <= INT64_MAX */
	uint64_t cbytes;	/* the messages' bytes, added up */
	int64_t stime, rtime, ctime;	/* shown only: not settable */
	uint32_t lspid, lrpid;	/* shown only */
};

/* REC_IPC_MSG: a message of the last IPC_MSQ, in queue order. */
struct rec_ipc_msg {
	int64_t mtype;		/* > 0 */
	uint32_t len;		/* bytes of text that follow */
	uint32_t reserved;
	/* char text[len]; */
};

/* REC_IPC_SEM: a SysV semaphore set, made again with its id and key. */
struct rec_ipc_sem {
	int32_t id;		/* semid, >= 0 */
	int32_t key;
	uint32_t mode;		/* 0777 */
	uint32_t uid, gid, cuid, cgid;
	uint32_t nsems;		/* >= 1 */
	int64_t otime, ctime;	/* shown only */
	/* uint16_t val[nsems], each <= 32767 (SEMVMX) */
};

/* REC_IPC_MQ: a POSIX message queue; its nr_msgs messages follow in the
 * order mq_receive gives them (priority, then age), one IPC_MQ_MSG each. */
struct rec_ipc_mq {
	char name[256];		/* without the '/', NUL-terminated, no '/' */
	uint32_t mode;		/* 0777 */
	uint32_t uid, gid;
	uint32_t nr_msgs;	/* <= maxmsg */
	int64_t maxmsg;		/* 1..65536 */
	int64_t msgsize;	/* 1..16 MiB */
};

/* REC_IPC_MQ_MSG: a message of the last IPC_MQ. */
struct rec_ipc_mq_msg {
	uint32_t prio;		/* < 32768 */
	uint32_t len;		/* bytes that follow, <= the queue's msgsize */
	/* char data[len]; */
};
/* REC_MNT: one mount of the root's own mount namespace, in tree order
 * (each after its parent), the root's first.  Then, for a tmpfs made
 * again with its content (MNT_NEW_TMPFS), its files.  The strings follow
 * the struct, each NUL-terminated, *_len counting the NUL:
 * mountpoint (relative to the container's root, "" for the root),
 * fstype, source (as mountinfo has it), root (the mounted subtree in its
 * filesystem, relative: "" for the whole), super options (as mountinfo
 * has them, "rw"/"ro" aside), host path (MNT_BIND: absolute, where the
 * host has that subtree; else ""). */
enum mnt_how {
	MNT_BIND = 1,		/* a bind of a host path */
	MNT_NEW,		/* a new instance: proc, sysfs, devpts, mqueue,
				 * cgroup2, overlay (its options) */
	MNT_NEW_TMPFS,		/* a new tmpfs, its files restored */
	MNT_PEER,		/* a bind of an earlier mount (bind_of) of the
				 * same filesystem */
	MNT_HOW_MAX = MNT_PEER
};

#define MNT_F_RDONLY		0x01	/* per-mount flags (mountinfo field 6) */
#define MNT_F_NOSUID		0x02
#define MNT_F_NODEV		0x04
#define MNT_F_NOEXEC		0x08
#define MNT_F_NOATIME		0x10
#define MNT_F_NODIRATIME	0x20
#define MNT_F_RELATIME		0x40	/* neither atime flag: strictatime */
#define MNT_F_NOSYMFOLLOW	0x80
#define MNT_F_ALL		0xff

#define MNT_P_UNBINDABLE	0x1	/* propagation beyond shared/master */
#define MNT_P_EXT_SLAVE		0x2	/* a slave of a group outside the
					 * container (the host's) */
#define MNT_P_ALL		0x3

struct rec_mnt {
	uint32_t id;		/* mount id at checkpoint, unique, not 0 */
	uint32_t parent;	/* an earlier MNT's id; 0 for the root */
	uint32_t how;		/* enum mnt_how */
	uint32_t flags;		/* MNT_F_* */
	uint32_t sb_ro;		/* the filesystem is read-only: 0 or 1 */
	uint32_t shared;	/* peer group (shared:N), 0: none */
	uint32_t master;	/* master:N, a group of the container's; 0 */
	uint32_t prop;		/* MNT_P_* */
	uint32_t bind_of;	/* MNT_PEER: the earlier mount's id, else 0 */
	uint32_t dev;		/* st_dev as major << 20 | minor (for info) */
	uint32_t mp_len, type_len, source_len, root_len, opts_len, host_len;
	uint32_t reserved;
	/* char mountpoint[], fstype[], source[], root[], opts[], host[]; */
};

/* REC_MNT_FILE: a file of the tmpfs of the last MNT, parents before
 * children; then its path (relative to the tmpfs's root, "" for the
 * root directory itself) and, for a symlink, its target, both
 * NUL-terminated (target_len 0 for any other file). */
struct rec_mnt_file {
	uint32_t mode;		/* st_mode: type and permissions */
	uint32_t uid, gid;
	uint32_t link;		/* n > 0: a hard link of the mount's n-th
				 * file (from 1), which it follows */
	uint64_t size;		/* regular file: its length */
	uint64_t rdev;		/* device node: st_rdev */
	int64_t atime, mtime;	/* seconds */
	uint32_t atime_ns, mtime_ns;
	uint32_t path_len, target_len;
};

/* REC_MNT_DATA: bytes of the last MNT_FILE (a regular file) at @off;
 * @len bytes follow.  Holes are not written; runs ascend. */
struct rec_mnt_data {
	uint64_t off;
	uint32_t len;		/* 1 .. MNT_DATA_MAX */
	uint32_t reserved;
};
#define MNT_DATA_MAX	(1u << 20)

/* The root's own network namespace (kinds/netns.c), after the root's
 * TASK: its devices (NET_LINK, in ifindex order), their addresses
 * (NET_ADDR, in the order the kernel lists them: an IPv4 primary before
 * its secondaries), the routes ckpt cannot leave to the kernel
 * (NET_ROUTE), the namespace's sysctls (NET_SYSCTL) and its firewall
 * (NET_IPTABLES).  Interface indexes are the saved namespace's; restart
 * keeps them when it can and maps them when it cannot. */
enum net_link_kind {
	NET_LINK_LOOPBACK = 1,	/* lo, made with the namespace */
	NET_LINK_VETH,		/* peer: its other end in the namespace, or 0
				 * and peer_name: in restart's caller's */
	NET_LINK_MACVLAN,	/* peer: its lower device; mode */
	NET_LINK_BRIDGE,
	NET_LINK_NR_KINDS
};

/* the interface flags restart sets again (IFF_*) */
#define NET_IFF_SAVED	(0x1 | 0x80 | 0x100 | 0x200 | 0x1000)	/* UP,
				 * NOARP, PROMISC, ALLMULTI, MULTICAST */

struct rec_net_link {
	int32_t ifindex;	/* > 0 */
	uint32_t kind;		/* NET_LINK_* */
	uint32_t flags;		/* NET_IFF_SAVED bits */
	uint32_t mtu;
	int32_t master;		/* the bridge it is a port of, 0: none */
	int32_t peer;		/* see net_link_kind; 0: none */
	uint32_t mode;		/* macvlan: MACVLAN_MODE_*; else 0 */
	uint32_t txqlen;
	uint32_t addr_len;	/* bytes of addr: its hardware address */
	uint32_t peer_addr_len;	/* veth outside: the peer's, in peer_addr */
	uint8_t addr[32];
	char name[16];		/* NUL-terminated */
	char peer_name[16];	/* veth with its peer outside: its name; else
				 * "" */
	uint8_t peer_addr[8];
};

#define NET_ADDR_FLAGS	(0x02 | 0x10 | 0x100 | 0x200 | 0x400)	/* IFA_F_
				 * NODAD, HOMEADDRESS, MANAGETEMPADDR,
				 * NOPREFIXROUTE, MCAUTOJOIN */

struct rec_net_addr {
	uint8_t family;		/* AF_INET, AF_INET6 */
	uint8_t prefixlen;	/* <= 32 or 128 */
	uint8_t scope;		/* RT_SCOPE_* */
	uint8_t proto;		/* IFA_PROTO, 0: none */
	uint32_t flags;		/* NET_ADDR_FLAGS bits */
	int32_t ifindex;	/* its NET_LINK */
	uint32_t valid;		/* lifetimes in seconds, ~0: forever */
	uint32_t preferred;
	uint32_t has;		/* NET_ADDR_HAS_* */
	uint8_t local[16];	/* IFA_LOCAL (IPv4), IFA_ADDRESS (IPv6) */
	uint8_t peer[16];	/* IPv4: IFA_ADDRESS, the peer's */
	uint8_t broadcast[16];	/* IPv4: IFA_BROADCAST */
	char label[16];		/* IPv4: IFA_LABEL, NUL-terminated */
};

#define NET_ADDR_HAS_PEER	0x1
#define NET_ADDR_HAS_BRD	0x2
#define NET_ADDR_HAS_LABEL	0x4
#define NET_ADDR_HAS		0x7

#define NET_RTAX_SLOTS	20	/* rec_net_route.metrics: RTAX_1.. */
#define NET_ROUTE_HAS_DST	0x1
#define NET_ROUTE_HAS_SRC	0x2
#define NET_ROUTE_HAS_GW	0x4
#define NET_ROUTE_HAS_PREFSRC	0x8
#define NET_ROUTE_HAS_OIF	0x10
#define NET_ROUTE_HAS_PRIO	0x20
#define NET_ROUTE_HAS_PREF	0x40
#define NET_ROUTE_HAS		0x7f

struct rec_net_route {
	uint8_t family;		/* AF_INET, AF_INET6 */
	uint8_t dst_len;	/* <= 32 or 128 */
	uint8_t src_len;
	uint8_t tos;
	uint8_t protocol;	/* RTPROT_*, never RTPROT_KERNEL */
	uint8_t scope;
	uint8_t type;		/* RTN_*, 1..RTN_MAX */
	uint8_t pref;		/* IPv6: RTA_PREF */
	uint32_t table;
	uint32_t flags;		/* rtm_flags: RTNH_F_ONLINK only */
	int32_t oif;		/* a NET_LINK, if NET_ROUTE_HAS_OIF */
	uint32_t priority;
	uint32_t has;		/* NET_ROUTE_HAS_* */
	uint32_t metrics_mask;	/* bit i: metrics[i] is RTAX i+1 */
	uint8_t dst[16], src[16], gateway[16], prefsrc[16];
	uint32_t metrics[NET_RTAX_SLOTS];
};

/* NET_BRIDGE: a bridge's options (IFLA_BR_*, as netlink says them:
 * times in hundredths of a second), right after its NET_LINK. */
struct rec_net_bridge {
	uint32_t forward_delay;
	uint32_t hello_time;
	uint32_t max_age;
	uint32_t ageing_time;
	uint32_t stp_state;	/* 0 off, 1 the kernel's */
	uint16_t priority;
	uint16_t group_fwd_mask;
	uint8_t mcast_snooping;	/* 0/1 */
	uint8_t mcast_querier;	/* 0/1 */
	uint8_t nf_call_iptables;	/* 0/1 */
	uint8_t nf_call_ip6tables;	/* 0/1 */
	uint8_t nf_call_arptables;	/* 0/1 */
	uint8_t reserved[3];
};

/* NET_BRPORT: the options of a bridge's port (IFLA_BRPORT_*), right
 * after its NET_LINK (which has a master). */
struct rec_net_brport {
	uint32_t cost;
	uint16_t priority;	/* <= 63 */
	uint16_t group_fwd_mask;
	uint8_t hairpin;	/* each 0/1 */
	uint8_t guard;
	uint8_t protect;
	uint8_t fast_leave;
	uint8_t learning;
	uint8_t unicast_flood;
	uint8_t proxyarp;
	uint8_t mcast_flood;
	uint8_t bcast_flood;
	uint8_t isolated;
	uint8_t neigh_suppress;
	uint8_t mcast_to_unicast;
	uint8_t mcast_router;	/* 0..3 */
	uint8_t reserved[3];
};

/* NET_SYSCTL: path_len bytes of the path under /proc/sys/net
 * ("ipv4/conf/all/forwarding"), NUL-terminated, then value_len bytes of
 * its value as read, NUL-terminated. */
struct rec_net_sysctl {
	uint32_t path_len;
	uint32_t value_len;
};

/* NET_IPTABLES: `iptables-save` (family 4) or `ip6tables-save` (6)
 * output, len bytes, no NUL, fed to *-restore at restart; family 1: the
 * blocks of `nft list ruleset` of the tables that are nft's own (not
 * iptables'), fed to `nft -f`.  Once per family. */
struct rec_net_iptables {
	uint32_t family;
	uint32_t len;
};

#endif
