/* guard.c - ppc64le's guard frame: a checkpoint that dies leaves its
 * target as it was (src/arch/x86/guard.h says why).
 *
 * Before anything of a thread is changed, a ucontext of its own context
 * goes below its stack's red zone, as the kernel lays one out for a
 * signal: its registers (NIP, MSR, CTR, LR, XER, CR with the GPRs), with
 * the kernel's syscall restart already applied (rt_sigreturn turns
 * restarting off), its floating-point, VMX and VSX registers, its signal
 * mask, and an altstack field that rt_sigreturn ignores (an invalid
 * mode).  128 bytes below it, the caller frame the kernel leaves for a
 * handler.
 *
 * Two pieces of the vdso (or other code never written), neither ours:
 *   - the return gadget: __kernel_sigtramp_rt64, `addi r1,r1,128;
 *     li r0,172; sc` (rt_sigreturn of the ucontext at r1);
 *   - a call gadget: `sc` followed only by instructions that set a
 *     register other than r1 (a forward branch on CR0[SO] over one of
 *     them among them: the vdso's fallbacks, `sc; bns+ 1f; neg r3,r3;
 *     1: extsw r3,r3`), then `blr`.
 * A remote call runs at the call gadget with LR the return gadget and r1
 * the caller frame; between calls the thread waits at the return gadget.
 * So if ckpt dies at any instant, the thread's next steps are at most
 * the call it was given, then rt_sigreturn, back to exactly where it
 * was, with its own mask.  Nothing is mapped into it; what is written is
 * below its red zone, where any signal may write. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../ctx.h"
#include "../guard_frame.h"

#ifndef NT_PPC_VMX
#define NT_PPC_VMX		0x100
#define NT_PPC_VSX		0x102
#endif
#define CALL_MAX_INSNS	8
#define SIGNAL_FRAMESIZE 128
#define REDZONE		512		/* what the kernel leaves (USER_REDZONE_SIZE) */
#define TRAP_SYSCALL	0xc00		/* sc: an error is positive, with CR0[SO] */
#define TRAP_SCV	0x3000		/* scv 0: an error is negative */
#define CR0_SO		0x10000000ULL
#define MSR_VEC		(1ULL << 25)
#define MSR_VSX		(1ULL << 23)
#define MSR_TS_MASK	(3ULL << 33)	/* a transaction: not ours to frame */
#define VMX_LEN		(34 * 16)	/* vr0-31, vscr, vrsave */
#define VSX_LEN		(32 * 8)	/* vsr0-31's other halves */

#define INSN_SC		0x44000002u
#define INSN_BLR	0x4e800020u

/* The kernel's ucontext on ppc64, as rt_sigreturn reads it at r1 once
 * the trampoline's addi is done (uapi/asm/ucontext.h, sigcontext.h). */
struct k_ucontext {
	uint64_t uc_flags, uc_link;
	uint64_t ss_sp;
	int32_t ss_flags, ss_pad;
	uint64_t ss_size;
	uint64_t sigmask;
	uint64_t sigmask_room[15];
	/* struct sigcontext */
	uint64_t unused[4];
	int32_t signal, pad0;
	uint64_t handler, oldmask, regs;
	uint64_t gp_regs[48];
	uint64_t fp_regs[33];
	uint64_t v_regs;
	uint64_t vmx_reserve[101];
};

_Static_assert(offsetof(struct k_ucontext, gp_regs) == 232, "ucontext layout");
_Static_assert(offsetof(struct k_ucontext, vmx_reserve) == 888, "ucontext layout");
_Static_assert(sizeof(struct k_ucontext) == 1696, "ucontext layout");

