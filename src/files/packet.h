/* packet.h - what the mm kind asks packet.c of an area that maps a
 * packet socket's rings (VMA_PACKET). */
#ifndef CKPT_PACKET_H
#define CKPT_PACKET_H

#include <stdint.h>

#include "../files.h"

/* Checkpoint: @pid's area [start, start + len) maps the socket @link
 * ("socket:[N]") at offset @pgoff: the FILE of that socket, which @pid
 * must hold at an fd, into *id, once it is sure the area maps its rings
 * whole.  0, or -errno (reported). */
int packet_map_ref(struct cpt_ctx *c, pid_t pid, const char *link,
		   uint64_t start, uint64_t len, uint64_t pgoff, uint32_t *id);
/* Restart, pre-flight: such an area of @t, naming FILE @id, can be
 * mapped again from @t's fd of it.  0 or -EBADMSG (reported). */
int packet_map_check(struct rst_ctx *c, struct rst_task *t, uint32_t id,
		     uint64_t len, uint64_t pgoff);

#endif
