/* image_format_task.h - the records of a task and its threads: ids,
 * registers, signals, timers, limits, attributes, credentials, seccomp,
 * CUDA.
 * Included by image_format.h, which has the records' framing and the
 * pinned sizes: include that, not this. */
#ifndef CKPT_IMAGE_FORMAT_TASK_H
#define CKPT_IMAGE_FORMAT_TASK_H

#include <stdint.h>

struct rec_task {
	uint32_t pid, ppid, pgid, sid;
	uint32_t nr_threads;
	uint32_t personality;
	uint32_t exit_signal;
	uint32_t flags;		/* TASK_* */
	char comm[16];
	int32_t exit_code;	/* TASK_ZOMBIE: its wait status */
	uint32_t stop_sig;	/* TASK_STOPPED: the signal that stopped it
				 * (0: SIGSTOP, as older images mean) */
};

#define TASK_STOPPED	0x1	/* in a group stop (SIGSTOP) */
#define TASK_ZOMBIE	0x2	/* exited, not yet reaped: no other records */
#define TASK_SUBREAPER	0x4	/* PR_SET_CHILD_SUBREAPER */
#define TASK_SHARES_FILES 0x8	/* its fd table is its parent's (CLONE_FILES):
				 * it has no FILE/FD records of its own */
#define TASK_SHARES_FS	0x10	/* its cwd/umask are its parent's (CLONE_FS):
				 * no FS record */
#define TASK_SHARES_VM	0x20	/* its memory is its parent's (CLONE_VM): no
				 * MM/VMA/PAGES records */
#define TASK_SHARES_SIGHAND 0x40	/* its signal handlers are its parent's
				 * (CLONE_SIGHAND, which needs CLONE_VM) */
#define TASK_FLAGS	0x7f

struct rec_thread {
	uint32_t tid;
	uint32_t rseq_len;
	uint64_t clear_child_tid;
	uint64_t rseq_ptr;
	uint32_t rseq_sig;
	uint32_t rseq_flags;
	uint64_t sigmask;
	uint64_t ss_sp;		/* sigaltstack */
	uint64_t ss_size;
	uint32_t ss_flags;
	uint32_t xcomp_perm_set; /* 1 if the next field is meaningful */
	uint64_t xcomp_perm;	/* ARCH_GET_XCOMP_PERM */
	char comm[16];		/* each thread has its own name */
};

struct rec_regs {
	uint64_t r[27];		/* struct user_regs_struct, kernel order */
};

/* REC_S390_REGS: the NT_PRSTATUS regset, and NT_S390_SYSTEM_CALL (the
 * call the kernel restarts, if it asks to be, when the thread goes on) */
struct rec_s390_regs {
	uint64_t psw_mask, psw_addr;
	uint64_t gprs[16];
	uint32_t acrs[16];
	uint64_t orig_gpr2;
	uint32_t system_call;
	uint32_t pad;		/* 0 */
};

/* REC_S390_FPREGS: NT_PRFPREG */
struct rec_s390_fpregs {
	uint32_t fpc, pad;	/* pad: 0 */
	uint64_t fprs[16];
};

/* REC_S390_VXRS: NT_S390_VXRS_LOW (the right halves of v0-v15, whose
 * left halves are the fprs) and NT_S390_VXRS_HIGH (v16-v31) */
struct rec_s390_vxrs {
	uint64_t low[16];
	uint8_t high[16][16];
};

/* REC_PPC_REGS: the NT_PRSTATUS regset (struct pt_regs: gpr[32], nip,
 * msr, orig_gpr3, ctr, link, xer, ccr, softe, trap, dar, dsisr, result;
 * 4 more, 0).  trap 0xc00: stopped in a system call. */
struct rec_ppc_regs {
	uint64_t r[48];
};

/* REC_PPC_FPREGS: NT_PRFPREG, fpr[32] and fpscr */
struct rec_ppc_fpregs {
	uint64_t r[33];
};

/* REC_PPC_VMX: NT_PPC_VMX, vr[32], vscr, vrsave (16 bytes each) */
struct rec_ppc_vmx {
	uint8_t r[34][16];
};

