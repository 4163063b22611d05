/* kinds.h - the contexts passed down, and the table of resource kinds.
 *
 * Each kind of process state lives in one file under src/kinds/ (or
 * src/arch/) with its checkpoint side (dump), its restart side (load:
 * validate a record into the model; restore: apply it to the task being
 * built) and its `ckpt info` side (show), registered in kinds.c.  The
 * kinds whose records are objects open files share (a pipe's buffer, a
 * unix socket, a memfd's content, a pty) live under src/files/ with
 * those files' kinds.
 */
#ifndef CKPT_KINDS_H
#define CKPT_KINDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "image.h"
#include "info.h"
#include "log.h"
#include "proc.h"
#include "remote.h"
#include "vec.h"
#include "arch/x86/guard.h"
#include "files/keeper.h"

#define MAX_THREADS	65536
#define MAX_KINDS	32	/* slots for per-kind state: more than the table has */

struct rst_ctx;
struct rst_task;

/* A thread held for checkpoint; threads[0] is the main thread, whose
 * remote is the task's own. */
struct cpt_thread {
	pid_t tid;
	struct remote *rm;
	struct remote own;
};

struct cpt_task {
	pid_t pid;
	pid_t ppid;		/* parent, in the tree (0 for the root) */
	bool zombie;		/* exited, waiting for its parent */
	bool shares_files;	/* its fd table is its parent's */
	bool shares_fs;		/* its fs info is its parent's */
	bool shares_vm;		/* its memory is its parent's */
	bool shares_sighand;	/* its signal handlers are its parent's */
	int exit_code;		/* a zombie's wait status */
	struct remote rm;	/* the main thread: process-wide calls */
	struct cpt_thread *threads;
	int nr_threads;
	size_t cap_threads;
	struct id_table tids;	/* those held, by tid: index in threads */
	uint64_t scratch;	/* room for remote calls' in/out arguments:
				 * below the guard's frame on its stack, or
				 * a private page mapped in the task */
	size_t scratch_len;
	bool scratch_mapped;	/* the page, to unmap at the end */
	struct vma_list maps;	/* as found before we touched it */
};

struct cpt_ctx {
	struct ckpt_log *log;
	struct img_writer w;
	unsigned long flags;
	struct cpt_task **tasks;	/* the tree, parents before children */
	int nr_tasks;
	size_t cap_tasks;
	struct id_table pids;	/* index in tasks, by pid */
	uint32_t next_objref;	/* the last objref given out, by any kind */
	struct guard_cache guard;	/* gadgets found per file (guard.h) */
	void *kind_state[MAX_KINDS];	/* each kind's (kind_dump_state()) */
};

/* tree.c: find and hold the tree rooted at @root, every thread of every
 * process; let it go again, or end it. */
int tree_collect(struct cpt_ctx *c, pid_t root);
int tree_release(struct cpt_ctx *c);
int tree_kill(struct cpt_ctx *c);
void tree_free(struct cpt_ctx *c);

/* A thread to restore: its tid, what each kind loaded for it, and once
 * it exists, its remote (threads[0] is the main thread, t->rm). */
struct rst_thread {
	pid_t tid;
	struct remote *rm;
	struct remote own;
	void *kind_state[MAX_KINDS];
};

/* The restart side: every record is loaded and checked into this model
 * before any process is created. */
struct rst_task {
	pid_t pid;
	struct rec_task t;
	struct remote rm;
	struct rst_thread *threads;
	int nr_threads;		/* THREAD records loaded so far */
	uint64_t tramp;		/* our mapping in the puppet: a page with a
				 * syscall instruction, then scratch space */
	size_t tramp_len;
	uint64_t scratch;	/* scratch part of it, for call arguments */
	size_t scratch_len;
	int img_fd;		/* image fd inside the puppet */
	bool close_img;		/* the last of those sharing its fd table */
	bool keep_tramp;	/* a later process sharing its memory (CLONE_VM)
				 * still needs the trampoline */
	void *kind_state[MAX_KINDS];	/* what each kind loaded, by kind index */
};

