/* ns.h - the namespaces of a container (a tree whose root is the init of
 * a pid namespace of its own), between the ns kind, which decides which
 * are the root's own (ns_own), and the kinds that save and make their
 * content (mounts, network, ipc).
 *
 * Checkpoint: ckpt runs inside the container's pid, net, ipc, uts and
 * time namespaces (container.c) and in a private mount namespace of
 * its own whose /proc is the container's; the container's mounts are
 * /proc/1/mountinfo and /proc/1/root.  Restart: the root (pid 1) is made
 * in a new pid namespace; the ns kind has the root make (or join) the
 * others before it forks the other processes, which are born in them,
 * and ckpt then joins its net, ipc, uts and time namespaces, so that the
 * kinds after ns configure them directly.
 */
#ifndef CKPT_KINDS_NS_H
#define CKPT_KINDS_NS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum ns_type {
	NS_PID, NS_MNT, NS_NET, NS_IPC, NS_UTS, NS_USER, NS_TIME, NS_CGROUP,
	NR_NS_TYPES
};

/* A namespace, as stat() of its /proc/PID/ns file gives it (ino 0: this
 * kernel has none of that type). */
struct ns_id {
	uint64_t dev, ino;
};

/* A thread's namespaces, and those it forks its children into (pid,
 * time), which unshare() may have made differ. */
struct ns_ids {
	struct ns_id id[NR_NS_TYPES];
	struct ns_id children[2];
};

struct ckpt_log;

/* @pid's namespaces (0: ours). */
int ns_ids_read(pid_t pid, struct ns_ids *ids, struct ckpt_log *log);
const char *ns_name(enum ns_type type);

/* cpt_ctx and rst_ctx both have uint32_t ns_own: bit 1 << NS_x when the
 * root's x namespace is its own (not ckpt's caller's). */
#define NS_OWN(c, type)	(!!((c)->ns_own & (1u << (type))))

#endif
