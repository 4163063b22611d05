/* pageverify.h - the page data of an image checked while restart builds
 * the tree (pageverify.c). */
#ifndef CKPT_PAGEVERIFY_H
#define CKPT_PAGEVERIFY_H

#include <stddef.h>
#include <stdint.h>

struct rst_ctx;
struct ir_span;
struct pv_cell;

/* The grid the check is cut in: the image's offsets, PV_CELL each. */
#define PV_CELL		(1ULL << 20)

/* Check the @n spans (@bytes in all): at once if they are few, else in
 * a child; @s must stay until pv_abort.  0 or an error, said. */
int pv_start(struct rst_ctx *c, const struct ir_span *s, size_t n, uint64_t bytes);
/* Placing [@off, @off + @len) of the image (mm_place.c), which is
 * exactly one cell of a span the child checks and not taken yet: the
 * cell, the caller's to pv_cell_done() with its CRC32C; else NULL.  A
 * cell claimed and never done makes pv_finish() check its span itself.
 * Any thread. */
struct pv_cell *pv_claim(struct rst_ctx *c, uint64_t off, uint64_t len);
void pv_cell_done(struct pv_cell *cell, uint32_t crc);
/* Wait for the child, if any: 0 when every span is good, else the
 * error, said. */
int pv_finish(struct rst_ctx *c);
/* The child killed and reaped if still there, its pipe closed. */
void pv_abort(struct rst_ctx *c);

#endif
