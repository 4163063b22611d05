/* pageverify.h - the page data of an image checked while restart builds
 * the tree (pageverify.c). */
#ifndef CKPT_PAGEVERIFY_H
#define CKPT_PAGEVERIFY_H

#include <stddef.h>
#include <stdint.h>

struct rst_ctx;
struct ir_span;

/* Check the @n spans (@bytes in all): at once if they are few, else in
 * a child; @s must stay until pv_abort.  0 or an error, said. */
int pv_start(struct rst_ctx *c, const struct ir_span *s, size_t n, uint64_t bytes);
/* Wait for the child, if any: 0 when every span is good, else the
 * error, said. */
int pv_finish(struct rst_ctx *c);
/* The child killed and reaped if still there, its pipe closed. */
void pv_abort(struct rst_ctx *c);

#endif
