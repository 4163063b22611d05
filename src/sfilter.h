/* sfilter.h - what a task's seccomp would do with a system call.
 *
 * ckpt suspends a held task's seccomp (PTRACE_O_SUSPEND_SECCOMP), but the
 * suspension ends with the tracer: a ckpt killed while the task sits at
 * the syscall-entry stop of one of ckpt's remote calls leaves the task
 * to run that call through its filters, which may kill it.  So a call
 * its filters would not let through is entered as one they would (a
 * getpid, or a read of fd -1), and made the real one at the entry stop
 * (remote.c).  This evaluates the filters, as the kernel would, on
 * copies fetched at the seize.
 */
#ifndef CKPT_SFILTER_H
#define CKPT_SFILTER_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>

struct sfilter_prog {
	struct sock_filter *insns;
	uint32_t len;
};

struct sfilter_set {
	int mode;		/* SECCOMP_MODE_STRICT or _FILTER */
	int n;
	struct sfilter_prog prog[];	/* for _FILTER: the chain, any order */
};

/* Would the call @d get through, or fail harmlessly (an errno, a trace
 * with no tracer, a log)?  Not if it would kill, trap or be sent to a
 * user-space supervisor. */
bool sfilter_harmless(const struct sfilter_set *s, const struct seccomp_data *d);
void sfilter_set_free(struct sfilter_set *s);

#endif