struct rst_ctx {
	struct ckpt_log *log;
	int img_fd;		/* our seekable image fd */
	unsigned long flags;
	struct rec_head head;
	struct rst_task *task;	/* the one being loaded */
	struct rst_task **tasks;	/* the tree, parents before children */
	int nr_tasks;
	uint32_t fd_floor;	/* above every saved fd number */
	bool here;		/* checks against this machine too (not for
				 * `ckpt info`) */
	void *kind_state[MAX_KINDS];	/* what kinds keep for the whole image */
	/* the PAGES checksums left for later (pageverify.c) */
	struct ir_span *spans;
	pid_t pv_pid;		/* the child checking them, or 0 */
	int pv_fd;		/* its pipe, if pv_open */
	bool pv_open;
	const struct ir_span *pv_spans;
	size_t pv_nr;
	bool released;		/* every task let go: the restart is done */
	struct keeper keeper;	/* kills what was let go if we die (keeper.h) */
};

/* In the trampoline, a syscall preceded by an AMX instruction: running
 * it makes the kernel enlarge the task's xstate buffer for AMX. */
#define TRAMP_AMX	16

enum kind_phase {
	PHASE_IMAGE = 1,	/* needs the image fd in the puppet */
	PHASE_STATE,		/* after the image fd is gone */
	PHASE_LAST,		/* registers: after the scratch is unmapped */
};

struct kind_ops {
	const char *name;
	const struct rec_desc *recs;	/* the records it owns, to a { 0 } */
	enum kind_phase phase;
	int (*dump)(struct cpt_ctx *c, struct cpt_task *t);
	int (*load)(struct rst_ctx *c, struct rst_task *t, struct rec *r);
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
const struct kind_ops *kind_for_type(uint32_t type);

/* The state of each kind that has one (dump_size), for a checkpoint:
 * made zeroed, 0 or -ENOMEM (reported); freed, each kind's dump_free
 * first. */
int kind_dump_init(struct cpt_ctx *c);
void kind_dump_free(struct cpt_ctx *c);
/* Kind @k's state in @c: never NULL once kind_dump_init() succeeded. */
void *kind_dump_state(struct cpt_ctx *c, const struct kind_ops *k);

/* checkpoint.c: whether ckpt_cancel() was called (a signal): the
 * checkpoint fails at its next step, undoing what it did. */
bool ckpt_cancelled(void);

/* Per-kind state of a task being restored (allocated on first use). */
void *kind_state(struct rst_task *t, const struct kind_ops *k, size_t size);
/* ... and of its current (last loaded) thread; NULL before any THREAD. */
void *kind_thread_state(struct rst_task *t, const struct kind_ops *k,
			size_t size);
/* restart.c: every record of an image, read and checksummed; then the
 * model built from them (with @here: checked against this machine too). */
struct records {
	struct rec *r;
	size_t n;
};
int image_read(struct rst_ctx *c, struct records *rs, bool defer);
int image_model(struct rst_ctx *c, struct records *rs, bool here);
void records_free(struct records *rs);

/* The process whose fd table, fs info or memory (@share: TASK_SHARES_*)
 * @t uses: itself, or up the chain of parents it shares it with. */
struct rst_task *rst_owner(struct rst_ctx *c, struct rst_task *t, uint32_t share);
/* Add a thread (from its THREAD record) to the model. */
int rst_thread_add(struct rst_task *t, pid_t tid);
void rst_task_free(struct rst_task *t);
/* Per-kind state of the whole image (objects shared across the tree). */
void *kind_ctx_state(struct rst_ctx *c, const struct kind_ops *k, size_t size);
/* tty.c: with --shell-job, give the terminal to the restored job (its
 * termios, the foreground) just before it is let go. */
int tty_job_start(struct rst_ctx *c);
/* tty.c: a session leader just made its session: it takes its pty as its
 * controlling terminal now, so that its members inherit it. */
int tty_session_made(struct rst_ctx *c, struct rst_task *t);
/* signals.c: takes the saved pending signal @signo of POSIX timer @id
 * off @t's queues to restore (the timer queues its own again); false if
 * none is pending. */
bool sig_take_timer(struct rst_task *t, int id, int signo);
void rst_ctx_free(struct rst_ctx *c);
#define KCSTATE(c, k) ((c)->kind_state[kind_index(&(k))])
#define KSTATE(t, k) ((t)->kind_state[kind_index(&(k))])
#define KTSTATE(th, k) ((th)->kind_state[kind_index(&(k))])

/* The scratch area of a task, for in/out arguments of remote calls. */
int rst_scratch_put(struct rst_task *t, size_t off, const void *p, size_t n,
		    uint64_t *addr);

#endif
