/* runner.c - a checkpoint's calls in batches of one stop (see
 * arch_runner_map() in arch.h).
 *
 * A guarded task (guard.h) makes each of our calls at its own call
 * gadget, two ptrace stops a call: a tiny process's 62 sigactions were
 * 124 stops, a fifth of its checkpoint.  A runner is a loop over a
 * table of calls, and our code: it takes a page of its own, mapped into
 * the task for the checkpoint.  Its end must be a stop that harms
 * nothing if we are gone by then, and neither a SIGSTOP (the task would
 * stay stopped) nor a breakpoint (SIGTRAP kills it) is: it sends itself
 * a signal the process ignores (caught by none, not blocked by the
 * thread, not pending: runner.c chooses), which stops it
 * under ptrace and, with no tracer, is dropped by the kernel.
 *
 * The page's code, entered with rsp just above the guard's frame (where
 * the task waits at its park) and touching no stack:
 *   RUN   each entry of the table from r12 to r13 (nr, six arguments,
 *         result: 64 bytes) made, its result stored, up to the first
 *         that fails (its result also in rbx);
 *   STOP  rt_sigprocmask(SIG_SETMASK, every signal but r14's), then
 *         tkill(gettid(), r14): the stop, after either call (the signal
 *         may be pending already);
 *   EXIT  the frame's return address made the rt_sigreturn gadget
 *         again, and munmap(this page) run at the guard's call gadget,
 *         whose ret leads there: back where the task was, its mask its
 *         own, the page gone.
 * The frame's return address is EXIT while the page is mapped, and the
 * park is EXIT: however ckpt dies, the task's way back goes through
 * EXIT.  The one window: ckpt killed in the call that maps the page,
 * before that address is set, leaves the page (4 KiB, never used), as
 * guard32.c's page.  The page goes the same way when we are done
 * (arch_runner_unmap(): EXIT run as one call). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../testpoint.h"
#include "../arch.h"
#include "batch_loop.h"
#include "guard.h"

#define PAGE		4096
#define MASK_OFF	2048	/* the mask STOP sets, in the page */
#define NR_RT_SIGRETURN	15

/* RUN: the trampoline's loop (batch_loop.h); both ends go to STOP,
 * right after it */
static const uint8_t run_code[] = { BATCH_LOOP(BATCH_LOOP_LEN - 5, BATCH_LOOP_LEN - 54) };

/* STOP, right after RUN */
static const uint8_t stop_mask[] = {
	0x48, 0x89, 0xc3,		/* mov %rax,%rbx */
	0xb8, 0x0e, 0x00, 0x00, 0x00,	/* mov $14 (rt_sigprocmask),%eax */
	0xbf, 0x02, 0x00, 0x00, 0x00,	/* mov $2 (SIG_SETMASK),%edi */
	0x4c, 0x89, 0xfe,		/* mov %r15,%rsi */
	0x31, 0xd2,			/* xor %edx,%edx */
	0x41, 0xba, 0x08, 0x00, 0x00, 0x00, /* mov $8,%r10d */
	0x0f, 0x05,			/* syscall: a stop may follow */
};

static const uint8_t stop_kill[] = {
	0xb8, 0xba, 0x00, 0x00, 0x00,	/* mov $186 (gettid),%eax */
	0x0f, 0x05,			/* syscall */
	0x89, 0xc7,			/* mov %eax,%edi */
	0x44, 0x89, 0xf6,		/* mov %r14d,%esi */
	0xb8, 0xc8, 0x00, 0x00, 0x00,	/* mov $200 (tkill),%eax */
	0x0f, 0x05,			/* syscall: the stop */
};

_Static_assert(sizeof(run_code) == BATCH_LOOP_LEN, "STOP follows RUN");

struct emit {
	uint8_t *b;
	size_t n;
};