static uint32_t word(const uint8_t *b)
{
	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The register the instruction @w sets, if all it does is set one (or
 * nothing: -1), else -2. */
static int sets_a_register(uint32_t w)
{
	uint32_t op = w >> 26, xo = (w >> 1) & 0x3ff;

	if (w == 0x60000000u)			/* nop */
		return -1;
	switch (op) {
	case 14:				/* addi, li */
		return (w >> 21) & 31;
	case 24:				/* ori */
		return (w >> 16) & 31;
	case 31:
		if (xo == 104 || xo == (104 | 0x200))	/* neg (o) */
			return (w >> 21) & 31;
		if (xo == 986 || xo == 444)	/* extsw, or (mr) */
			return (w >> 16) & 31;
		return -2;
	}
	return -2;
}

/* Whether `sc` at @b[0] is a call gadget: what follows it up to `blr`
 * only sets registers other than r1, or branches forward on CR0[SO] to
 * one of those instructions or that blr. */
static bool call_gadget(const uint8_t *b, size_t len)
{
	size_t reach = 0;	/* the farthest a branch goes */

	for (size_t i = 4; i + 4 <= len && i < 4 + 4 * CALL_MAX_INSNS; i += 4) {
		uint32_t w = word(b + i);
		int r;

		if (w == INSN_BLR)
			return reach <= i;
		/* bc 4|12,3,+d (bns/bso, no link, relative) */
		if ((w >> 26) == 16 && ((w >> 16) & 31) == 3 && !(w & 3) &&
		    (int16_t)(w & 0xfffc) > 0) {
			size_t to = i + (int16_t)(w & 0xfffc);

			reach = to > reach ? to : reach;
			continue;
		}
		r = sets_a_register(w);
		if (r == -2 || r == 1)
			return false;
	}
	return false;
}

void guard_scan(const uint8_t *b, size_t len, uint64_t at, struct guard_gadgets *g)
{
	for (size_t k = 0; k + 4 <= len && !(g->call_ip && g->ret_ip); k += 4) {
		uint32_t w = word(b + k);

		if (!g->ret_ip && w == 0x38210080u && k + 12 <= len &&	/* addi r1,r1,128 */
		    word(b + k + 4) == 0x380000acu && word(b + k + 8) == INSN_SC)
			g->ret_ip = at + k;
		if (!g->call_ip && w == INSN_SC && call_gadget(b + k, len - k))
			g->call_ip = at + k;
	}
}

/* What the kernel does to a thread that leaves a system call with no
 * signal to handle, which rt_sigreturn turns off: a call asking to be
 * restarted set up again (its first argument back in r3, NIP back over
 * the sc).  One restarted through its restart block is run again from
 * the start, with its own arguments (x86's guard.c says why). */
static void restart_fixup(const arch_regs_t *r, uint64_t *gp)
{
	uint64_t trap = r->trap & 0xfff0;
	long ret = (long)r->gpr[3];

	if (r->trap & 1)	/* restarted already (the kernel's norestart bit) */
		return;
	if (trap == TRAP_SYSCALL && (r->ccr & CR0_SO))
		ret = -ret;
	else if (trap != TRAP_SCV)
		return;
	switch (ret) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		gp[3] = r->orig_gpr3;
		gp[32] -= 4;	/* nip */
		break;
	}
}

/* The ucontext at @at from @r: registers, FP, VMX and VSX state. */
static int fill(struct remote *r, struct k_ucontext *u, uint64_t at)
{
	size_t vo = (offsetof(struct k_ucontext, vmx_reserve) + 15) & ~15UL;
	uint8_t *v = (uint8_t *)u + vo;	/* at is 16-aligned */
	uint64_t msr = r->regs.msr & ~(MSR_VEC | MSR_VSX);
	int ret;

	memcpy(u->gp_regs, &r->regs, 44 * sizeof(uint64_t));
	restart_fixup(&r->regs, u->gp_regs);
	u->regs = at + offsetof(struct k_ucontext, gp_regs);
	u->v_regs = at + (v - (uint8_t *)u);
	ret = guard_regset(r->pid, NT_PRFPREG, u->fp_regs, sizeof(u->fp_regs));
	if (ret)
		return log_err(r->log, -ret, "tid %d: floating-point registers:", r->pid);
	/* -ENODEV: no such unit, no state to keep */
	ret = guard_regset(r->pid, NT_PPC_VMX, v, VMX_LEN);
	if (!ret)
		msr |= MSR_VEC;
	if (!ret)
		ret = guard_regset(r->pid, NT_PPC_VSX, v + VMX_LEN, VSX_LEN);
	if (!ret)
		msr |= MSR_VSX;
	else if (ret != -ENODEV)
		return log_err(r->log, -ret, "tid %d: vector registers:", r->pid);
	u->gp_regs[33] = msr;
	return 0;
}

int guard_arm(struct remote *r, const struct guard_gadgets *g,
	      uint64_t stack_lo, uint64_t *lowest)
{
	struct k_ucontext *u;
	uint64_t sp = r->regs.gpr[1], at = (sp - REDZONE - sizeof(*u)) & ~15ULL;
	uint64_t caller = at - SIGNAL_FRAMESIZE;
	arch_regs_t park = r->regs;
	int ret;

	/* a thread in a transaction: its state is two, not one */
	if ((r->regs.msr & MSR_TS_MASK) || sp < REDZONE + sizeof(*u) + SIGNAL_FRAMESIZE ||
	    caller < stack_lo + 4096)
		return -ENOSPC;
	u = calloc(1, sizeof(*u));
	if (!u)
		return log_err(r->log, ENOMEM, "guard frame:");
	/* not a valid mode: rt_sigreturn leaves the altstack as it is */
	u->ss_flags = 3;
	u->sigmask = r->sigmask;
	ret = fill(r, u, at);
	if (!ret)
		ret = remote_write(r, at, u, sizeof(*u));
	if (!ret)	/* the caller frame's back chain, as the kernel's */
		ret = remote_write(r, caller, &sp, sizeof(sp));
	free(u);
	if (ret)
		return ret;
	park.nip = g->ret_ip;
	park.gpr[1] = caller;
	park.trap = 0;		/* no call to restart at the park */
	return guard_park(r, g, &park, caller, lowest);
}
