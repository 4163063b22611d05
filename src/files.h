/* files.h - kinds of open file description.
 *
 * src/kinds/fdtable.c owns the fd tables and the FILE records, one per
 * open file description however many fds and processes share it (the
 * seeds' objref).  What a description *is* - a regular file, a pipe
 * end, an eventfd, a socket - is up to a file kind: one file under
 * src/files/ with its checkpoint and restart sides, registered in
 * file_kinds[] in fdtable.c.  Adding a kind of fd is
 * adding a file and a line there.
 *
 * A FILE record is struct rec_file, the path (what /proc/PID/fd/N reads,
 * NUL-terminated, path_len bytes), then extra_len bytes that belong to
 * the kind (its own state: a counter, a socket address, a watch list),
 * the part of them past MAX_FILE_EXTRA in FILE_MORE records right after.
 */
#ifndef CKPT_FILES_H
#define CKPT_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "kinds.h"

/* A kind's state that fits one FILE record follows its path there; more
 * (a socket's queues of tens of MiB) follows in FILE_MORE records of up
 * to FILE_MORE_CHUNK bytes, up to MAX_FILE_STATE in all. */
#define MAX_FILE_EXTRA	(CKPT_REC_MAX_META - sizeof(struct rec_file) - CKPT_PATH_MAX)
#define FILE_MORE_CHUNK	(8u << 20)
#define MAX_FILE_STATE	(160u << 20)

/* What checkpoint knows of one fd before choosing its kind. */
struct fd_probe {
	struct cpt_task *task;	/* the process holding it (held, seized) */
	pid_t pid;
	int fd;
	struct stat st;		/* stat() of /proc/PID/fd/N */
	char link[CKPT_PATH_MAX];	/* readlink() of it */
	uint64_t pos;		/* from fdinfo */
	uint32_t flags;		/* from fdinfo: O_* with the access mode */
	const char *fdinfo;	/* the whole of /proc/PID/fdinfo/N */
	/* an fd in flight (SCM_RIGHTS): pid and fd are ckpt's own copy of
	 * it, these the socket's it waits in, for messages; else 0 */
	pid_t via_pid;
	int via_fd;
};

/* fdtable.c: in a container with its own mount namespace, whether the
 * file @p is open on a mount outside it (a host file its runtime gave
 * it), which no path inside the container reaches. */
bool fd_outside_mounts(struct cpt_ctx *c, const struct fd_probe *p);

/* A description at restart: its record, checked by its kind. */
struct rst_file {
	struct rec_file f;
	const struct file_ops *ops;
	const char *path;
	const void *extra;	/* f.extra_len bytes, the kind's own */
	void *priv;		/* what the kind's load made of them */
	void *rec;		/* the record payload the above point into */
	pid_t holder;		/* the first restored process that has it */
	int holder_fd;
	bool has_fd;		/* an FD record names it (else it is only in
				 * flight on a unix socket) */
};

struct file_ops {
	uint32_t kind;		/* FILE_* */
	const char *name;
	/* Install order at restart: every description of a lower pass is in
	 * place before any of a higher one (an epoll needs its targets). */
	int pass;
	/* Checkpoint: is this fd of this kind?  Kinds are asked in table
	 * order; the first to say yes dumps it. */
	bool (*match)(struct cpt_ctx *c, const struct fd_probe *p);
	/* Fill what the kind keeps in *f (pos, size, rdev... already set
	 * from the probe) and optionally a malloc()ed *extra of *extra_len
	 * bytes to follow the path.  May write records of its own first. */
	int (*dump)(struct cpt_ctx *c, const struct fd_probe *p,
		    struct rec_file *f, void **extra, uint32_t *extra_len);
	/* Restart: validate f->f, f->path and f->extra (bounds first);
	 * may set f->priv. */
	int (*load)(struct rst_ctx *c, struct rst_file *f);
	/* Against this machine, before any process is made (c->here). */
	int (*check)(struct rst_ctx *c, const struct rst_file *f);
	/* A new description in @t, its fd number in *fd (any number: it is
	 * moved into place).  NULL: the fd is left as the puppet has it. */
	int (*open)(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		    long *fd);
	void (*free)(struct rst_file *f);	/* of priv */
	/* `ckpt info`: the kind's own fields (id, kind, flags, pos and path
	 * are shown for every description). */
	void (*show)(struct info_out *o, const struct rec_file *f,
		     const void *extra, uint32_t extra_len);
};

extern const struct file_ops file_reg, file_dir, file_chr, file_inherit,
	file_pipe, file_eventfd, file_timerfd, file_signalfd, file_tty,
	file_fifo, file_memfd, file_deleted, file_epoll, file_inotify,
	file_inet, file_unix;
extern const struct file_ops file_pidfd, file_fanotify, file_nsfs;
extern const struct file_ops file_packet, file_netlink;

/* Files with no name (src/files/fobj.c): memfds and deleted files, their
 * content in the image (FILE_OBJ, FILE_DATA: dataruns.h), one object
 * however many descriptions and mappings it has.
 * Checkpoint: the object behind @proc_path (/proc/PID/fd/N or
 * /proc/PID/map_files/A-B, whose link reads @link), written now if the
 * image has not got it yet.  0 and *id, or -errno (reported). */
