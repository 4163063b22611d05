/* guard.c - s390x's guard frame: a checkpoint that dies leaves its
 * target as it was (src/arch/x86/guard.h says why).
 *
 * Before anything of a thread is changed, an rt_sigframe of its own
 * context goes right below its stack pointer, as the kernel lays one out
 * for a signal (s390 has no red zone): its PSW, general and access
 * registers, with the kernel's syscall restart already applied (a call
 * that asked to be restarted is set up again: rt_sigreturn turns
 * restarting off), floating-point and vector registers, its signal mask,
 * and an altstack field that rt_sigreturn ignores (an invalid mode).
 *
 * Two pieces of the task's own code, neither written by us:
 *   - the return gadget: `svc 173`, rt_sigreturn (the vdso's
 *     __kernel_rt_sigreturn);
 *   - a call gadget: `svc 0` followed only by instructions that set a
 *     register other than r14 and r15, then `br %r14` (the vdso's
 *     fallbacks, or a libc's).
 * A remote call runs at the call gadget with r14 the return gadget and
 * r15 the frame; between calls the thread waits at the return gadget,
 * r15 the frame.  So if ckpt dies at any instant, the thread's next
 * steps are at most the call it was given, then rt_sigreturn, back to
 * exactly where it was, with its own mask.  Nothing is mapped into it;
 * what is written is below its stack pointer, where any signal may
 * write. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../ctx.h"
#include "../guard_frame.h"

#ifndef NT_S390_VXRS_LOW
#define NT_S390_VXRS_LOW	0x309
#define NT_S390_VXRS_HIGH	0x30a
#endif
#define UC_VXRS		2
#define CALL_MAX_INSNS	8

/* The kernel's rt_sigframe on s390x, as rt_sigreturn reads it at r15
 * (arch/s390/kernel/signal.c, uapi/asm/sigcontext.h, ucontext.h). */
struct k_sigregs {
	uint64_t psw_mask, psw_addr;
	uint64_t gprs[16];
	uint32_t acrs[16];
	uint32_t fpc, fpad;
	uint64_t fprs[16];
};

struct k_rt_sigframe {
	uint64_t backchain;
	uint8_t callee_used_stack[152];
	uint16_t svc_insn;
	uint8_t pad[6];
	uint8_t info[128];
	uint64_t uc_flags, uc_link;
	uint64_t ss_sp;
	int32_t ss_flags, ss_pad;
	uint64_t ss_size;
	struct k_sigregs mc;
	uint64_t sigmask;
	uint8_t sigmask_room[120];
	uint64_t vxrs_low[16];
	uint8_t vxrs_high[16][16];
	uint8_t reserved[128];
};

_Static_assert(offsetof(struct k_rt_sigframe, uc_flags) == 296, "rt_sigframe layout");
_Static_assert(offsetof(struct k_rt_sigframe, mc) == 336, "rt_sigframe layout");
_Static_assert(offsetof(struct k_rt_sigframe, sigmask) == 680, "rt_sigframe layout");
_Static_assert(offsetof(struct k_rt_sigframe, vxrs_low) == 808, "rt_sigframe layout");
_Static_assert(sizeof(struct k_rt_sigframe) == 1320, "rt_sigframe layout");

static int insn_len(uint8_t op)
{
	return op < 0x40 ? 2 : op < 0xc0 ? 4 : 6;
}

/* Whether the instruction at @b only sets a register: a general one
 * other than r14 and r15 (which lead to the return and the frame), a
 * floating-point one, or the condition code; or does nothing.  All of
 * them rt_sigreturn sets again. */
static bool sets_a_register(const uint8_t *b)
{
	int r1;

	switch (b[0]) {
	case 0x07:		/* bcr 0,x: a nop */
		return (b[1] >> 4) == 0;
	case 0x12: case 0x13: case 0x18:	/* ltr, lcr, lr */
		r1 = b[1] >> 4;
		break;
	case 0xa7:		/* lhi, lghi */
		if ((b[1] & 0xf) != 8 && (b[1] & 0xf) != 9)
			return false;
		r1 = b[1] >> 4;
		break;
	case 0xb9:		/* ltgr, lcgr, lgr, lgfr, llgfr */
		if (b[1] != 0x02 && b[1] != 0x03 && b[1] != 0x04 && b[1] != 0x14 &&
		    b[1] != 0x16)
			return false;
		r1 = b[3] >> 4;
		break;
	case 0xb3:		/* lgdr (into a general register) */
		if (b[1] != 0xcd)
			return false;
		r1 = b[3] >> 4;
		break;
	default:
		return false;
	}
	return r1 != 14 && r1 != 15;
}

