/* regs.c - s390x registers (S390_REGS), floating-point (S390_FPREGS) and
 * vector registers (S390_VXRS, where the CPU has them), through
 * PTRACE_GETREGSET.
 *
 * As on x86 (src/arch/x86/regs.c), registers are put back while the task
 * is parked inside signal delivery, with the system call it was in
 * (NT_S390_SYSTEM_CALL), so that the kernel restarts that call as it
 * would have.  A call restarted through its restart block cannot be (the
 * block died with the process): it is restarted from the start instead.
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

#ifndef NT_S390_VXRS_LOW
#define NT_S390_VXRS_LOW	0x309
#define NT_S390_VXRS_HIGH	0x30a
#endif
#define PSW_MASK_PSTATE		0x0001000000000000ULL	/* problem state */

struct regs_state {
	bool have_regs, have_fp, have_vx;
	struct rec_s390_regs regs;
	struct rec_s390_fpregs fp;
	struct rec_s390_vxrs vx;
};

static int getset(pid_t tid, bool set, int type, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	if (ptrace(set ? PTRACE_SETREGSET : PTRACE_GETREGSET, tid, type, &iov))
		return -errno;
	return !set && iov.iov_len != len ? -EIO : 0;
}

/* v0-v15's right halves and v16-v31: -ENODEV without the vector
 * facility. */
static int vxrs(pid_t tid, bool set, struct rec_s390_vxrs *vx)
{
	int ret = getset(tid, set, NT_S390_VXRS_LOW, vx->low, sizeof(vx->low));

	return ret ? ret : getset(tid, set, NT_S390_VXRS_HIGH, vx->high, sizeof(vx->high));
}

static int regs_dump_thread(struct cpt_ctx *c, struct cpt_task *t,
			    struct cpt_thread *th)
{
	const arch_regs_t *g = &th->rm->regs;
	struct rec_s390_regs rr = { 0 };
	struct rec_s390_fpregs fp = { 0 };
	struct rec_s390_vxrs vx;
	int ret;

	_Static_assert(sizeof(g->r) == offsetof(struct rec_s390_regs, system_call),
		       "s390 regs");
	memcpy(&rr, &g->r, sizeof(g->r));
	rr.system_call = g->system_call;
	ret = iw_record(&c->w, REC_S390_REGS, &rr, sizeof(rr));
	if (ret)
		return ret;
	ret = getset(th->tid, false, NT_PRFPREG, &fp, sizeof(fp));
	if (ret)
		return log_err(c->log, -ret, "tid %d: reading floating-point registers:",
			       th->tid);
	ret = iw_record(&c->w, REC_S390_FPREGS, &fp, sizeof(fp));
	if (ret)
		return ret;
	ret = vxrs(th->tid, false, &vx);
	if (ret == -ENODEV)
		return 0;
	if (ret)
		return log_err(c->log, -ret, "tid %d: reading vector registers:", th->tid);
	return iw_record(&c->w, REC_S390_VXRS, &vx, sizeof(vx));
}

static int regs_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct regs_state *s = kind_thread_state(t, &kind_regs, sizeof(*s));
	bool *have;
	void *to;
	size_t len;

	if (!s)
		return log_err(c->log, EBADMSG, "%s record before any THREAD",
			       rec_type_name(r->type));
	if (r->type == REC_S390_REGS)
		have = &s->have_regs, to = &s->regs, len = sizeof(s->regs);
	else if (r->type == REC_S390_FPREGS)
		have = &s->have_fp, to = &s->fp, len = sizeof(s->fp);
	else
		have = &s->have_vx, to = &s->vx, len = sizeof(s->vx);
	if (r->data_len != len || *have)
		return log_err(c->log, EBADMSG, "bad or repeated %s record",
			       rec_type_name(r->type));
	memcpy(to, r->data, len);
	*have = true;
	if (r->type == REC_S390_REGS &&
	    (s->regs.pad || !(s->regs.psw_mask & PSW_MASK_PSTATE) ||
	     s->regs.psw_addr >= ARCH_TASK_SIZE))
		return log_err(c->log, EBADMSG, "S390_REGS: not a user PSW (mask 0x%llx addr 0x%llx)",
			       (unsigned long long)s->regs.psw_mask,
			       (unsigned long long)s->regs.psw_addr);
	if (r->type == REC_S390_FPREGS && s->fp.pad)
		return log_err(c->log, EBADMSG, "S390_FPREGS: bad padding");
	return 0;
}

static int regs_check(struct rst_ctx *c, struct rst_task *t)
{
	for (int i = 0; i < t->nr_threads; i++) {
		struct regs_state *s = KTSTATE(&t->threads[i], kind_regs);

		if (!s || !s->have_regs || !s->have_fp)
			return log_err(c->log, EBADMSG, "tid %d: image lacks S390_REGS or S390_FPREGS",
				       t->threads[i].tid);
	}
	return 0;
}

static int regs_restore_thread(struct rst_ctx *c, struct rst_task *t,
			       struct rst_thread *th)
{
	struct regs_state *s = KTSTATE(th, kind_regs);
	arch_regs_t *g = &th->rm->regs;
	int ret = getset(th->tid, true, NT_PRFPREG, &s->fp, sizeof(s->fp));

	if (ret)
		return log_err(c->log, -ret, "tid %d: setting floating-point registers:", th->tid);
	if (s->have_vx) {
		ret = vxrs(th->tid, true, &s->vx);
		if (ret == -ENODEV)
			return log_err(c->log, ENODEV, "tid %d: the image has vector registers, this CPU none",
				       th->tid);
		if (ret)
			return log_err(c->log, -ret, "tid %d: setting vector registers:", th->tid);
	}
	memcpy(&g->r, &s->regs, sizeof(g->r));
	g->system_call = s->regs.system_call;
	/* the kernel's restart block died with the original process */
	if (g->system_call && (long)g->r.gprs[2] == -ERESTART_RESTARTBLOCK)
		g->r.gprs[2] = -ERESTARTNOHAND;
	return 0;
}

static void regs_show(struct info_out *o, const struct rec *r)
{
	if (r->type == REC_S390_REGS) {
		const struct rec_s390_regs *g = r->data;

		info_hex(o, "psw_mask", g->psw_mask);
		info_hex(o, "psw_addr", g->psw_addr);
		info_hex(o, "r2", g->gprs[2]);
		info_hex(o, "r15", g->gprs[15]);
		info_hex(o, "system_call", g->system_call);
	} else if (r->type == REC_S390_FPREGS) {
		const struct rec_s390_fpregs *f = r->data;

		info_hex(o, "fpc", f->fpc);
	} else {
		info_u64(o, "bytes", r->data_len);
	}
}

static const struct rec_desc regs_recs[] = {
	{ REC_S390_REGS, "S390_REGS", sizeof(struct rec_s390_regs) },
	{ REC_S390_FPREGS, "S390_FPREGS", sizeof(struct rec_s390_fpregs) },
	{ REC_S390_VXRS, "S390_VXRS", sizeof(struct rec_s390_vxrs) },
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