int fobj_ref(struct cpt_ctx *c, pid_t pid, const char *proc_path,
	     const char *link, uint32_t *id);
/* Checkpoint: the id of the object the image has for the file @dev/@ino,
 * 0 if none (a kernel shared memory object open or privately mapped). */
uint32_t fobj_known(struct cpt_ctx *c, uint64_t dev, uint64_t ino);
/* Restart: the FILE_* kind of object @id, 0 if there is none. */
uint32_t fobj_kind(struct rst_ctx *c, uint32_t id);
/* ckpt's own fd of object @id, made (filled, sealed) on first use;
 * -errno (reported). */
int fobj_fd(struct rst_ctx *c, uint32_t id);
/* The file_ops of a description of such an object (memfd.c, deleted.c
 * add their match): rdev names the object. */
int fobj_desc_dump(struct cpt_ctx *c, const struct fd_probe *p,
		   struct rec_file *f, void **extra, uint32_t *extra_len);
int fobj_desc_load(struct rst_ctx *c, struct rst_file *f);
int fobj_desc_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		   long *fd);
void fobj_desc_show(struct info_out *o, const struct rec_file *f,
		    const void *extra, uint32_t extra_len);

/* Checkpoint: the objref of the description behind @pid's @fd, writing
 * its FILE record now if the image has not got it yet (an epoll dumps
 * its targets this way).  0 and *id, or -errno (reported). */
int files_ref(struct cpt_ctx *c, struct cpt_task *t, int fd, uint32_t *id);
/* The same for ckpt's own fd @ours, a description in flight on @t's
 * socket @via_fd (SCM_RIGHTS): written from @ours if the image has not
 * got it yet (kinds looking for it in the tree start with @t).  @ours
 * must stay open until the checkpoint ends: later fds of the tree are
 * found to share it through it.  0 and *id (0: skipped), or -errno
 * (reported). */
int files_ref_own(struct cpt_ctx *c, struct cpt_task *t, int via_fd, int ours,
		  uint32_t *id);

/* anonfd.c, for the kinds the restored process makes again with one
 * syscall (eventfd, signalfd, timerfd). */
/* The value of "KEY" at the start of a line of fdinfo @info, NULL if none. */
const char *fdinfo_field(const char *info, const char *key);
/* Checkpoint: 0 if @f's file flags are ones the syscall can give, else
 * -EOPNOTSUPP (reported, naming the kind @name). */
int anonfd_dump_flags(struct cpt_ctx *c, const struct fd_probe *p,
		      const struct rec_file *f, const char *name);
/* The payload into @dst if it is @len bytes long. */
bool anonfd_get(const void *extra, uint32_t extra_len, void *dst, size_t len);
/* Restart: the payload into @dst if its length and @f's flags are sound;
 * 0, or -EBADMSG (reported as a bad @name). */
int anonfd_load(struct rst_ctx *c, const struct rst_file *f, void *dst,
		size_t len, const char *name);

/* Checkpoint: @fn on every fd of every live process of the tree that
 * has its own fd table, until one returns non-zero (returned). */
int files_each_fd(struct cpt_ctx *c,
		  int (*fn)(struct cpt_ctx *c, pid_t pid, int fd, void *arg),
		  void *arg);

/* Checkpoint: the objref of @pid's @fd if the image has its description
 * (0: not yet, or it was left out). */
uint32_t files_known(struct cpt_ctx *c, pid_t pid, int fd);

/* Checkpoint: an fd the files kind wrote (in a process's order, fds
 * increasing): its description's objref, its flags (O_*, the access
 * mode, O_PATH), and the "lock:" lines of its fdinfo (from the newline
 * before the first; NULL: none), so that the locks kind need not read
 * every fd's fdinfo again (300 fds: 9-12 ms here). */
struct fd_note {
	pid_t pid;
	int fd;
	uint32_t id;
	uint32_t flags;
	char *locks;
};
/* @pid's notes (*@n of them), NULL if the files kind wrote none. */
const struct fd_note *files_notes(struct cpt_ctx *c, pid_t pid, size_t *n);

/* Restart: the description with objref @id, NULL if none. */
struct rst_file *files_by_id(struct rst_ctx *c, uint32_t id);
/* The fd number @t has for description @id at restart, -1 if none. */
int files_fd_of(struct rst_ctx *c, struct rst_task *t, uint32_t id);
/* The objref of the description @t has at @fd, 0 if none. */
uint32_t files_id_at(struct rst_ctx *c, struct rst_task *t, int fd);
/* Does any description of the image open @path for writing? */
bool files_written(struct rst_ctx *c, const char *path);
/* Restart, every process built: ckpt's own copy of description @id,
 * taken from a process that has it; 0 and *ours, or -errno (reported). */
int files_copy(struct rst_ctx *c, uint32_t id, int *ours);
/* Give @t our own fd @ours: the same description, as its *fd. */
int files_give(struct rst_task *t, int ours, long *fd);
/* Open @path in @t with @flags (remote openat). */
int files_open_path(struct rst_task *t, const char *path, int flags, long *fd);

#endif
