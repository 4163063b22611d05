/* kinds.h - the table of resource kinds (struct kind_ops) and what
 * they keep in the contexts (ctx.h).
 *
 * Each kind of process state lives in one file under src/kinds/ (or
 * src/arch/) with its checkpoint side (dump), its restart side (load:
 * validate a record into the model; restore: apply it to the task being
 * built) and its `ckpt info` side (show), registered in kinds.def.  The
 * kinds whose records are objects open files share (a pipe's buffer, a
 * unix socket, a memfd's content, a pty) live under src/files/ with
 * those files' kinds.
 */
#ifndef CKPT_KINDS_H
#define CKPT_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "image.h"
#include "show.h"

struct spans;

enum kind_phase {
	PHASE_IMAGE = 1,	/* needs the image fd in the puppet */
	PHASE_STATE,		/* after the image fd is gone */
	PHASE_LAST,		/* registers: after the scratch is unmapped */
};

struct kind_ops {
	const char *name;
	const struct rec_desc *recs;	/* the records it owns, to a { 0 } */
	/* One of them whose payload it keeps only the place of, reading it
	 * again when it is used (rec_read_again()): a restart of 10,000
	 * threads held 24 MiB of their XSTATE from its start.  Restart's
	 * reader checks it and keeps no data of it (0: none). */
	uint32_t reread;
	enum kind_phase phase;
	/* Its restore() may have its calls queued, made in one stop with
	 * those of the kinds around it that may too (run_phase()): none
	 * of them is waited for by anything it does from outside the
	 * process before it returns (remote.h, calls in one stop). */
	bool rst_batch;
	int (*dump)(struct cpt_ctx *c, struct cpt_task *t);
	int (*load)(struct rst_ctx *c, struct rst_task *t, struct rec *r);
	/* every record of any kind, before its own kind's load() (an
	 * ordinary user's restart refuses what it may not do: privcheck.c) */
	int (*load_any)(struct rst_ctx *c, struct rst_task *t, const struct rec *r);
	int (*check)(struct rst_ctx *c, struct rst_task *t);
	int (*restore)(struct rst_ctx *c, struct rst_task *t);
	/* per thread, each thread in turn, after the process-wide side */
	int (*dump_thread)(struct cpt_ctx *c, struct cpt_task *t,
			   struct cpt_thread *th);
	int (*restore_thread)(struct rst_ctx *c, struct rst_task *t,
			      struct rst_thread *th);
	void (*free)(struct rst_task *t, void *state);
	void (*free_thread)(void *state);	/* default: free() */
	void (*free_ctx)(void *state);		/* default: free() */
	void (*show)(struct info_out *o, const struct rec *r);
	/* Checkpoint, before the tree rooted at @root is seized: it still
	 * runs. */
	int (*dump_begin)(struct cpt_ctx *c, pid_t root);
	/* Checkpoint: @t is held, every thread, and nothing of it changed
	 * yet (not called for a zombie). */
	int (*hold)(struct cpt_ctx *c, struct cpt_task *t);
	/* Checkpoint: every process of the tree held, guarded and with
	 * its scratch, before the first dump(): what a kind reads of all
	 * of them at once (their calls' stops overlapping). */
	int (*dump_ready)(struct cpt_ctx *c);
	/* Checkpoint: every record is written (before TAIL); a last check
	 * that may still fail the checkpoint. */
	int (*dump_check)(struct cpt_ctx *c);
	/* Checkpoint: the image is complete and synced, the tree is killed
	 * next (CKPT_KILL). */
	void (*dump_kill)(struct cpt_ctx *c);
	/* Checkpoint over, before the tree is let go: @killed, the tree is
	 * dead and its image safe; else it runs on as before. */
	void (*dump_end)(struct cpt_ctx *c, bool killed);
	/* Checkpoint over, the tree let go (or @killed). */
	int (*dump_finish)(struct cpt_ctx *c, bool killed);
	/* Restart, while the tree is forked (sessions.c): @t, the root or
	 * a process of the tree, has just made its session (setsid), and
	 * no process is forked into it yet; what its members must inherit
	 * (a controlling terminal) is set up now. */
	int (*session_made)(struct rst_ctx *c, struct rst_task *t);
	/* Restart, while the tree is forked (sessions.c): a child of
	 * @parent (or a stand-in of its session) is about to be forked by
	 * it; called before each such fork.  What the child is to inherit
	 * as it is (the memory it shares copy-on-write) is built now. */
	int (*fork_prepare)(struct rst_ctx *c, struct rst_task *parent);
	/* Restart, after load: adds to @l (spans_add(), model.h) the
	 * address ranges the kind will map in @t, which ckpt's own
	 * mappings in the puppets (the trampoline, a SysV segment attached
	 * for a moment) keep clear of: rst_find_gap(). */
	int (*areas)(struct rst_ctx *c, struct rst_task *t, struct spans *l);
	/* Restart: every process is built and every page verified; runs
	 * for every kind before the first restore_end, which may let a
	 * process's threads run (the CUDA kind's). */
	int (*restore_built)(struct rst_ctx *c);
	/* Restart: every process is built, none is released yet. */
	int (*restore_end)(struct rst_ctx *c);
	/* Checkpoint: the bytes of the kind's state for the whole
	 * checkpoint (kind_dump_state()), zeroed before anything is done;
	 * at the end dump_free frees what it holds, then the state is
	 * freed. */
	size_t dump_size;
	void (*dump_free)(struct cpt_ctx *c, void *state);
};

#define KIND(x) extern const struct kind_ops kind_##x;
#include "kinds.def"
#undef KIND
extern const struct kind_ops *const ckpt_kinds[];
extern const int ckpt_nr_kinds;
int kind_index(const struct kind_ops *k);
/* records.c: the kind that owns record type @type, NULL if none. */
const struct kind_ops *kind_for_type(uint32_t type);

/* The state of each kind that has one (dump_size), for a checkpoint:
 * made zeroed, 0 or -ENOMEM (reported); freed, each kind's dump_free
 * first. */
int kind_dump_init(struct cpt_ctx *c);
void kind_dump_free(struct cpt_ctx *c);
/* Kind @k's state in @c: never NULL once kind_dump_init() succeeded. */
void *kind_dump_state(struct cpt_ctx *c, const struct kind_ops *k);

/* Per-kind state of a task being restored (allocated on first use). */
void *kind_state(struct rst_task *t, const struct kind_ops *k, size_t size);
/* ... and of its current (last loaded) thread; NULL before any THREAD. */
void *kind_thread_state(struct rst_task *t, const struct kind_ops *k,
			size_t size);
/* Per-kind state of the whole image (objects shared across the tree). */
void *kind_ctx_state(struct rst_ctx *c, const struct kind_ops *k, size_t size);
/* Kind @k's state, as it is (NULL if not made yet), in a context (either
 * side), a task or a thread being restored. */
#define KCSTATE(c, k) ((c)->kind_state[kind_index(&(k))])
#define KSTATE(t, k) ((t)->kind_state[kind_index(&(k))])
#define KTSTATE(th, k) ((th)->kind_state[kind_index(&(k))])

/* signals.c: takes the saved pending signal @signo of POSIX timer @id
 * off @t's queues to restore (the timer queues its own again); false if
 * none is pending. */
bool sig_take_timer(struct rst_task *t, int id, int signo);

#endif
