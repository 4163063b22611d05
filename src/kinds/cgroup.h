/* cgroup.h - what the parts of the cgroup kind share (cgroup.c: the
 * hierarchies, the table, `ckpt info`; cgroup_dump.c: checkpoint;
 * cgroup_restore.c: load, check and restore).
 */
#ifndef CKPT_KINDS_CGROUP_H
#define CKPT_KINDS_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../kinds.h"

#define MAX_GROUPS	4096	/* groups in an image */
#define MAX_HIERS	64	/* hierarchies */
#define MAX_PROPS	256	/* files of a group */
#define MAX_DEPTH	64	/* below the root process's group */
#define MAX_VALUE	65536	/* bytes of a file's value */
#define MAX_PATH	4096
#define MAX_CTRL	256
#define MAX_NAME	255

struct hier {
	char *ctrl;		/* as /proc/PID/cgroup names it; "" for v2 */
	bool v2;
	int fd;			/* its root, a detached mount; -1 */
	bool tried;		/* restart: a root-only one's mount tried */
};

struct hiers {
	struct hier *e;
	int n;
	size_t cap;
};

/* One line of a /proc cgroup file, split in place. */
struct cg_line {
	char *ctrl;
	char *path;
	bool v2;
};

struct cpt_group {
	int hier;
	char *path;
};

struct cg_cpt {
	struct hiers hs;
	struct cpt_group *g;	/* written so far; id = index + 1 */
	int ng;
	size_t capg;
	uint64_t *ns;		/* the cgroup namespaces met; N = index + 1 */
	int nns;
	size_t capns;
	bool walked;
	/* the process being written: its namespace, and that namespace's
	 * root group in each hierarchy (by hierarchy index) */
	uint32_t cur_ns;
	uint32_t cur_root[MAX_HIERS];
};

/* A hierarchy's name in messages. */
static inline const char *cg_name(const struct hier *h)
{
	return h->v2 ? "(v2)" : h->ctrl;
}

/* cgroup.c */
/* The files ckpt saves the value of, in the order they are written. */
const char *const *cg_props(bool v2);
bool cg_known_prop(const char *name, bool v2);
/* A detached mount of the hierarchy's root (or -errno). */
int cg_hier_mount(struct hier *h);
int cg_hier_find(const struct hiers *hs, const char *ctrl, bool v2);
/* Its index, added unmounted if new; -1 out of memory or too many. */
int cg_hier_add(struct hiers *hs, const char *ctrl, bool v2);
void cg_hiers_free(struct hiers *hs);
/* A group's path from its hierarchy's root, for the *at() calls. */
const char *cg_rel(const char *path);
/* Splits a /proc/PID/cgroup in place into up to MAX_HIERS lines. */
int cg_parse(char *buf, struct cg_line *l, int *n);
char *cg_dupn(const char *s, size_t n);
/* "/" or "/a/b": no empty, "." or ".." part, nothing odd. */
bool cg_path_ok(const char *s, size_t n);
/* Group @path's part below group @base: "" when it is @base, "/c" below
 * it; NULL when it is neither. */
const char *cg_below(const char *path, const char *base);
/* Whether CTRL (@n bytes) names hierarchy @h: one of its controllers or
 * its name=, as /proc/PID/cgroup lists them. */
bool cg_names(const struct hier *h, const char *ctrl, size_t n);
/* --cgroup-root "[CTRL:]PATH" arguments: the PATH for @h (one naming it,
 * else one naming no hierarchy), or NULL. */
const char *cg_root_for(const char *const *args, int n, const struct hier *h);
int cg_root_args_bad(struct ckpt_log *log, const char *const *args, int n);

/* cgroup_dump.c */
int cg_dump(struct cpt_ctx *c, struct cpt_task *t);
int cg_dump_thread(struct cpt_ctx *c, struct cpt_task *t, struct cpt_thread *th);
void cg_dump_free(struct cpt_ctx *c, void *state);

/* cgroup_restore.c */
int cg_load(struct rst_ctx *c, struct rst_task *t, struct rec *r);
int cg_check(struct rst_ctx *c, struct rst_task *t);
int cg_restore(struct rst_ctx *c, struct rst_task *t);
int cg_restore_thread(struct rst_ctx *c, struct rst_task *t, struct rst_thread *th);
void cg_free_ctx(void *state);

#endif
