/* image_format.h - the on-disk records of a ckpt image (docs/image-format.md).
 *
 * Every record: a 24-byte header, the payload, zero padding to 8 bytes, and
 * an 8-byte trailer holding the CRC32C of the payload.  All fields are
 * little-endian and fixed-width; every reserved field must be zero.
 */
#ifndef CKPT_IMAGE_FORMAT_H
#define CKPT_IMAGE_FORMAT_H

#include <stdint.h>

#define CKPT_MAGIC		0x00474d4954504b43ULL	/* "CKPTIMG\0" */
#define CKPT_TAIL_MAGIC		0x00444e4554504b43ULL	/* "CKPTEND\0" */
#define CKPT_FMT_MAJOR		1
#define CKPT_FMT_MINOR		0
#define CKPT_ARCH_X86_64	1
#define CKPT_ARCH_S390X		2
#define CKPT_ARCH_PPC64LE	3

#define CKPT_REC_MAX_META	(16u << 20)	/* bound of a non-page record */
#define CKPT_PATH_MAX		4096

enum ckpt_rec_type {
	REC_HEAD	= 1,
	REC_TASK	= 100,	/* a process; its records follow it */
	REC_THREAD	= 101,	/* a thread of the last TASK */
	REC_REGS	= 102,	/* general registers of the last THREAD */
	REC_XSTATE	= 103,	/* FPU/SSE/AVX state of the last THREAD */
	REC_SIGPENDING	= 104,	/* pending signals (thread or process) */
	REC_MM		= 110,	/* mm fields, auxv, exe */
	REC_VMA		= 111,	/* one memory area */
	REC_PAGES	= 112,	/* page contents of the last VMA */
	REC_PAGES_REF	= 113,	/* pages of the last VMA that are the parent's */
	REC_AIO		= 114,	/* an AIO ring (io_setup) of the last TASK */
	REC_VMA_GUARDS	= 115,	/* guard pages (MADV_GUARD_INSTALL) of the last VMA */
	REC_SIGHAND	= 120,	/* signal dispositions */
	REC_ITIMERS	= 121,
	REC_POSIX_TIMER	= 122,
	REC_RLIMITS	= 130,
	REC_FS		= 131,	/* cwd, umask */
	REC_CREDS	= 132,
	REC_PROCATTR	= 133,	/* dumpable, THP, oom_score_adj, loginuid,
				 * membarrier registrations */
	REC_THREAD_ATTR	= 134,	/* the last THREAD's pdeathsig, scheduling,
				 * robust list */
	REC_THREAD_MORE	= 135,	/* the last THREAD's timer slack, I/O priority */
	REC_PROC_MORE	= 136,	/* coredump_filter, memory-deny-write-execute */
	REC_FILE	= 140,	/* an open file description (objref) */
	REC_FD		= 141,	/* an fd-table slot referring to a FILE */
	REC_PIPE	= 142,	/* a pipe: capacity, the data in it */
	REC_FILE_OBJ	= 143,	/* a file with no name: memfd or deleted file */
	REC_FILE_DATA	= 144,	/* the bytes of the last FILE_OBJ */
	REC_FIFO	= 145,	/* a FIFO's buffer: struct rec_pipe, by inode */
	REC_LOCK	= 146,	/* a file lock the last TASK holds or placed */
	REC_FOWN	= 147,	/* an fd's F_SETOWN/F_SETSIG owner */
	REC_FILE_MORE	= 148,	/* more of the last FILE's kind state, past
				 * what one record holds (a socket's queues) */
	REC_THREAD_CPUS	= 149,	/* the last THREAD's CPU mask (sched_getaffinity) */
	REC_TTY		= 150,	/* a terminal: a pty pair, or the job's */
	REC_TTY_DATA	= 151,	/* bytes queued in the pty of the last TTY */
	REC_UNIX_SK	= 152,	/* a unix socket: its connection, queued data */
	REC_UNIX_SCM	= 153,	/* the fds in flight (SCM_RIGHTS) queued for
				 * one UNIX_SK, by FILE */
	REC_IA32	= 160,	/* the last TASK is a 32-bit (IA32) process */
	REC_IA32_THREAD	= 161,	/* its last THREAD's TLS entries, robust list */
	REC_SYSV_SHM	= 170,	/* a SysV shared memory segment, once */
	REC_SYSV_DATA	= 171,	/* the bytes of the last SYSV_SHM */
	REC_SECCOMP_FILTER = 180,	/* a seccomp filter, once per image */
	REC_SECCOMP	= 181,	/* the last THREAD's seccomp mode and filters */
	REC_CUDA	= 190,	/* the last TASK's GPU state, checkpointed by
				 * the CUDA driver into its memory */
	REC_CGROUP	= 200,	/* a cgroup, once per image */
	REC_CGROUP_MEMBER = 201,	/* the cgroups of the last THREAD */
	REC_CGROUP_PROP	= 202,	/* a file of the last CGROUP: its value,
				 * owner and mode */
	REC_NS_UTS	= 210,	/* the root's own uts namespace: its names */
	REC_NS		= 211,	/* a container's namespaces: its own, shared */
	REC_NS_TIME	= 212,	/* its own time namespace: its clocks */
	REC_NSPID	= 213,	/* the last TASK's pids in nested pid namespaces */
	REC_NSTID	= 214,	/* the last THREAD's tids in them */
	REC_NS_USER	= 215,	/* its own user namespace: uid and gid maps */
	REC_IPC_NS	= 240,	/* the root's own ipc namespace: its sysctls */
	REC_IPC_MSQ	= 241,	/* a SysV message queue of it */
	REC_IPC_MSG	= 242,	/* a message queued on the last IPC_MSQ */
	REC_IPC_SEM	= 243,	/* a SysV semaphore set of it, its values */
	REC_IPC_MQ	= 244,	/* a POSIX message queue of it */
	REC_IPC_MQ_MSG	= 245,	/* a message queued on the last IPC_MQ */
	REC_NET_LINK	= 220,	/* a network device of the root's own net
				 * namespace */
	REC_NET_ADDR	= 221,	/* an IPv4 or IPv6 address of one */
	REC_NET_ROUTE	= 222,	/* a route of the namespace */
	REC_NET_SYSCTL	= 223,	/* a file under /proc/sys/net and its value */
	REC_NET_IPTABLES = 224,	/* the namespace's iptables-save output */
	REC_NET_BRIDGE	= 225,	/* the options of the last NET_LINK, a bridge */
	REC_NET_BRPORT	= 226,	/* the options of the last NET_LINK as a
				 * bridge's port; 227-239 set aside for the
				 * net namespace */
	REC_MNT		= 250,	/* a mount of the root's own mount namespace */
	REC_MNT_FILE	= 251,	/* a file of the last MNT (a tmpfs) */
	REC_MNT_DATA	= 252,	/* bytes of the last MNT_FILE */
	/* set aside, unused so far: 149 (epoll and inotify keep all
	 * in their FILE), 153-155 unix sockets, 156-159 TCP/UDP (FILE_INET
	 * keeps all in its FILE), 162-169 32-bit tasks, 172-179 SysV IPC,
	 * 182-189 seccomp, 191-199 GPU, 253-269 mounts */
	REC_PARENT	= 295,	/* an incremental image: its parent image */
	REC_PAGES_PARENT = 296,	/* pages of the last VMA that are the parent
				 * image's, unchanged since */
	REC_MM_TRACK	= 297,	/* the last TASK's memory is tracked from
				 * this image on (--track-mem) */
	/* another architecture's registers (HEAD.arch says which) */
	REC_S390_REGS	= 310,	/* s390x: PSW, general and access registers
				 * of the last THREAD, its system call */
	REC_S390_FPREGS	= 311,	/* s390x: its floating-point registers */
	REC_S390_VXRS	= 312,	/* s390x: the rest of its vector registers */
	REC_PPC_REGS	= 320,	/* ppc64le: NIP, MSR, GPRs... of the last THREAD */
	REC_PPC_FPREGS	= 321,	/* ppc64le: its floating-point registers */
	REC_PPC_VMX	= 322,	/* ppc64le: its AltiVec registers */
	REC_PPC_VSX	= 323,	/* ppc64le: the rest of its VSX registers */
	REC_PAGES_AT	= 298,	/* restart's own, never in a file: pages of
				 * the last VMA in a parent image (chain.c) */
	REC_TAIL	= 9001,
	REC_ERROR	= 9999,
};

struct rec_hdr {
	uint32_t type;
	uint32_t flags;		/* REC_F_*; 0 in an image written without
				 * --compress */
	uint64_t len;		/* payload bytes */
	uint32_t hcrc;		/* CRC32C of the 16 bytes above */
	uint32_t reserved;
};

struct rec_trailer {
	uint32_t crc;		/* CRC32C of the payload */
	uint32_t reserved;
};

/* rec_hdr.flags: the payload is a struct rec_zframe and its stored bytes,
 * one piece of a larger record of the same type (the record's payload
 * cut in pieces, each compressed or not).  The pieces of one record
 * follow each other; the checksums (trailer, chain, AUTH) are over the
 * stored bytes.  Only in an image whose HEAD has CKPT_COMPRESS. */
#define REC_F_ZFRAME	0x1

#define ZFRAME_RAW	0	/* stored as it is */
#define ZFRAME_ZSTD	1	/* one or more zstd frames */
#define ZFRAME_MAX_RAW	(8u << 20)	/* the most bytes a piece gives */

