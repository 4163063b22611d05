/* cpu.h - what the image head records of the CPU, and checks against it. */
#ifndef CKPT_CPU_H
#define CKPT_CPU_H
#include <stdint.h>

#define CPU_TASK_SIZE	0x7ffffffff000ULL

/* XCR0: the state components this CPU and kernel enable. */
uint64_t cpu_xfeatures(void);
/* Bytes of the NT_X86_XSTATE regset ptrace hands out here. */
uint32_t cpu_xstate_size(void);
/* Offset and size of XSAVE component @i in the standard layout; -1 if
 * XCR0 does not enable it (no task's XSAVE image then holds it). */
int cpu_xstate_component(int i, uint32_t *off, uint32_t *size);
/* No XSAVE image is larger (AMX's is about 11 KiB). */
#define XSTATE_MAX		(64 * 1024)
#endif
