/* sessions.h - the processes of the tree made, forked by their parent
 * puppets, in their sessions and groups (sessions.c). */
#ifndef CKPT_SESSIONS_H
#define CKPT_SESSIONS_H

#include "kinds.h"

/* How long a pid held by a zombie (a `checkpoint --kill` just before,
 * whose parent has not reaped it yet) is waited for. */
#define ZOMBIE_WAIT_MS	5000

/* Who holds @pid: 0 nobody, 1 a zombie (about to be reaped), or an
 * error (logged, naming it) for a live process. */
int rst_pid_holder(struct rst_ctx *c, pid_t pid);
/* Every process of the tree but the root (made and set up already),
 * forked by its parent with its pid and held; every session and group
 * made as saved; the zombies exited again with their status. */
int rst_fork_tree(struct rst_ctx *c);

#endif
