/* image_format_cgroup.h - the records of cgroups: groups, their files,
 * the threads' memberships.
 * Included by image_format.h, which has the records' framing and the
 * pinned sizes: include that, not this. */
#ifndef CKPT_IMAGE_FORMAT_CGROUP_H
#define CKPT_IMAGE_FORMAT_CGROUP_H

#include <stdint.h>

/* REC_CGROUP: a cgroup the tree's threads are in, one of its
 * descendants (below the root process's group), or the root of a
 * cgroup namespace.  Written once, before the first record naming it,
 * parents before children; its PROP records follow it. */
#define CGROUP_V2		0x1	/* of the unified hierarchy */
#define CGROUP_BASE		0x2	/* checkpoint --cgroup-root named it: the
					 * one restart --cgroup-root replaces in
					 * its hierarchy (else the root process's) */
#define CGROUP_FLAGS		0x3

struct rec_cgroup {
	uint32_t id;		/* 1 + the number of earlier CGROUPs */
	uint32_t flags;		/* CGROUP_V2 */
	uint32_t uid;		/* its directory's owner and mode */
	uint32_t gid;
	uint32_t mode;		/* permission bits only */
	uint32_t ctrl_len;	/* bytes of the hierarchy's name that follow:
				 * its controllers and name= as
				 * /proc/PID/cgroup says ("cpu,cpuacct",
				 * "name=x"; empty for v2), no NUL */
	uint32_t path_len;	/* then the path in it, from its root
				 * ("/a/b"; "/" is the root), no NUL */
	uint32_t reserved;
};

#define CGPROP_VALUE		0x1	/* value_len bytes to write back */
#define CGPROP_OWNER		0x2	/* uid, gid and mode to set */
#define CGPROP_FLAGS		0x3

/* REC_CGROUP_PROP: one file of the last CGROUP, set when restart makes
 * the group again. */
struct rec_cgroup_prop {
	uint32_t group;		/* the last CGROUP's id */
	uint32_t flags;		/* CGPROP_* */
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;		/* permission bits */
	uint32_t name_len;	/* bytes of the file's name that follow */
	uint32_t value_len;	/* then the value, as read */
	uint32_t reserved;
};

/* REC_CGROUP_MEMBER: the last THREAD's cgroups, one per hierarchy, and
 * its cgroup namespace. */
struct rec_cgroup_member {
	uint32_t nr;		/* struct rec_cgroup_ref that follow */
	uint32_t ns;		/* 0: restart's own cgroup namespace (the one
				 * ckpt had); N: the N-th other one met */
};

struct rec_cgroup_ref {
	uint32_t group;		/* its CGROUP */
	uint32_t ns_root;	/* ns: the namespace's root in that
				 * hierarchy, a CGROUP; else 0 */
};

#endif