/* Whether `svc 0` at @b[0] is a call gadget: what follows it up to
 * `br %r14` only sets registers. */
static bool call_gadget(const uint8_t *b, size_t len)
{
	size_t i = 2;

	for (int n = 0; n < CALL_MAX_INSNS && i + 2 <= len; n++) {
		if (b[i] == 0x07 && b[i + 1] == 0xfe)
			return true;
		if (i + insn_len(b[i]) > len || !sets_a_register(b + i))
			return false;
		i += insn_len(b[i]);
	}
	return false;
}

void guard_scan(const uint8_t *b, size_t len, uint64_t at, struct guard_gadgets *g)
{
	for (size_t k = 0; k + 2 <= len && !(g->call_ip && g->ret_ip); k += 2) {
		if (b[k] != 0x0a)
			continue;
		if (!g->ret_ip && b[k + 1] == 0xad)	/* svc 173 */
			g->ret_ip = at + k;
		if (!g->call_ip && b[k + 1] == 0x00 && call_gadget(b + k, len - k))
			g->call_ip = at + k;
	}
}

/* What the kernel does to a thread that leaves a system call with no
 * signal to handle, which rt_sigreturn turns off: a call asking to be
 * restarted set up again (its first argument back in r2, the PSW back
 * over the svc).  One restarted through its restart block is run again
 * from the start, with its own arguments, still in its registers (x86's
 * guard.c says why). */
static void restart_fixup(const arch_regs_t *r, struct k_sigregs *mc)
{
	if (!r->system_call)
		return;
	switch ((long)r->r.gprs[2]) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		mc->gprs[2] = r->r.orig_gpr2;
		mc->psw_addr -= r->system_call >> 16;	/* the svc's length */
		break;
	}
}

/* The frame's registers, floating-point and vector state from @r. */
static int fill(struct remote *r, struct k_rt_sigframe *f)
{
	int ret;

	f->mc.psw_mask = r->regs.r.psw_mask;
	f->mc.psw_addr = r->regs.r.psw_addr;
	memcpy(f->mc.gprs, r->regs.r.gprs, sizeof(f->mc.gprs));
	memcpy(f->mc.acrs, r->regs.r.acrs, sizeof(f->mc.acrs));
	restart_fixup(&r->regs, &f->mc);
	ret = guard_regset(r->pid, NT_PRFPREG, &f->mc.fpc, 8 + sizeof(f->mc.fprs));
	if (ret)
		return log_err(r->log, -ret, "tid %d: floating-point registers:", r->pid);
	ret = guard_regset(r->pid, NT_S390_VXRS_LOW, f->vxrs_low, sizeof(f->vxrs_low));
	if (!ret)
		ret = guard_regset(r->pid, NT_S390_VXRS_HIGH, f->vxrs_high, sizeof(f->vxrs_high));
	if (!ret)
		f->uc_flags = UC_VXRS;
	else if (ret != -ENODEV)	/* no vector facility: none to keep */
		return log_err(r->log, -ret, "tid %d: vector registers:", r->pid);
	return 0;
}

int guard_arm(struct remote *r, const struct guard_gadgets *g,
	      uint64_t stack_lo, uint64_t *lowest)
{
	struct k_rt_sigframe *f = calloc(1, sizeof(*f));
	uint64_t sp = r->regs.r.gprs[15], at = (sp - sizeof(*f)) & ~7ULL;
	arch_regs_t park = r->regs;
	int ret;

	if (!f)
		return log_err(r->log, ENOMEM, "guard frame:");
	if (sp < sizeof(*f) || at < stack_lo + 4096) {
		free(f);
		return -ENOSPC;
	}
	f->backchain = sp;
	/* not a valid mode: rt_sigreturn leaves the altstack as it is */
	f->ss_flags = 3;
	f->sigmask = r->sigmask;
	ret = fill(r, f);
	if (!ret)
		ret = remote_write(r, at, f, sizeof(*f));
	free(f);
	if (ret)
		return ret;
	park.r.psw_addr = g->ret_ip;
	park.r.gprs[15] = at;
	park.system_call = 0;	/* no call to restart at the park */
	return guard_park(r, g, &park, at, lowest);
}
