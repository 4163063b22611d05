/* regs.c - registers (REGS) and FPU/SSE/AVX state (XSTATE), of 64-bit
 * and 32-bit tasks alike (ptrace gives both in the 64-bit layout).
 *
 * Registers are saved as the task was found.  At restart they are put
 * back while the task is parked inside signal delivery, so the kernel
 * applies its own syscall-restart logic to them, as it would have for
 * the original.  The one case it cannot handle is -ERESTART_RESTARTBLOCK:
 * the restart block lives in the kernel and died with the process, so
 * that call is re-armed here (a relative nanosleep with its remaining
 * time, anything else from the start).
 *
 * A thread's XSTATE (2.4 KiB here, with AVX-512) is checked when the
 * image is read, and read again from the image only when its thread's
 * registers are set: a process of 10,000 threads kept 24 MiB of them in
 * ckpt's memory from the start of its restart to the end.  The second
 * read must find the bytes the first checked (their CRC32C, and the
 * checks again): an image changed in between fails the restart.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "../../kinds.h"
#include "compat.h"
#include "cpu.h"

#define USER_CS			0x33
#define USER_DS			0x2b
/* eflags bits a user task may show: CF PF AF ZF SF TF DF OF NT RF AC ID,
 * plus the always-one bit 1 and IF (always set in user mode); never IOPL,
 * VM, VIF or VIP */
#define EFLAGS_USER		0x254fd7ULL
#define EFLAGS_ON		0x202ULL	/* IF and bit 1: always set */

struct regs_state {
	bool have_regs, have_xstate;
	struct user_regs_struct regs;
	uint64_t xstate_off;	/* its payload in the image */
	uint32_t xstate_len, xstate_crc;
};

static int regs_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			    struct cpt_thread *th)
{
	struct rec_regs rr;
	struct iovec iov;
	void *buf;
	int ret;

	_Static_assert(sizeof(rr) == sizeof(struct user_regs_struct), "regs");
	if ((th->rm->regs.ds | th->rm->regs.es | th->rm->regs.fs |
	     th->rm->regs.gs) & 4)
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: tid %d has a segment of its own LDT (modify_ldt): not supported",
			       t->pid, th->tid);
	memcpy(&rr, &th->rm->regs, sizeof(rr));
	ret = iw_record(&c->w, REC_REGS, &rr, sizeof(rr));
	if (ret)
		return ret;
	buf = calloc(1, XSTATE_MAX);
	if (!buf)
		return log_err(c->log, ENOMEM, "xstate buffer:");
	iov.iov_base = buf;
	iov.iov_len = XSTATE_MAX;
	if (ptrace(PTRACE_GETREGSET, th->tid, NT_X86_XSTATE, &iov))
		ret = log_err(c->log, errno, "tid %d: reading xstate:", th->tid);
	else
		ret = iw_record(&c->w, REC_XSTATE, buf, iov.iov_len);
	free(buf);
	return ret;
}

/* The seed's checks: user code and data segments of the task's kind,
 * data selectors naming those or a TLS entry, no system eflags. */
static int check_regs(struct rst_ctx *c, const struct user_regs_struct *r,
		      bool ia32)
{
	uint64_t limit = ia32 ? IA32_LIMIT : CPU_TASK_SIZE;

	if (r->cs != (ia32 ? IA32_CS : USER_CS) || r->ss != USER_DS)
		return log_err(c->log, EBADMSG,
			       "REGS: cs 0x%llx ss 0x%llx are not %s user segments",
			       r->cs, r->ss, ia32 ? "32-bit" : "64-bit");
	if (!ia32_selector_ok(r->ds) || !ia32_selector_ok(r->es) ||
	    !ia32_selector_ok(r->fs) || !ia32_selector_ok(r->gs))
		return log_err(c->log, EBADMSG,
			       "REGS: segment selector not a user or TLS one (ds 0x%llx es 0x%llx fs 0x%llx gs 0x%llx)",
			       r->ds, r->es, r->fs, r->gs);
	if (r->eflags & ~EFLAGS_USER || (r->eflags & EFLAGS_ON) != EFLAGS_ON)
		return log_err(c->log, EBADMSG,
			       "REGS: eflags 0x%llx: system bits set, or IF or bit 1 clear",
			       r->eflags);
	if (r->fs_base >= limit || r->gs_base >= limit || r->rip >= limit)
		return log_err(c->log, EBADMSG, "REGS: address beyond user space");
	return 0;
}

static int check_xstate_len(struct rst_ctx *c, size_t len)
{
	if (len < 576 || len > XSTATE_MAX || len != c->head.xstate_size)
		return log_err(c->log, EBADMSG, "XSTATE: %zu bytes, image head says %u",
			       len, c->head.xstate_size);
	return 0;
}

static int check_xstate(struct rst_ctx *c, const uint8_t *x, size_t len)
{
	uint64_t bv, comp, rsv[6];
	int ret = check_xstate_len(c, len);

	if (ret)
		return ret;
	memcpy(&bv, x + 512, 8);
	memcpy(&comp, x + 520, 8);
	memcpy(rsv, x + 528, sizeof(rsv));
	if (comp || rsv[0] || rsv[1] || rsv[2] || rsv[3] || rsv[4] || rsv[5])
		return log_err(c->log, EBADMSG, "XSTATE: bad xsave header");
	if (bv & ~c->head.xfeatures)
		return log_err(c->log, EBADMSG,
			       "XSTATE: features 0x%llx beyond the image's 0x%llx",
			       (unsigned long long)bv,
			       (unsigned long long)c->head.xfeatures);
	return 0;
}

