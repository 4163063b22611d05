/* guard32.c - the guard of a 32-bit task (see guard.h).
 *
 * ckpt's remote calls run in 64-bit mode, and a 32-bit process has no
 * 64-bit code to borrow gadgets from.  Its 32-bit vdso has two pieces
 * that decode the same in 64-bit mode, and that is enough:
 *   __kernel_rt_sigreturn:        mov $173,%eax; int $0x80
 *   the end of __kernel_vsyscall: int $0x80; pop; pop; pop; ret
 * So its frame is the one the compat rt_sigreturn reads (the ia32
 * rt_sigframe), and each thread gets a page of our code: "syscall (or
 * int $0x80), then unmap this page through the vdso's int $0x80, whose
 * ret leads to the frame".  A thread let go by a dead ckpt runs that
 * tail: its page is gone and it is back where it was.  Each thread has
 * a page of its own: a page shared would be unmapped by the first
 * thread under the others still running in it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "../../testpoint.h"
#include "cpu.h"
#include "guard.h"

#define RED_ZONE	128
#define FREGS_SIZE	112	/* the legacy FPU state before the FXSAVE image */
#define NR32_MUNMAP	91
#define NR32_RT_SIGRETURN 173
#define NR32_MMAP2	192
#define UC_FP_XSTATE	1
#define USER64_CS	0x33
#define USER_DS		0x2b
#define PAGE		4096
#define SLOTS		24	/* what the vdso's pops take */

/* The kernel's sigcontext_32 and rt_sigframe_ia32, as the compat
 * rt_sigreturn reads them (arch/x86/include/asm/sigframe.h). */
struct k_sigcontext32 {
	uint16_t gs, gsh, fs, fsh, es, esh, ds, dsh;
	uint32_t di, si, bp, sp, bx, dx, cx, ax, trapno, err, ip;
	uint16_t cs, csh;
	uint32_t flags, sp_at_signal;
	uint16_t ss, ssh;
	uint32_t fpstate, oldmask, cr2;
};

struct k_rt_sigframe32 {
	uint32_t pretcode;
	int32_t sig;
	uint32_t pinfo, puc;
	uint8_t info[128];
	uint32_t uc_flags, uc_link;
	uint32_t ss_sp;
	int32_t ss_flags;
	uint32_t ss_size;
	struct k_sigcontext32 mc;
	uint32_t sigmask[2];
	uint8_t retcode[8];
};

_Static_assert(sizeof(struct k_sigcontext32) == 88, "sigcontext_32 layout");
_Static_assert(sizeof(struct k_rt_sigframe32) == 268, "rt_sigframe_ia32 layout");

/* The legacy FPU environment the compat rt_sigreturn folds over the
 * x87 part of the FXSAVE image (struct user_i387_ia32_struct), with the
 * status word and the "FXSR follows" magic after it. */
struct k_fregs {
	uint32_t cwd, swd, twd, fip, fcs, foo, fos;
	uint8_t st[80];
	uint16_t status, magic;
};

_Static_assert(sizeof(struct k_fregs) == FREGS_SIZE, "fregs_state layout");

static const uint8_t int80_tail[] = { 0xcd, 0x80, 0x5d, 0x5a, 0x59, 0xc3 };
static const uint8_t rt_sigreturn32[] = { 0xb8, NR32_RT_SIGRETURN, 0, 0, 0, 0xcd, 0x80 };

int guard32_find(int memfd, const struct vma_list *maps, struct guard32_gadgets *g)
{
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < maps->n; i++) {
		const struct vma *v = &maps->v[i];
		size_t len = v->end - v->start;
		uint8_t *b, *p;

		if (strcmp(v->path, "[vdso]") || len > (1 << 20))
			continue;
		b = malloc(len);
		if (!b)
			return -ENOMEM;
		if (pread(memfd, b, len, v->start) == (ssize_t)len) {
			p = memmem(b, len, int80_tail, sizeof(int80_tail));
			if (p)
				g->int80_ip = v->start + (p - b);
			p = memmem(b, len, rt_sigreturn32, sizeof(rt_sigreturn32));
			if (p)
				g->ret_ip = v->start + (p - b);
		}
		free(b);
	}
	return g->int80_ip && g->ret_ip ? 0 : -ENOENT;
}

