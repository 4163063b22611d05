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
	REC_SIGHAND	= 120,	/* signal dispositions */
	REC_ITIMERS	= 121,
	REC_POSIX_TIMER	= 122,
	REC_RLIMITS	= 130,
	REC_FS		= 131,	/* cwd, umask */
	REC_CREDS	= 132,
	REC_FILE	= 140,	/* an open file description (objref) */
	REC_FD		= 141,	/* an fd-table slot referring to a FILE */
	REC_PIPE	= 142,	/* a pipe: capacity, the data in it */
	REC_IA32	= 160,	/* the last TASK is a 32-bit (IA32) process */
	REC_IA32_THREAD	= 161,	/* its last THREAD's TLS entries, robust list */
	/* given out to kinds being built, each its range:
	 * 143-144 file contents (deleted files, memfds), 145-147 locks,
	 * FIFOs, 148-149 epoll/inotify, 150-151 terminals, 152-155 unix
	 * sockets, 156-159 TCP/UDP, 160-169 32-bit tasks */
	REC_TAIL	= 9001,
	REC_ERROR	= 9999,
};

struct rec_hdr {
	uint32_t type;
	uint32_t flags;		/* reserved, 0 */
	uint64_t len;		/* payload bytes */
	uint32_t hcrc;		/* CRC32C of the 16 bytes above */
	uint32_t reserved;
};

struct rec_trailer {
	uint32_t crc;		/* CRC32C of the payload */
	uint32_t reserved;
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
	uint32_t reserved;
};

#define TASK_STOPPED	0x1	/* in a group stop (SIGSTOP) */
#define TASK_ZOMBIE	0x2	/* exited, not yet reaped: no other records */
#define TASK_SUBREAPER	0x4	/* PR_SET_CHILD_SUBREAPER */
#define TASK_SHARES_FILES 0x8	/* its fd table is its parent's (CLONE_FILES):
				 * it has no FILE/FD records of its own */
#define TASK_SHARES_FS	0x10	/* its cwd/umask are its parent's (CLONE_FS):
				 * no FS record */
#define TASK_FLAGS	0x1f

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
#define VMA_MADV_ALL		0x3ff

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
				 * the same in every process that maps it */
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
};

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
	FILE_KIND_MAX	= 31,
};

struct rec_pipe {
	uint32_t id;		/* objref, named by the FILEs of its ends */
	uint32_t capacity;	/* F_GETPIPE_SZ */
	uint32_t data_len;	/* bytes in it, which follow */
	uint32_t reserved;
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

struct rec_fd {
	uint32_t fd;
	uint32_t file_id;
	uint32_t cloexec;
	uint32_t reserved;
};

#endif
