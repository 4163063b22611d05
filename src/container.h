/* container.h - checkpoint and restart of a container (container.c): a
 * tree whose root is the init of its own pid namespace, done by an
 * engine inside its namespaces. */
#ifndef CKPT_CONTAINER_H
#define CKPT_CONTAINER_H

#include <signal.h>
#include <sys/types.h>

#include "../include/ckpt.h"
#include "kinds/ns.h"
#include "log.h"
#include "pidns.h"

/* The checkpoint the engine runs: @host, the namespaces of ckpt's caller;
 * @host_pid, the init's pid there (for messages). */
typedef int (*checkpoint_fn)(pid_t pid, int fd, const struct ckpt_checkpoint_opts *o,
			     struct ckpt_result *res, const struct ns_ids *host,
			     pid_t host_pid);

/* What the outer restart hands its engine besides the options: the
 * namespaces to join, opened before the root was cloned, so that the
 * root has them too, at the same numbers. */
struct rst_extra {
	uint32_t join;		/* 1 << NS_x */
	int join_fd[NR_NS_TYPES];
	int give[2];		/* a user namespace of its own: rst_ctx's */
};

typedef int (*restart_run_fn)(int fd, const struct ckpt_restart_opts *o,
			      const struct rst_extra *x, struct ckpt_result *res);

/* Whether @pid is the init of a pid namespace other than ours. */
int container_root(pid_t pid, struct ckpt_log *log);
/* @cancelled: set by ckpt_cancel() */
int container_checkpoint(int fd, const struct ckpt_checkpoint_opts *o,
			 struct ckpt_result *res, checkpoint_fn checkpoint,
			 const volatile sig_atomic_t *cancelled);
/* Whether the image on (seekable) @fd is a container's: 1, 0 or -errno. */
int container_image(int fd, struct ckpt_log *log);
/* Returns the root's pid (here), or -errno. */
int container_restart(int fd, const struct ckpt_restart_opts *o, struct ckpt_result *res,
		      restart_run_fn restart);

#endif
