/* guard.c - the frame that returns a task to itself if ckpt dies (see
 * guard.h for why and how). */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../../vec.h"
#include "cpu.h"
#include "guard.h"

#define CHUNK		(64 << 10)	/* read at a time: a libc's rt_sigreturn is
				 * 90 KiB in, and each page of a fresh buffer
				 * costs a fault */
#define MAX_SCAN	(64ULL << 20)	/* of one mapping */
#define RED_ZONE	128
#define FP_XSTATE_MAGIC1 0x46505853U
#define FP_XSTATE_MAGIC2 0x46505845U
#define UC_FP_XSTATE	1
#define UC_SIGCONTEXT_SS 2
#define UC_STRICT_RESTORE_SS 4
#define NR_RT_SIGRETURN	15
#define NR_RESTART_SYSCALL 219
#define NR32_RESTART_SYSCALL 0
#define USER64_CS	0x33
#define USER_DS		0x2b

/* The kernel's struct sigcontext and rt_sigframe on x86-64, as
 * rt_sigreturn reads them (arch/x86/include/uapi/asm/sigcontext.h). */
struct k_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;
	uint64_t reserved1[8];
};

struct k_rt_sigframe {
	uint64_t pretcode;
	uint64_t uc_flags;
	uint64_t uc_link;
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t ss_pad;
	uint64_t ss_size;
	struct k_sigcontext mc;
	uint64_t sigmask;
	uint8_t info[128];
};

_Static_assert(sizeof(struct k_sigcontext) == 256, "sigcontext layout");
_Static_assert(sizeof(struct k_rt_sigframe) == 8 + 40 + 256 + 8 + 128,
	       "rt_sigframe layout");

/* After the syscall at buf[0..1]: register clears, pops, adds to rsp and
 * nops, then ret.  Returns the bytes taken off the stack before the ret,
 * or -1 if anything else comes first. */
static int call_gadget_adj(const uint8_t *b, size_t len)
{
	int adj = 0;

	for (size_t i = 2; i < len && i < 32;) {
		uint8_t op = b[i];

		if (op == 0xc3)
			return adj;
		if (op == 0x90) {
			i++;
		} else if (op >= 0x58 && op <= 0x5f && op != 0x5c) {
			adj += 8;	/* pop reg (not rsp) */
			i++;
		} else if (op == 0x41 && i + 1 < len && b[i + 1] >= 0x58 &&
			   b[i + 1] <= 0x5f) {
			adj += 8;	/* pop r8..r15 */
			i += 2;
		} else if ((op == 0x31 || op == 0x33) && i + 1 < len &&
			   b[i + 1] >= 0xc0) {
			i += 2;		/* xor reg, reg */
		} else if (op >= 0x40 && op <= 0x4f && i + 2 < len &&
			   (b[i + 1] == 0x31 || b[i + 1] == 0x33) &&
			   b[i + 2] >= 0xc0) {
			i += 3;		/* the same with REX */
		} else if (op == 0x48 && i + 3 < len && b[i + 1] == 0x83 &&
			   b[i + 2] == 0xc4 && (int8_t)b[i + 3] >= 0) {
			adj += b[i + 3];	/* add $imm8, %rsp */
			i += 4;
		} else {
			return -1;
		}
	}
	return -1;
}

