/* ctx.h - the contexts passed down: a checkpoint's (struct cpt_ctx, its
 * tasks and threads) and a restart's (struct rst_ctx, the model of the
 * image: its tasks and threads), and the calls that make and end them.
 * What each kind keeps in them is the kinds' business (kinds.h).
 */
#ifndef CKPT_CTX_H
#define CKPT_CTX_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "image.h"
#include "log.h"
#include "pin.h"
#include "proc.h"
#include "remote.h"
#include "vec.h"
#include "arch/arch.h"

struct ns_user_maps;
#include "files/keeper.h"

#define MAX_THREADS	65536
#define MAX_KINDS	32	/* slots for per-kind state: more than the table has */
#define CKPT_MAX_CHAIN	64	/* images in an incremental chain */

/* A thread held for checkpoint; threads[0] is the main thread, whose
 * remote is the task's own. */
struct cpt_thread {
	pid_t tid;
	struct remote *rm;
	struct remote own;
};

#define SCRATCH_LEN (2 * 4096)

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
	size_t scratch_len;	/* SCRATCH_LEN */
	bool scratch_mapped;	/* the page, to unmap at the end */
	struct vma_list maps;	/* as found before we touched it */
	int own_fd;		/* ckpt's own fd in it (kinds/mm_track.c),
				 * not saved; 0: none */
};

struct ns_ids;

struct cpt_ctx {
	struct ckpt_log *log;
	struct img_writer w;
	unsigned long flags;
	bool failed;		/* at its end: the checkpoint failed */
	const struct ckpt_checkpoint_opts *opts;	/* never NULL */
	struct cpt_task **tasks;	/* the tree, parents before children */
	int nr_tasks;
	size_t cap_tasks;
	struct id_table pids;	/* index in tasks, by pid */
	uint32_t next_objref;	/* the last objref given out, by any kind */
	struct arch_cpt_cache guard;	/* gadgets found per file (arch.h) */
	/* 1 << NS_x (kinds/ns.h): the root's x namespace is its own,
	 * known once the ns kind has held the root */
	uint32_t ns_own;
	/* a container's engine (container.c): its caller's namespaces,
	 * the host's; NULL in a plain checkpoint */
	const struct ns_ids *host_ns;
	/* a container killed: its init, whose end would end the engine
	 * too, is left held for the engine's last act */
	bool root_kept;
	void *kind_state[MAX_KINDS];	/* each kind's (kind_dump_state()) */
	/* set by ckpt_cancel() (a signal): the checkpoint fails at its
	 * next step, undoing what it did */
	const volatile sig_atomic_t *cancelled;
	/* the image file's pages made ahead (prealloc.c), or NULL */
	struct prealloc *prealloc;
};

/* Whether @t has memory of its own to save: not a zombie's (none left),
 * not one it shares with its parent (CLONE_VM). */
static inline bool cpt_own_mm(const struct cpt_task *t)
{
	return !t->zombie && !t->shares_vm;
}

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
	/* the CPU mask it gets when let go (THREAD_CPUS), or NULL: the one
	 * restart's caller has (pin.c) */
	uint64_t *cpus;
	size_t cpus_len;	/* bytes */
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
	size_t cap_threads;
	uint64_t tramp;		/* our mapping in the puppet: a page with a
				 * syscall instruction, then scratch space */
	size_t tramp_len;
	uint64_t scratch;	/* scratch part of it, for call arguments */
	size_t scratch_len;
	int img_fd;		/* image fd inside the puppet */
	bool close_img;		/* the last of those sharing its fd table */
	bool keep_tramp;	/* a later process sharing its memory (CLONE_VM)
				 * still needs the trampoline */
	/* The thread whose batch of calls (remote.h) uses the table in the
	 * trampoline page (NULL: none open), and the part of the scratch
	 * rst_scratch_put() puts arguments in meanwhile: [win, win + win_hi),
	 * moved on past what queued calls were given (win_seen: the
	 * batch_rm's nr_queued when it was last moved or used). */
	struct remote *batch_rm;
	uint32_t win, win_hi, win_seen;
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
	struct id_table pids;	/* pid -> index in tasks */
	struct id_table tids;	/* every pid and tid of the image, once */
	uint32_t fd_floor;	/* above every saved fd number */
	bool here;		/* checks against this machine too (not for
				 * `ckpt info`) */
	uint32_t ns_own;	/* 1 << NS_x (kinds/ns.h), from the image */
	/* a container's namespaces joined (--join-ns), not made: 1 << NS_x,
	 * and the fd of each, in the root puppet as in ckpt */
	uint32_t ns_join;
	int join_fd[8];
	/* a container's own user namespace: its maps, from the image (the
	 * ids of the image are its parent's) */
	const struct ns_user_maps *userns;
	/* ... and a socket pair whose [1] its root has (the same number):
	 * ckpt gives it fds over [0] (kinds/ns_pid.c) */
	bool give;
	int give_fd[2];
	/* the slave of each console the tty kind made (TTY_ORPHAN), by its
	 * saved index, for a bind of its /dev/pts/N (runc's /dev/console:
	 * mntns_restore.c) */
