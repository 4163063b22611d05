/* arch.c - s390x's registers for remote calls, its trampoline and its
 * HEAD (arch.h).
 *
 * A system call is `svc 0` with its number in r1, its arguments in r2-r7
 * and its result in r2.  The kernel decides whether a call the thread
 * was in is restarted from thread.system_call (NT_S390_SYSTEM_CALL), not
 * from the registers: a remote call sets it to 0, and the registers put
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

#ifndef NT_S390_SYSTEM_CALL
#define NT_S390_SYSTEM_CALL	0x307
#endif

int arch_get_regs(pid_t tid, arch_regs_t *r)
{
	struct iovec g = { &r->r, sizeof(r->r) };
	struct iovec s = { &r->system_call, sizeof(r->system_call) };

	if (ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &g) ||
	    ptrace(PTRACE_GETREGSET, tid, NT_S390_SYSTEM_CALL, &s))
		return -1;
	if (g.iov_len != sizeof(r->r)) {	/* a 31-bit task's */
		errno = EOPNOTSUPP;
		return -1;
	}
	return 0;
}

int arch_set_regs(pid_t tid, const arch_regs_t *r)
{
	struct iovec g = { (void *)&r->r, sizeof(r->r) };
	struct iovec s = { (void *)&r->system_call, sizeof(r->system_call) };

	return ptrace(PTRACE_SETREGSET, tid, NT_PRSTATUS, &g) ||
	       ptrace(PTRACE_SETREGSET, tid, NT_S390_SYSTEM_CALL, &s) ? -1 : 0;
}

void arch_set_sp(arch_regs_t *r, uint64_t sp)
{
	r->r.gprs[15] = sp;
}

void arch_set_ret(arch_regs_t *r, uint64_t ip)
{
	r->r.gprs[14] = ip;
}

void arch_set_call(arch_regs_t *r, long nr, const long a[6], uint64_t ip)
{
	r->r.gprs[1] = nr;
	for (int i = 0; i < 6; i++)
		r->r.gprs[2 + i] = a[i];
	r->r.orig_gpr2 = a[0];
	r->r.psw_addr = ip;
	r->system_call = 0;
}

/* mmap (old_mmap here) takes its six arguments in memory. */
size_t arch_call_mem(long nr, const long a[6], void *mem, int *arg)
{
	if (nr != SYS_mmap)
		return 0;
	memcpy(mem, a, 6 * sizeof(long));
	*arg = 0;
	return 6 * sizeof(long);
}

/* No 31-bit calls (ARCH_COMPAT_LIMIT 0): never reached. */
void arch_set_call32(arch_regs_t *r, long nr, const long a[6], uint64_t ip)
{
	arch_set_call(r, nr, a, ip);
}

long arch_call_result(const arch_regs_t *r)
{
	return r->r.gprs[2];
}

long arch_fast_result(const arch_regs_t *r)
{
	return r->r.gprs[13];
}

void arch_set_batch(arch_regs_t *r, uint64_t ip, uint64_t table, uint64_t end)
{
	r->r.gprs[1] = 0;
	r->r.gprs[10] = table;
	r->r.gprs[11] = end;
	r->r.psw_addr = ip;
	r->system_call = 0;
}

void arch_batch_result(const arch_regs_t *r, uint64_t *at, long *res)
{
	*at = r->r.gprs[10];
	*res = (long)r->r.gprs[13];
}

void arch_call_data(const arch_regs_t *r, bool compat, struct seccomp_data *d)
{
	d->nr = r->r.gprs[1];
	d->arch = AUDIT_ARCH_S390X;
	d->instruction_pointer = r->r.psw_addr + 2;
	for (int i = 0; i < 6; i++)
		d->args[i] = r->r.gprs[2 + i];
}

/* At the entry stop the kernel has put the number in r2 and the first
 * argument in orig_gpr2, and a tracer's write of r2 there is the
 * number it runs (the s390 ptrace ABI: it sets int_code, where the
 * kernel takes the number from after the stop; r1 is not looked at
 * again).  So a stand-in is made the real call there by setting r2,
 * orig_gpr2 and r3-r7. */
bool arch_stand_in(arch_regs_t *r, bool compat, int k)
{
	r->r.gprs[1] = k ? SYS_read : SYS_getpid;
	for (int i = 2; i <= 7; i++)
		r->r.gprs[i] = 0;
	if (k)
		r->r.gprs[2] = (uint64_t)-1;	/* fd -1 */
	r->r.orig_gpr2 = r->r.gprs[2];
	return true;
}