/* The x87 state as the legacy header holds it, from the FXSAVE image. */
static void fill_fregs(struct k_fregs *e, const uint8_t *fx)
{
	uint16_t cwd, swd, fop;
	uint8_t ftw = fx[4];
	uint32_t fip, fcs, foo;

	memcpy(&cwd, fx, 2);
	memcpy(&swd, fx + 2, 2);
	memcpy(&fop, fx + 6, 2);
	memcpy(&fip, fx + 8, 4);
	memcpy(&fcs, fx + 12, 4);
	memcpy(&foo, fx + 16, 4);
	memset(e, 0, sizeof(*e));
	e->cwd = cwd | 0xffff0000u;
	e->swd = swd | 0xffff0000u;
	/* only empty or not matters to the kernel's fold: 11 or 00 */
	e->twd = 0xffff0000u;
	for (int i = 0; i < 8; i++)
		if (!(ftw & (1u << i)))
			e->twd |= 3u << (2 * i);
	e->fip = fip;
	e->fcs = (fcs & 0xffff) | ((uint32_t)fop << 16);
	e->foo = foo;
	e->fos = 0xffff0000u;
	for (int i = 0; i < 8; i++)
		memcpy(e->st + 10 * i, fx + 32 + 16 * i, 10);
	e->status = swd;
	e->magic = 0;	/* FXSR state follows */
}

static void fill_context32(struct k_sigcontext32 *mc, const struct user_regs_struct *r)
{
	uint64_t ip = r->rip, ax = r->rax;

	guard_restart_fixup(r, &ip, &ax);
	mc->gs = r->gs;
	mc->fs = r->fs;
	mc->es = r->es;
	mc->ds = r->ds;
	mc->di = r->rdi;
	mc->si = r->rsi;
	mc->bp = r->rbp;
	mc->sp = r->rsp;
	mc->bx = r->rbx;
	mc->dx = r->rdx;
	mc->cx = r->rcx;
	mc->ax = ax;
	mc->ip = ip;
	mc->cs = r->cs;
	mc->flags = r->eflags;
	mc->sp_at_signal = r->rsp;
	mc->ss = r->ss;
}

/* Where a dead ckpt leaves the thread: about to rt_sigreturn, with
 * the vdso's return gadget just run. */
static struct user_regs_struct vdso_park(const struct remote *r)
{
	struct user_regs_struct park = r->regs;

	park.rip = r->ret_ip;
	park.rsp = r->call_sp + SLOTS + 8;
	park.rax = NR32_RT_SIGRETURN;
	park.orig_rax = -1;
	park.cs = USER64_CS;
	park.ss = USER_DS;
	return park;
}

static int set_park(struct remote *r, const struct user_regs_struct *park)
{
	if (ptrace(PTRACE_SETREGS, r->pid, 0, park))
		return log_err(r->log, errno, "PTRACE_SETREGS %d:", r->pid);
	r->park = *park;
	return 0;
}

/* The frame, below the red zone: the legacy FPU header, the XSAVE image
 * (64-byte aligned), the frame, and under it the slots the vdso's pops
 * take with the return address to the vdso's rt_sigreturn; *@slots gets
 * where the slots start (the frame is at slots + 28, where the compat
 * rt_sigreturn looks, 4 below rsp after that ret). */
static int write_frame(struct remote *r, const struct guard32_gadgets *g,
		       uint64_t stack_lo, uint64_t *slots)
{
	struct k_rt_sigframe32 f;
	uint64_t sp = (uint32_t)r->regs.rsp, buf_fx, fpst, a;
	uint8_t zero[SLOTS] = { 0 };
	uint32_t fpsize = 0, ret_ip = g->ret_ip;
	uint8_t *x = calloc(1, XSTATE_MAX + FREGS_SIZE + 64);
	struct k_fregs env;
	int ret;

	if (!x)
		return log_err(r->log, ENOMEM, "xstate buffer:");
	ret = guard_fpstate(r, x + FREGS_SIZE, &fpsize);
	if (ret)
		goto out;
	buf_fx = (sp - RED_ZONE - fpsize) & ~63ULL;
	fpst = buf_fx - FREGS_SIZE;
	a = (fpst - sizeof(f) - 28) & ~15ULL;
	if (sp - RED_ZONE - fpsize > sp || a < stack_lo + 4096) {
		ret = -ENOSPC;
		goto out;
	}
	fill_fregs(&env, x + FREGS_SIZE);
	memcpy(x, &env, sizeof(env));
	memset(&f, 0, sizeof(f));
	f.uc_flags = UC_FP_XSTATE;
	f.ss_flags = 3;	/* not a valid mode: the altstack stays as it is */
	fill_context32(&f.mc, &r->regs);
	f.mc.fpstate = fpst;
	f.sigmask[0] = r->sigmask;
	f.sigmask[1] = r->sigmask >> 32;
	ret = remote_write(r, fpst, x, FREGS_SIZE + fpsize);
	if (!ret)
		ret = remote_write(r, a + 28, &f, sizeof(f));
	if (!ret)
		ret = remote_write(r, a, zero, sizeof(zero));
	/* its upper half is the frame's pretcode, 0 */
	if (!ret)
		ret = remote_write(r, a + SLOTS, &ret_ip, sizeof(ret_ip));
	*slots = a;
out:
	free(x);
	return ret;
}

