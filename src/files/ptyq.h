/* ptyq.h - the bytes queued in a pty, taken out and put back (tty.c).
 *
 * A terminal cannot be peeked: its queues are read, which consumes them,
 * and written back at once, as they were (the tree is frozen meanwhile,
 * so nobody sees them gone).  Each way needs the line discipline not to
 * process the bytes a second time: output is written back with OPOST
 * off, input with the slave's processing and echo off (ICANON as it
 * was).  Functions return 0 or -errno. */
#ifndef CKPT_PTYQ_H
#define CKPT_PTYQ_H

#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

/* A new description of the slave of master @m, ckpt's own (its flags
 * are its own; a @locked pty is unlocked for the moment): >= 0, or -1
 * with errno set.  Output and input are put back through one opened
 * unlocked: a pty being made is locked only at the end. */
int ptyq_peer(int m, int flags, bool locked);

/* Everything @fd has to give now (@fd: the master, for the slave's
 * output; @own_nonblock: a description of ckpt's own, O_NONBLOCK, read
 * without waiting): *buf (malloc'ed, NULL if none) and *len, also on an
 * error (what was read must be put back); -EFBIG beyond TTY_MAX_QUEUE. */
int ptyq_drain(int fd, bool own_nonblock, char **buf, uint32_t *len);

/* Input the slave has not read, through @s, ckpt's own non-blocking
 * slave description; @tio: the slave's termios.  In canonical mode the
 * whole lines, one read each (a line ended by VEOF gets its VEOF back),
 * then the line being typed, read with ICANON off for a moment: its
 * length is *partial; every byte of them the line discipline would act
 * on is quoted with VLNEXT.  *buf and *len are set on an error too
 * (what was read must be put back); -EOVERFLOW: more than the line
 * discipline holds (refused before anything is read if it shows). */
int ptyq_take_input(int s, const struct termios *tio, char **buf, uint32_t *len,
		    uint32_t *partial);

/* Is @buf what ptyq_take_input could have made for @tio?  *lines and
 * *typed: the bytes the line discipline will store of the lines and of
 * the line being typed.  0 or -EBADMSG. */
int ptyq_check_input(const struct termios *tio, const char *buf, uint32_t len,
		     uint32_t partial, uint32_t *lines, uint32_t *typed);

/* The slave's output back where the master reads it, unprocessed,
 * written through @s, a slave description (its termios is switched for
 * the moment). */
int ptyq_put_output(int s, const char *buf, uint32_t len);

/* Input back where the slave reads it, unprocessed and not echoed (the
 * master's queue must be empty: the line being typed is known to have
 * landed when its echo, turned on for it alone, comes back, and that
 * echo is read off); @s: a slave description, @tio its termios. */
int ptyq_put_input(int m, int s, const struct termios *tio, const char *buf,
		   uint32_t len, uint32_t partial);

#endif