void arch_make_real(arch_regs_t *now, const arch_regs_t *real)
{
	now->r.gprs[1] = real->r.gprs[1];
	now->r.gprs[2] = real->r.gprs[1];
	now->r.orig_gpr2 = real->r.gprs[2];
	for (int i = 3; i <= 7; i++)
		now->r.gprs[i] = real->r.gprs[i];
}

/* At 0: svc 0; then two zero bytes, an invalid opcode (a stray return
 * there traps instead of running on).  At 4 the one-stop sequence: the
 * call, its result into r13, tkill(gettid(), SIGSTOP), an invalid
 * opcode (never reached: the SIGSTOP stops it first).  At TRAMP_BATCH
 * the runner of the table of 64-byte entries (nr, six arguments,
 * result) from r10 to r11: each call made, its result stored, r10 on to
 * the next while none fails; then, with the failed one's result (or 0)
 * in r2, on to the one-stop sequence's tail.  A call keeps every
 * register but r2.  (mmap takes its arguments in memory here,
 * arch_call_mem(): it is never in a table.) */
#define TRAMP_BATCH 32
static const uint8_t tramp_code[118] = {
	0x0a, 0x00, 0x00, 0x00,
	0x0a, 0x00,			/* svc 0 */
	0xb9, 0x04, 0x00, 0xd2,		/* lgr %r13,%r2: at 6 */
	0xa7, 0x19, 0x00, 0xec,		/* lghi %r1,236 (gettid) */
	0x0a, 0x00,			/* svc 0 */
	0xa7, 0x39, 0x00, 0x13,		/* lghi %r3,19 (SIGSTOP) */
	0xa7, 0x19, 0x00, 0xed,		/* lghi %r1,237 (tkill) */
	0x0a, 0x00,			/* svc 0 */
	0x00, 0x00,			/* at 26 */
	[TRAMP_BATCH] =
	0xb9, 0x21, 0x00, 0xab,		/* 1: clgr %r10,%r11 */
	0xa7, 0xa4, 0x00, 0x25,		/* jhe 3f */
	0xe3, 0x10, 0xa0, 0x00, 0x00, 0x04,	/* lg %r1,0(%r10) */
	0xe3, 0x20, 0xa0, 0x08, 0x00, 0x04,	/* lg %r2,8(%r10) */
	0xe3, 0x30, 0xa0, 0x10, 0x00, 0x04,	/* lg %r3,16(%r10) */
	0xe3, 0x40, 0xa0, 0x18, 0x00, 0x04,	/* lg %r4,24(%r10) */
	0xe3, 0x50, 0xa0, 0x20, 0x00, 0x04,	/* lg %r5,32(%r10) */
	0xe3, 0x60, 0xa0, 0x28, 0x00, 0x04,	/* lg %r6,40(%r10) */
	0xe3, 0x70, 0xa0, 0x30, 0x00, 0x04,	/* lg %r7,48(%r10) */
	0x0a, 0x00,			/* svc 0 */
	0xe3, 0x20, 0xa0, 0x38, 0x00, 0x24,	/* stg %r2,56(%r10) */
	0xa7, 0x09, 0xf0, 0x01,		/* lghi %r0,-4095 */
	0xb9, 0x21, 0x00, 0x20,		/* clgr %r2,%r0 */
	0xa7, 0xa4, 0x00, 0x08,		/* jhe 2f */
	0xa7, 0xab, 0x00, 0x40,		/* aghi %r10,64 */
	0xa7, 0xf4, 0xff, 0xdb,		/* j 1b */
	0xa7, 0x29, 0x00, 0x00,		/* 3: lghi %r2,0 */
	0xa7, 0xf4, 0xff, 0xca,		/* 2: j 6 (the tail) */
};

const struct arch_tramp arch_tramp = {
	.code = tramp_code, .len = sizeof(tramp_code), .sc_off = 0, .sc32_off = -1,
	.fast_off = 4, .fast_end = 26,
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
		return log_err(log, EBADMSG, "HEAD: x86 CPU state in an s390x image");
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
	return log_err(rm->log, EOPNOTSUPP, "pid %d: x86 state-component permissions in an s390x image",
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
