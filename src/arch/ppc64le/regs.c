/* regs.c - ppc64le registers (PPC_REGS), floating-point (PPC_FPREGS),
 * AltiVec (PPC_VMX) and VSX (PPC_VSX) state, through PTRACE_GETREGSET.
 *
 * As on x86 (src/arch/x86/regs.c), registers are put back while the task
 * is parked inside signal delivery, trap and all, so that the kernel
 * restarts the call it was in as it would have.  A call restarted
 * through its restart block cannot be (the block died with the
 * process): it is restarted from the start instead.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "../../kinds.h"
#include "../arch.h"

#ifndef NT_PPC_VMX
#define NT_PPC_VMX		0x100
#define NT_PPC_VSX		0x102
#endif
#define TRAP_SYSCALL		0xc00	/* sc: an error is positive, with CR0[SO] */
#define TRAP_SCV		0x3000	/* scv 0 (glibc's on POWER9+): an error is negative */
#define CR0_SO			0x10000000ULL
#define MSR_PR			(1ULL << 14)	/* problem state */

struct regs_state {
	bool have[4];
	struct rec_ppc_regs regs;
	struct rec_ppc_fpregs fp;
	struct rec_ppc_vmx vmx;
	struct rec_ppc_vsx vsx;
};

static const struct {
	int rec, note;
	size_t len;
	bool optional;		/* a CPU without it: no record */
} sets[4] = {
	{ REC_PPC_REGS, NT_PRSTATUS, sizeof(struct rec_ppc_regs), false },
	{ REC_PPC_FPREGS, NT_PRFPREG, sizeof(struct rec_ppc_fpregs), false },
	{ REC_PPC_VMX, NT_PPC_VMX, sizeof(struct rec_ppc_vmx), true },
	{ REC_PPC_VSX, NT_PPC_VSX, sizeof(struct rec_ppc_vsx), true },
};

static void *slot(struct regs_state *s, int i)
{
	void *p[4] = { &s->regs, &s->fp, &s->vmx, &s->vsx };

	return p[i];
}

static int regs_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			    struct cpt_thread *th)
{
	struct regs_state s;
	int ret = 0;

	_Static_assert(sizeof(s.regs) == sizeof(th->rm->regs), "ppc regs");
	memcpy(&s.regs, &th->rm->regs, sizeof(s.regs));
	ret = iw_record(&c->w, REC_PPC_REGS, &s.regs, sizeof(s.regs));
	for (int i = 1; i < 4 && !ret; i++) {
		struct iovec iov = { slot(&s, i), sets[i].len };

		if (ptrace(PTRACE_GETREGSET, th->tid, sets[i].note, &iov)) {
			if ((errno == ENODEV || errno == EINVAL) && sets[i].optional)
				continue;
			return log_err(c->log, errno, "tid %d: reading %s:", th->tid,
				       rec_type_name(sets[i].rec));
		}
		if (iov.iov_len != sets[i].len)
			return log_err(c->log, EIO, "tid %d: %s is %zu bytes, not %zu", th->tid,
				       rec_type_name(sets[i].rec), iov.iov_len, sets[i].len);
		ret = iw_record(&c->w, sets[i].rec, slot(&s, i), sets[i].len);
	}
	return ret;
}

static int regs_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct regs_state *s = kind_thread_state(t, &kind_regs, sizeof(*s));
	int i = 0;

	if (!s)
		return log_err(c->log, EBADMSG, "%s record before any THREAD",
			       rec_type_name(r->type));
	while (i < 4 && sets[i].rec != (int)r->type)
		i++;
	if (i == 4 || r->data_len != sets[i].len || s->have[i])
		return log_err(c->log, EBADMSG, "bad or repeated %s record",
			       rec_type_name(r->type));
	memcpy(slot(s, i), r->data, sets[i].len);
	s->have[i] = true;
	if (i == 0 && (!(s->regs.r[33] & MSR_PR) || s->regs.r[32] >= ARCH_TASK_SIZE))
		return log_err(c->log, EBADMSG, "PPC_REGS: not a user MSR and NIP (0x%llx 0x%llx)",
			       (unsigned long long)s->regs.r[33],
			       (unsigned long long)s->regs.r[32]);
	return 0;
}

static int regs_check(struct rst_ctx *c, struct rst_task *t)
{
	for (int i = 0; i < t->nr_threads; i++) {
		struct regs_state *s = KTSTATE(&t->threads[i], kind_regs);

		if (!s || !s->have[0] || !s->have[1])
			return log_err(c->log, EBADMSG, "tid %d: image lacks PPC_REGS or PPC_FPREGS",
				       t->threads[i].tid);
	}
	return 0;
}

static int regs_restore_thread(struct rst_ctx *c, struct rst_task *t,
			       struct rst_thread *th)
{
	struct regs_state *s = KTSTATE(th, kind_regs);
	arch_regs_t *g = &th->rm->regs;

	for (int i = 1; i < 4; i++) {
		struct iovec iov = { slot(s, i), sets[i].len };

		if (s->have[i] && ptrace(PTRACE_SETREGSET, th->tid, sets[i].note, &iov))
			return log_err(c->log, errno, "tid %d: setting %s:", th->tid,
				       rec_type_name(sets[i].rec));
	}
	memcpy(g, &s->regs, sizeof(*g));
	/* the kernel's restart block died with the original process: the
	 * puppet's would answer EINTR */
	if ((g->trap & 0xfff0) == TRAP_SYSCALL && (g->ccr & CR0_SO) &&
	    g->gpr[3] == ERESTART_RESTARTBLOCK)
		g->gpr[3] = ERESTARTNOHAND;
	if ((g->trap & 0xfff0) == TRAP_SCV && g->gpr[3] == (uint64_t)-ERESTART_RESTARTBLOCK)
		g->gpr[3] = (uint64_t)-ERESTARTNOHAND;
	return 0;
}

static void regs_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_PPC_REGS) {
		const struct rec_ppc_regs *g = r->data;

		info_hex(o, "nip", g->r[32]);
		info_hex(o, "msr", g->r[33]);
		info_hex(o, "r1", g->r[1]);
		info_hex(o, "r3", g->r[3]);
		info_hex(o, "trap", g->r[40]);
	} else {
		info_u64(o, "bytes", r->data_len);
	}
}

static const struct rec_desc regs_recs[] = {
	{ REC_PPC_REGS, "PPC_REGS", sizeof(struct rec_ppc_regs) },
	{ REC_PPC_FPREGS, "PPC_FPREGS", sizeof(struct rec_ppc_fpregs) },
	{ REC_PPC_VMX, "PPC_VMX", sizeof(struct rec_ppc_vmx) },
	{ REC_PPC_VSX, "PPC_VSX", sizeof(struct rec_ppc_vsx) },
	{ 0 }
};

const struct kind_ops kind_regs = {
	.name = "regs",
	.recs = regs_recs,
	.phase = PHASE_LAST,
	.dump_thread = regs_dump_thread,
	.load = regs_load,
	.check = regs_check,
	.restore_thread = regs_restore_thread,
	.show = regs_show,
};