/* The thread's page: 64-bit calls at +0, 32-bit ones at +4, both then
 * (and a thread parked at +6) unmap the page and return to the frame. */
static void page_code(uint8_t *c, uint32_t page, uint32_t int80_ip)
{
	static const uint8_t head[] = {
		0x0f, 0x05,		/* syscall */
		0xeb, 0x02,		/* jmp +2 */
		0xcd, 0x80,		/* int $0x80 */
		0xb8, NR32_MUNMAP, 0, 0, 0,	/* mov $91,%eax */
		0xbb,			/* mov $page,%ebx */
	};
	size_t n = sizeof(head);

	memcpy(c, head, n);
	memcpy(c + n, &page, 4);
	n += 4;
	c[n++] = 0xb9;		/* mov $4096,%ecx */
	memcpy(c + n, &(uint32_t){ PAGE }, 4);
	n += 4;
	c[n++] = 0xba;		/* mov $int80_ip,%edx */
	memcpy(c + n, &int80_ip, 4);
	n += 4;
	c[n++] = 0xff;		/* jmp *%rdx */
	c[n++] = 0xe2;
}

/* Map the thread's page through the vdso (a ckpt that dies in that one
 * call leaves the page), write it and park the thread in it. */
static int map_page(struct remote *r, const struct guard32_gadgets *g)
{
	struct user_regs_struct park = r->park;
	uint8_t code[64] = { 0 };
	long page;
	int ret = remote_call32(r, &page, NR32_MMAP2, 0, PAGE, PROT_READ | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!ret && page < 0 && page > -4096)
		ret = log_err(r->log, (int)-page, "pid %d: mapping a guard page:", r->pid);
	/* a ckpt killed in that call leaves the page: the tests say so */
	test_point(r->log, "guard page mapped");
	if (ret)
		return ret;
	page_code(code, page, g->int80_ip);
	ret = remote_write(r, page, code, sizeof(code));
	if (ret)
		return ret;
	park.rip = page + 6;
	park.rsp = r->call_sp;
	ret = set_park(r, &park);
	if (ret)
		return ret;
	r->page = page;
	r->call_ip = page;
	r->call32_ip = page + 4;
	return 0;
}

int guard32_arm(struct remote *r, const struct guard32_gadgets *g,
		uint64_t stack_lo, uint64_t *lowest)
{
	struct user_regs_struct park;
	uint64_t slots = 0;
	int ret = write_frame(r, g, stack_lo, &slots);

	if (ret)
		return ret;
	r->ret_ip = g->ret_ip;
	r->call_sp = slots;
	park = vdso_park(r);
	/* From here on, a ckpt that dies leaves the thread to the compat
	 * rt_sigreturn through the frame. */
	ret = set_park(r, &park);
	if (ret)
		return ret;
	r->guarded = true;
	r->call_ip = 0;
	r->call32_ip = g->int80_ip;
	r->sc32_ip = g->int80_ip;
	ret = remote_block(r);
	if (!ret)
		ret = map_page(r, g);
	*lowest = slots;
	return ret;
}

int guard32_unpage(struct remote *r)
{
	struct user_regs_struct park;
	long res;
	int ret;

	if (!r->page)
		return 0;
	/* out of the page before it goes */
	park = vdso_park(r);
	ret = set_park(r, &park);
	if (ret)
		return ret;
	r->call_ip = 0;
	r->call32_ip = r->sc32_ip;
	ret = remote_call32(r, &res, NR32_MUNMAP, r->page, PAGE, 0, 0, 0, 0);
	if (!ret && res)
		ret = log_err(r->log, (int)-res, "pid %d: unmapping its guard page:", r->pid);
	if (!ret)
		r->page = 0;
	return ret;
}