/* REC_PPC_VSX: NT_PPC_VSX, the right halves of vs0-vs31 */
struct rec_ppc_vsx {
	uint64_t r[32];
};

#define IA32_ABI_I386	1

struct rec_ia32 {
	uint32_t abi;		/* IA32_ABI_I386 */
	uint32_t reserved;
};

/* A GDT TLS entry as get_thread_area() gives it (struct user_desc) */
struct rec_tls_desc {
	uint32_t entry;		/* 12, 13, 14 */
	uint32_t base;
	uint32_t limit;
	uint32_t flags;		/* bit 0 seg_32bit, 1-2 contents, 3
				 * read_exec_only, 4 limit_in_pages, 5
				 * seg_not_present, 6 useable, 7 lm */
};

struct rec_ia32_thread {
	struct rec_tls_desc tls[3];
	uint32_t robust_list;	/* set_robust_list() of a 32-bit caller */
	uint32_t robust_len;
};

struct rec_siginfo {
	uint32_t shared;	/* 1: process-wide queue, 0: thread's own */
	uint32_t reserved;
	uint8_t info[128];	/* siginfo_t as PTRACE_PEEKSIGINFO gives it */
};

struct rec_sigaction {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

struct rec_sighand {
	struct rec_sigaction act[64];	/* signals 1..64 */
};

struct rec_timerval {
	int64_t interval_ns;
	int64_t value_ns;
};

struct rec_itimers {
	struct rec_timerval t[3];	/* ITIMER_REAL, VIRTUAL, PROF */
};

struct rec_posix_timer {
	int32_t id;
	int32_t clock;
	int32_t notify;		/* SIGEV_* (with SIGEV_THREAD_ID) */
	int32_t signo;
	uint64_t sigval;
	uint32_t tid;		/* for SIGEV_THREAD_ID */
	uint32_t reserved;
	struct rec_timerval t;
};

struct rec_rlimits {
	uint32_t nr;
	uint32_t reserved;
	struct { uint64_t cur, max; } lim[16];
};

struct rec_fs {
	uint32_t umask;
	uint32_t cwd_len;	/* bytes of cwd (with NUL) that follow */
	uint32_t root_len;	/* then bytes of root (with NUL): "/" unless
				 * chrooted */
	uint32_t flags;		/* FS_CWD_* */
	uint32_t cwd_mode;	/* a deleted cwd's permission bits, owner */
	uint32_t cwd_uid;
	uint32_t cwd_gid;
	uint32_t cwd_fd;	/* FS_CWD_FD: an fd of the process on it */
};

/* Images written before the deleted-cwd fields: umask, cwd_len,
 * root_len and a 0 there, then the strings (kinds/fs.c reads both). */
#define FS_OLD_SIZE	16

/* REC_PROCATTR: process-wide attributes the task's own calls set. */
struct rec_procattr {
	int32_t oom_score_adj;	/* -1000..1000 */
	uint32_t loginuid;	/* (uint32_t)-1: unset */
	uint32_t dumpable;	/* PR_GET_DUMPABLE: 0..2 (2: suid_dumpable's) */
	uint32_t thp_disable;	/* PR_GET_THP_DISABLE: bit 0, and bit 1
				 * PR_THP_DISABLE_EXCEPT_ADVISED */
	uint32_t membarrier;	/* MEMBARRIER_CMD_GET_REGISTRATIONS: the
				 * REGISTER_* commands made */
	uint32_t reserved;
};

/* REC_THREAD_ATTR: the last THREAD's parent-death signal and scheduling
 * (sched_getattr: policy, flags, nice, priority, deadline times). */
struct rec_thread_attr {
	uint32_t pdeathsig;	/* 0..64 */
	uint32_t policy;	/* SCHED_OTHER..SCHED_DEADLINE, not 4 */
	uint64_t flags;		/* SCHED_FLAG_RESET_ON_FORK only */
	int32_t nice;		/* -20..19 */
	uint32_t priority;	/* 1..99 for FIFO and RR, else 0 */
	uint64_t runtime, deadline, period;	/* SCHED_DEADLINE, ns */
	uint64_t robust_list;	/* set_robust_list(): the 64-bit list (a
				 * 32-bit task's is in IA32_THREAD) */
	uint64_t robust_len;	/* what get_robust_list says: 24 */
};
/* REC_THREAD_MORE: the last THREAD's attributes that THREAD_ATTR did
 * not have room for (images of older ckpt versions have none). */
struct rec_thread_more {
	uint64_t timerslack_ns;	/* PR_GET_TIMERSLACK; 0 for a real-time
				 * thread, whose slack the kernel keeps at 0 */
	uint32_t ioprio;	/* ioprio_get(): class << 13 | hints | level,
				 * below 1 << 16, class 0..3 */
	uint32_t reserved;	/* 0 */
};
/* REC_PROC_MORE: the same for the process (PROCATTR's fields go on). */
struct rec_proc_more {
	uint32_t coredump_filter;	/* /proc/PID/coredump_filter: bits 0..8 */
	uint32_t mdwe;		/* PR_GET_MDWE: REFUSE_EXEC_GAIN 1, NO_INHERIT 2 */
	uint64_t reserved;	/* 0 */
};
/* REC_THREAD_CPUS: the last THREAD's CPU mask, as sched_getaffinity
 * gives it: bit N of word N / 64 is CPU N; 1 to MAX_CPU_WORDS words, at
 * least one bit set.  Restart gives it back; where none of its CPUs is
 * usable the thread keeps restart's own (a warning says so). */
#define MAX_CPU_WORDS	1024	/* 65536 CPUs */

/* The cwd's last name was removed: cwd is the name it had. */
#define FS_CWD_DELETED	1u
/* ... and the process has an fd on that directory: cwd_fd. */
#define FS_CWD_FD	2u

struct rec_creds {
	uint32_t uid[4];	/* real, effective, saved, fs */
	uint32_t gid[4];
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	uint32_t securebits;
	uint32_t no_new_privs;
	uint32_t nr_groups;
	uint32_t reserved;
	/* uint32_t groups[nr_groups]; */
};

/* A seccomp filter: a classic BPF program and the filter it was
 * installed on top of.  Filters are numbered 1, 2, ... in image order,
 * each written once before the first SECCOMP record that needs it (under
 * that record's TASK); equal chains of several threads or processes are
 * the same records. */
struct rec_seccomp_filter {
	uint32_t id;		/* 1 + the number of earlier filters */
	uint32_t parent;	/* the filter installed before it (0: none) */
	uint32_t flags;		/* SECCOMP_FILTER_FLAG_LOG or 0 */
	uint32_t nr_insns;	/* 1..4096 (BPF_MAXINSNS) */
	/* struct sock_filter insns[nr_insns]: u16 code, u8 jt, u8 jf, u32 k */
};

#define SECCOMP_MODE_STRICT_	1
#define SECCOMP_MODE_FILTER_	2

/* The seccomp state of the last THREAD (none: mode 0, no filter). */
struct rec_seccomp {
	uint32_t mode;		/* SECCOMP_MODE_STRICT_ or _FILTER_ */
	uint32_t filter;	/* filter mode: its newest filter's id */
	uint32_t no_new_privs;	/* the thread's own (CREDS has the main one's) */
	uint32_t reserved;
};

/* REC_CUDA: the last TASK was a CUDA process.  ckpt had the CUDA driver
 * lock it and move its GPU state into its own memory (which the image
 * holds like any other); at restart the driver's restore thread brings
 * it back onto a GPU before the process runs (src/kinds/cuda.c). */
#define CUDA_REC_VERSION	1

struct rec_cuda {
	uint32_t version;	/* CUDA_REC_VERSION */
	uint32_t restore_tid;	/* the driver's restore thread: a THREAD of
				 * this TASK */
	uint32_t cuda_version;	/* cuDriverGetVersion(): 12080 is 12.8 */
	uint32_t nr_fds;	/* /dev/nvidia* fds it had open */
	uint64_t gpu_bytes;	/* host memory the driver's checkpoint added
				 * to the process (its GPU state), as its
				 * resident set grew */
	uint64_t lock_ns;	/* the driver's lock, then checkpoint, calls */
	uint64_t checkpoint_ns;
	char driver[32];	/* the kernel module's version, "580.95.05" */
	char devices[128];	/* the device files it had open, space-separated */
	uint64_t reserved[2];
};

#endif
