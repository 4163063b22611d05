/* ptyq.h - the bytes queued in a pty, taken out and put back (tty.c).
 *
 * A terminal cannot be peeked: its queues are read, which consumes them,
 * and written back at once, as they were (the tree is frozen meanwhile,
 * so nobody sees them gone).  Each way needs the line discipline not to
 * process the bytes a second time: output is written back with OPOST
 * off, input with the slave raw.  Functions return 0 or -errno. */
#ifndef CKPT_PTYQ_H
#define CKPT_PTYQ_H

#include <stdbool.h>
#include <stdint.h>

/* A new description of the slave of master @m, ckpt's own (its flags
 * are its own; a locked pty is unlocked for the moment): >= 0, or -1
 * with errno set. */
int ptyq_peer(int m, int flags, bool locked);

/* Everything @fd has to give now (@fd: the master, for the slave's
 * output, or ckpt's non-blocking slave, for input): *buf (malloc'ed,
 * NULL if none) and *len; -EFBIG beyond TTY_MAX_QUEUE. */
int ptyq_drain(int fd, char **buf, uint32_t *len);

/* The slave's output back where the master reads it, unprocessed. */
int ptyq_put_output(int m, bool locked, const char *buf, uint32_t len);

/* Input back where the slave reads it, unprocessed and not echoed: @s
 * is a slave description (its termios is switched for the moment). */
int ptyq_put_input(int m, int s, const char *buf, uint32_t len);

#endif
