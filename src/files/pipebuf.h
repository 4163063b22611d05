/* pipebuf.h - the buffer of a pipe or a FIFO (pipebuf.c): its capacity
 * and the bytes in it, one PIPE or FIFO record (struct rec_pipe) however
 * many ends the tree holds.  pipe.c and fifo.c differ only in how they
 * find a reader and how the ends are made again. */
#ifndef CKPT_PIPEBUF_H
#define CKPT_PIPEBUF_H

#include <stdbool.h>
#include <stdint.h>

#include "../kinds.h"

/* Checkpoint: our copy of @pid's @fd (pidfd_getfd), the same
 * description; -1 with errno. */
int pipebuf_holder_fd(pid_t pid, int fd);

/* Checkpoint: a @type record (REC_PIPE, REC_FIFO) of the buffer the pipe
 * or FIFO @rfd (ours) reads, copied without consuming it, with a new
 * objref in *id (for messages: @pid's @fd).  0, or -errno (reported). */
int pipebuf_dump(struct cpt_ctx *c, uint32_t type, int rfd, pid_t pid, int fd,
		 uint32_t *id);

/* Restart: one buffer, as its record says. */
struct rst_pipebuf {
	struct rec_pipe p;
	const char *data;	/* p.data_len bytes */
	void *rec;
	int fd[2];		/* ckpt's own, -1 until made: a pipe's two
				 * ends; a FIFO's O_RDWR open in fd[0] */
	bool used[2];		/* a pipe's first description of each end is
				 * taken */
};

/* The kind_ops of PIPE and FIFO records: @r loaded into @k's table of
 * the image (@what names the record); 0, or -errno (reported). */
int pipebuf_load(struct rst_ctx *c, const struct kind_ops *k, struct rec *r,
		 const char *what);
/* The buffer @id of @k's table, NULL if none. */
struct rst_pipebuf *pipebuf_by_id(struct rst_ctx *c, const struct kind_ops *k,
				  uint64_t id);
/* Restart: @len bytes of @data written into the pipe or FIFO @fd (ours,
 * nonblocking, big enough); 0, or -1 with errno (for the caller to say
 * which pipe). */
int pipebuf_fill(int fd, const char *data, uint32_t len);
void pipebuf_free_ctx(void *state);
/* Restart: every process is built, none let go.  ckpt's own ends of the
 * pipes (FIFOs) it made go now: a process let go while ckpt still held
 * the read end of a pipe whose readers had all closed wrote into it
 * (no EPIPE), and one reading a writerless pipe would wait. */
int pipebuf_restore_end(struct rst_ctx *c, const struct kind_ops *k);
void pipebuf_show(struct info_out *o, const struct rec *r);

#endif
