/* arch_types.h - ppc64le's types and constants for arch.h. */
#ifndef CKPT_ARCH_TYPES_H
#define CKPT_ARCH_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* The NT_PRSTATUS regset: struct pt_regs, padded to ELF_NGREG (48).
 * trap 0xc00 marks a thread stopped in a system call (the kernel
 * restarts it, if it asks to be, when the thread goes on): a remote call
 * sets it to 0, as x86's orig_rax = -1. */
typedef struct {
	uint64_t gpr[32];
	uint64_t nip, msr, orig_gpr3, ctr, link, xer, ccr, softe;
	uint64_t trap, dar, dsisr, result;
	uint64_t pad[4];
} arch_regs_t;

#define ARCH_ID			3	/* CKPT_ARCH_PPC64LE */
#define ARCH_NAME		"ppc64le"
#define ARCH_RED_ZONE		288	/* the ELFv2 ABI's protected zone */
/* the kernel's O_LARGEFILE in f_flags (glibc's is 0 on 64-bit) */
#define ARCH_O_LARGEFILE	0200000
#define ARCH_TASK_SIZE		(1ULL << 47)	/* 128 TiB, without hints */
#define ARCH_COMPAT_LIMIT	0x100000000ULL	/* 32-bit tasks: refused */
/* a task of the compat mode: refused by name (remote.c) */
#define ARCH_COMPAT_REFUSED	"32-bit (compat)"
#define ARCH_MAP_32BIT		0
#define ARCH_VDSO_MOVED		1	/* ../vdso_moved.c */
#define ARCH_GUARD_FRAME	1	/* ../guard_frame.c */

/* Nothing kept across tasks (the guard's gadgets are found again). */
struct arch_cpt_cache {
	int unused;
};

static inline uint64_t arch_sp(const arch_regs_t *r)
{
	return r->gpr[1];
}

static inline uint64_t arch_ip(const arch_regs_t *r)
{
	return r->nip;
}

#endif
