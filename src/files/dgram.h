/* dgram.h - the datagrams waiting in a UDP socket (dgram.c). */
#ifndef CKPT_DGRAM_H
#define CKPT_DGRAM_H

#include <stdint.h>

#include "../image_format.h"

/* Checkpoint: every datagram in @sk's receive queue, peeked (none is
 * consumed), as rec_dgram entries in a malloc()ed *data of *len bytes
 * (at most @max).  0 or -errno. */
int dgram_peek(int sk, uint32_t max, char **data, uint32_t *len);
/* Restart: are these @len bytes well-formed entries for @family? */
int dgram_check(const char *data, uint32_t len, int family);
/* Restart: send each datagram again, from where it came, to @ri's
 * socket @sk (bound already), and wait until all have arrived. */
int dgram_inject(int sk, const struct rec_inet *ri, const char *data, uint32_t len);

#endif
