/* image_zframe.h - the image writer's compressed records (image.c calls these;
 * docs/image-format.md, "Compressed records"). */
#ifndef CKPT_ZFRAME_H
#define CKPT_ZFRAME_H

#include "image.h"

/* Records of page data smaller than this are written plain: the rest of
 * an image is small, and an image whose page records are all plain is
 * restarted where it lies, not expanded first. */
#define ZFRAME_MIN	(64u << 10)

/* Whether the record iw_begin() opens goes out in pieces. */
bool zw_wants(const struct img_writer *w, uint32_t type, uint64_t len);
/* Bytes of the open record (whose rec_done counts them already). */
int zw_write(struct img_writer *w, const void *data, size_t n, uint32_t crc);
/* The open record's last piece: 0, or 1 if it went out as a plain
 * record after all (its trailer then to write), or -errno. */
int zw_end(struct img_writer *w);
void zw_free(struct img_writer *w);

#endif
