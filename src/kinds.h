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
#include "show.h"
#include "log.h"
#include "proc.h"
#include "remote.h"
#include "arch/x86/guard.h"
#include "files/keeper.h"

#define MAX_THREADS	65536
#define MAX_KINDS	32	/* slots for per-kind state: more than the table has */

struct rst_ctx;
struct rst_task;
struct spans;

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
	uint32_t next_objref;
	struct cpt_file *files;	/* descriptions written so far (objrefs) */
	int nr_files;
	struct cpt_shm *shm;	/* shared memory objects seen so far */
	int nr_shm;
	struct cpt_shm *fifos;	/* FIFOs (by inode) whose buffer is written */
	int nr_fifos;
	struct cpt_pipe *pipes;	/* every pipe the tree holds an end of */
	int nr_pipes;
	bool pipes_scanned;
	struct cpt_pty *ptys;	/* every pty master the tree holds */
	int nr_ptys;
	bool ptys_scanned;
	uint32_t job_tty;	/* the job's terminal's TTY record, once written */
	struct cpt_sock *socks;	/* TCP sockets ckpt holds in repair mode */
	int nr_socks;
	struct unix_cpt *unix_sk;	/* unix_graph.c: every unix socket, once asked */
	struct cpt_sysv *sysv;	/* SysV shm segments written so far */
	int nr_sysv;
	struct seccomp_cpt *seccomp;	/* seccomp.c: filters written so far */
	struct guard_cache guard;	/* gadgets found per file (guard.h) */
	struct keeper keeper;	/* undoes TCP repair if we die (keeper.h) */
	struct cuda_cpt *cuda;	/* cuda.c: processes the CUDA driver holds */
};

/* A SysV shared memory segment in the image (src/kinds/sysvshm.c). */
struct cpt_sysv {
	int32_t shmid;
	uint32_t id;		/* its SYSV_SHM record */
};

struct cpt_pty {
	uint32_t index;		/* /dev/pts/N */
	pid_t pid;		/* a process of the tree with the master */
	int fd;
	uint32_t id;		/* its TTY record, once written */
};

/* A TCP connection taken into repair mode to be read
 * (src/files/tcp_repair.c): ckpt's own copy of it, and what was read,
 * checked again at the end. */
struct cpt_sock {
	int sk;
	pid_t pid;
	int fd;
	int reuse;		/* SO_REUSEADDR, which repair mode overrides */
	uint32_t rcv_nxt, write_seq;
	bool locked;		/* its network lock made (src/files/netlock.c) */
	bool opening;		/* SYN_SENT: held only to be checked, not in
				 * repair mode, not locked */
	struct rec_inet conn;	/* its addresses, for the lock */
};

struct cpt_pipe {
	uint64_t ino;
	bool has_read, has_write;
	pid_t reader;		/* a process of the tree with the read end */
	int reader_fd;
	uint32_t id;		/* its PIPE record, once written */
};

/* A shared anonymous memory object, or a file with no name (a memfd, a
 * deleted file: its FILE_OBJ is written), found again by its inode. */
struct cpt_shm {
	uint64_t dev, ino;
	uint32_t id;
	uint32_t file_kind;	/* 0: shared anonymous; else FILE_* */
};

/* A file description already in the image, found again through kcmp. */
struct cpt_file {
	pid_t pid;
	int fd;
	uint32_t id;
	uint64_t dev, ino;
};

/* tree.c: find and hold the tree rooted at @root, every thread of every
 * process; let it go again, or end it. */
int tree_collect(struct cpt_ctx *c, pid_t root);
int tree_release(struct cpt_ctx *c);
int tree_kill(struct cpt_ctx *c);
void tree_free(struct cpt_ctx *c);
/* seccomp.c: @t is held; its threads under seccomp are made to skip
 * their filters while we hold them (PTRACE_O_SUSPEND_SECCOMP), and what
 * cannot be restored is refused now. */
int seccomp_hold(struct cpt_ctx *c, struct cpt_task *t);
/* files/unix_graph.c: what checkpoint found of unix sockets
 * (cpt_ctx.unix_sk) */
void unix_cpt_free(struct unix_cpt *u);

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
	uint32_t types[6];	/* record types it owns, 0-terminated */
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
	/* Checkpoint: every record is written (before TAIL); a last check
	 * that may still fail the checkpoint. */
	int (*dump_check)(struct cpt_ctx *c);
	/* Checkpoint over, before the tree is let go: @killed, the tree is
	 * dead and its image safe; else it runs on as before. */
	void (*dump_end)(struct cpt_ctx *c, bool killed);
	/* Restart, while the tree is forked (sessions.c): @t, the root or
	 * a process of the tree, has just made its session (setsid), and
	 * no process is forked into it yet; what its members must inherit
	 * (a controlling terminal) is set up now. */
	int (*session_made)(struct rst_ctx *c, struct rst_task *t);
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
};

extern const struct kind_ops kind_task, kind_pipe, kind_fobj, kind_fifo, kind_tty,
	kind_mm, kind_files, kind_fs, kind_rlimits, kind_timers, kind_signals,
	kind_creds, kind_locks, kind_regs, kind_inet,
	kind_unix, kind_ia32, kind_sysvshm, kind_seccomp, kind_cuda;
extern const struct kind_ops *const ckpt_kinds[];
extern const int ckpt_nr_kinds;
int kind_index(const struct kind_ops *k);
const struct kind_ops *kind_for_type(uint32_t type);

/* checkpoint.c: whether ckpt_cancel() was called (a signal): the
 * checkpoint fails at its next step, undoing what it did. */
bool ckpt_cancelled(void);

/* Per-kind state of a task being restored (allocated on first use). */
void *kind_state(struct rst_task *t, const struct kind_ops *k, size_t size);
/* ... and of its current (last loaded) thread; NULL before any THREAD. */
void *kind_thread_state(struct rst_task *t, const struct kind_ops *k,
			size_t size);
/* Add a thread (from its THREAD record) to the model. */
int rst_thread_add(struct rst_task *t, pid_t tid);
void rst_task_free(struct rst_task *t);
/* Per-kind state of the whole image (objects shared across the tree). */
void *kind_ctx_state(struct rst_ctx *c, const struct kind_ops *k, size_t size);
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