struct rec_zframe {
	uint64_t total;		/* the record's payload bytes, all pieces */
	uint64_t offset;	/* this piece's first byte in it */
	uint32_t raw_len;	/* bytes this piece gives */
	uint32_t raw_crc;	/* their CRC32C */
	uint32_t method;	/* ZFRAME_* */
	uint32_t reserved;
	/* uint8_t stored[]: the rest of the payload */
};

struct rec_head {
	uint64_t magic;
	uint16_t major, minor;
	uint32_t arch;
	uint32_t page_size;
	uint32_t xstate_size;	/* bytes of the NT_X86_XSTATE regset */
	uint64_t xfeatures;	/* XCR0 of the checkpointing CPU */
	uint64_t time_ns;	/* CLOCK_REALTIME of the checkpoint */
	uint64_t flags;		/* ckpt_checkpoint() flags */
	uint32_t root_pid;
	uint32_t nr_tasks;
	char kernel[65];	/* uname release */
	char host[65];
	char tool[22];		/* ckpt version that wrote it */
};

/* rec_head.flags, besides the ckpt_checkpoint() flags: the root is the
 * init (pid 1) of its own pid namespace, checkpointed from inside it; a
 * container's image, restarted in a new pid namespace (container.c) */
#define HEAD_CONTAINER	(1ULL << 31)

struct rec_tail {
	uint64_t magic;
	uint64_t nr_records;	/* records before this one */
	uint64_t offset;	/* stream offset of this record */
	uint32_t chain;		/* CRC32C over all earlier records' crcs */
	uint32_t reserved;
};

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

struct rec_mm {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint32_t auxv_len;	/* bytes of auxv that follow */
	uint32_t exe_len;	/* bytes of exe path (with NUL) after auxv */
	/* uint8_t auxv[auxv_len]; char exe[exe_len]; */
};

enum vma_kind {
	VMA_ANON	= 1,	/* private or shared anonymous */
	VMA_FILE	= 2,	/* file-backed */
	VMA_VDSO	= 3,
	VMA_VVAR	= 4,	/* [vvar] and [vvar_vclock] */
	VMA_NONAME	= 5,	/* a memfd or deleted file: the FILE_OBJ shm_id */
	VMA_SYSV	= 6,	/* a SysV shm attach: the SYSV_SHM shm_id, pgoff
				 * bytes into it */
	VMA_PACKET	= 20,	/* a packet socket's rings mapped: shm_id is
				 * the FILE (FILE_PACKET) whose rings it maps
				 * whole; no pages (the number FILE_PACKET's) */
};

/* vma.madv bits: what madvise()/mlock() state the area carries */
#define VMA_MADV_DONTFORK	0x01
#define VMA_MADV_WIPEONFORK	0x02
#define VMA_MADV_DONTDUMP	0x04
#define VMA_MADV_HUGEPAGE	0x08
#define VMA_MADV_NOHUGEPAGE	0x10
#define VMA_MADV_MERGEABLE	0x20
#define VMA_MLOCKED		0x40
#define VMA_SEALED		0x80
#define VMA_MAYWRITE		0x100	/* shared file area may become writable */
#define VMA_NORESERVE		0x200	/* mapped MAP_NORESERVE */
#define VMA_MADV_SEQUENTIAL	0x400
#define VMA_MADV_RANDOM		0x800
#define VMA_DROPPABLE		0x1000	/* MAP_DROPPABLE: no pages saved */
#define VMA_MADV_ALL		0x1fff

struct rec_vma {
	uint64_t start, end;
	uint64_t pgoff;		/* bytes into the file */
	uint32_t prot;		/* PROT_* */
	uint32_t flags;		/* MAP_PRIVATE/MAP_SHARED/MAP_GROWSDOWN */
	uint32_t kind;		/* enum vma_kind */
	uint32_t madv;		/* VMA_MADV_* */
	uint64_t file_size;	/* file identity, checked at restart */
	int64_t  file_mtime_ns;
	uint32_t path_len;	/* bytes of path (with NUL) that follow */
	uint32_t shm_id;	/* shared anonymous: its memory object (objref),
				 * the same in every process that maps it;
				 * VMA_NONAME: the FILE_OBJ it maps;
				 * VMA_SYSV: the SYSV_SHM it attaches */
};

struct rec_pages_run {
	uint64_t addr;
	uint64_t npages;
};

struct rec_pages {
	uint64_t vma_start;
	uint64_t npages;	/* total over all runs */
	uint32_t nr_runs;
	uint32_t pad_len;	/* zero bytes between runs and data */
	/* struct rec_pages_run runs[nr_runs]; uint8_t pad[pad_len];
	 * uint8_t data[npages * page_size], starting page-aligned in the
	 * stream. */
};

/* Pages of a child's private area still copy-on-write shared with its
 * parent's same area: their content is the parent's page at the same
 * address (from the parent's PAGES or, in turn, PAGES_REF). */
struct rec_pages_ref {
	uint64_t vma_start;
	uint64_t npages;	/* total over all runs */
	uint32_t nr_runs;
	uint32_t reserved;
	/* struct rec_pages_run runs[nr_runs]; */
};

/* An AIO context (io_setup) of the last TASK: its ring, a "/[aio]"
 * mapping with no VMA record of its own, made again by io_setup, brought
 * to where ring->tail was by as many no-op requests, given its saved
 * events and head, and moved (mremap) to @addr, which is the context's
 * id.  Requests still in flight are not seen (only the kernel knows
 * them): only completed events are kept. */
struct rec_aio {
	uint64_t addr;		/* the ring's address: the aio_context_t */
	uint64_t len;		/* the ring mapping's bytes */
	uint32_t nr;		/* ring->nr: events the ring holds */
	uint32_t head, tail;	/* ring->head, ring->tail, both < nr */
	uint32_t data_len;	/* bytes that follow: the ring past its
				 * 32-byte header, len - 32 */
};

/* The guard pages (madvise MADV_GUARD_INSTALL) of the last VMA: installed
 * again once its pages are in.  A guard page is no page: never read. */
struct rec_vma_guards {
	uint64_t vma_start;
	uint64_t npages;	/* total over all runs */
	uint32_t nr_runs;
	uint32_t reserved;
	/* struct rec_pages_run runs[nr_runs]; */
};

/* REC_PARENT: this image is incremental (HEAD flag CKPT_PARENT): the
 * pages its PAGES_PARENT records name are in the image at @path_len
 * bytes of path (with NUL) that follow, relative to this image's
 * directory unless absolute, which is the image whose TAIL, size and
 * HEAD time are these. */
struct rec_parent {
	uint64_t size;		/* the parent's bytes */
	uint64_t nr_records;	/* its TAIL's */
	uint64_t time_ns;	/* its HEAD's */
	uint32_t chain;		/* its TAIL's */
	uint32_t path_len;
};

/* REC_MM_TRACK: the last TASK's private areas are write-protected
 * (userfaultfd, UFFD_FEATURE_WP_ASYNC) since this image's pages were
 * read, by the userfaultfd at @fd of the task whose inode is @ino: the
 * next incremental checkpoint finds it there and saves only the pages
 * written since. */
struct rec_mm_track {
	uint32_t fd;
	uint32_t reserved;
	uint64_t ino;
};

/* REC_PAGES_AT: made by restart (chain.c) as it assembles a chain, in
 * the image it reads then, never in a file: a struct rec_pages_ref head
 * (vma_start, npages, nr_runs, reserved 0), then nr_runs of these, in
 * address order: the pages at @addr are @npages pages at @off of the
 * chain's parent image @file (1: the parent, 2: its parent...). */
