/* arch_types.h - s390x's types and constants for arch.h. */
#ifndef CKPT_ARCH_TYPES_H
#define CKPT_ARCH_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* The NT_PRSTATUS regset (the kernel's s390_regs), and the number of
 * the system call the thread was in (NT_S390_SYSTEM_CALL): the kernel
 * restarts that one, if it asks to be, when the thread goes on.  A
 * remote call sets it to 0, as x86's orig_rax = -1. */
struct s390_prstatus {
	uint64_t psw_mask, psw_addr;
	uint64_t gprs[16];
	uint32_t acrs[16];
	uint64_t orig_gpr2;
};

typedef struct {
	struct s390_prstatus r;
	uint32_t system_call;
} arch_regs_t;

#define ARCH_ID			2	/* CKPT_ARCH_S390X */
#define ARCH_NAME		"s390x"
#define ARCH_RED_ZONE		0	/* none in the ELF ABI */
/* the kernel's O_LARGEFILE in f_flags (glibc's is 0 on 64-bit) */
#define ARCH_O_LARGEFILE	0100000
#define ARCH_TASK_SIZE		(1ULL << 42)	/* _REGION2_SIZE: stacks start there */
#define ARCH_COMPAT_LIMIT	0x80000000ULL	/* 31-bit tasks: refused (compat.c) */
/* a task of the compat mode: refused by name (remote.c) */
#define ARCH_COMPAT_REFUSED	"31-bit (compat)"
#define ARCH_MAP_32BIT		0
#define ARCH_VDSO_MOVED		1	/* ../vdso_moved.c */
#define ARCH_GUARD_FRAME	1	/* ../guard_frame.c */

/* Nothing kept across tasks (the guard's gadgets are found again). */
struct arch_cpt_cache {
	int unused;
};

static inline uint64_t arch_sp(const arch_regs_t *r)
{
	return r->r.gprs[15];
}

static inline uint64_t arch_ip(const arch_regs_t *r)
{
	return r->r.psw_addr;
}

#endif
