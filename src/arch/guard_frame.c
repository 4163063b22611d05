/* guard_frame.c - every thread of a task guarded, for the ports whose
 * calls return through a register (ARCH_GUARD_FRAME: s390x, ppc64le;
 * guard_frame.h).  x86's is its prepare.c, with its 32-bit tasks. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../ctx.h"
#include "arch.h"

#if ARCH_GUARD_FRAME
#include "guard_frame.h"
#include "guard_threads.h"

#define SCAN_MAX	(4u << 20)	/* of one mapping */
#define CHUNK		(64u << 10)	/* read at a time */
#define OVERLAP		128		/* of two chunks: more than a gadget */

/* One executable mapping, in chunks that overlap by more than a call
 * gadget's length. */
static void scan_vma(int memfd, const struct vma *v, uint8_t *buf, struct guard_gadgets *g)
{
	uint64_t len = v->end - v->start;

	if (len > SCAN_MAX)
		len = SCAN_MAX;
	for (uint64_t off = 0; off < len && !(g->call_ip && g->ret_ip); off += CHUNK - OVERLAP) {
		size_t n = len - off < CHUNK ? len - off : CHUNK;
		ssize_t got = pread(memfd, buf, n, v->start + off);

		if (got <= 0)
			return;
		guard_scan(buf, got, v->start + off, g);
		if ((size_t)got < n)
			return;
	}
}

/* Both gadgets: the vdso first (every task has it, with its signal
 * trampoline), then code mapped from files, never written (not JIT
 * code, which may change under a gadget). */
static int guard_find(int memfd, const struct vma_list *maps, struct guard_gadgets *g)
{
	uint8_t *buf = malloc(CHUNK);

	if (!buf)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	for (int pass = 0; pass < 2 && !(g->call_ip && g->ret_ip); pass++)
		for (int i = 0; i < maps->n && !(g->call_ip && g->ret_ip); i++) {
			const struct vma *v = &maps->v[i];
			bool vdso = !strcmp(v->path, "[vdso]");

			if (v->perms[2] != 'x' || v->perms[1] == 'w' || (pass == 0) != vdso ||
			    (!vdso && (!v->ino || v->path[0] != '/')))
				continue;
			scan_vma(memfd, v, buf, g);
		}
	free(buf);
	return g->call_ip && g->ret_ip ? 0 : -ENOENT;
}

int guard_regset(pid_t tid, int type, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	if (ptrace(PTRACE_GETREGSET, tid, type, &iov))
		return -errno;
	return iov.iov_len == len ? 0 : -EIO;
}

int guard_park(struct remote *r, const struct guard_gadgets *g, const arch_regs_t *park,
	       uint64_t sp, uint64_t *lowest)
{
	/* From here on, a ckpt that dies leaves the thread to rt_sigreturn
	 * through the frame: the registers first, then the mask. */
	if (arch_set_regs(r->pid, park))
		return log_err(r->log, errno, "tid %d: setting registers:", r->pid);
	r->guarded = true;
	r->call_ip = g->call_ip;
	r->call32_ip = 0;
	r->call_sp = sp;
	r->ret_ip = g->ret_ip;
	r->park = *park;
	*lowest = sp;
	return remote_block(r);
}

static int arm(struct cpt_ctx *c, struct remote *rm, const void *g,
	       uint64_t stack_lo, uint64_t *low)
{
	(void)c;
	return guard_arm(rm, g, stack_lo, low);
}

/* Before anything of the task is changed: every thread gets its guard
 * frame and has its signals blocked; the signals we caught in delivery
 * go back to the kernel. */
int arch_guard_task(struct cpt_ctx *c, struct cpt_task *t, uint64_t *lowest)
{
	struct guard_gadgets g;
	int ret = guard_find(t->rm.memfd, &t->maps, &g);

	*lowest = 0;
	if (ret == -ENOMEM)
		return log_err(c->log, ENOMEM, "pid %d: finding gadgets:", t->pid);
	if (ret)
		log_info(c->log, "pid %d: unguarded (no call/rt_sigreturn gadgets): a ckpt killed now could harm it",
			 t->pid);
	else
		log_info(c->log, "pid %d: guarded: calls at 0x%llx, rt_sigreturn at 0x%llx",
			 t->pid, (unsigned long long)g.call_ip, (unsigned long long)g.ret_ip);
	return guard_threads(c, t, ret, arm, &g, lowest);
}

int arch_unguard(struct remote *rm)
{
	(void)rm;
	return 0;
}

/* (no runner: the calls go one by one) */
int arch_runner_map(struct remote *r, int sig)
{
	(void)r;
	(void)sig;
	return 1;
}

void arch_cpt_cache_free(struct arch_cpt_cache *cache)
{
	(void)cache;
}

#endif
