/* pin.h - a restart builds its processes on one CPU (pin.c). */
#ifndef CKPT_PIN_H
#define CKPT_PIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct pin {
	bool on;
	int cpu;		/* where ckpt and its puppets run meanwhile */
	bool all;		/* the caller could run on every CPU online */
	/* the caller's own mask, a cpu_set_t (not named here: <sched.h>
	 * and the kernel's sched headers, which some kinds use, clash) */
	uint64_t was[16];
};

/* The calling thread onto the CPU it runs on; without effect (and
 * without error: it is only faster) where the mask cannot be had. */
void pin_begin(struct pin *p);
/* The calling thread's mask back. */
void pin_end(struct pin *p);
/* A puppet's thread @tid gets its own saved mask (@mask, @len bytes) or,
 * without one, the caller's, unless something gave it another meanwhile
 * (a cpuset cgroup it joined): 0, -errno, or 1 if no CPU of @mask is
 * usable here (then it got the caller's).  Before its credentials are
 * restored (while ckpt may set it) and before its scheduling policy
 * (SCHED_DEADLINE wants every CPU of the root domain). */
int pin_release(const struct pin *p, pid_t tid, const uint64_t *mask, size_t len);
/* In a child that works beside the build (the lazy loader): the
 * caller's mask. */
void pin_undo_here(const struct pin *p);
/* A thread of ckpt's that works beside the build (the page placer):
 * the caller's CPUs but the build's, where there are others. */
void pin_beside(const struct pin *p);
/* The same for a child of ckpt's started before the pin (the page
 * verifier): on the build's CPU it took a third of the CPU the build
 * needs, at random (a JVM's restart 35 or 41 ms). */
void pin_beside_task(const struct pin *p, pid_t tid);
/* Whether a thread's mask (@len bytes) leaves out a CPU that is online:
 * a restriction to keep (else it had them all: nothing to say). */
bool pin_restricted(const uint64_t *mask, size_t len);

#endif
