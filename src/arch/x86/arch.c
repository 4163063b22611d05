/* arch.c - x86-64's registers for remote calls, its trampoline and its
 * HEAD (arch.h).
 *
 * A remote call runs in 64-bit mode (cs 0x33) even in a 32-bit task,
 * with orig_rax = -1, so that the kernel does not take the stop we came
 * from for a system call to restart; a 32-bit call is the same through
 * an int $0x80, which runs the 32-bit system call table from any mode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "../../image.h"
#include "../../remote.h"
#include "../arch.h"
#include "batch_loop.h"
#include "compat.h"
#include "cpu.h"

#define USER64_SS		0x2b

int arch_get_regs(pid_t tid, arch_regs_t *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0, r) ? -1 : 0;
}

int arch_set_regs(pid_t tid, const arch_regs_t *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0, r) ? -1 : 0;
}

void arch_set_sp(arch_regs_t *r, uint64_t sp)
{
	r->rsp = sp;
}

void arch_set_ret(arch_regs_t *r, uint64_t ip)
{
	(void)r;
	(void)ip;
}

static void call_mode(arch_regs_t *r, long nr, uint64_t ip)
{
	r->rax = nr;
	r->rip = ip;
	r->orig_rax = -1;
	r->cs = USER64_CS;
	r->ss = USER64_SS;
}

void arch_set_call(arch_regs_t *r, long nr, const long a[6], uint64_t ip)
{
	call_mode(r, nr, ip);
	r->rdi = a[0];
	r->rsi = a[1];
	r->rdx = a[2];
	r->r10 = a[3];
	r->r8 = a[4];
	r->r9 = a[5];
}

size_t arch_call_mem(long nr, const long a[6], void *mem, int *arg)
{
	return 0;
}

void arch_set_call32(arch_regs_t *r, long nr, const long a[6], uint64_t ip)
{
	call_mode(r, nr, ip);
	r->rbx = (uint32_t)a[0];
	r->rcx = (uint32_t)a[1];
	r->rdx = (uint32_t)a[2];
	r->rsi = (uint32_t)a[3];
	r->rdi = (uint32_t)a[4];
	r->rbp = (uint32_t)a[5];
}

long arch_call_result(const arch_regs_t *r)
{
	return r->rax;
}

long arch_fast_result(const arch_regs_t *r)
{
	return r->rbx;
}

void arch_set_batch(arch_regs_t *r, uint64_t ip, uint64_t table, uint64_t end)
{
	call_mode(r, 0, ip);
	r->r12 = table;
	r->r13 = end;
}

/* (the runner page's, runner.c: entered where the task parks) */
void arch_runner_regs(const struct remote *r, arch_regs_t *regs, uint64_t table,
		      uint64_t end)
{
	*regs = r->park;
	regs->rip = r->runner;
	regs->orig_rax = -1;
	regs->r12 = table;
	regs->r13 = end;
	regs->r14 = r->runner_sig;
	regs->r15 = r->runner_mask;
}

void arch_batch_result(const arch_regs_t *r, uint64_t *at, long *res)
{
	*at = r->r12;
	*res = r->rbx;
}

void arch_call_data(const arch_regs_t *g, bool compat, struct seccomp_data *d)
{
	d->nr = g->rax;
	d->arch = compat ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64;
	d->instruction_pointer = g->rip + 2;
	if (compat) {
		uint64_t a[6] = { g->rbx, g->rcx, g->rdx, g->rsi, g->rdi, g->rbp };

		for (int i = 0; i < 6; i++)
			d->args[i] = (uint32_t)a[i];
	} else {
		uint64_t a[6] = { g->rdi, g->rsi, g->rdx, g->r10, g->r8, g->r9 };

		memcpy(d->args, a, sizeof(a));
	}
}

bool arch_stand_in(arch_regs_t *as, bool compat, int k)
{
	static const long getpid_nr[2] = { 39, 20 }, read_nr[2] = { 0, 3 };

	as->rax = k ? read_nr[compat] : getpid_nr[compat];
	as->rdi = as->rsi = as->rdx = as->r10 = as->r8 = as->r9 = 0;
	as->rbx = as->rcx = as->rbp = 0;
	if (k && compat)
		as->rbx = 0xffffffff;	/* fd -1, as 32 bits */
	else if (k)
		as->rdi = -1;
	return true;
}

