/* image_format_files.h - the records of open files: descriptions of
 * every kind, terminals, locks, file data, sockets (inet, unix, packet,
 * netlink), event fds.
 * Included by image_format.h, which has the records' framing and the
 * pinned sizes: include that, not this. */
#ifndef CKPT_IMAGE_FORMAT_FILES_H
#define CKPT_IMAGE_FORMAT_FILES_H

#include <stdint.h>

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

#endif
