/* ns_user.h - a container's own user namespace (ns_user.c), for ns.c,
 * container.c and the kinds whose ids it maps (creds). */
#ifndef CKPT_KINDS_NS_USER_H
#define CKPT_KINDS_NS_USER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../ctx.h"

struct ns_user_maps {
	uint32_t nr[2];		/* uid, gid extents */
	uint32_t flags;		/* NS_USER_SETGROUPS_DENY */
	struct rec_ns_user_extent ext[2][NS_USER_MAX_EXTENTS];
	/* setgroups denied: the groups every process of it has */
	uint32_t nr_groups;
	uint32_t *groups;
};

void ns_user_maps_free(struct ns_user_maps *m);

/* Checkpoint: NS_USER for @root's user namespace, after the check that
 * it is a child of ours and owns every other namespace of @root's own
 * (@own: 1 << NS_x); a refusal names them. */
int ns_user_check(struct cpt_ctx *c, pid_t root, uint32_t own);
int ns_user_dump(struct cpt_ctx *c, pid_t root);

/* An NS_USER record's payload into @m: 0, or -EBADMSG (said). */
int ns_user_parse(struct ckpt_log *log, const void *data, uint64_t len, struct ns_user_maps *m);
/* Before restart makes anything: the maps of a container image's own
 * user namespace, read from @fd's first records (1, @m filled), or 0 when
 * it has none; the fd is left where it was found. */
int ns_user_prescan(int fd, struct ns_user_maps *m, struct ckpt_log *log);
/* Restart: @pid (the root, just cloned into its new user namespace)
 * gets its maps. */
int ns_user_write_maps(pid_t pid, const struct ns_user_maps *m, struct ckpt_log *log);
/* The id the namespace gives host id @id (gid: uid's or gid's map):
 * true, or false when it maps none. */
bool ns_user_id(const struct ns_user_maps *m, bool gid, uint32_t id, uint32_t *out);
/* The host ids of the namespace's root (its id 0): true, or false when
 * it has none. */
bool ns_user_root(const struct ns_user_maps *m, uint32_t *uid, uint32_t *gid);
/* The root puppet @t, in its new namespace, becomes that namespace's
 * root (the files it makes are then the namespace's). */
int ns_user_become_root(struct rst_ctx *c, struct rst_task *t, const struct ns_user_maps *m);

struct info_out;
void ns_user_show(struct info_out *o, const struct rec *r);

#endif
