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

#include "image_format_task.h"
#include "image_format_mm.h"
#include "image_format_files.h"
#include "image_format_cgroup.h"
#include "image_format_ns.h"

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