void arch_make_real(arch_regs_t *now, const arch_regs_t *real)
{
	now->orig_rax = real->rax;
	now->rdi = real->rdi;
	now->rsi = real->rsi;
	now->rdx = real->rdx;
	now->r10 = real->r10;
	now->r8 = real->r8;
	now->r9 = real->r9;
	now->rbx = real->rbx;
	now->rcx = real->rcx;
	now->rbp = real->rbp;
}

/* At 0: syscall; int3.  At 4: int $0x80; int3, for the calls a 32-bit
 * process makes as one.  At TRAMP_AMX (16): ldtilecfg of the tile
 * configuration at 64 (one 16x64 tile); tilezero tmm0, which touches
 * tile data (what XFD traps on); tilerelease; syscall; int3.  At
 * TRAMP_FAST (128): syscall; the result into rbx; tkill(gettid(),
 * SIGSTOP); int3 (never reached: the SIGSTOP stops it first).  At
 * TRAMP_BATCH (160): the runner of the table of 64-byte entries (nr,
 * six arguments, result) from r12 to r13: each call made, its result
 * stored, r12 on to the next while none fails; then, with the failed
 * one's result (or 0) in rax, on to the one-stop sequence's tail: rax
 * into rbx, the SIGSTOP. */
#define TRAMP_FAST 128
#define TRAMP_BATCH 160
static const uint8_t tramp_code[256] = {
	0x0f, 0x05, 0xcc, [4] = 0xcd, 0x80, 0xcc, [16] = 0xc4, 0xe2, 0x78, 0x49, 0x05,
	0x27, 0x00, 0x00, 0x00,		/* rip (25) + 39 = 64 */
	0xc4, 0xe2, 0x7b, 0x49, 0xc0,	/* tilezero %tmm0 */
	0xc4, 0xe2, 0x78, 0x49, 0xc0, 0x0f, 0x05, 0xcc,
	[64] = 1, [80] = 64, [112] = 16,
	[TRAMP_FAST] = 0x0f, 0x05,	/* syscall */
	0x48, 0x89, 0xc3,		/* mov %rax,%rbx */
	0xb8, 0xba, 0x00, 0x00, 0x00,	/* mov $186 (gettid),%eax */
	0x0f, 0x05,			/* syscall */
	0x89, 0xc7,			/* mov %eax,%edi */
	0xbe, 0x13, 0x00, 0x00, 0x00,	/* mov $19 (SIGSTOP),%esi */
	0xb8, 0xc8, 0x00, 0x00, 0x00,	/* mov $200 (tkill),%eax */
	0x0f, 0x05,			/* syscall */
	0xcc,				/* int3: at TRAMP_FAST + 26 */
	/* done: to 3 (55 past), failed: to 2 (8 past) */
	[TRAMP_BATCH] = BATCH_LOOP(0x37, 0x08),
	0x31, 0xc0,			/* 3: xor %eax,%eax */
	0xeb, 0xa2,			/* 2: jmp TRAMP_FAST + 2 */
};

const struct arch_tramp arch_tramp = {
	.code = tramp_code, .len = sizeof(tramp_code), .sc_off = 0, .sc32_off = 4,
	.fast_off = TRAMP_FAST, .fast_end = TRAMP_FAST + 26,
	.batch_off = TRAMP_BATCH,
};

const long arch_nr32_openat = NR32_openat;

void arch_head_fill(struct rec_head *h)
{
	h->arch = ARCH_ID;
	h->xstate_size = cpu_xstate_size();
	h->xfeatures = cpu_xfeatures();
}

int arch_head_check(struct ckpt_log *log, const struct rec_head *h)
{
	uint64_t have = cpu_xfeatures();

	if (h->xfeatures & ~have)
		return log_err(log, ENOEXEC,
			       "image needs CPU state components 0x%llx this CPU lacks",
			       (unsigned long long)(h->xfeatures & ~have));
	if (h->xstate_size != cpu_xstate_size())
		return log_err(log, ENOEXEC, "image xstate size %u differs from this CPU's %u",
			       h->xstate_size, cpu_xstate_size());
	return 0;
}