struct rec_pages_at {
	uint64_t addr;
	uint64_t npages;
	uint64_t off;
	uint32_t file;
	uint32_t reserved;
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

enum file_kind {
	FILE_REG	= 1,	/* regular file */
	FILE_DIR	= 2,
	FILE_CHR	= 3,	/* a supported character device */
	FILE_INHERIT	= 4,	/* stdio held by the caller: take restart's */
	FILE_PIPE	= 5,	/* an end of a PIPE (rdev: the PIPE's id) */
	/* numbers given out to kinds being built; one each, never reused */
	FILE_FIFO	= 6,
	FILE_DELETED	= 7,	/* unlinked or O_TMPFILE, content saved */
	FILE_MEMFD	= 8,
	FILE_EVENTFD	= 9,
	FILE_TIMERFD	= 10,
	FILE_SIGNALFD	= 11,
	FILE_INOTIFY	= 12,
	FILE_EPOLL	= 13,
	FILE_TTY	= 14,
	FILE_UNIX	= 15,
	FILE_INET	= 16,
	FILE_PIDFD	= 17,
	FILE_FANOTIFY	= 18,
	FILE_NSFS	= 19,	/* an fd on a namespace (/proc/PID/ns/NAME) */
	FILE_PACKET	= 20,	/* an AF_PACKET socket: struct rec_packet */
	FILE_NETLINK	= 21,	/* an AF_NETLINK socket: struct rec_netlink */
	FILE_KIND_MAX	= 31,
};

struct rec_pipe {
	uint32_t id;		/* objref, named by the FILEs of its ends */
	uint32_t capacity;	/* F_GETPIPE_SZ */
	uint32_t data_len;	/* bytes in it, which follow */
	uint32_t reserved;
};

/* FILE_REG / FILE_DIR extra payload, only for an O_PATH fd on a symlink
 * or an fd on a directory whose last name was removed (the path then
 * ends in " (deleted)"): made again at restart by the name it had,
 * opened, and removed.  A symlink's target follows, with its NUL. */
#define PATH_GHOST	0x1
/* FILE_REG only: a regular file whose open name was removed but which
 * has another name in the same directory: that name (absolute, with its
 * NUL) follows, and the file is reopened by it. */
#define PATH_RELINK	0x2

struct rec_path_ghost {
	uint32_t flags;		/* PATH_GHOST */
	uint32_t uid, gid;	/* its owner */
	uint32_t reserved;
	/* char target[]; a symlink's */
};

/* FILE_FIFO extra payload, only for an end of a FIFO whose last name
 * was removed (the path then ends in " (deleted)"): made again at
 * restart by the name it had, opened, and removed. */
#define FIFO_GHOST	0x1

struct rec_fifo_ghost {
	uint32_t flags;		/* FIFO_GHOST */
	uint32_t uid, gid;	/* its owner */
	uint32_t reserved;
};

/* A terminal (REC_TTY), named by the FILE_TTY descriptions of it. */
enum tty_kind {
	TTY_PTY		= 1,	/* a pty pair with its master in the tree */
	TTY_JOB		= 2,	/* the shell job's terminal (--shell-job):
				 * restart's own terminal in its place */
	TTY_HUNGUP	= 3,	/* a pty whose master was closed, its slave
				 * hung up: a new pair, its master closed */
	TTY_CTTY_PATH	= 4,	/* a console or vt, reopened by its path, the
				 * controlling terminal of a session */
	TTY_ORPHAN	= 5,	/* a pty slave, the controlling terminal of a
				 * session led in the tree, its master outside
				 * (a terminal container's console): a new
				 * pair, its master given to restart's caller */
};

#define TTY_PKT		0x1	/* master in packet mode (TIOCPKT) */
#define TTY_LOCKED	0x2	/* slave locked (TIOCSPTLCK) */
#define TTY_OWNER	0x4	/* slave_uid, slave_gid, slave_mode are set */
#define TTY_FLAGS	0x7

struct rec_tty {
	uint32_t id;		/* objref */
	uint32_t kind;		/* enum tty_kind */
	uint32_t index;		/* /dev/pts/N at checkpoint: informational */
	uint32_t flags;		/* TTY_* */
	uint32_t sid;		/* pty: session it is the controlling
				 * terminal of (its leader is in the tree) */
	uint32_t fg_pgrp;	/* pty: its foreground process group */
	uint32_t iflag, oflag, cflag, lflag;	/* termios */
	uint32_t ispeed, ospeed;
	uint8_t cc[32];		/* c_cc[NCCS] */
	uint8_t line;		/* line discipline: 0 (N_TTY) */
	uint8_t pad[3];
	uint16_t ws_row, ws_col, ws_xpixel, ws_ypixel;	/* winsize */
	uint32_t reserved;
	/* older images end here (TTY_V1_LEN bytes) */
	uint32_t slave_uid, slave_gid;	/* pty, TTY_OWNER: /dev/pts/N's owner */
	uint32_t slave_mode;		/* and permission bits */
	uint32_t reserved2;
};
#define TTY_V1_LEN	96

/* REC_TTY_DATA: the bytes queued one way in the pty of the TTY record
 * just before it (at most one record each way), data[len] after. */
enum tty_dir {
	TTY_TO_MASTER	= 1,	/* the slave's output, as the master reads it */
	TTY_TO_SLAVE	= 2,	/* input the slave has not read */
};
/* what a pty holds for its master: the line discipline's 4 KiB and the
 * tty's own buffers' 64 KiB */
#define TTY_MAX_QUEUE	(68u << 10)
#define TTY_MAX_STORED	4095u	/* what N_TTY holds of input */
#define TTY_MAX_INPUT	(2 * TTY_MAX_STORED + 1)	/* quoted */

struct rec_tty_data {
	uint32_t tty_id;
	uint32_t dir;		/* enum tty_dir */
	uint32_t len;		/* 1..TTY_MAX_QUEUE (TO_SLAVE: TTY_MAX_INPUT) */
	uint32_t partial;	/* TO_SLAVE in canonical mode: its last bytes
				 * are the line being typed; the lines before
				 * each end with a newline, VEOL, VEOL2 or VEOF,
				 * and within them (and in the line being
				 * typed) every byte the line discipline would
				 * act on is quoted with VLNEXT */
};

/* The extra bytes of a FILE_TTY description. */
enum tty_role {
	TTY_MASTER	= 1,	/* of a TTY_PTY */
	TTY_SLAVE	= 2,	/* of a TTY_PTY (or /dev/tty naming it) */
	TTY_TERM	= 3,	/* of the TTY_JOB */
};

struct rec_tty_file {
	uint32_t tty_id;	/* its TTY record */
	uint32_t role;		/* enum tty_role */
};

/* REC_LOCK: a lock on the file the last TASK has at @fd.  POSIX locks
 * are the process's own; flock and OFD locks belong to the description
 * (written by each process that has it; taking one twice is harmless). */
enum lock_kind {
	LOCK_POSIX	= 1,	/* fcntl F_SETLK */
	LOCK_FLOCK	= 2,	/* flock() */
	LOCK_OFD	= 3,	/* fcntl F_OFD_SETLK */
	LOCK_LEASE	= 4,	/* fcntl F_SETLEASE: the description's, written
				 * once (start and len 0) */
};

/* rec_lock.lease_break: a lease being broken (F_GETLEASE then reads the
 * type it goes to; its own type is READ for an O_RDONLY description,
 * else WRITE) */
#define LEASE_TO_READ	1	/* a WRITE lease being downgraded */
#define LEASE_TO_NONE	2	/* being removed */

struct rec_lock {
	uint32_t fd;
	uint32_t kind;		/* enum lock_kind */
	uint32_t type;		/* F_RDLCK or F_WRLCK */
	uint32_t lease_break;	/* LOCK_LEASE: LEASE_TO_* or 0; else 0 */
	uint64_t start;		/* bytes from the file's start */
	uint64_t len;		/* 0: to the end, however far */
};

/* REC_FOWN: who gets the SIGIO/SIGURG of the description at @fd. */
struct rec_fown {
	uint32_t fd;
	int32_t owner_type;	/* F_OWNER_TID, F_OWNER_PID or F_OWNER_PGRP */
	int32_t owner;		/* a tid, pid or process group; 0: none */
	uint32_t signo;		/* F_SETSIG: 0 is SIGIO */
};

/* A file no path names any more (FILE_MEMFD or FILE_DELETED), written
 * once however many descriptions and mappings it has; they name it by
 * id.  Its bytes follow in a FILE_DATA record unless it has none. */
struct rec_file_obj {
	uint32_t id;		/* objref: FILE rdev, VMA shm_id */
	uint32_t kind;		/* FILE_MEMFD or FILE_DELETED */
	uint64_t size;		/* st_size */
	uint32_t mode;		/* st_mode (S_IFREG) */
	uint32_t uid, gid;
	uint32_t seals;		/* memfd: F_GET_SEALS; else 0 */
	uint32_t name_len;	/* bytes (with NUL) that follow: a memfd's
				 * name, a deleted file's former path */
	uint32_t flags;		/* FOBJ_*; was reserved, 0 */
};
/* FILE_DELETED: the kernel's own shared memory object behind a
 * MAP_SHARED|MAP_ANONYMOUS (or /dev/zero) mapping, "/dev/zero (deleted)",
 * open as a file (map_files) or mapped privately. */
#define FOBJ_SHMEM	0x1

/* A SysV shared memory segment (REC_SYSV_SHM) some process of the tree
 * has attached, written once however many areas attach it; its bytes
 * follow in a SYSV_DATA record (struct rec_file_data, id this id,
 * offsets into the segment) unless it has none. */
#define SYSV_SHM_DEST	0x1	/* marked for deletion (IPC_RMID, SHM_DEST) */
#define SYSV_SHM_LOCKED	0x2	/* SHM_LOCK */
#define SYSV_SHM_FLAGS	0x3

struct rec_sysv_shm {
	uint32_t id;		/* objref: the VMA shm_id of its areas */
	int32_t shmid;		/* the kernel's id, kept */
	int32_t key;		/* the key it was made with (its areas'
				 * /SYSV name; IPC_STAT says IPC_PRIVATE once
				 * it is marked for deletion) */
	uint32_t mode;		/* permission bits, 0777 */
	uint64_t size;		/* shm_segsz, bytes */
	uint32_t uid, gid;	/* owner */
	uint32_t cpid, lpid;	/* creator, last shmat/shmdt: shown only */
	uint32_t flags;		/* SYSV_SHM_* */
	uint32_t reserved;
};

/* The same head as rec_pages (the reader treats both alike): only the
 * head is read into memory; the data stays in the image. */
struct rec_data_run {
	uint64_t off;		/* bytes into the file */
	uint64_t len;
};

struct rec_file_data {
	uint64_t id;		/* the FILE_OBJ it follows */
	uint64_t bytes;		/* total over all runs */
	uint32_t nr_runs;
	uint32_t pad_len;	/* zero bytes between runs and data */
	/* struct rec_data_run runs[nr_runs]; uint8_t pad[pad_len];
	 * uint8_t data[bytes], page-aligned in the stream; a hole between
	 * runs reads as zeros. */
};

/* FILE_INET: the extra bytes of an AF_INET/AF_INET6 TCP or UDP socket's
 * FILE record: this, then the send queue's bytes, then the receive
 * queue's. */
enum inet_opt {			/* rec_inet.opt[]: socket options */
	INET_OPT_REUSEADDR,	/* SOL_SOCKET, 0/1 */
	INET_OPT_REUSEPORT,
	INET_OPT_KEEPALIVE,
	INET_OPT_BROADCAST,
	INET_OPT_RCVBUF,	/* as getsockopt gives it (doubled) */
	INET_OPT_SNDBUF,
	INET_OPT_LINGER,	/* seconds, -1: off */
	INET_OPT_V6ONLY,	/* IPPROTO_IPV6, 0/1; 0 for IPv4 */
	INET_OPT_NODELAY,	/* IPPROTO_TCP; 0 for UDP */
	INET_OPT_KEEPIDLE,
	INET_OPT_KEEPINTVL,
	INET_OPT_KEEPCNT,
	INET_NR_OPTS,
	INET_OPT_SLOTS = 16	/* the rest are reserved, 0 */
};

struct rec_inet {
	uint16_t family;	/* AF_INET, AF_INET6 */
	uint16_t protocol;	/* IPPROTO_TCP, IPPROTO_UDP; with type:
				 * IPPROTO_UDPLITE, IPPROTO_ICMP(V6) (ping
				 * sockets), any of a raw socket */
	uint16_t state;		/* the kernel's sk_state (TCP_*): TCP LISTEN,
				 * CLOSE, SYN_SENT (addresses only),
				 * ESTABLISHED, FIN_WAIT1/2, CLOSE_WAIT,
				 * LAST_ACK, CLOSING; UDP CLOSE
				 * or ESTABLISHED (connected); raw and ping
				 * sockets the same */
	uint16_t shutdown;	/* SHUT_RD 1 | SHUT_WR 2 done; TCP only in
				 * CLOSE (3: a connection that ended, its
				 * port released: lport 0) */
	uint8_t laddr[16];	/* IPv4: the first 4 bytes, the rest 0 */
	uint8_t raddr[16];
	uint16_t lport, rport;	/* host order; lport 0: not bound */
	uint32_t scope_id;	/* IPv6 only */
	uint32_t backlog;	/* LISTEN */
	uint32_t type;		/* SOCK_STREAM, SOCK_DGRAM, SOCK_RAW; 0 (older
				 * images): TCP stream or UDP datagrams */
	int32_t opt[INET_OPT_SLOTS];
	int64_t rcvtimeo_us, sndtimeo_us;	/* SO_RCVTIMEO/SNDTIMEO, 0: none */
	/* a TCP connection (ESTABLISHED or half or both closed), else 0
	 * (but rcv_len for UDP) */
	uint32_t snd_seq;	/* sequence number of the send queue's start */
	uint32_t rcv_seq;	/* ... of the receive queue's start */
	uint32_t snd_len;	/* bytes in the send queue (not the FIN) */
	uint32_t unsent_len;	/* its last bytes, never sent yet */
	uint32_t rcv_len;	/* bytes received, not yet read (UDP: of the
				 * datagrams, struct rec_dgram each) */
	uint32_t mss;		/* TCP_MAXSEG */
	uint32_t tcpi_opts;	/* TCPI_OPT_TIMESTAMPS|SACK|WSCALE */
	uint8_t snd_wscale, rcv_wscale;
	uint16_t conn_flags;	/* INET_CONN_* */
	uint32_t timestamp;	/* TCP_TIMESTAMP */
	uint32_t snd_wl1, snd_wnd, max_window, rcv_wnd, rcv_wup; /* TCP_REPAIR_WINDOW */
	/* uint8_t sndq[snd_len], rcvq[rcv_len];
	 * then, to the end of the FILE's extra (none in older images), the
	 * other options as rec_sockopt entries */
};

/* A socket option (beyond rec_inet.opt[]) as getsockopt() reads it:
 * level and name as the kernel numbers them, of the table in
 * src/files/sockopt.c; then len bytes of value (an int, a string, a
 * struct; SO_ATTACH_FILTER: the struct sock_filter instructions), padded
 * with zeros to 4 bytes, unaligned. */
struct rec_sockopt {
	uint16_t level;
	uint16_t name;
	uint32_t len;
};

#define INET_CONN_RECONNECT 1	/* ESTABLISHED, its other end waited in the
				 * accept queue of a listener of the image,
				 * nothing queued either way: at restart it
				 * connects to it again, and sends its send
				 * queue as new bytes */

/* A UDP socket's receive queue (rec_inet.rcv_len bytes): datagrams one
 * after another, each this header and then len bytes, unaligned. */
struct rec_dgram {
	uint32_t len;		/* bytes of data, <= 65535 */
	uint16_t port;		/* where it came from, host order */
	uint16_t reserved;
	uint8_t addr[16];	/* as rec_inet's; IPv4-mapped for IPv4 on IPv6 */
};

enum unix_state {
	UNIX_ST_UNCONN	= 1,	/* not connected; bound to name or not */
	UNIX_ST_LISTEN	= 2,	/* listening on its name */
	UNIX_ST_CONNECTED = 3,	/* to peer, a socket of the image */
	UNIX_ST_PENDING	= 4,	/* connected, in the backlog of listener peer */
	UNIX_ST_PEER_GONE = 5,	/* connected to a peer that is closed (or
				 * outside the tree, with --external-unix) */
	UNIX_ST_REMOTE	= 6,	/* datagram, connected to name outside the
				 * tree (--external-unix): connected again */
};

#define UNIX_SHUT_RD	1	/* the kernel's RCV_SHUTDOWN */
#define UNIX_SHUT_WR	2	/* SEND_SHUTDOWN */
#define UNIX_PASSCRED	0x1	/* SO_PASSCRED */
#define UNIX_EXTERNAL	0x2	/* its peer was outside the tree */
#define UNIX_GHOST	0x4	/* bound to a path that no longer leads to
				 * it (removed, or another file there) */
#define UNIX_PASSSEC	0x8	/* SO_PASSSEC */
#define UNIX_FLAGS	0xf

struct rec_unix_sk {
	uint32_t id;		/* objref, named by its FILE's rdev */
	uint32_t type;		/* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
	uint32_t state;		/* enum unix_state */
	uint32_t peer;		/* CONNECTED: the peer's id; PENDING: the
				 * listener's; else 0 */
	uint32_t shutdown;	/* UNIX_SHUT_* */
	uint32_t flags;		/* UNIX_PASSCRED, UNIX_EXTERNAL */
	uint32_t backlog;	/* LISTEN: listen()'s backlog */
	int32_t peek_off;	/* SO_PEEK_OFF, -1: off */
	uint32_t rcvbuf;	/* SO_RCVBUF, SO_SNDBUF as getsockopt reads */
	uint32_t sndbuf;
	int64_t rcvtimeo_ns;	/* SO_RCVTIMEO, SO_SNDTIMEO */
	int64_t sndtimeo_ns;
	uint32_t file_mode;	/* bound to a path: its socket file's mode, */
	uint32_t file_uid;	/* owner and group */
	uint32_t file_gid;
	uint32_t name_len;	/* bytes of sun_path that follow (abstract:
				 * a leading NUL); 0: not bound */
	uint32_t nr_msgs;	/* messages queued for it (to be read by it) */
	uint32_t data_len;	/* their bytes, in all */
	/* char name[name_len]; uint32_t msg_len[nr_msgs];
	 * uint8_t data[data_len]; */
};

/* REC_UNIX_SCM: after every UNIX_SK and after the FILE records it
 * names, the messages of one socket's queue that carry fds. */
struct rec_unix_scm {
	uint32_t sk;		/* the UNIX_SK whose queue this is */
	uint32_t opener;	/* pid of the process that makes again, at
				 * restart, a file in flight no fd holds */
	uint32_t nr_msgs;	/* rec_unix_scm_msg entries that follow */
	uint32_t nr_fds;	/* FILE ids after them, in all */
	/* struct rec_unix_scm_msg msgs[nr_msgs]; uint32_t file_id[nr_fds]; */
};

struct rec_unix_scm_msg {
	uint32_t msg;		/* its index in the UNIX_SK's messages,
				 * increasing */
	uint32_t nr_fds;	/* its fds: the next file ids, in order */
};

struct rec_file {
	uint32_t id;		/* objref: FDs name this */
	uint32_t kind;
	uint32_t flags;		/* O_* status flags and access mode */
	uint32_t mode;		/* st_mode */
	uint64_t pos;
	uint64_t size;
	int64_t mtime_ns;
	uint64_t rdev;
	uint32_t path_len;	/* bytes of path (with NUL) that follow */
	uint32_t extra_len;	/* then bytes of the kind's own state */
};

/* FILE extra payloads of the event fds (the FILE's flags carry
 * O_NONBLOCK, its FD the close-on-exec flag). */
#define EVENTFD_SEMAPHORE	0x1	/* EFD_SEMAPHORE */

struct rec_eventfd {
	uint64_t count;		/* < 2^64 - 1, as the kernel keeps it */
	uint32_t flags;		/* EVENTFD_SEMAPHORE */
	uint32_t reserved;
};

struct rec_timerfd {
	int32_t clockid;	/* REALTIME, MONOTONIC, BOOTTIME, *_ALARM */
	uint32_t settime_flags;	/* TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET */
	uint64_t ticks;		/* expirations not yet read */
	int64_t interval_ns;
	int64_t value_ns;	/* time left to the next expiration, 0: disarmed */
	int64_t now_ns;		/* the timer's clock when value_ns was read */
};

struct rec_signalfd {
	uint64_t sigmask;	/* bit N-1: signal N; never SIGKILL, SIGSTOP */
};

/* FILE_EPOLL's extra: this, then nr registrations. */
struct rec_epoll {
	uint32_t nr;
	uint32_t reserved;
};

struct rec_epoll_tfd {
	uint32_t file_id;	/* the watched description's FILE, written before */
	uint32_t tfd;		/* the fd number it was registered under */
	uint32_t events;	/* EPOLL* with EPOLLET/ONESHOT/EXCLUSIVE/WAKEUP */
	uint32_t reserved;
	uint64_t data;
};

/* FILE_INOTIFY's extra: this, then nr watches in increasing wd order,
 * each a rec_inotify_watch followed by its path (path_len bytes with the
 * NUL; the next watch follows unaligned). */
struct rec_inotify {
	uint32_t nr;
	uint32_t reserved;
};

struct rec_inotify_watch {
	int32_t wd;		/* the program's watch descriptor, kept */
	uint32_t mask;		/* IN_* as fdinfo shows it */
	uint64_t ino;		/* the watched inode when checkpointed */
	uint32_t sdev;		/* its st_dev, kernel encoding (major << 20) */
	uint32_t path_len;
};

/* FILE_PIDFD's extra (the FILE's flags: O_RDWR, maybe O_NONBLOCK and
 * PIDFD_THREAD, which is O_EXCL). */
struct rec_pidfd {
	int32_t pid;		/* a process of the tree, or -1: one that had
				 * died and been reaped */
	uint32_t dead_with;	/* pid -1: the FILE of the first description
				 * on the same dead process (0: this one) */
};

/* FILE_FANOTIFY's extra: this, then nr marks, each a
 * rec_fanotify_mark followed by its path (path_len bytes with the NUL;
 * the next mark follows unaligned). */
struct rec_fanotify {
	uint32_t init_flags;	/* fanotify_init() flags, as fdinfo shows them */
	uint32_t event_f_flags;	/* its event_f_flags */
	uint32_t nr;
	uint32_t reserved;
};

#define FANOTIFY_MARK_INODE	1	/* path: the inode */
#define FANOTIFY_MARK_MOUNT	2	/* path: where the mount is mounted */
#define FANOTIFY_MARK_FS	3	/* path: a mount of the file system */

struct rec_fanotify_mark {
	uint32_t type;		/* FANOTIFY_MARK_* */
	uint32_t mflags;	/* FAN_MARK_IGNORED_SURV_MODIFY, _EVICTABLE, _IGNORE */
	uint32_t mask;		/* FAN_* events, FAN_ONDIR, FAN_EVENT_ON_CHILD */
	uint32_t ignored_mask;
	uint32_t path_len;
	uint32_t reserved;
};

/* FILE_NSFS's extra: whose namespace the fd is on. */
struct rec_nsfs {
	int32_t pid;		/* a process of the tree in it; 0: restart's own */
	uint32_t reserved;
	char name[24];		/* NUL-terminated: its name in /proc/PID/ns */
};

struct rec_fd {
	uint32_t fd;
	uint32_t file_id;
	uint32_t cloexec;
	uint32_t reserved;
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

/* REC_CGROUP: a cgroup the tree's threads are in, one of its
 * descendants (below the root process's group), or the root of a
 * cgroup namespace.  Written once, before the first record naming it,
 * parents before children; its PROP records follow it. */
#define CGROUP_V2		0x1	/* of the unified hierarchy */
#define CGROUP_BASE		0x2	/* checkpoint --cgroup-root named it: the
					 * one restart --cgroup-root replaces in
					 * its hierarchy (else the root process's) */
#define CGROUP_FLAGS		0x3

struct rec_cgroup {
	uint32_t id;		/* 1 + the number of earlier CGROUPs */
	uint32_t flags;		/* CGROUP_V2 */
	uint32_t uid;		/* its directory's owner and mode */
	uint32_t gid;
	uint32_t mode;		/* permission bits only */
	uint32_t ctrl_len;	/* bytes of the hierarchy's name that follow:
				 * its controllers and name= as
				 * /proc/PID/cgroup says ("cpu,cpuacct",
				 * "name=x"; empty for v2), no NUL */
	uint32_t path_len;	/* then the path in it, from its root
				 * ("/a/b"; "/" is the root), no NUL */
	uint32_t reserved;
};

#define CGPROP_VALUE		0x1	/* value_len bytes to write back */
#define CGPROP_OWNER		0x2	/* uid, gid and mode to set */
#define CGPROP_FLAGS		0x3

/* REC_CGROUP_PROP: one file of the last CGROUP, set when restart makes
 * the group again. */
struct rec_cgroup_prop {
	uint32_t group;		/* the last CGROUP's id */
	uint32_t flags;		/* CGPROP_* */
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;		/* permission bits */
	uint32_t name_len;	/* bytes of the file's name that follow */
	uint32_t value_len;	/* then the value, as read */
	uint32_t reserved;
};

/* REC_CGROUP_MEMBER: the last THREAD's cgroups, one per hierarchy, and
 * its cgroup namespace. */
struct rec_cgroup_member {
	uint32_t nr;		/* struct rec_cgroup_ref that follow */
	uint32_t ns;		/* 0: restart's own cgroup namespace (the one
				 * ckpt had); N: the N-th other one met */
};

struct rec_cgroup_ref {
	uint32_t group;		/* its CGROUP */
	uint32_t ns_root;	/* ns: the namespace's root in that
				 * hierarchy, a CGROUP; else 0 */
};

/* FILE_PACKET: the extra bytes of an AF_PACKET socket's FILE record:
 * this, then nr_mc rec_packet_mc, then nr_filter classic BPF
 * instructions (struct sock_filter: u16 code, u8 jt, u8 jf, u32 k). */
enum packet_opt {		/* rec_packet.opt[]: SOL_PACKET options */
	PACKET_OPT_VERSION,	/* TPACKET_V1..V3 */
	PACKET_OPT_RESERVE,
	PACKET_OPT_AUXDATA,	/* 0/1 */
	PACKET_OPT_ORIGDEV,
	PACKET_OPT_VNET_HDR,
	PACKET_OPT_LOSS,
	PACKET_OPT_TIMESTAMP,	/* SOF_TIMESTAMPING_* bits */
	PACKET_OPT_TX_HAS_OFF,
	PACKET_OPT_QDISC_BYPASS,
	PACKET_OPT_IGNORE_OUTGOING,
	PACKET_OPT_COPY_THRESH,
	PACKET_NR_OPTS,
	PACKET_OPT_SLOTS = 16	/* the rest are reserved, 0 */
};

struct rec_packet_ring {	/* PACKET_RX_RING/TX_RING (tpacket_req3) */
	uint32_t block_size, block_nr;	/* block_nr 0: no ring (all 0) */
	uint32_t frame_size, frame_nr;
	uint32_t retire_tmo, sizeof_priv, features;	/* TPACKET_V3 */
	uint32_t reserved;
};

struct rec_packet {
	uint16_t type;		/* SOCK_RAW, SOCK_DGRAM, SOCK_PACKET */
	uint16_t protocol;	/* as socket() took it (network order) */
	int32_t ifindex;	/* bound to this interface, 0: none */
	uint32_t fanout;	/* PACKET_FANOUT as getsockopt reads it:
				 * id | type << 16 | flags << 24; 0: none */
	uint32_t nr_mc;		/* memberships (PACKET_ADD_MEMBERSHIP) */
	uint32_t nr_filter;	/* SO_ATTACH_FILTER instructions, 0: none */
	uint32_t rcvbuf;	/* SO_RCVBUF, SO_SNDBUF as getsockopt reads */
	uint32_t sndbuf;
	uint32_t reserved;
	int32_t opt[PACKET_OPT_SLOTS];
	struct rec_packet_ring rx, tx;
	/* struct rec_packet_mc mc[nr_mc]; struct sock_filter f[nr_filter]; */
};

struct rec_packet_mc {
	int32_t ifindex;
	uint16_t type;		/* PACKET_MR_* */
	uint16_t alen;		/* bytes of addr, <= 32 */
	uint32_t count;		/* added this many times */
	uint32_t reserved;
	uint8_t addr[32];
};

/* FILE_NETLINK: the extra bytes of an AF_NETLINK socket's FILE record:
 * this, then nr_groups u32 words of its groups (bit g-1 of the bitmap:
 * group g), then nr_filter classic BPF instructions. */
#define NL_OPT_PKTINFO		0x01	/* NETLINK_PKTINFO */
#define NL_OPT_BROADCAST_ERROR	0x02
#define NL_OPT_NO_ENOBUFS	0x04
#define NL_OPT_LISTEN_ALL_NSID	0x08
#define NL_OPT_CAP_ACK		0x10
#define NL_OPT_EXT_ACK		0x20
#define NL_OPT_GET_STRICT_CHK	0x40
#define NL_OPT_ALL		0x7f

struct rec_netlink {
	uint32_t protocol;	/* NETLINK_*, < 32 */
	uint32_t type;		/* SOCK_RAW, SOCK_DGRAM */
	uint32_t portid;	/* bound to it; 0: not bound */
	uint32_t dst_portid;	/* connected to it and dst_group (1..32); */
	uint32_t dst_group;	/* both 0: not connected */
	uint32_t flags;		/* NL_OPT_* */
	uint32_t nr_groups;	/* u32 words of groups that follow */
	uint32_t nr_filter;	/* SO_ATTACH_FILTER instructions, 0: none */
	uint32_t rcvbuf;	/* SO_RCVBUF, SO_SNDBUF as getsockopt reads */
	uint32_t sndbuf;
	/* uint32_t groups[nr_groups]; struct sock_filter f[nr_filter]; */
};

/* REC_NS_UTS: the root process was in a uts namespace of its own (not
 * ckpt's): restart makes a new one with these names, and every process
 * of the tree joins it.  After the root's TASK, once. */
struct rec_ns_uts {
	char nodename[65];	/* NUL-terminated, as uname() gives them */
	char domainname[65];
	uint8_t reserved[6];
};

/* REC_NS: a container's image (HEAD_CONTAINER): which of its init's
 * namespaces are its own (made again at restart, their content saved by
 * their kinds) and which it shared with ckpt's caller (the host's: left
 * as restart finds them), a bit 1 << NS_x (kinds/ns.h) each.  After the
 * root's TASK, once. */
struct rec_ns {
	uint32_t own;
	uint32_t shared;
	uint64_t reserved;
};

/* REC_NS_USER: a container's own user namespace (NS has it own), a
 * child of ckpt's caller's: its uid and gid maps, each extent's lower ids
 * as the caller's namespace sees them (nr_uid extents, then nr_gid), and
 * whether setgroups() is denied in it.  The ids of the other records
 * (CREDS, files, ipc objects) are the caller's too.  Where setgroups is
 * denied every process of it has the supplementary groups its maker had
 * (the caller's ids, nr_groups of them after the extents); else
 * nr_groups is 0.  Right after NS, once: restart reads it before it
 * makes the root, whose pid namespace the new user namespace owns. */
#define NS_USER_MAX_EXTENTS	340	/* the kernel's */
#define NS_USER_MAX_GROUPS	65536	/* NGROUPS_MAX */
#define NS_USER_SETGROUPS_DENY	0x1
struct rec_ns_user_extent {
	uint32_t first;		/* in the namespace */
	uint32_t lower;		/* in its parent */
	uint32_t count;
};
struct rec_ns_user {
	uint32_t nr_uid, nr_gid;
	uint32_t flags;
	uint32_t nr_groups;
	/* struct rec_ns_user_extent[nr_uid + nr_gid], uint32_t[nr_groups] */
};

/* REC_NS_TIME: a container's own time namespace, as its clocks read at
 * the checkpoint: restart sets the new namespace's offsets so that they
 * go on from there (they stand still while it is not running).  After
 * NS, once. */
struct rec_ns_time {
	int64_t monotonic_ns;
	int64_t boottime_ns;
};

/* REC_NSPID: a process of the tree in a pid namespace nested below the
 * root's (depth levels down), or one that forks its children into one
 * (unshare(CLONE_NEWPID)).  Level i+1 (i < depth) is named by the pid,
 * as the root's namespace sees it, of its init (a process of the tree,
 * pid 1 there); @pid[i] is the process's pid at that level.  After its
 * TASK, before its THREADs; unused levels 0.  Restart forks it with
 * clone3(set_tid) of every level, its namespaces made by their inits'
 * parents. */
#define NSPID_LEVELS	8
struct rec_nspid {
	uint32_t depth;		/* 0..NSPID_LEVELS */
	/* its pid_for_children, when not its own: the init of that
	 * namespace (a child of it, one level down); else 0 */
	uint32_t children;
	uint32_t ns[NSPID_LEVELS];
	uint32_t pid[NSPID_LEVELS];
};

/* REC_NSTID: a thread (not the main one) of a process with a NSPID of
 * depth > 0: its tid at levels 1..depth (the rest 0).  After its
 * THREAD. */
struct rec_nstid {
	uint32_t tid[NSPID_LEVELS];
};

/* REC_IPC_NS: the root process was in an ipc namespace of its own: the
 * namespace's sysctls (kernel.shm*, msg*, sem, *_next_id, and
 * fs.mqueue.*), after the root's TASK, once; its objects follow (the
 * SysV segments in SYSV_SHM records).  Restart makes them in the new
 * namespace, then writes these. */
struct rec_ipc_ns {
	uint64_t shmmax, shmall;
	int32_t shmmni, shm_rmid_forced;	/* 0..IPCMNI, 0..1 */
	int32_t msgmax, msgmnb, msgmni;		/* >= 0, msgmni <= IPCMNI */
	int32_t sem[4];		/* semmsl, semmns, semopm, semmni (<= IPCMNI) */
	int32_t shm_next_id, msg_next_id, sem_next_id;	/* -1: none */
	int32_t mq_queues_max;	/* >= 0 */
	int32_t mq_msg_max, mq_msg_default;	/* 1..65536 */
	int32_t mq_msgsize_max, mq_msgsize_default;	/* 128..16 MiB */
	uint32_t reserved;
};

/* REC_IPC_MSQ: a SysV message queue, made again with its id and key;
 * its nr_msgs messages follow in order, one IPC_MSG each. */
struct rec_ipc_msq {
	int32_t id;		/* msqid, >= 0 */
	int32_t key;
	uint32_t mode;		/* 0777 */
	uint32_t uid, gid, cuid, cgid;
	uint32_t nr_msgs;
	uint64_t qbytes;	/* msg_qbytes, <= INT64_MAX */
	uint64_t cbytes;	/* the messages' bytes, added up */
	int64_t stime, rtime, ctime;	/* shown only: not settable */
	uint32_t lspid, lrpid;	/* shown only */
};

/* REC_IPC_MSG: a message of the last IPC_MSQ, in queue order. */
struct rec_ipc_msg {
	int64_t mtype;		/* > 0 */
	uint32_t len;		/* bytes of text that follow */
	uint32_t reserved;
	/* char text[len]; */
};

/* REC_IPC_SEM: a SysV semaphore set, made again with its id and key. */
struct rec_ipc_sem {
	int32_t id;		/* semid, >= 0 */
	int32_t key;
	uint32_t mode;		/* 0777 */
	uint32_t uid, gid, cuid, cgid;
	uint32_t nsems;		/* >= 1 */
	int64_t otime, ctime;	/* shown only */
	/* uint16_t val[nsems], each <= 32767 (SEMVMX) */
};

/* REC_IPC_MQ: a POSIX message queue; its nr_msgs messages follow in the
 * order mq_receive gives them (priority, then age), one IPC_MQ_MSG each. */
struct rec_ipc_mq {
	char name[256];		/* without the '/', NUL-terminated, no '/' */
	uint32_t mode;		/* 0777 */
	uint32_t uid, gid;
	uint32_t nr_msgs;	/* <= maxmsg */
	int64_t maxmsg;		/* 1..65536 */
	int64_t msgsize;	/* 1..16 MiB */
};

/* REC_IPC_MQ_MSG: a message of the last IPC_MQ. */
struct rec_ipc_mq_msg {
	uint32_t prio;		/* < 32768 */
	uint32_t len;		/* bytes that follow, <= the queue's msgsize */
	/* char data[len]; */
};
/* REC_MNT: one mount of the root's own mount namespace, in tree order
 * (each after its parent), the root's first.  Then, for a tmpfs made
 * again with its content (MNT_NEW_TMPFS), its files.  The strings follow
 * the struct, each NUL-terminated, *_len counting the NUL:
 * mountpoint (relative to the container's root, "" for the root),
 * fstype, source (as mountinfo has it), root (the mounted subtree in its
 * filesystem, relative: "" for the whole), super options (as mountinfo
 * has them, "rw"/"ro" aside), host path (MNT_BIND: absolute, where the
 * host has that subtree; else ""). */
enum mnt_how {
	MNT_BIND = 1,		/* a bind of a host path */
	MNT_NEW,		/* a new instance: proc, sysfs, devpts, mqueue,
				 * cgroup2, overlay (its options) */
	MNT_NEW_TMPFS,		/* a new tmpfs, its files restored */
	MNT_PEER,		/* a bind of an earlier mount (bind_of) of the
				 * same filesystem */
	MNT_HOW_MAX = MNT_PEER
};

#define MNT_F_RDONLY		0x01	/* per-mount flags (mountinfo field 6) */
#define MNT_F_NOSUID		0x02
#define MNT_F_NODEV		0x04
#define MNT_F_NOEXEC		0x08
#define MNT_F_NOATIME		0x10
#define MNT_F_NODIRATIME	0x20
#define MNT_F_RELATIME		0x40	/* neither atime flag: strictatime */
#define MNT_F_NOSYMFOLLOW	0x80
#define MNT_F_ALL		0xff

#define MNT_P_UNBINDABLE	0x1	/* propagation beyond shared/master */
#define MNT_P_EXT_SLAVE		0x2	/* a slave of a group outside the
					 * container (the host's) */
#define MNT_P_ALL		0x3

struct rec_mnt {
	uint32_t id;		/* mount id at checkpoint, unique, not 0 */
	uint32_t parent;	/* an earlier MNT's id; 0 for the root */
	uint32_t how;		/* enum mnt_how */
	uint32_t flags;		/* MNT_F_* */
	uint32_t sb_ro;		/* the filesystem is read-only: 0 or 1 */
	uint32_t shared;	/* peer group (shared:N), 0: none */
	uint32_t master;	/* master:N, a group of the container's; 0 */
	uint32_t prop;		/* MNT_P_* */
	uint32_t bind_of;	/* MNT_PEER: the earlier mount's id, else 0 */
	uint32_t dev;		/* st_dev as major << 20 | minor (for info) */
	uint32_t mp_len, type_len, source_len, root_len, opts_len, host_len;
	uint32_t reserved;
	/* char mountpoint[], fstype[], source[], root[], opts[], host[]; */
};

/* REC_MNT_FILE: a file of the tmpfs of the last MNT, parents before
 * children; then its path (relative to the tmpfs's root, "" for the
 * root directory itself) and, for a symlink, its target, both
 * NUL-terminated (target_len 0 for any other file). */
struct rec_mnt_file {
	uint32_t mode;		/* st_mode: type and permissions */
	uint32_t uid, gid;
	uint32_t link;		/* n > 0: a hard link of the mount's n-th
				 * file (from 1), which it follows */
	uint64_t size;		/* regular file: its length */
	uint64_t rdev;		/* device node: st_rdev */
	int64_t atime, mtime;	/* seconds */
	uint32_t atime_ns, mtime_ns;
	uint32_t path_len, target_len;
};

/* REC_MNT_DATA: bytes of the last MNT_FILE (a regular file) at @off;
 * @len bytes follow.  Holes are not written; runs ascend. */
struct rec_mnt_data {
	uint64_t off;
	uint32_t len;		/* 1 .. MNT_DATA_MAX */
	uint32_t reserved;
};
#define MNT_DATA_MAX	(1u << 20)

/* The root's own network namespace (kinds/netns.c), after the root's
 * TASK: its devices (NET_LINK, in ifindex order), their addresses
 * (NET_ADDR, in the order the kernel lists them: an IPv4 primary before
 * its secondaries), the routes ckpt cannot leave to the kernel
 * (NET_ROUTE), the namespace's sysctls (NET_SYSCTL) and its firewall
 * (NET_IPTABLES).  Interface indexes are the saved namespace's; restart
 * keeps them when it can and maps them when it cannot. */
enum net_link_kind {
	NET_LINK_LOOPBACK = 1,	/* lo, made with the namespace */
	NET_LINK_VETH,		/* peer: its other end in the namespace, or 0
				 * and peer_name: in restart's caller's */
	NET_LINK_MACVLAN,	/* peer: its lower device; mode */
	NET_LINK_BRIDGE,
	NET_LINK_NR_KINDS
};

/* the interface flags restart sets again (IFF_*) */
#define NET_IFF_SAVED	(0x1 | 0x80 | 0x100 | 0x200 | 0x1000)	/* UP,
				 * NOARP, PROMISC, ALLMULTI, MULTICAST */

struct rec_net_link {
	int32_t ifindex;	/* > 0 */
	uint32_t kind;		/* NET_LINK_* */
	uint32_t flags;		/* NET_IFF_SAVED bits */
	uint32_t mtu;
	int32_t master;		/* the bridge it is a port of, 0: none */
	int32_t peer;		/* see net_link_kind; 0: none */
	uint32_t mode;		/* macvlan: MACVLAN_MODE_*; else 0 */
	uint32_t txqlen;
	uint32_t addr_len;	/* bytes of addr: its hardware address */
	uint32_t peer_addr_len;	/* veth outside: the peer's, in peer_addr */
	uint8_t addr[32];
	char name[16];		/* NUL-terminated */
	char peer_name[16];	/* veth with its peer outside: its name; else
				 * "" */
	uint8_t peer_addr[8];
};

#define NET_ADDR_FLAGS	(0x02 | 0x10 | 0x100 | 0x200 | 0x400)	/* IFA_F_
				 * NODAD, HOMEADDRESS, MANAGETEMPADDR,
				 * NOPREFIXROUTE, MCAUTOJOIN */

struct rec_net_addr {
	uint8_t family;		/* AF_INET, AF_INET6 */
	uint8_t prefixlen;	/* <= 32 or 128 */
	uint8_t scope;		/* RT_SCOPE_* */
	uint8_t proto;		/* IFA_PROTO, 0: none */
	uint32_t flags;		/* NET_ADDR_FLAGS bits */
	int32_t ifindex;	/* its NET_LINK */
	uint32_t valid;		/* lifetimes in seconds, ~0: forever */
	uint32_t preferred;
	uint32_t has;		/* NET_ADDR_HAS_* */
	uint8_t local[16];	/* IFA_LOCAL (IPv4), IFA_ADDRESS (IPv6) */
	uint8_t peer[16];	/* IPv4: IFA_ADDRESS, the peer's */
	uint8_t broadcast[16];	/* IPv4: IFA_BROADCAST */
	char label[16];		/* IPv4: IFA_LABEL, NUL-terminated */
};

#define NET_ADDR_HAS_PEER	0x1
#define NET_ADDR_HAS_BRD	0x2
#define NET_ADDR_HAS_LABEL	0x4
#define NET_ADDR_HAS		0x7

#define NET_RTAX_SLOTS	20	/* rec_net_route.metrics: RTAX_1.. */
#define NET_ROUTE_HAS_DST	0x1
#define NET_ROUTE_HAS_SRC	0x2
#define NET_ROUTE_HAS_GW	0x4
#define NET_ROUTE_HAS_PREFSRC	0x8
#define NET_ROUTE_HAS_OIF	0x10
#define NET_ROUTE_HAS_PRIO	0x20
#define NET_ROUTE_HAS_PREF	0x40
#define NET_ROUTE_HAS		0x7f

struct rec_net_route {
	uint8_t family;		/* AF_INET, AF_INET6 */
	uint8_t dst_len;	/* <= 32 or 128 */
	uint8_t src_len;
	uint8_t tos;
	uint8_t protocol;	/* RTPROT_*, never RTPROT_KERNEL */
	uint8_t scope;
	uint8_t type;		/* RTN_*, 1..RTN_MAX */
	uint8_t pref;		/* IPv6: RTA_PREF */
	uint32_t table;
	uint32_t flags;		/* rtm_flags: RTNH_F_ONLINK only */
	int32_t oif;		/* a NET_LINK, if NET_ROUTE_HAS_OIF */
	uint32_t priority;
	uint32_t has;		/* NET_ROUTE_HAS_* */
	uint32_t metrics_mask;	/* bit i: metrics[i] is RTAX i+1 */
	uint8_t dst[16], src[16], gateway[16], prefsrc[16];
	uint32_t metrics[NET_RTAX_SLOTS];
};

/* NET_BRIDGE: a bridge's options (IFLA_BR_*, as netlink says them:
 * times in hundredths of a second), right after its NET_LINK. */
struct rec_net_bridge {
	uint32_t forward_delay;
	uint32_t hello_time;
	uint32_t max_age;
	uint32_t ageing_time;
	uint32_t stp_state;	/* 0 off, 1 the kernel's */
	uint16_t priority;
	uint16_t group_fwd_mask;
	uint8_t mcast_snooping;	/* 0/1 */
	uint8_t mcast_querier;	/* 0/1 */
	uint8_t nf_call_iptables;	/* 0/1 */
	uint8_t nf_call_ip6tables;	/* 0/1 */
	uint8_t nf_call_arptables;	/* 0/1 */
	uint8_t reserved[3];
};

/* NET_BRPORT: the options of a bridge's port (IFLA_BRPORT_*), right
 * after its NET_LINK (which has a master). */
struct rec_net_brport {
	uint32_t cost;
	uint16_t priority;	/* <= 63 */
	uint16_t group_fwd_mask;
	uint8_t hairpin;	/* each 0/1 */
	uint8_t guard;
	uint8_t protect;
	uint8_t fast_leave;
	uint8_t learning;
	uint8_t unicast_flood;
	uint8_t proxyarp;
	uint8_t mcast_flood;
	uint8_t bcast_flood;
	uint8_t isolated;
	uint8_t neigh_suppress;
	uint8_t mcast_to_unicast;
	uint8_t mcast_router;	/* 0..3 */
	uint8_t reserved[3];
};

/* NET_SYSCTL: path_len bytes of the path under /proc/sys/net
 * ("ipv4/conf/all/forwarding"), NUL-terminated, then value_len bytes of
 * its value as read, NUL-terminated. */
struct rec_net_sysctl {
	uint32_t path_len;
	uint32_t value_len;
};

/* NET_IPTABLES: `iptables-save` (family 4) or `ip6tables-save` (6)
 * output, len bytes, no NUL, fed to *-restore at restart; family 1: the
 * blocks of `nft list ruleset` of the tables that are nft's own (not
 * iptables'), fed to `nft -f`.  Once per family. */
struct rec_net_iptables {
	uint32_t family;
	uint32_t len;
};

/* The records' sizes on disk, pinned: a change to any of them is a
 * change of the image format (records grow only at their end, so that
 * older images still read; docs/image-format.md says so), never an
 * accident of a compiler or of a field added in passing. */
_Static_assert(sizeof(struct rec_hdr) == 24, "rec_hdr size");
_Static_assert(sizeof(struct rec_trailer) == 8, "rec_trailer size");
_Static_assert(sizeof(struct rec_head) == 208, "rec_head size");
_Static_assert(sizeof(struct rec_ns) == 16, "rec_ns size");
_Static_assert(sizeof(struct rec_ns_time) == 16, "rec_ns_time size");
_Static_assert(sizeof(struct rec_ns_user) == 16, "rec_ns_user size");
_Static_assert(sizeof(struct rec_ns_user_extent) == 12, "rec_ns_user_extent size");
_Static_assert(sizeof(struct rec_nspid) == 72, "rec_nspid size");
_Static_assert(sizeof(struct rec_nstid) == 32, "rec_nstid size");
_Static_assert(sizeof(struct rec_tail) == 32, "rec_tail size");
_Static_assert(sizeof(struct rec_task) == 56, "rec_task size");
_Static_assert(sizeof(struct rec_thread) == 88, "rec_thread size");
_Static_assert(sizeof(struct rec_regs) == 216, "rec_regs size");
_Static_assert(sizeof(struct rec_s390_regs) == 224, "rec_s390_regs size");
_Static_assert(sizeof(struct rec_s390_fpregs) == 136, "rec_s390_fpregs size");
_Static_assert(sizeof(struct rec_s390_vxrs) == 384, "rec_s390_vxrs size");
_Static_assert(sizeof(struct rec_ppc_regs) == 384, "rec_ppc_regs size");
_Static_assert(sizeof(struct rec_ppc_fpregs) == 264, "rec_ppc_fpregs size");
_Static_assert(sizeof(struct rec_ppc_vmx) == 544, "rec_ppc_vmx size");
_Static_assert(sizeof(struct rec_ppc_vsx) == 256, "rec_ppc_vsx size");
_Static_assert(sizeof(struct rec_ia32) == 8, "rec_ia32 size");
_Static_assert(sizeof(struct rec_tls_desc) == 16, "rec_tls_desc size");
_Static_assert(sizeof(struct rec_ia32_thread) == 56, "rec_ia32_thread size");
_Static_assert(sizeof(struct rec_siginfo) == 136, "rec_siginfo size");
_Static_assert(sizeof(struct rec_thread_more) == 16, "rec_thread_more size");
_Static_assert(sizeof(struct rec_proc_more) == 16, "rec_proc_more size");
_Static_assert(sizeof(struct rec_mm) == 96, "rec_mm size");
_Static_assert(sizeof(struct rec_vma) == 64, "rec_vma size");
_Static_assert(sizeof(struct rec_pages_run) == 16, "rec_pages_run size");
_Static_assert(sizeof(struct rec_pages) == 24, "rec_pages size");
_Static_assert(sizeof(struct rec_zframe) == 32, "rec_zframe size");
_Static_assert(sizeof(struct rec_pages_ref) == 24, "rec_pages_ref size");
_Static_assert(sizeof(struct rec_vma_guards) == 24, "rec_vma_guards size");
_Static_assert(sizeof(struct rec_parent) == 32, "rec_parent size");
_Static_assert(sizeof(struct rec_mm_track) == 16, "rec_mm_track size");
_Static_assert(sizeof(struct rec_pages_at) == 32, "rec_pages_at size");
_Static_assert(sizeof(struct rec_aio) == 32, "rec_aio size");
_Static_assert(sizeof(struct rec_sigaction) == 32, "rec_sigaction size");
_Static_assert(sizeof(struct rec_sighand) == 2048, "rec_sighand size");
_Static_assert(sizeof(struct rec_timerval) == 16, "rec_timerval size");
_Static_assert(sizeof(struct rec_itimers) == 48, "rec_itimers size");
_Static_assert(sizeof(struct rec_posix_timer) == 48, "rec_posix_timer size");
_Static_assert(sizeof(struct rec_rlimits) == 264, "rec_rlimits size");
_Static_assert(sizeof(struct rec_fs) == 32, "rec_fs size");
_Static_assert(sizeof(struct rec_procattr) == 24, "rec_procattr size");
_Static_assert(sizeof(struct rec_thread_attr) == 64, "rec_thread_attr size");
_Static_assert(sizeof(struct rec_creds) == 88, "rec_creds size");
_Static_assert(sizeof(struct rec_pipe) == 16, "rec_pipe size");
_Static_assert(sizeof(struct rec_path_ghost) == 16, "rec_path_ghost size");
_Static_assert(sizeof(struct rec_fifo_ghost) == 16, "rec_fifo_ghost size");
_Static_assert(sizeof(struct rec_tty) == 112, "rec_tty size");
_Static_assert(sizeof(struct rec_tty_data) == 16, "rec_tty_data size");
_Static_assert(sizeof(struct rec_tty_file) == 8, "rec_tty_file size");
_Static_assert(sizeof(struct rec_lock) == 32, "rec_lock size");
_Static_assert(sizeof(struct rec_fown) == 16, "rec_fown size");
_Static_assert(sizeof(struct rec_file_obj) == 40, "rec_file_obj size");
_Static_assert(sizeof(struct rec_sysv_shm) == 48, "rec_sysv_shm size");
_Static_assert(sizeof(struct rec_data_run) == 16, "rec_data_run size");
_Static_assert(sizeof(struct rec_file_data) == 24, "rec_file_data size");
_Static_assert(sizeof(struct rec_inet) == 192, "rec_inet size");
_Static_assert(sizeof(struct rec_sockopt) == 8, "rec_sockopt size");
_Static_assert(sizeof(struct rec_dgram) == 24, "rec_dgram size");
_Static_assert(sizeof(struct rec_unix_sk) == 80, "rec_unix_sk size");
_Static_assert(sizeof(struct rec_unix_scm) == 16, "rec_unix_scm size");
_Static_assert(sizeof(struct rec_unix_scm_msg) == 8, "rec_unix_scm_msg size");
_Static_assert(sizeof(struct rec_file) == 56, "rec_file size");
_Static_assert(sizeof(struct rec_eventfd) == 16, "rec_eventfd size");
_Static_assert(sizeof(struct rec_timerfd) == 40, "rec_timerfd size");
_Static_assert(sizeof(struct rec_signalfd) == 8, "rec_signalfd size");
_Static_assert(sizeof(struct rec_epoll) == 8, "rec_epoll size");
_Static_assert(sizeof(struct rec_epoll_tfd) == 24, "rec_epoll_tfd size");
_Static_assert(sizeof(struct rec_inotify) == 8, "rec_inotify size");
_Static_assert(sizeof(struct rec_inotify_watch) == 24, "rec_inotify_watch size");
_Static_assert(sizeof(struct rec_pidfd) == 8, "rec_pidfd size");
_Static_assert(sizeof(struct rec_fanotify) == 16, "rec_fanotify size");
_Static_assert(sizeof(struct rec_fanotify_mark) == 24, "rec_fanotify_mark size");
_Static_assert(sizeof(struct rec_nsfs) == 32, "rec_nsfs size");
_Static_assert(sizeof(struct rec_fd) == 16, "rec_fd size");
_Static_assert(sizeof(struct rec_packet_ring) == 32, "rec_packet_ring size");
_Static_assert(sizeof(struct rec_packet) == 160, "rec_packet size");
_Static_assert(sizeof(struct rec_packet_mc) == 48, "rec_packet_mc size");
_Static_assert(sizeof(struct rec_netlink) == 40, "rec_netlink size");
_Static_assert(sizeof(struct rec_seccomp_filter) == 16, "rec_seccomp_filter size");
_Static_assert(sizeof(struct rec_seccomp) == 16, "rec_seccomp size");
_Static_assert(sizeof(struct rec_cuda) == 216, "rec_cuda size");
_Static_assert(sizeof(struct rec_cgroup) == 32, "rec_cgroup size");
_Static_assert(sizeof(struct rec_cgroup_prop) == 32, "rec_cgroup_prop size");
_Static_assert(sizeof(struct rec_cgroup_member) == 8, "rec_cgroup_member size");
_Static_assert(sizeof(struct rec_cgroup_ref) == 8, "rec_cgroup_ref size");
_Static_assert(sizeof(struct rec_ns_uts) == 136, "rec_ns_uts size");
_Static_assert(sizeof(struct rec_ipc_ns) == 88, "rec_ipc_ns size");
_Static_assert(sizeof(struct rec_ipc_msq) == 80, "rec_ipc_msq size");
_Static_assert(sizeof(struct rec_ipc_msg) == 16, "rec_ipc_msg size");
_Static_assert(sizeof(struct rec_ipc_sem) == 48, "rec_ipc_sem size");
_Static_assert(sizeof(struct rec_ipc_mq) == 288, "rec_ipc_mq size");
_Static_assert(sizeof(struct rec_ipc_mq_msg) == 8, "rec_ipc_mq_msg size");
_Static_assert(sizeof(struct rec_net_link) == 112, "rec_net_link size");
_Static_assert(sizeof(struct rec_net_addr) == 88, "rec_net_addr size");
_Static_assert(sizeof(struct rec_net_route) == 176, "rec_net_route size");
_Static_assert(sizeof(struct rec_net_sysctl) == 8, "rec_net_sysctl size");
_Static_assert(sizeof(struct rec_net_iptables) == 8, "rec_net_iptables size");
_Static_assert(sizeof(struct rec_net_bridge) == 32, "rec_net_bridge size");
_Static_assert(sizeof(struct rec_net_brport) == 24, "rec_net_brport size");
_Static_assert(sizeof(struct rec_mnt) == 68, "rec_mnt size");
_Static_assert(sizeof(struct rec_mnt_file) == 64, "rec_mnt_file size");
_Static_assert(sizeof(struct rec_mnt_data) == 16, "rec_mnt_data size");

/* AUTH (9002): the image authenticated with a key (ckpt checkpoint
 * --key), the record right before TAIL; an image without one is not
 * authenticated.  The image reader (image.c) takes it, no kind. */
enum { REC_AUTH = 9002 };
#define CKPT_AUTH_MAGIC		0x0043414d54504b43ULL	/* "CKPTMAC\0" */
#define AUTH_HMAC_SHA256	1

struct rec_auth {
	uint64_t magic;
	uint32_t alg;		/* AUTH_HMAC_SHA256 */
	uint32_t reserved;
	uint64_t covered;	/* bytes authenticated: every one before this
				 * record, so its own offset */
	uint8_t mac[32];	/* HMAC-SHA256 of them under the key */
};
_Static_assert(sizeof(struct rec_auth) == 56, "rec_auth size");

#endif
