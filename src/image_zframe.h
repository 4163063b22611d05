/* image_zframe.h - the image writer's compressed records (image.c calls these;
 * docs/image-format.md, "Compressed records"). */
#ifndef CKPT_ZFRAME_H
#define CKPT_ZFRAME_H

#include "image.h"

/* Records smaller than this are not worth a piece's 32-byte head. */
#define ZFRAME_MIN	4096u

/* Whether the record iw_begin() opens goes out in pieces. */
bool zw_wants(const struct img_writer *w, uint32_t type, uint64_t len);
/* Bytes of the open record (whose rec_done counts them already). */
int zw_write(struct img_writer *w, const void *data, size_t n, uint32_t crc);
/* The open record's last piece. */
int zw_end(struct img_writer *w);
void zw_free(struct img_writer *w);

#endif
