/* pin.c - a restart builds its processes on one CPU.
 *
 * Building a process takes hundreds of remote calls.  Each call stops
 * and resumes the puppet through ptrace.  When ckpt and the puppet run
 * on different CPUs, every call is a wakeup across CPUs.  On a VM, waking
 * an idle vCPU costs 50-150 us: a tiny process's restart then took
 * 35-40 ms instead of 6.  So while it builds, ckpt keeps itself on the
 * CPU it runs on.  The puppets it makes inherit that mask, and so do
 * their threads.  Each thread gets the caller's own mask back before it
 * is let go: the mask a restarted process would have had anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pin.h"

_Static_assert(sizeof(cpu_set_t) == sizeof(((struct pin *)0)->was), "struct pin's mask");

static cpu_set_t *was(const struct pin *p)
{
	return (cpu_set_t *)p->was;
}

/* The caller's mask: all ones where it had every CPU online, not the
 * CPUs of today.  The kernel keeps the mask asked for (user_cpus_ptr,
 * Linux 6.2) and would hold the task to those CPUs when more come or its
 * cpuset grows; all ones it ANDs with the cpuset, as if never asked. */
static int give(pid_t tid, const struct pin *p)
{
	cpu_set_t any;

	if (!p->all)
		return sched_setaffinity(tid, sizeof(p->was), was(p));
	memset(&any, 0xff, sizeof(any));
	return sched_setaffinity(tid, sizeof(any), &any);
}

void pin_begin(struct pin *p)
{
	cpu_set_t one;

	p->on = false;
	p->cpu = sched_getcpu();
	if (p->cpu < 0 || p->cpu >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(p->was), was(p)) ||
	    !CPU_ISSET(p->cpu, was(p)) || CPU_COUNT(was(p)) < 2)
		return;
	p->all = CPU_COUNT(was(p)) >= get_nprocs();
	CPU_ZERO(&one);
	CPU_SET(p->cpu, &one);
	p->on = !sched_setaffinity(0, sizeof(one), &one);
}

void pin_end(struct pin *p)
{
	if (p->on)
		give(0, p);
	p->on = false;
}

int pin_release(const struct pin *p, pid_t tid, const uint64_t *mask, size_t len)
{
	cpu_set_t now;
	int gone = 0;

	if (mask && !syscall(SYS_sched_setaffinity, tid, len, mask))
		return 0;
	if (mask && errno != EINVAL)
		return -errno;
	gone = !!mask;
	if (!p->on)
		return gone;
	if (sched_getaffinity(tid, sizeof(now), &now))
		return -errno;
	if (CPU_COUNT(&now) != 1 || !CPU_ISSET(p->cpu, &now))
		return gone;
	return give(tid, p) ? -errno : gone;
}

void pin_undo_here(const struct pin *p)
{
	if (p->on)
		give(0, p);
}

void pin_beside_task(const struct pin *p, pid_t tid)
{
	cpu_set_t others;

	if (!p->on)
		return;
	memcpy(&others, was(p), sizeof(others));
	CPU_CLR(p->cpu, &others);
	if (CPU_COUNT(&others))
		sched_setaffinity(tid, sizeof(others), &others);
}

void pin_beside(const struct pin *p)
{
	pin_beside_task(p, 0);
}

bool pin_restricted(const uint64_t *mask, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < len / 8; i++)
		n += __builtin_popcountll(mask[i]);
	return n < get_nprocs();
}