static void put(struct emit *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

static void put_u64(struct emit *e, const uint8_t op[2], uint64_t v)
{
	put(e, op, 2);
	put(e, &v, 8);
}

static void put_op_u32(struct emit *e, const uint8_t *op, size_t n, uint32_t v)
{
	put(e, op, n);
	put(e, &v, 4);
}

/* EXIT: @at is the frame's return address slot (rsp - 8 there), @adj
 * what the call gadget pops before its ret. */
static void put_exit(struct emit *e, const struct remote *r, uint32_t adj)
{
	static const uint8_t movabs_rax[2] = { 0x48, 0xb8 };
	static const uint8_t movabs_rcx[2] = { 0x48, 0xb9 };
	static const uint8_t store[] = { 0x48, 0x89, 0x44, 0x24, 0xf8 }; /* mov %rax,-8(%rsp) */
	static const uint8_t sub_rsp[] = { 0x48, 0x81, 0xec };
	static const uint8_t lea_rdi[] = { 0x48, 0x8d, 0x3d };
	static const uint8_t mov_esi[] = { 0xbe };
	static const uint8_t mov_eax[] = { 0xb8 };
	static const uint8_t jmp_rcx[] = { 0xff, 0xe1 };

	put_u64(e, movabs_rax, r->ret_ip);
	put(e, store, sizeof(store));
	put_op_u32(e, sub_rsp, sizeof(sub_rsp), 8 + adj);
	/* (rip-relative: the page's start, from the end of this lea) */
	put_op_u32(e, lea_rdi, sizeof(lea_rdi), (uint32_t)-(int32_t)(e->n + 7));
	put_op_u32(e, mov_esi, 1, PAGE);
	put_op_u32(e, mov_eax, 1, SYS_munmap);
	put_u64(e, movabs_rcx, r->call_ip);
	put(e, jmp_rcx, sizeof(jmp_rcx));
}

/* The page's bytes for @r, into @b (MASK_OFF + 8); its offsets. */
static void build(const struct remote *r, uint8_t *b, int sig, uint32_t adj,
		  uint32_t *stop_a, uint32_t *stop_b)
{
	struct emit e = { b, 0 };
	uint64_t mask = ~(1ULL << (sig - 1));

	memset(b, 0xcc, MASK_OFF);
	put(&e, run_code, sizeof(run_code));
	put(&e, stop_mask, sizeof(stop_mask));
	*stop_a = e.n;
	put(&e, stop_kill, sizeof(stop_kill));
	*stop_b = e.n;
	put_exit(&e, r, adj);
	memcpy(b + MASK_OFF, &mask, sizeof(mask));
}

/* remote_poke(), its failure (an errno) not logged as the checkpoint's
 * error: it only means no page. */
static int poke_quiet(struct remote *r, uint64_t addr, const void *buf, size_t n)
{
	ssize_t k = pwrite(r->memfd, buf, n, (off_t)addr);

	return k == (ssize_t)n ? 0 : k < 0 ? errno : EIO;
}

/* No page after all: @page (0: none) unmapped again, said with @why. */
static int no_page(struct remote *r, long page, const char *why, int err)
{
	long res;
	int ret = page ? remote_call(r, &res, SYS_munmap, page, PAGE, 0, 0, 0, 0) : 0;

	log_info(r->log, "pid %d: no page for its calls in batches (%s: %s): one by one",
		 r->pid, why, strerror(err));
	return ret ? ret : 1;
}

int arch_runner_map(struct remote *r, int sig)
{
	uint8_t code[MASK_OFF + 8];
	uint64_t at = r->park.rsp - 8, exit_ip;
	uint32_t stop_a, stop_b;
	long page;
	int ret;

	/* a 64-bit guard, parked above its frame */
	if (!r->guarded || r->call32_ip || r->page || !r->call_ip ||
	    r->park.rip != r->ret_ip || at < r->call_sp || at - r->call_sp > 1024)
		return 1;
	/* A page the task may not have (SELinux's execmem, its address
	 * space's limits) or we may not write (proc_mem.force_override) is
	 * no failure: its calls go one by one as before. */
	ret = remote_call(r, &page, SYS_mmap, 0, PAGE, PROT_READ | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ret)
		return ret;
	if (page < 0 && page > -4096)
		return no_page(r, 0, "mmap", -page);
	test_point(r->log, "runner page mapped");
	build(r, code, sig, at - r->call_sp, &stop_a, &stop_b);
	exit_ip = page + stop_b;	/* EXIT follows the stop */
	ret = poke_quiet(r, page, code, sizeof(code));
	if (ret)
		return no_page(r, page, "writing it", ret);
	/* from here on its way back unmaps the page */
	ret = poke_quiet(r, at, &exit_ip, sizeof(exit_ip));
	if (ret)
		return no_page(r, page, "writing its frame", ret);
	test_point(r->log, "runner page armed");
	r->park.rip = exit_ip;
	r->runner = page;
	r->runner_sig = sig;
	r->runner_stop[0] = page + stop_a;
	r->runner_stop[1] = page + stop_b;
	r->runner_mask = page + MASK_OFF;
	return 0;
}

int arch_runner_unmap(struct remote *r)
{
	arch_regs_t regs;
	long res;
	int ret;

	if (!r->runner)
		return 0;
	regs = r->park;		/* at EXIT */
	regs.orig_rax = -1;
	test_point(r->log, "runner unmapping");
	ret = remote_call_regs(r, &regs, SYS_munmap, &res);
	if (!ret && res)
		ret = log_err(r->log, (int)-res, "pid %d: unmapping the page of its calls:",
			      r->pid);
	if (ret)
		return ret;
	/* EXIT put the rt_sigreturn gadget back as the frame's return */
	r->park.rip = r->ret_ip;
	r->runner = 0;
	return 0;
}
