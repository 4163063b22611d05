/* ckpt.h - checkpoint and restart running Linux processes (ckpt(3)).
 *
 * The two calls mirror the Linux-CR system calls: checkpoint(2) writes an
 * image of a running process to a file descriptor, restart(2) brings it
 * back from one; ckpt_info() shows what an image holds.  All messages go
 * to logfd (or nowhere if logfd < 0) in the form
 * "ckpt: [err E][pos P][pid N] text".
 * Link with `pkg-config --cflags --libs ckpt` (-lckpt).
 */
#ifndef CKPT_H
#define CKPT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKPT_VERSION_STRING	"0.1.0"

/* Flags of ckpt_checkpoint(). */
#define CKPT_KILL		0x0001UL /* end the target once the image is synced */
#define CKPT_SKIP_UNSUPPORTED	0x0002UL /* record unsupported fds as closed */
#define CKPT_TCP_ESTABLISHED	0x0004UL /* save established TCP connections */
#define CKPT_EXTERNAL_UNIX	0x0008UL /* unix sockets connected outside the
					  * tree: restored with their peer gone
					  * (datagram: connected to its name) */
#define CKPT_SKIP_IN_FLIGHT	0x0010UL /* drop TCP connections waiting in a
					  * listener's accept queue (a warning) */
#define CKPT_TRACK_MEM		0x0020UL /* track the memory written from now on
					  * (userfaultfd write-protect), for an
					  * incremental checkpoint after this one */
#define CKPT_PARENT		0x0040UL /* incremental: only the pages written
					  * since the opts' parent image (set
					  * with it; tracking goes on) */
#define CKPT_COMPRESS		0x0080UL /* compress the image's large records
					  * with zstd (-EOPNOTSUPP in a build
					  * without libzstd) */
/* Flags of ckpt_restart(). */
#define CKPT_DETACH		0x0100UL /* hand the restored root to init */
#define CKPT_PIDNS		0x0200UL /* restore in a new pid namespace, whose
					  * init is the caller's child */
/* Flags of both. */
#define CKPT_VERBOSE		0x1000UL /* log each step, not only errors */
#define CKPT_SHELL_JOB		0x2000UL /* a job of an interactive shell: its
					  * terminal becomes the restart
					  * caller's (docs/design.md) */
#define CKPT_TCP_CLOSE		0x4000UL /* TCP connections are not saved
					  * (checkpoint) or not rebuilt
					  * (restart): they come back closed */
#define CKPT_NO_CGROUPS		0x8000UL /* restart: the processes stay in the
					  * caller's cgroups; no group is
					  * made */
#define CKPT_PROGRESS		0x20000UL /* a line on @logfd, if it is a
					  * terminal, redrawn with the bytes
					  * done once a call runs past 1 s */
/* Flags of ckpt_info(). */
#define CKPT_INFO_JSON		0x10000UL /* JSON for scripts, not text */
#define CKPT_LAZY		0x100000UL /* restart: run before the memory is
					    * in; pages come on touch
					    * (userfaultfd) and in the
					    * background */

/* The bytes of a key that authenticates images (the opts' key). */
#define CKPT_KEY_MIN		16
#define CKPT_KEY_MAX		4096

/* What a call reports beyond its return value (optional). */
struct ckpt_result {
	pid_t pid;		/* restart: pid of the restored root */
	int err;		/* errno-style code of the first failure */
	char msg[512];		/* that failure, one line, no newline */
};

/*
 * ckpt_checkpoint - write an image of process @pid to @fd.
 * @fd may be a file, pipe or socket.  Unless CKPT_KILL is set the process
 * runs on unchanged afterwards; with it, the process is killed only after
 * the image is completely written and (for a file) synced.  If the
 * checkpoint fails, the process is left running exactly as before and, if
 * the stream is still writable, an error record stating the reason is
 * written.
 * Returns 0 or a negative errno: -ESRCH no such process, -EPERM not
 * allowed to trace it, -EOPNOTSUPP it holds a resource ckpt cannot save,
 * -EIO writing the image failed, others as the failing system call.
 */
int ckpt_checkpoint(pid_t pid, int fd, unsigned long flags, int logfd);

/*
 * ckpt_restart - restore the process saved in the image read from @fd.
 * @pid: 0, or the pid the caller expects the image to hold (else -EINVAL).
 * The image is fully read and verified before any process is created.
 * The restored process gets its saved pid; it is a child of the caller,
 * or with CKPT_DETACH of init.  On failure no restored process remains.
 * Returns the pid of the restored process, or a negative errno: -EBADMSG
 * bad or corrupt image, -ENODATA truncated image, -ECANCELED the image
 * records a failed checkpoint, -EEXIST the pid is in use, -ENOEXEC the
 * image is for another architecture or CPU, others as the failing step.
 * With CKPT_PIDNS the image is restored in a new pid namespace (and mount
 * namespace, for its /proc), where its pids are free: the caller's child
 * is the namespace's init, which restores the tree as its children,
 * passes SIGINT/SIGTERM/SIGHUP on to the restored root and reaps orphans
 * until the root ends, then exits with the root's status (128+N if it was
 * killed by signal N).  Without CKPT_DETACH that init's pid is returned;
 * with it, the root's pid as the caller sees it (init stays behind, a
 * child of the caller).
 */
int ckpt_restart(pid_t pid, int fd, unsigned long flags, int logfd);