#define MAX_CONSOLES	4
	struct early_pty { uint32_t index; int fd; } early_pty[MAX_CONSOLES];
	int nr_early_pty;
	/* a container's engine (container.c): the root is pid 1 of our pid
	 * namespace, made by our caller; a helper of ours must not take a
	 * pid the image holds */
	bool root_made;
	const struct ckpt_restart_opts *opts;
	void *kind_state[MAX_KINDS];	/* what kinds keep for the whole image */
	/* the PAGES checksums left for later (pageverify.c) */
	struct ir_span *spans;
	pid_t pv_pid;		/* the child checking them, or 0 */
	bool pv_idle;		/* ... made idle (idle.c) until waited for */
	const struct ir_span *pv_spans;
	size_t pv_nr;
	struct pv_cell *pv_cells;	/* shared with the child */
	size_t pv_ncells;
	uint64_t *pv_cell0;	/* each span's first cell */
	/* --lazy: a loader took the PAGES checksums to check (the first
	 * one started, mm_lazy.c); if none did, restart checks them before
	 * the tree runs */
	bool lazy_checks;
	/* --lazy may leave shared anonymous memory to the loader too
	 * (mm_lazy_shm.c: the kernel and ckpt's rights allow it) */
	bool lazy_shm;
	bool released;		/* every task let go: the restart is done */
	/* an incremental image's parents (chain.c), its PAGES_AT records'
	 * files 1..nr_chain: chain_fd[k - 1], checked, open until the end */
	int chain_fd[CKPT_MAX_CHAIN];
	int nr_chain;
	struct keeper keeper;	/* kills what was let go if we die (keeper.h) */
	struct pin pin;		/* ckpt and the puppets on one CPU (pin.h) */
	/* the signal actions ckpt's puppets start with (ckpt's own, as
	 * they were when it made them), as the kernel gives them: an action
	 * the image has the same needs no remote call; NULL: unknown (a
	 * container's init, made by our caller) */
	struct rec_sighand *puppet_act;
};



/* Add a thread (from its THREAD record) to the model. */
int rst_thread_add(struct rst_task *t, pid_t tid);
void rst_task_free(struct rst_task *t);
void rst_ctx_free(struct rst_ctx *c);

/* Every call into @t and its threads from here on two stops each, not
 * through the trampoline's one-stop sequence (struct remote's fast_ip):
 * a SIGCONT is pending there, or the trampoline goes. */
void rst_slow_calls(struct rst_task *t);

/* A batch of calls (remote.h) opened on @rm, one of @t's threads, its
 * table in @t's trampoline page past the code (one batch open at a time
 * in a process); nothing where @t has no trampoline.  Its end makes what
 * is queued (@run) or drops it. */
#define RST_BATCH_OFF	1024
int rst_batch_begin(struct rst_task *t, struct remote *rm);
int rst_batch_end(struct rst_task *t, struct remote *rm, bool run);

/* The scratch area of a task, for in/out arguments of remote calls:
 * @n bytes of @p (NULL: room only) at @off, *@addr in the task.  The
 * offsets of the puts for one call are kept between them.  While a
 * batch is open, the puts for a call after a queued one go past what
 * the queued calls were given (none of them is made before the batch
 * runs), in a part of the scratch that direct users of t->scratch (a
 * call's output read back at once) do not reach. */
int rst_scratch_put(struct rst_task *t, size_t off, const void *p, size_t n,
		    uint64_t *addr);

#endif
