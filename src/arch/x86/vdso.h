/* vdso.h - the vdso and its data pages (vvar) at restart (vdso.c): they
 * are this kernel's, not the image's, mapped where the image had them. */
#ifndef CKPT_VDSO_H
#define CKPT_VDSO_H

#include "../../kinds/mm.h"

/* Pre-flight: this kernel's vdso layout (ours, or a 32-bit process's for
 * one) is the one the image had.  0, or -errno (reported). */
int vdso_check(struct rst_ctx *c, struct rst_task *t, const struct mm_state *s);
/* Map the vdso in the puppet where the image had it: the 32-bit one for
 * a 32-bit process.  0, or -errno (reported). */
int vdso_map(struct rst_task *t, const struct mm_state *s);

#endif
