/* compat.c - 31-bit processes: not ported.  A 31-bit task is refused at
 * checkpoint (its registers do not read as 64-bit ones, arch_get_regs()),
 * and an image's IA32 records are x86's. */
#include <errno.h>

#include "../../kinds.h"
#include "../arch.h"

bool cpt_ia32(const struct cpt_task *t)
{
	return false;
}

bool task_ia32(struct rst_task *t)
{
	return false;
}

int ia32_sigaction(struct rst_task *t, int sig, const struct rec_sigaction *a)
{
	return -ENOSYS;
}

int ia32_exec_check(struct rst_ctx *c, pid_t pid)
{
	return 0;
}

static int ia32_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	return log_err(c->log, EBADMSG, "pid %d: %s record (x86 32-bit) in an s390x image",
		       t->pid, rec_type_name(r->type));
}

static const struct rec_desc ia32_recs[] = {
	{ REC_IA32, "IA32", 0 },
	{ REC_IA32_THREAD, "IA32_THREAD", 0 },
	{ 0 }
};

const struct kind_ops kind_ia32 = {
	.name = "ia32",
	.recs = ia32_recs,
	.phase = PHASE_STATE,
	.load = ia32_load,
};