/* A thread's XSTATE read again from the image and checked as at first,
 * into *@out (xstate_len bytes, the caller's to free). */
static int xstate_again(struct rst_ctx *c, const struct regs_state *s, uint8_t **out)
{
	uint8_t *x = malloc(s->xstate_len);
	int ret = x ? rec_read_again(c->img_fd, REC_XSTATE, s->xstate_off, s->xstate_len,
				     s->xstate_crc, x, c->log) :
		  log_err(c->log, ENOMEM, "xstate buffer:");

	if (!ret)
		ret = check_xstate(c, x, s->xstate_len);
	if (ret) {
		free(x);
		x = NULL;
	}
	*out = x;
	return ret;
}

static int regs_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct regs_state *s = kind_thread_state(t, &kind_regs, sizeof(*s));
	uint8_t *x = NULL;
	int ret;

	if (!s)
		return log_err(c->log, EBADMSG, "%s record before any THREAD",
			       rec_type_name(r->type));
	if (r->type == REC_REGS) {
		if (r->data_len != sizeof(s->regs) || s->have_regs)
			return log_err(c->log, EBADMSG, "bad or repeated REGS record");
		memcpy(&s->regs, r->data, sizeof(s->regs));
		ret = check_regs(c, &s->regs, task_ia32(t));
		s->have_regs = !ret;
		return ret;
	}
	if (s->have_xstate)
		return log_err(c->log, EBADMSG, "repeated XSTATE record");
	ret = check_xstate_len(c, r->len);	/* before it is read again */
	if (ret)
		return ret;
	s->xstate_off = r->off;
	s->xstate_len = r->len;
	s->xstate_crc = r->crc;
	/* a lean reader (restart's) did not keep it */
	ret = r->data ? check_xstate(c, r->data, r->len) : xstate_again(c, s, &x);
	free(x);
	s->have_xstate = !ret;
	return ret;
}

static int regs_check(struct rst_ctx *c, struct rst_task *t)
{
	for (int i = 0; i < t->nr_threads; i++) {
		struct regs_state *s = KTSTATE(&t->threads[i], kind_regs);

		if (!s || !s->have_regs || !s->have_xstate)
			return log_err(c->log, EBADMSG, "tid %d: image lacks REGS or XSTATE",
				       t->threads[i].tid);
	}
	return 0;
}

/* The same for a 32-bit task: its call numbers, arguments in ebx, ecx,
 * edx, esi; the sleeps write what is left to rem as well. */
static void rearm_restartblock32(struct user_regs_struct *r)
{
	if (r->orig_rax == NR32_nanosleep && r->rcx)
		r->rbx = r->rcx;
	else if ((r->orig_rax == NR32_clock_nanosleep ||
		  r->orig_rax == NR32_clock_nanosleep_time64) && r->rsi &&
		 !(r->rcx & 1 /* TIMER_ABSTIME */))
		r->rdx = r->rsi;
	r->rax = -ERESTARTNOHAND;
}

/* The kernel's restart block died with the original process. */
static void rearm_restartblock(struct user_regs_struct *r, bool ia32)
{
	if ((long)r->orig_rax < 0 || (long)r->rax != -ERESTART_RESTARTBLOCK)
		return;
	if (ia32) {
		rearm_restartblock32(r);
		return;
	}
	if (r->orig_rax == SYS_nanosleep && r->rsi)
		r->rdi = r->rsi;	/* sleep what was left: rem */
	else if (r->orig_rax == SYS_clock_nanosleep && r->r10 &&
		 !(r->rsi & 1 /* TIMER_ABSTIME */))
		r->rdx = r->r10;
	/* same treatment as -ERESTART_RESTARTBLOCK: a handler gets EINTR */
	r->rax = -ERESTARTNOHAND;
}

static int regs_restore_thread(struct rst_ctx *c, struct rst_task *t,
			       struct rst_thread *th)
{
	struct regs_state *s = KTSTATE(th, kind_regs);
	uint8_t *x;
	int ret = xstate_again(c, s, &x);
	struct iovec iov = { x, s->xstate_len };

	if (!ret && ptrace(PTRACE_SETREGSET, th->tid, NT_X86_XSTATE, &iov))
		ret = log_err(c->log, errno, "tid %d: setting xstate:", th->tid);
	free(x);
	if (ret)
		return ret;
	th->rm->regs = s->regs;
	rearm_restartblock(&th->rm->regs, task_ia32(t));
	return 0;
}

static void regs_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_REGS) {
		const struct user_regs_struct *g = r->data;

		info_hex(o, "rip", g->rip);
		info_hex(o, "rsp", g->rsp);
		info_hex(o, "rax", g->rax);
		info_hex(o, "orig_rax", g->orig_rax);
		info_hex(o, "fs_base", g->fs_base);
		info_hex(o, "gs_base", g->gs_base);
	} else {
		uint64_t bv = 0;

		if (r->data_len >= 520)
			memcpy(&bv, (const char *)r->data + 512, 8);
		info_u64(o, "bytes", r->data_len);
		info_hex(o, "xstate_bv", bv);
	}
}

static const struct rec_desc regs_recs[] = {
	{ REC_REGS, "REGS", sizeof(struct rec_regs) },
	{ REC_XSTATE, "XSTATE", 0 },
	{ 0 }
};

const struct kind_ops kind_regs = {
	.name = "regs",
	.recs = regs_recs,
	.reread = REC_XSTATE,
	.phase = PHASE_LAST,
	.dump_thread = regs_dump_thread,
	.load = regs_load,
	.check = regs_check,
	.restore_thread = regs_restore_thread,
	.show = regs_show,
};
