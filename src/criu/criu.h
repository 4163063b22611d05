/* criu.h - ckpt as a drop-in for CRIU: its RPC (swrk.c, rpc.c), its
 * command line (cli.c), both turned into one job that dump.c and
 * restore.c carry out with ckpt's own calls (include/ckpt.h). */
#ifndef CKPT_CRIU_H
#define CKPT_CRIU_H

#include <stdbool.h>
#include <sys/types.h>

/* The version answered to VERSION and `criu --version`: the CRIU whose
 * interface this follows (runc wants at least 3.0, or 3.14 on cgroup v2). */
#define CRIU_DROPIN_MAJOR	4
#define CRIU_DROPIN_MINOR	2

/* What ckpt writes into the images directory: the image, and the file
 * whose presence engines take as "a checkpoint is here" (podman). */
#define CRIU_IMAGE_NAME		"ckpt.img"
#define CRIU_INVENTORY_NAME	"inventory.img"

#define CRIU_MAX_LIST		64	/* externals, namespaces joined */

struct criu_job;

/* A notification ("pre-dump", "post-restore"...): 0 once the caller
 * has acted on it, or a negative errno (the job then fails). */
/* @fd >= 0: sent with it (SCM_RIGHTS), as orphan-pts-master is */
typedef int criu_notify_fn(struct criu_job *j, const char *script, pid_t pid, int fd);

struct criu_job {
	int images_dir;			/* fd of the images directory */
	int logfd;			/* messages: 2, or the log file */
	pid_t pid;			/* dump: the tree's root */
	const char *freeze_cgroup;	/* dump: the tree's freezer cgroup */
	unsigned long flags;		/* CKPT_* */
	const char *external[CRIU_MAX_LIST];	/* restore: "KEY:PATH" */
	int nr_external;
	const char *join_ns[CRIU_MAX_LIST];	/* restore: "TYPE:PATH" */
	int nr_join_ns;
	const char *cgroup_root[CRIU_MAX_LIST];	/* "[CTRL:]PATH" */
	int nr_cgroup_root;
	char strs[CRIU_MAX_LIST][4096 + 32];	/* what the two above point at when made here */
	char parent[4096 + 64];		/* dump: CKPT_PARENT's image, "" if none */
	int nr_strs;
	criu_notify_fn *notify;		/* NULL: nobody to tell */
	bool orphan_pts;		/* restore: a console's master goes to
					 * the caller (orphan-pts-master) */
	void *notify_arg;
	int err;			/* the failure: errno, and one line */
	char msg[600];
};

/* Fails the job: sets j->err and j->msg, returns -err. */
int criu_fail(struct criu_job *j, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "KEY:PATH" (a mount's) or "TYPE:PATH" (a namespace to join), kept in
 * the job: 0 or -errno (too many, too long). */
int criu_add_external(struct criu_job *j, const char *key, const char *path);
int criu_add_join_ns(struct criu_job *j, const char *type, const char *path);
/* A dump's parent: @rel, the images directory of the pre-dump (or dump)
 * before, relative to the job's (open already): 0 or -errno. */
int criu_set_parent(struct criu_job *j, const char *rel);
/* @ctrl may be NULL or "": the hierarchies no other entry names. */
int criu_add_cgroup_root(struct criu_job *j, const char *ctrl, const char *path);

/* Thaw the cgroup @cg if it is frozen (*@was_frozen), freeze it again:
 * 0, or a negative errno with the job failed. */
int criu_thaw(struct criu_job *j, const char *cg, bool *was_frozen);
int criu_refreeze(struct criu_job *j, const char *cg);

/* 0, or a negative errno with the job failed. */
int criu_dump(struct criu_job *j);
/* The restored root's pid, or a negative errno with the job failed. */
pid_t criu_restore(struct criu_job *j);
/* kill_tree.c: @root and every process below it */
void criu_kill_tree(pid_t root);

int criu_swrk(int argc, char **argv);	/* `ckpt swrk FD` */
int criu_main(int argc, char **argv);	/* `criu ...`, `ckpt criu ...` */

#endif
