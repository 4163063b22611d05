/* arch.c - ppc64le's registers for remote calls, its trampoline and its
 * HEAD (arch.h).
 *
 * A system call is `sc` with its number in r0, its arguments in r3-r8;
 * it returns in r3, an error as a positive errno with CR0.SO set.  The
 * kernel restarts a call the thread was in only if its trap says it was
 * in one (0xc00): a remote call sets trap to 0, and the registers put
 * back at release carry the original's.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <linux/audit.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "../../ctx.h"
#include "../../image.h"
#include "../arch.h"

#define CR0_SO		0x10000000ULL

int arch_get_regs(pid_t tid, arch_regs_t *r)
{
	struct iovec g = { r, sizeof(*r) };

	memset(r, 0, sizeof(*r));
	if (ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &g))
		return -1;
	if (g.iov_len != sizeof(*r)) {	/* a 32-bit task's */
		errno = EOPNOTSUPP;
		return -1;
	}
	return 0;
}

int arch_set_regs(pid_t tid, const arch_regs_t *r)
{
	struct iovec g = { (void *)r, sizeof(*r) };

	return ptrace(PTRACE_SETREGSET, tid, NT_PRSTATUS, &g) ? -1 : 0;
}

void arch_set_sp(arch_regs_t *r, uint64_t sp)
{
	r->gpr[1] = sp;
}

void arch_set_ret(arch_regs_t *r, uint64_t ip)
{
	r->link = ip;
}

void arch_set_call(arch_regs_t *r, long nr, const long a[6], uint64_t ip)
{
	r->gpr[0] = nr;
	for (int i = 0; i < 6; i++)
		r->gpr[3 + i] = a[i];
	r->orig_gpr3 = a[0];
	r->nip = ip;
	r->trap = 0;
}

size_t arch_call_mem(long nr, const long a[6], void *mem, int *arg)
{
	return 0;
}

/* No 32-bit calls (compat.c): never reached. */
void arch_set_call32(arch_regs_t *r, long nr, const long a[6], uint64_t ip)
{
	arch_set_call(r, nr, a, ip);
}

long arch_call_result(const arch_regs_t *r)
{
	return r->ccr & CR0_SO ? -(long)r->gpr[3] : (long)r->gpr[3];
}

long arch_fast_result(const arch_regs_t *r)
{
	return (long)r->gpr[31];
}

void arch_set_batch(arch_regs_t *r, uint64_t ip, uint64_t table, uint64_t end)
{
	r->gpr[0] = 0;
	r->gpr[30] = table;
	r->gpr[29] = end;
	r->nip = ip;
	r->trap = 0;
}

void arch_batch_result(const arch_regs_t *r, uint64_t *at, long *res)
{
	*at = r->gpr[30];
	*res = (long)r->gpr[31];
}

void arch_call_data(const arch_regs_t *r, bool compat, struct seccomp_data *d)
{
	d->nr = r->gpr[0];
	d->arch = AUDIT_ARCH_PPC64LE;
	d->instruction_pointer = r->nip + 4;
	for (int i = 0; i < 6; i++)
		d->args[i] = r->gpr[3 + i];
}

/* At the entry stop the kernel takes the number from r0 and the
 * arguments from r3-r8 again, and runs seccomp after the stop, on
 * those: a stand-in is made the real call there by setting them. */
bool arch_stand_in(arch_regs_t *r, bool compat, int k)
{
	r->gpr[0] = k ? SYS_read : SYS_getpid;
	for (int i = 3; i <= 8; i++)
		r->gpr[i] = 0;
	if (k)
		r->gpr[3] = (uint64_t)-1;	/* fd -1 */
	r->orig_gpr3 = r->gpr[3];
	return true;
}

void arch_make_real(arch_regs_t *now, const arch_regs_t *real)
{
	now->gpr[0] = real->gpr[0];
	for (int i = 3; i <= 8; i++)
		now->gpr[i] = real->gpr[i];
	now->orig_gpr3 = real->orig_gpr3;
}

