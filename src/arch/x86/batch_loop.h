/* batch_loop.h - the loop both runners of a table of calls start with:
 * the restart trampoline's (arch.c) and a checkpoint's page (runner.c).
 * Entries of 64 bytes (nr, six arguments, result) from r12 to r13: each
 * call made, its result stored, r12 on to the next while none fails.
 * BATCH_LOOP(done, failed) is 60 bytes: at its end r12 == r13 it jumps
 * @done bytes past its first jae (offset 5), and a failed call @failed
 * bytes past its second (offset 54), the failing entry at r12 and its
 * result in rax. */
#ifndef CKPT_X86_BATCH_LOOP_H
#define CKPT_X86_BATCH_LOOP_H

#define BATCH_LOOP_LEN	60

#define BATCH_LOOP(done, failed)					\
	0x4d, 0x39, 0xec,		/* 0: cmp %r13,%r12 */		\
	0x73, (done),			/* jae */			\
	0x49, 0x8b, 0x04, 0x24,		/* mov (%r12),%rax */		\
	0x49, 0x8b, 0x7c, 0x24, 0x08,	/* mov 8(%r12),%rdi */		\
	0x49, 0x8b, 0x74, 0x24, 0x10,	/* mov 16(%r12),%rsi */		\
	0x49, 0x8b, 0x54, 0x24, 0x18,	/* mov 24(%r12),%rdx */		\
	0x4d, 0x8b, 0x54, 0x24, 0x20,	/* mov 32(%r12),%r10 */		\
	0x4d, 0x8b, 0x44, 0x24, 0x28,	/* mov 40(%r12),%r8 */		\
	0x4d, 0x8b, 0x4c, 0x24, 0x30,	/* mov 48(%r12),%r9 */		\
	0x0f, 0x05,			/* syscall */			\
	0x49, 0x89, 0x44, 0x24, 0x38,	/* mov %rax,56(%r12) */		\
	0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff, /* cmp $-4095,%rax */	\
	0x73, (failed),			/* jae */			\
	0x49, 0x83, 0xc4, 0x40,		/* add $64,%r12 */		\
	0xeb, 0xc4			/* jmp 0 */

#endif
