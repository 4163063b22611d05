/* compat.h - 32-bit (IA32 emulation) processes: the few things the
 * kernel keeps apart for them (the rest is in arch.h). */
#ifndef CKPT_COMPAT_H
#define CKPT_COMPAT_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../kinds.h"
#include "../arch.h"

#define IA32_CS		0x23	/* __USER32_CS */
#define USER_DS_SEL	0x2b	/* __USER_DS, also the 32-bit one */
#define USER64_CS	0x33	/* __USER_CS */

#define IA32_LIMIT	ARCH_COMPAT_LIMIT

/* i386 system call numbers (int $0x80) */
#define NR32_nanosleep			162
#define NR32_rt_sigaction		174
#define NR32_clock_nanosleep		265
#define NR32_openat			295
#define NR32_set_robust_list		311
#define NR32_get_robust_list		312
#define NR32_clock_nanosleep_time64	407

/* A selector a restored task may hold in ds/es/fs/gs: null, the user
 * code and data segments, a TLS entry of the GDT (the seed's set). */
bool ia32_selector_ok(uint64_t sel);
/* This kernel's 32-bit vdso and vvar areas, as one of our children
 * gets them (to compare an image's with, before any process exists). */
int ia32_vdso_layout(struct rst_ctx *c, const struct vma_list **out);
#endif