/* At 0: sc; then tw 31,0,0 (a trap, should anything return there).
 * At 8 the one-stop sequence: the call, its result into r31 (negated
 * when CR0[SO] says it is an errno), tkill(gettid(), SIGSTOP), a trap
 * (never reached: the SIGSTOP stops it first).  At TRAMP_BATCH the
 * runner of the table of 64-byte entries (nr, six arguments, result)
 * from r30 to r29: each call made, its result stored (an errno
 * negated), r30 on to the next while none fails; then, with the failed
 * one's result (or 0) in r31, on to the one-stop sequence's tail.  A
 * call keeps r29-r31 (non-volatile in the ABI). */
#define TRAMP_BATCH 64
#define W(x) (x) & 0xff, ((x) >> 8) & 0xff, ((x) >> 16) & 0xff, ((x) >> 24) & 0xff
static const uint8_t tramp_code[144] = {
	0x02, 0x00, 0x00, 0x44, 0x08, 0x00, 0xe0, 0x7f,
	0x02, 0x00, 0x00, 0x44,		/* sc */
	0x78, 0x1b, 0x7f, 0x7c,		/* mr r31,r3 */
	0x08, 0x00, 0x83, 0x40,		/* bns +8 */
	0xd0, 0x00, 0xff, 0x7f,		/* neg r31,r31 */
	0xcf, 0x00, 0x00, 0x38,		/* li r0,207 (gettid): at 24 */
	0x02, 0x00, 0x00, 0x44,		/* sc */
	0x13, 0x00, 0x80, 0x38,		/* li r4,19 (SIGSTOP) */
	0xd0, 0x00, 0x00, 0x38,		/* li r0,208 (tkill) */
	0x02, 0x00, 0x00, 0x44,		/* sc */
	0x08, 0x00, 0xe0, 0x7f,		/* tw 31,0,0: at 44 */
	[TRAMP_BATCH] =
	W(0x7c3ee840),			/* 1: cmpld r30,r29 */
	W(0x40800040),			/* bge 3f */
	W(0xe81e0000),			/* ld r0,0(r30) */
	W(0xe87e0008),			/* ld r3,8(r30) */
	W(0xe89e0010),			/* ld r4,16(r30) */
	W(0xe8be0018),			/* ld r5,24(r30) */
	W(0xe8de0020),			/* ld r6,32(r30) */
	W(0xe8fe0028),			/* ld r7,40(r30) */
	W(0xe91e0030),			/* ld r8,48(r30) */
	W(0x44000002),			/* sc */
	W(0x40830010),			/* bns 4f */
	W(0x7c6300d0),			/* neg r3,r3 */
	W(0xf87e0038),			/* std r3,56(r30) */
	W(0x48000014),			/* b 2f */
	W(0xf87e0038),			/* 4: std r3,56(r30) */
	W(0x3bde0040),			/* addi r30,r30,64 */
	W(0x4bffffc0),			/* b 1b */
	W(0x38600000),			/* 3: li r3,0 */
	W(0x7c7f1b78),			/* 2: mr r31,r3 */
	W(0x4bffff8c),			/* b 24 (the tail) */
};
#undef W

const struct arch_tramp arch_tramp = {
	.code = tramp_code, .len = sizeof(tramp_code), .sc_off = 0, .sc32_off = -1,
	.fast_off = 8, .fast_end = 44,
	.batch_off = TRAMP_BATCH,
};

const long arch_nr32_openat = -1;

void arch_head_fill(struct rec_head *h)
{
	h->arch = ARCH_ID;
	h->xstate_size = 0;
	h->xfeatures = 0;
}

int arch_head_check(struct ckpt_log *log, const struct rec_head *h)
{
	if (h->xstate_size || h->xfeatures)
		return log_err(log, EBADMSG, "HEAD: x86 CPU state in a ppc64le image");
	return 0;
}

int arch_xcomp_get(struct remote *rm, uint64_t scratch, uint64_t *perm, bool *set)
{
	*set = false;
	*perm = 0;
	return 0;
}

int arch_xcomp_set(struct rst_task *t, struct remote *rm, uint64_t perm)
{
	return log_err(rm->log, EOPNOTSUPP, "pid %d: x86 state-component permissions in a ppc64le image",
		       t->pid);
}

/* (no runner page on this port: arch_runner_map() says so) */
void arch_runner_regs(const struct remote *r, arch_regs_t *regs, uint64_t table,
		      uint64_t end)
{
	(void)r;
	(void)regs;
	(void)table;
	(void)end;
}