static const uint8_t sigreturn_rax[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
static const uint8_t sigreturn_eax[] = { 0xb8, 0x0f, 0, 0, 0, 0x0f, 0x05 };

/* Whether the syscall instruction at @b[@k] ends an rt_sigreturn
 * sequence: where that sequence starts, or -1. */
static long ret_gadget_at(const uint8_t *b, size_t k)
{
	size_t nr = sizeof(sigreturn_rax) - 2, ne = sizeof(sigreturn_eax) - 2;

	if (k >= nr && !memcmp(b + k - nr, sigreturn_rax, sizeof(sigreturn_rax)))
		return (long)(k - nr);
	if (k >= ne && !memcmp(b + k - ne, sigreturn_eax, sizeof(sigreturn_eax)))
		return (long)(k - ne);
	return -1;
}

/* The first gadgets of each kind in @b.  Both end in a syscall
 * instruction, found with memchr() (a vector search) for its second
 * byte, not by a loop over every byte: a libc's text is megabytes, its
 * rt_sigreturn far into it, and the byte loop was 6% of a tiny
 * checkpoint's CPU. */
static void scan(const uint8_t *b, size_t len, uint64_t base,
		 struct guard_cache_entry *e)
{
	long ret = -1;

	for (const uint8_t *q = b + 1; (e->call_off < 0 || ret < 0) && q < b + len &&
	     (q = memchr(q, 0x05, len - (q - b))); q++) {
		const uint8_t *p = q - 1;
		size_t k = p - b;

		if (*p != 0x0f)
			continue;
		if (e->call_off < 0) {
			int adj = call_gadget_adj(p, len - k);

			if (adj >= 0) {
				e->call_off = base + k;
				e->call_adj = adj;
			}
		}
		if (ret < 0)
			ret = ret_gadget_at(b, k);
	}
	if (e->ret_off < 0 && ret >= 0)
		e->ret_off = base + ret;
}

/* Search one executable mapping, in overlapping chunks. */
static void scan_vma(int memfd, const struct vma *v, uint8_t *buf,
		     struct guard_cache_entry *e)
{
	uint64_t len = v->end - v->start;

	if (len > MAX_SCAN)
		len = MAX_SCAN;
	for (uint64_t off = 0; off < len; off += CHUNK - 32) {
		size_t n = len - off < CHUNK ? len - off : CHUNK;
		ssize_t got = pread(memfd, buf, n, v->start + off);

		if (got <= 0)
			return;
		scan(buf, got, off, e);
		if ((e->call_off >= 0 && e->ret_off >= 0) || (size_t)got < n)
			return;
	}
}

static struct guard_cache_entry *cached(struct arch_cpt_cache *c,
					const struct vma *v)
{
	for (int i = 0; i < c->n; i++)
		if (c->e[i].ino == v->ino && c->e[i].pgoff == v->pgoff &&
		    c->e[i].dev_major == v->dev_major &&
		    c->e[i].dev_minor == v->dev_minor)
			return &c->e[i];
	return NULL;
}

/* The gadgets of one mapping, into *@out: searched, or as found before
 * in the same file.  A file's result is kept; the vdso's is not. */
static int lookup(int memfd, const struct vma *v, struct arch_cpt_cache *c,
		  uint8_t *buf, struct guard_cache_entry *out)
{
	struct guard_cache_entry *e;
	bool file = v->ino && v->path[0] == '/';

	if (file && (e = cached(c, v))) {
		*out = *e;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->call_off = out->ret_off = -1;
	out->dev_major = v->dev_major;
	out->dev_minor = v->dev_minor;
	out->ino = v->ino;
	out->pgoff = v->pgoff;
	scan_vma(memfd, v, buf, out);
	if (!file)
		return 0;
	e = VEC_PUSH(c->e, c->n, c->cap);
	if (!e)
		return -ENOMEM;
	*e = *out;
	return 0;
}

int guard_find(int memfd, const struct vma_list *maps, struct arch_cpt_cache *cache,
	       struct guard_gadgets *g)
{
	uint8_t *buf = malloc(CHUNK);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	/* The vdso first: every task has it, and it is small.  Then code
	 * mapped from files, never written: not JIT code, which may change
	 * under a gadget. */
	for (int pass = 0; pass < 2 && !ret && !(g->call_ip && g->ret_ip); pass++) {
		for (int i = 0; i < maps->n && !(g->call_ip && g->ret_ip); i++) {
			const struct vma *v = &maps->v[i];
			bool vdso = !strcmp(v->path, "[vdso]");
			struct guard_cache_entry e;

			if (v->perms[2] != 'x' || v->perms[1] == 'w' || (pass == 0) != vdso ||
			    (!vdso && (!v->ino || v->path[0] != '/')))
				continue;
			ret = lookup(memfd, v, cache, buf, &e);
			if (ret)
				break;
			if (!g->call_ip && e.call_off >= 0) {
				g->call_ip = v->start + e.call_off;
				g->call_adj = e.call_adj;
			}
			if (!g->ret_ip && e.ret_off >= 0)
				g->ret_ip = v->start + e.ret_off;
		}
	}
	free(buf);
	if (ret)
		return ret;
	return g->call_ip && g->ret_ip ? 0 : -ENOENT;
}

void arch_cpt_cache_free(struct arch_cpt_cache *cache)
{
	free(cache->e);
	*cache = (struct arch_cpt_cache){ 0 };
}

/* What the kernel itself does to a task that leaves a system call with
 * no signal to handle: a call asking to be restarted is set up again.
 * The frame must hold that, since rt_sigreturn turns restarting off.
 * A call restarted through its restart block (a relative sleep, poll or
 * futex wait with a timeout) cannot be: rt_sigreturn makes that one
 * return EINTR.  It is run again from the start instead, with its own
 * arguments, still in its registers: the wait starts over in full, later
 * than it would have ended, but it does not fail. */
void guard_restart_fixup(const struct user_regs_struct *r, uint64_t *ip, uint64_t *ax)
{
	bool compat = r->cs != USER64_CS;
	long rax = compat ? (int32_t)r->rax : (long)r->rax;
	long restart_nr = compat ? NR32_RESTART_SYSCALL : NR_RESTART_SYSCALL;

	if ((long)r->orig_rax < 0)
		return;
	switch (rax) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
		*ax = r->orig_rax;
		*ip -= 2;
		break;
	case -ERESTART_RESTARTBLOCK:
		/* in restart_syscall itself its arguments are gone: EINTR */
		*ax = (long)r->orig_rax == restart_nr ? (uint64_t)restart_nr
						      : r->orig_rax;
		*ip -= 2;
		break;
	}
}

static void fill_context(struct k_sigcontext *mc, const struct user_regs_struct *r)
{
	mc->r8 = r->r8;
	mc->r9 = r->r9;
	mc->r10 = r->r10;
	mc->r11 = r->r11;
	mc->r12 = r->r12;
	mc->r13 = r->r13;
	mc->r14 = r->r14;
	mc->r15 = r->r15;
	mc->rdi = r->rdi;
	mc->rsi = r->rsi;
	mc->rbp = r->rbp;
	mc->rbx = r->rbx;
	mc->rdx = r->rdx;
	mc->rax = r->rax;
	mc->rcx = r->rcx;
	mc->rsp = r->rsp;
	mc->rip = r->rip;
	mc->eflags = r->eflags;
	mc->cs = r->cs;
	mc->gs = r->gs;
	mc->fs = r->fs;
	mc->ss = r->ss;
	guard_restart_fixup(r, &mc->rip, &mc->rax);
}

/* The size of the XSAVE image holding every component set in its
 * header's xstate_bv, in the standard (uncompacted) layout. */
static uint32_t xstate_used_size(const uint8_t *x, uint32_t len)
{
	uint64_t bv;
	uint32_t size = 576;

	memcpy(&bv, x + 512, sizeof(bv));
	for (int i = 2; i < 63; i++) {
		uint32_t off, sz;

		if (!(bv & (1ULL << i)) || cpu_xstate_component(i, &off, &sz))
			continue;
		if (off + sz > size)
			size = off + sz;
	}
	return size <= len ? size : 0;
}

/* The FPU state in the form a signal frame carries it: the XSAVE image
 * with the software bytes that say which components it holds, and the
 * second magic after it. */
int guard_fpstate(struct remote *r, uint8_t *x, uint32_t *size)
{
	struct iovec iov = { x, XSTATE_MAX };
	uint32_t magic2 = FP_XSTATE_MAGIC2, used, ext;
	uint64_t bv;

	if (ptrace(PTRACE_GETREGSET, r->pid, NT_X86_XSTATE, &iov))
		return log_err(r->log, errno, "tid %d: reading xstate:", r->pid);
	used = iov.iov_len >= 576 ? xstate_used_size(x, iov.iov_len) : 0;
	if (!used)
		return log_err(r->log, EIO, "tid %d: xstate of %zu bytes", r->pid,
			       iov.iov_len);
	memcpy(&bv, x + 512, sizeof(bv));
	bv |= 3;	/* x87 and SSE are always restored */
	ext = used + sizeof(magic2);
	memset(x + 464, 0, 48);
	memcpy(x + 464, &(uint32_t){ FP_XSTATE_MAGIC1 }, 4);
	memcpy(x + 468, &ext, 4);
	memcpy(x + 472, &bv, 8);
	memcpy(x + 480, &used, 4);
	memcpy(x + used, &magic2, sizeof(magic2));
	*size = ext;
	return 0;
}

int guard_arm(struct remote *r, const struct guard_gadgets *g,
	      uint64_t stack_lo, uint64_t *lowest)
{
	struct k_rt_sigframe f;
	struct user_regs_struct park = r->regs;
	uint64_t fp, at;
	uint32_t fpsize = 0;
	uint8_t *x = calloc(1, XSTATE_MAX + 64);
	int ret;

	if (!x)
		return log_err(r->log, ENOMEM, "xstate buffer:");
	ret = guard_fpstate(r, x, &fpsize);
	if (ret)
		goto out;
	/* laid out as the kernel lays out a signal frame */
	fp = (r->regs.rsp - RED_ZONE - fpsize) & ~63ULL;
	at = ((fp - sizeof(f) + 8) & ~15ULL) - 8;
	if (r->regs.rsp > (1ULL << 47) || at < stack_lo + 4096 + g->call_adj) {
		ret = -ENOSPC;
		goto out;
	}
	memset(&f, 0, sizeof(f));
	f.pretcode = g->ret_ip;	/* where the call gadget's ret goes */
	f.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	/* not a valid mode: rt_sigreturn leaves the altstack as it is */
	f.ss_flags = 3;
	fill_context(&f.mc, &r->regs);
	f.mc.fpstate = fp;
	f.sigmask = r->sigmask;
	ret = remote_write(r, fp, x, fpsize);
	if (!ret)
		ret = remote_write(r, at, &f, sizeof(f));
	if (ret)
		goto out;
	park.rip = g->ret_ip;
	park.rsp = at + 8;
	park.rax = NR_RT_SIGRETURN;
	park.orig_rax = -1;
	park.cs = USER64_CS;
	park.ss = USER_DS;
	/* From here on, a ckpt that dies leaves the task to rt_sigreturn
	 * through the frame: the registers first, then the mask. */
	if (ptrace(PTRACE_SETREGS, r->pid, 0, &park)) {
		ret = log_err(r->log, errno, "PTRACE_SETREGS %d:", r->pid);
		goto out;
	}
	r->guarded = true;
	r->call_ip = g->call_ip;
	r->call32_ip = 0;
	r->call_sp = at - g->call_adj;
	r->ret_ip = g->ret_ip;
	r->park = park;
	ret = remote_block(r);
	*lowest = at - g->call_adj;
out:
	free(x);
	return ret;
}
