/* xcomp.c - a thread's permission for AMX (ARCH_GET_XCOMP_PERM), which
 * the kernel keeps per thread and hands out on request (arch.h). */
#define _GNU_SOURCE
#include <sys/syscall.h>

#include "../../ctx.h"
#include "../arch.h"

#define ARCH_GET_XCOMP_PERM	0x1022
#define ARCH_REQ_XCOMP_PERM	0x1023
#define XFEATURE_XTILEDATA	18

int arch_xcomp_get(struct remote *rm, uint64_t scratch, uint64_t *perm, bool *set)
{
	long res;
	int ret = remote_call(rm, &res, SYS_arch_prctl, ARCH_GET_XCOMP_PERM,
			      scratch, 0, 0, 0, 0);

	*set = false;
	if (!ret && res == 0 && !remote_read(rm, scratch, perm, 8))
		*set = true;
	return ret;
}

int arch_xcomp_set(struct rst_task *t, struct remote *rm, uint64_t perm)
{
	uint64_t fast = rm->fast_ip;
	int ret;

	if (!(perm & (1ULL << XFEATURE_XTILEDATA)))
		return 0;
	ret = rcheck(rm, NULL, "arch_prctl(ARCH_REQ_XCOMP_PERM)",
		     SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
	/* (made now: the queue, run one by one once fast_ip is dropped,
	 * would run through the AMX sequence below, its tilezero before
	 * the permission) */
	if (!ret)
		ret = remote_flush(rm);
	/* ptrace cannot load tile data into the small xstate buffer a
	 * thread has until it first touches AMX: make it touch it */
	rm->fast_ip = 0;	/* the AMX sequence's own syscall */
	rm->sc_ip = t->tramp + TRAMP_AMX;
	if (!ret)
		ret = rcheck(rm, NULL, "first AMX use", SYS_getpid, 0);
	rm->sc_ip = t->tramp;
	rm->fast_ip = fast;
	return ret;
}
