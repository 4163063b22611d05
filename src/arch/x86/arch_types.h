/* arch_types.h - x86-64's types and constants for arch.h. */
#ifndef CKPT_ARCH_TYPES_H
#define CKPT_ARCH_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

typedef struct user_regs_struct arch_regs_t;

#define ARCH_ID			1	/* CKPT_ARCH_X86_64 */
#define ARCH_NAME		"x86-64"
#define ARCH_RED_ZONE		128
/* the kernel's O_LARGEFILE in f_flags (glibc's is 0 on 64-bit) */
#define ARCH_O_LARGEFILE	0100000
#define ARCH_TASK_SIZE		0x7ffffffff000ULL
#define ARCH_COMPAT_LIMIT	0x100000000ULL	/* IA32_LIMIT */
#define ARCH_MAP_32BIT		0x40	/* MAP_32BIT */
/* vdso_map() maps this kernel's vdso anew (after the puppet's own is
 * unmapped), rather than moving the puppet's own (before). */
#define ARCH_VDSO_MOVED		0
#define ARCH_GUARD_FRAME	0	/* its own: guard.c, guard32.c */

/* In the trampoline (arch_tramp), a syscall preceded by an AMX
 * instruction: running it makes the kernel enlarge the task's xstate
 * buffer for AMX. */
#define TRAMP_AMX		16

/* Where a file's guard gadgets were found (guard.h): the same libc in
 * every process of a tree is searched once. */
struct guard_cache_entry {
	unsigned int dev_major, dev_minor;
	uint64_t ino, pgoff;
	int64_t call_off, ret_off;	/* from the mapping's start; -1: none */
	uint32_t call_adj;
};

struct arch_cpt_cache {
	struct guard_cache_entry *e;
	int n;
	size_t cap;
};

static inline uint64_t arch_sp(const arch_regs_t *r)
{
	return r->rsp;
}

static inline uint64_t arch_ip(const arch_regs_t *r)
{
	return r->rip;
}

#endif
