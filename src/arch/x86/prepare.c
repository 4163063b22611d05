/* prepare.c - a checkpointed task made ready for remote calls:
 * a syscall instruction found in its code, and every thread guarded
 * (guard.h) before anything of it is changed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../ctx.h"
#include "../arch.h"
#include "compat.h"
#include "guard.h"
#include "../guard_threads.h"

/* A syscall instruction in the task's own code: the vdso has some (a
 * 32-bit vdso too, in its alternatives); and for 32-bit calls the
 * int $0x80 of a 32-bit vdso. */
int arch_find_syscall(struct cpt_task *t)
{
	uint8_t *buf = malloc(1 << 16);
	int ret = -ENOENT;

	if (!buf)
		return -ENOMEM;
	for (int pass = 0; pass < 2 && ret; pass++) {
		for (int i = 0; i < t->maps.n && ret; i++) {
			const struct vma *v = &t->maps.v[i];
			uint64_t len = v->end - v->start;

			if (v->perms[2] != 'x' || !strcmp(v->path, "[vsyscall]") ||
			    (pass == 0) != !strcmp(v->path, "[vdso]"))
				continue;
			if (len > (1 << 16))
				len = 1 << 16;
			if (pread(t->rm.memfd, buf, len, v->start) != (ssize_t)len)
				continue;
			for (uint64_t k = 0; pass == 0 && k + 1 < len && !t->rm.sc32_ip; k++)
				if (buf[k] == 0xcd && buf[k + 1] == 0x80)
					t->rm.sc32_ip = v->start + k;
			for (uint64_t k = 0; k + 1 < len; k++)
				if (buf[k] == 0x0f && buf[k + 1] == 0x05) {
					t->rm.sc_ip = v->start + k;
					ret = 0;
					break;
				}
		}
	}
	free(buf);
	return ret;
}

struct gadgets {
	bool ia32;
	struct guard_gadgets g;
	struct guard32_gadgets g32;
};

/* A 32-bit thread in seccomp's strict mode may not unmap its page or
 * make the compat rt_sigreturn: it is held unguarded. */
static int arm(struct cpt_ctx *c, struct remote *rm, const void *arg,
	       uint64_t stack_lo, uint64_t *low)
{
	const struct gadgets *g = arg;

	if (!g->ia32)
		return guard_arm(rm, &g->g, stack_lo, low);
	/* seccomp's hold read the mode already (rm->seccomp) */
	if (rm->seccomp && rm->seccomp->mode == SECCOMP_MODE_STRICT) {
		log_info(c->log, "tid %d: 32-bit, in seccomp strict mode: unguarded", rm->pid);
		return -EPERM;
	}
	return guard32_arm(rm, &g->g32, stack_lo, low);
}

/* The order the gadget search goes through the code: the vdso, then
 * libc (whose signal return code has the sigreturn gadget), then the
 * smallest first.  Searching in address order read and scanned all of a
 * JVM's 13 MB libjvm.so before libc: 30 ms. */
static int code_rank(const struct vma *v)
{
	const char *base = strrchr(v->path, '/');

	if (!strcmp(v->path, "[vdso]"))
		return 0;
	return base && !strncmp(base, "/libc.so", 8) ? 1 : 2;
}

static int code_order(const void *a, const void *b)
{
	const struct vma *x = a, *y = b;
	int rx = code_rank(x), ry = code_rank(y);

	if (rx != ry)
		return rx - ry;
	if (x->end - x->start != y->end - y->start)
		return x->end - x->start > y->end - y->start ? 1 : -1;
	return (x->start > y->start) - (x->start < y->start);
}

/* The search reads each area it is given whole (in 1 MiB reads): it is
 * given pieces of GADGET_PIECE bytes, overlapping by what a gadget
 * spans, so that it reads about as far as the gadget it finds (libc's
 * sigreturn code is 90 KB in: the first 1 MiB read was 0.4 ms of a
 * tiny checkpoint).  No more of an area than the search itself would
 * scan (64 MiB). */
#define GADGET_PIECE	(64 << 10)
#define GADGET_OVERLAP	32
#define GADGET_MAX_SCAN	(64ULL << 20)

static int add_pieces(const struct vma *v, struct vma_list *out, int *cap)
{
	uint64_t end = v->end - v->start > GADGET_MAX_SCAN ? v->start + GADGET_MAX_SCAN : v->end;

	for (uint64_t at = v->start; at < end; at += GADGET_PIECE - GADGET_OVERLAP) {
		struct vma *p;

		if (out->n == *cap) {
			int ncap = *cap ? *cap * 2 : 64;

			p = realloc(out->v, ncap * sizeof(*out->v));
			if (!p)
				return -ENOMEM;
			out->v = p;
			*cap = ncap;
		}
		p = &out->v[out->n++];
		*p = *v;
		p->start = at;
		p->end = end - at > GADGET_PIECE ? at + GADGET_PIECE : end;
		p->pgoff = v->pgoff + (at - v->start);
		if (p->end == end)
			break;
	}
	return 0;
}

/* The areas the 64-bit gadget search may use, in pieces, in
 * code_order(): their paths still @maps' (only v[] is to be freed). */
static int code_areas(const struct vma_list *maps, struct vma_list *out)
{
	int cap = 0, ret = 0;

	*out = (struct vma_list){ 0 };
	for (int i = 0; i < maps->n && !ret; i++)
		if (maps->v[i].perms[2] == 'x' && maps->v[i].perms[1] != 'w')
			ret = add_pieces(&maps->v[i], out, &cap);
	if (ret) {
		free(out->v);
		return ret;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), code_order);
	return 0;
}

static int find_gadgets(struct cpt_ctx *c, struct cpt_task *t, struct guard_gadgets *g)
{
	struct vma_list code;
	int ret = code_areas(&t->maps, &code);

	if (ret)
		return ret;
	ret = guard_find(t->rm.memfd, &code, &c->guard, g);
	free(code.v);
	return ret;
}

/* Before anything of the task is changed: every thread gets its guard
 * frame (a ckpt that dies from here on leaves it as it was) and has its
 * signals blocked; the signals we caught in delivery go back to the
 * kernel. */
int arch_guard_task(struct cpt_ctx *c, struct cpt_task *t, uint64_t *lowest)
{
	struct gadgets g = { .ia32 = cpt_ia32(t) };
	int ret = g.ia32 ? guard32_find(t->rm.memfd, &t->maps, &g.g32) :
		  find_gadgets(c, t, &g.g);

	*lowest = 0;
	if (ret == -ENOMEM)
		return log_err(c->log, ENOMEM, "pid %d: finding gadgets:", t->pid);
	if (ret)
		log_info(c->log, "pid %d: unguarded (no %s): a ckpt killed now could harm it",
			 t->pid, g.ia32 ? "32-bit vdso gadgets" : "syscall/sigreturn gadgets");
	return guard_threads(c, t, ret, arm, &g, lowest);
}

int arch_unguard(struct remote *rm)
{
	return arch_runner_unmap(rm) ?: guard32_unpage(rm);
}