/*
 * ckpt_checkpoint_opts - ckpt_checkpoint_r() with more to say; zeroed but
 * for what ckpt_checkpoint_r() takes, it is ckpt_checkpoint_r().
 */
struct ckpt_checkpoint_opts {
	pid_t pid;
	unsigned long flags;
	int logfd;
	/* "[CTRL:]PATH" each: in the hierarchy CTRL names (one of its
	 * controllers, or name=NAME; without CTRL, every hierarchy no other
	 * names) the tree's cgroups are saved as below PATH, a group of
	 * the root process or above it, which restart's --cgroup-root
	 * replaces (CRIU's dump --cgroup-root); by default the root
	 * process's own group. */
	const char *const *cgroup_root;
	int nr_cgroup_root;
	/* A key (key_len bytes, CKPT_KEY_MIN to CKPT_KEY_MAX; NULL: none):
	 * the image is authenticated with it, an AUTH record holding the
	 * HMAC-SHA256 of every byte before it, which restart and info with
	 * the key check first (docs/image-format.md). */
	const void *key;
	size_t key_len;
	/* CKPT_PARENT: the path of the image checkpointed last with
	 * CKPT_TRACK_MEM or CKPT_PARENT; the new one names it (by its path
	 * relative to the new one's directory; absolute when @fd is no
	 * file) and holds only the pages written since (docs/design.md,
	 * Memory). */
	const char *parent;
	/* With CKPT_COMPRESS: the zstd level, 1 (the default, for 0) to
	 * 19. */
	int compress_level;
};
int ckpt_checkpoint_opts(int fd, const struct ckpt_checkpoint_opts *o, struct ckpt_result *res);

/* As ckpt_checkpoint() and ckpt_restart(), also filling @res (may be NULL). */
int ckpt_checkpoint_r(pid_t pid, int fd, unsigned long flags, int logfd,
		      struct ckpt_result *res);
int ckpt_restart_r(pid_t pid, int fd, unsigned long flags, int logfd,
		   struct ckpt_result *res);

/*
 * ckpt_restart_opts - ckpt_restart_r() with more to say; zeroed but for
 * what ckpt_restart_r() takes, it is ckpt_restart_r().
 */
struct ckpt_restart_opts {
	pid_t pid;
	unsigned long flags;
	int logfd;
	/* A container's image only: "TYPE:PATH" each, the container's TYPE
	 * namespace (net, ipc, uts, mnt or time) is the one at PATH (a
	 * /proc/PID/ns/TYPE file, or a bind mount of one), joined as it is
	 * rather than made new and filled from the image. */
	const char *const *join_ns;
	int nr_join_ns;
	/* A container's image only: "KEY:PATH" each, its mount from outside
	 * it saved under KEY is bound from PATH at restart. */
	const char *const *external;
	int nr_external;
	/* "[CTRL:]PATH" each: the root process's cgroup in the hierarchy
	 * CTRL names (one of its controllers, or name=NAME; without CTRL,
	 * every hierarchy no other names) is PATH, the groups below it
	 * moved along, rather than the saved one (CRIU's --cgroup-root). */
	const char *const *cgroup_root;
	int nr_cgroup_root;
	/* A key (key_len bytes, CKPT_KEY_MIN to CKPT_KEY_MAX; NULL: none):
	 * the image must be
	 * authenticated with it (an AUTH record whose MAC matches), which is
	 * checked before anything else of it is read, else -EKEYREJECTED.
	 * Without a key an image is restored whether it has an AUTH record
	 * or not. */
	const void *key;
	size_t key_len;
	/* An image of a session whose terminal had its master outside the
	 * tree (a terminal container's console): the new pty's master is
	 * given, once the tree is built, to console(console_arg, fd) (the
	 * callee dups what it keeps), or else sent (SCM_RIGHTS) to the unix
	 * stream socket at console_socket, as runc's --console-socket takes
	 * it.  Without either such an image is refused. */
	const char *console_socket;
	int (*console)(void *arg, int master);
	void *console_arg;
};
int ckpt_restart_opts(int fd, const struct ckpt_restart_opts *o, struct ckpt_result *res);

/*
 * ckpt_info - verify the image read from @fd whole (as ckpt_restart()
 * would, but for the checks against this machine), then describe it on
 * @out record by record: a line per record, or with CKPT_INFO_JSON one
 * JSON object.  Nothing is shown of an image that fails verification.
 * Returns 0 for a complete and valid image, or a negative errno as
 * ckpt_restart() (-EBADMSG, -ENODATA, -ECANCELED...).
 */
int ckpt_info(int fd, unsigned long flags, FILE *out, int logfd);
/* As ckpt_info(), of an image that must be authenticated with @key
 * (@key_len bytes, CKPT_KEY_MIN to CKPT_KEY_MAX), checked first: else -EKEYREJECTED and
 * nothing shown.  @key NULL: ckpt_info(). */
int ckpt_info_key(int fd, unsigned long flags, FILE *out, int logfd,
		  const void *key, size_t key_len);

/*
 * ckpt_cancel - make the checkpoint in progress fail at its next step,
 * leaving the process running as before (what the CUDA driver was made
 * to do to it is undone).  Async-signal-safe: for a SIGINT/SIGTERM
 * handler.
 */
void ckpt_cancel(void);

#ifdef __cplusplus
}
#endif
#endif
