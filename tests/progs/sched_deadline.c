/* sched_deadline.c - a SCHED_DEADLINE thread's runtime, deadline and
 * period survive the restart (the kernel takes the policy only from a
 * task that may run on every CPU of its root domain: restart's own pin
 * to one CPU must be gone first). */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/syscall.h>

#include "tp.h"

#define SCHED_DEADLINE_	6

struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

int main(int argc, char **argv)
{
	struct attr a = { sizeof(a), SCHED_DEADLINE_, 0, 0, 0,
			  10 * 1000 * 1000, 50 * 1000 * 1000, 100 * 1000 * 1000 };
	struct attr g = { 0 };

	tp_init(argc, argv);
	if (syscall(SYS_sched_setattr, 0, &a, 0))
		return printf("FAIL: sched_setattr(SCHED_DEADLINE): %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	tp_check(!syscall(SYS_sched_getattr, 0, &g, sizeof(g), 0),
		 "sched_getattr: %s", strerror(errno));
	tp_check(g.policy == SCHED_DEADLINE_, "policy %u", g.policy);
	tp_check(g.runtime == a.runtime && g.deadline == a.deadline && g.period == a.period,
		 "runtime %llu deadline %llu period %llu", (unsigned long long)g.runtime,
		 (unsigned long long)g.deadline, (unsigned long long)g.period);
	return tp_done();
}
