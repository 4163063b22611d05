/* membuf.h - ckpt's own big buffers, their pages made up front. */
#ifndef CKPT_MEMBUF_H
#define CKPT_MEMBUF_H
#include <stddef.h>

/* @len bytes of zeroed memory, page aligned, every page of it there
 * already: NULL on failure.  Release with membuf_put(@len). */
void *membuf_get(size_t len);
void membuf_put(void *p, size_t len);
#endif
