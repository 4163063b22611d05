/* ns_pid.h - processes of the tree in pid namespaces nested below the
 * root's (ns_pid.c): for ns.c, which saves and checks them (NSPID,
 * NSTID), and for what hands a puppet a pid, which must be the number
 * the puppet's own namespace knows it by.
 *
 * Everywhere else ckpt names a process by its pid in the root's
 * namespace ("outer"), as /proc and ptrace show it to ckpt.
 */
#ifndef CKPT_KINDS_NS_PID_H
#define CKPT_KINDS_NS_PID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../ctx.h"

struct info_out;

/* Checkpoint: what ns.c keeps. */
struct nspid_dump {
	struct rec_nspid *r;	/* by task index, once scanned */
	int root_levels;	/* NSpid entries of the root */
};

/* Every process's pids below the root's level, each nested namespace's
 * init found in the tree: what cannot be made again is refused, naming
 * the pid.  Called once the whole tree is held. */
int nspid_scan(struct cpt_ctx *c, struct nspid_dump *d);
/* NSPID of @t (if it is nested or forks into a nested namespace), and
 * NSTID of one of its threads. */
int nspid_dump(struct cpt_ctx *c, const struct nspid_dump *d, struct cpt_task *t);
int nspid_dump_thread(struct cpt_ctx *c, const struct nspid_dump *d, struct cpt_task *t,
		      struct cpt_thread *thr);

/* Restart: records in, checked; shown by `ckpt info`. */
int nspid_load(struct rst_ctx *c, struct rst_task *t, const struct rec *r);
int nspid_check(struct rst_ctx *c, struct rst_task *t);
void nspid_show(struct info_out *o, const struct rec *r);

/* @parent is about to fork its first child: the root puppet takes a
 * pidfd on ckpt that every puppet inherits (files_give() from a nested
 * namespace, where ckpt has no pid). */
int nspid_prepare(struct rst_ctx *c, struct rst_task *parent);
/* @child is about to be forked by @parent: @parent makes the namespace
 * @child is the init of (unshare) or *flags gets CLONE_NEWPID. */
int nspid_fork_into(struct rst_ctx *c, struct rst_task *parent, struct rst_task *child,
		    uint64_t *flags);
/* The set_tid array of @t's thread @i (0: the process): innermost level
 * first, the outer pid last; returns its size. */
int nspid_set_tid(const struct rst_task *t, int i, pid_t out[NSPID_LEVELS + 1]);
/* @t's pid or one of its threads' tids (@id, outer), in @t's own pid
 * namespace. */
pid_t ns_tid_in(const struct rst_task *t, pid_t id);
/* Process or thread @id (outer) as @viewer's pid namespace numbers it;
 * 0 where it has no number there (outside it). */
pid_t ns_pid_in(struct rst_ctx *c, const struct rst_task *viewer, pid_t id);
/* The puppet @t gets a pidfd on @id (outer) with @flags: opened by
 * itself where it can name it, else by ckpt and given. */
int ns_pidfd_give(struct rst_ctx *c, struct rst_task *t, pid_t id, unsigned int flags,
		  long *fd);
/* ckpt's fd @ours, given to the puppet @t (that has ns_ckpt_fd()). */
int ns_ckpt_give(struct rst_task *t, int ours, long *fd);
/* The puppet's pidfd on ckpt, or its socket to it (0: none), closed with
 * its image fd. */
int ns_ckpt_fd(const struct rst_task *t);
int ns_ckpt_fd_close(struct rst_task *t);
/* @t is in a nested pid namespace or forks into one. */
bool ns_nested(const struct rst_task *t);

#endif
