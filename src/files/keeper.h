/* keeper.h - what a checkpoint changes outside its target's registers
 * and memory, undone even if ckpt dies.
 *
 * A TCP connection being saved is in repair mode and behind a network
 * lock (netlock.c).  ckpt undoes both at the end of a checkpoint; if ckpt
 * is killed first, a keeper does: a child of ckpt in a session of its own
 * (so the terminal's ^C and hangup do not reach it), holding a copy of
 * each such socket and a pidfd of its process.  When its channel to ckpt
 * closes without the word that all was undone, it undoes what it holds:
 * the lock goes, the connection leaves repair mode.  Only the sockets
 * of processes that ckpt killed once the image was complete are left as
 * they are, locked for the restart.  At restart it watches the
 * processes being let go one by one, and kills them if restart dies
 * before the last.  The keeper can be killed too; it narrows the harm to
 * the case where both die. */
#ifndef CKPT_KEEPER_H
#define CKPT_KEEPER_H

#include <stdbool.h>
#include <sys/types.h>

struct cpt_ctx;
struct ckpt_log;
struct cpt_sock;

struct keeper {
	int fd;		/* our end of the channel, -1: none yet */
	pid_t pid;
};

/* Hand @s (in repair mode, locked or not) to the keeper, started on
 * first use. */
int keeper_hold(struct cpt_ctx *c, const struct cpt_sock *s);
/* The image is complete and the tree is about to be killed: sockets of
 * processes that die from now on stay as they are. */
void keeper_killing(struct cpt_ctx *c);
/* All undone (or left on purpose): the keeper exits doing nothing. */
void keeper_done(struct cpt_ctx *c);

/* Restart: @pid is about to be let go; if we die before keeper_end(done),
 * the keeper kills it (the processes not yet let go die with us, by
 * PTRACE_O_EXITKILL): a restart either ends or leaves nothing. */
int keeper_watch(struct keeper *k, struct ckpt_log *log, pid_t pid);
void keeper_end(struct keeper *k, struct ckpt_log *log, bool done);

#endif
