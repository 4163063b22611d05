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

struct ckpt_log;
struct cpt_sock;

struct keeper {
	int fd;		/* our end of the channel (once pid is set) */
	pid_t pid;	/* 0: not started */
};

/* Checkpoint: hand @s (in repair mode, locked or not) to the keeper @k,
 * started on first use. */
int keeper_hold(struct keeper *k, struct ckpt_log *log, const struct cpt_sock *s);
/* The image is complete and the tree is about to be killed: sockets of
 * processes that die from now on stay as they are. */
void keeper_killing(struct keeper *k, struct ckpt_log *log);

/* Restart: @pid is about to be let go; if we die before keeper_end(done),
 * the keeper kills it (the processes not yet let go die with us, by
 * PTRACE_O_EXITKILL): a restart either ends or leaves nothing. */
int keeper_watch(struct keeper *k, struct ckpt_log *log, pid_t pid);
/* @done: all undone (or left on purpose), the keeper exits doing
 * nothing; else it does what it is there for, now. */
void keeper_end(struct keeper *k, struct ckpt_log *log, bool done);

#endif
