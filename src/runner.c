/* runner.c - a checkpoint's calls in batches of one stop: the signal a
 * guarded task's runner page stops on chosen, and the page mapped by the
 * port (arch_runner_map(); docs/design.md, "Batches at checkpoint"). */
#include <signal.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "proc.h"
#include "runner.h"

/* Signals whose default is to be ignored, in the order tried: their
 * delivery changes nothing in a process that does not catch them. */
static const int quiet_sigs[] = { SIGURG, SIGWINCH, SIGCHLD };

/* A signal the task can send itself to stop the runner, which, were it
 * delivered without us, would change nothing and lose nothing: ignored
 * by the process (SIG_IGN, or a default of ignore and no handler), not
 * blocked by the thread (a blocked one waits, for sigwait() or a
 * signalfd: one of someone else's, stopped at instead, would be lost),
 * not pending.  0: none. */
static int quiet_signal(struct remote *r)
{
	uint64_t ign = 0, cgt = 0, pnd = 0, shd = 0, no;
	char *st;
	size_t len;

	if (proc_read(r->pid, "status", &st, &len))
		return 0;
	if (status_u64(st, "SigIgn", 16, &ign) || status_u64(st, "SigCgt", 16, &cgt) ||
	    status_u64(st, "SigPnd", 16, &pnd) || status_u64(st, "ShdPnd", 16, &shd))
		ign = 0, cgt = ~0ULL;
	free(st);
	/* Never one whose sending does anything but queue it: SIGCONT wakes
	 * a stopped process and drops pending stop signals; a stop signal,
	 * even ignored, drops a pending SIGCONT (prepare_signal()). */
	no = cgt | pnd | shd | r->sigmask | (1ULL << (SIGKILL - 1)) |
	     (1ULL << (SIGSTOP - 1)) | (1ULL << (SIGCONT - 1)) |
	     (1ULL << (SIGTSTP - 1)) | (1ULL << (SIGTTIN - 1)) | (1ULL << (SIGTTOU - 1));
	/* A standard one: a real-time signal's tkill fails (EAGAIN) at
	 * RLIMIT_SIGPENDING, and the runner would then go on past its stop,
	 * into its way back.  A standard one is never refused. */
	for (int sig = 1; sig < 32; sig++)
		if ((ign & ~no) & (1ULL << (sig - 1)))
			return sig;
	for (size_t i = 0; i < sizeof(quiet_sigs) / sizeof(quiet_sigs[0]); i++)
		if (!(no & (1ULL << (quiet_sigs[i] - 1))))
			return quiet_sigs[i];
	return 0;
}

int runner_open(struct remote *r)
{
	int sig;

	if (r->runner)
		return 0;
	if (r->seccomp || !r->guarded || !(sig = quiet_signal(r)))
		return 1;
	return arch_runner_map(r, sig);
}
