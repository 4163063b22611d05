/* remote.h - a stopped task driven by ptrace: its memory, and system
 * calls it is made to execute on our behalf. */
#ifndef CKPT_REMOTE_H
#define CKPT_REMOTE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "arch/arch.h"
#include "log.h"
#include "sfilter.h"

/* The kernel's own "make the call again" results (include/linux/errno.h,
 * not uapi), which a task stopped after a call may hold, negated. */
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

#define REMOTE_MAX_STOLEN 64

struct remote {
	pid_t pid;		/* the thread */
	int memfd;		/* /proc/PID/mem, reads and writes anything */
	uint64_t sc_ip;		/* address of a syscall instruction */
	uint64_t sc32_ip;	/* of an int $0x80, for 32-bit calls (0: none) */
	uint64_t sp;		/* stack pointer for calls, 0: keep */
	/* A puppet of ours at restart: the trampoline's one-stop sequence
	 * (arch_tramp.fast_off) and where it stops; 0: none, two stops
	 * a call.  Its SIGSTOP discards a pending SIGCONT: none once one
	 * is queued in the process (signals.c). */
	uint64_t fast_ip, fast_end;
	/* The trampoline's runner of a table of calls (arch_tramp.batch_off;
	 * it stops at fast_end), 0: none; and the calls queued for it while
	 * a batch is open (remote_batch_begin()), NULL: none. */
	uint64_t batch_ip;
	struct rbatch *batch;
	/* calls ever queued on it: a count that only grows, so that a user
	 * of memory the queued calls may read can tell whether any came */
	uint32_t nr_queued;
	arch_regs_t regs;	/* as found at seize */
	uint64_t sigmask;	/* blocked mask as found at seize */
	bool seized;
	bool exitkill;		/* PTRACE_O_EXITKILL: dies with us */
	bool spin;		/* a checkpoint's: its call stops spun for */
	bool blocked;		/* every signal blocked while we hold it */
	/* Guarded (arch_guard_task()): a frame below its stack returns it to
	 * @regs if we die; calls run at a gadget whose ret leads there, and
	 * between calls it waits in @park, about to rt_sigreturn, or (after
	 * a 64-bit call) at that gadget, about to ret there. */
	bool guarded;
	uint64_t call_ip;	/* syscall gadget (0: none, no 64-bit call) */
	uint64_t call32_ip;	/* int $0x80 gadget (0: none, sc32_ip unguarded) */
	uint64_t call_sp;	/* rsp for calls: the lowest byte the guard uses */
	uint64_t ret_ip;	/* the return gadget */
	uint64_t page;		/* a 32-bit task's gadget page (0: none) */
	/* A guarded 64-bit task's page of our code for calls in batches
	 * (runner.h, 0: none): the signal its runs stop on, sent to itself,
	 * where that stop may come, the mask the runner sets for it. */
	uint64_t runner;
	int runner_sig;
	uint64_t runner_stop[2];
	uint64_t runner_mask;
	arch_regs_t park;
	/* Its seccomp, if any (sfilter.h): a call it would not let through
	 * is entered as one it would, and made the real one at the entry
	 * stop.  Freed by remote_close(). */
	struct sfilter_set *seccomp;
	bool stop_on_release;	/* leave it in a group stop (SIGSTOP) */
	bool group_stop;	/* it was in a group stop when seized */
	int stop_sig;		/* the signal of that stop; at restart, the
				 * one stop_on_release stops it with */
	/* Signals caught in delivery when we stopped the task; they are
	 * queued back before we let go of it.  Room for REMOTE_MAX_STOLEN,
	 * made on the first: most tasks have none, and a process of 10,000
	 * threads would otherwise cost 80 MiB of them.  Freed by
	 * remote_close(). */
	siginfo_t *stolen;
	int nr_stolen;
	struct ckpt_log *log;
};

/* Attach to @pid and stop it, changing nothing else.  @exitkill: the
 * task dies if we do (for tasks we are building). */
int remote_seize(struct remote *r, pid_t pid, bool exitkill,
		 struct ckpt_log *log);
/* The same in two halves: attached and asked to stop (-ESRCH: gone),
 * then that stop waited for; so that the threads of a process, all asked
 * first, stop together rather than one after the other.  A task started
 * is ended, whatever else failed meanwhile. */
int remote_seize_start(struct remote *r, pid_t pid, bool exitkill,
		       struct ckpt_log *log);
int remote_seize_end(struct remote *r);
/* Take over @tid, a thread that @like's task cloned under
 * PTRACE_O_TRACECLONE (so it starts attached and stopped). */
/* Block all its signals (the original mask is in r->sigmask), so that
 * nothing is delivered under the remote calls to come. */
int remote_block(struct remote *r);
/* Queue back the signals caught in delivery when we stopped it, now,
 * while they are blocked: from here on they wait in the kernel, not in
 * our memory, and survive us. */
int remote_requeue(struct remote *r);
int remote_adopt(struct remote *r, pid_t tid, const struct remote *like);
int remote_call(struct remote *r, long *res, long nr, long a1, long a2,
		long a3, long a4, long a5, long a6);
/* The 64-bit call @nr made by each of the @n held threads @rms, with
 * its own arguments @a[i], its result in @res[i]: each step of the
 * calls (entry, exit) is waited for in every thread before the next, so
 * that the threads' stops overlap instead of adding up.  The first
 * error is returned, the others' calls ended first. */
int remote_call_each(struct remote **rms, int n, long nr, const long (*a)[6],
		     long *res);
#define rcall(r, res, nr, ...) rcall_(r, res, nr, __VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define rcall_(r, res, nr, a, b, c, d, e, f, ...) \
	remote_call(r, res, nr, (long)(a), (long)(b), (long)(c), (long)(d), \
		    (long)(e), (long)(f))
/* A remote call that must succeed: a failure is logged with @what. */
int rcall_ok(struct remote *r, long *res, const char *what, long nr,
	     long a1, long a2, long a3, long a4, long a5, long a6);
#define rcheck(r, res, what, nr, ...) \
	rcheck_(r, res, what, nr, __VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define rcheck_(r, res, what, nr, a, b, c, d, e, f, ...) \
	rcall_ok(r, res, what, nr, (long)(a), (long)(b), (long)(c), \
		 (long)(d), (long)(e), (long)(f))

/* -- calls in one stop (remote_batch.c).  Between begin and end, a
 * call made through rcheck() whose result is not asked for (@res NULL)
 * is queued, not made; the queue is made in one stop by the trampoline's
 * runner, in order, up to the first that fails, whose @what the error
 * names.  Anything else done to the task through this file (a call
 * whose result is asked for, a read or write of its memory) makes the
 * queue first; whatever else acts on the task (ptrace, /proc, a
 * userfaultfd) must call remote_flush() first.  Where the runner cannot
 * be used (none in the port, a guarded task or one under seccomp, or
 * fast_ip dropped: rst_slow_calls()), each call is made at once or, if
 * queued before, one by one at the flush.  @table: REMOTE_BATCH_BYTES
 * of the task's memory that nothing else uses meanwhile. */
#define REMOTE_BATCH_MAX	48
#define REMOTE_BATCH_BYTES	(REMOTE_BATCH_MAX * 64)
int remote_batch_begin(struct remote *r, uint64_t table);
int remote_flush(struct remote *r);
/* The queue made with the 64-bit call @nr(@a) last, in one stop, the
 * call's result in *@res: 0, an error (one of the queue's failed, said),
 * or 1 where the call cannot go with it (nothing queued, no runner, a
 * clone): remote_call() makes the queue, then the call. */
int remote_flush_call(struct remote *r, long nr, const long a[6], long *res);
/* @run false: what is queued is dropped (a build that failed) */
int remote_batch_end(struct remote *r, bool run);
/* How many calls wait in @r's queue now. */
int remote_batch_pending(const struct remote *r);
/* (rcall_ok()'s: 0 queued, 1 not, to be made at once; or an error) */
int remote_batch_add(struct remote *r, const char *what, long nr, const long a[6]);
/* (remote_batch.c's: the task run from @regs to the trampoline's SIGSTOP
 * at @end; @regs then as it stopped) */
int remote_run_stop(struct remote *r, arch_regs_t *regs, uint64_t end, long nr);
/* @n calls made in @r at once, each @nr[i] with @a[i], each one's
 * result in @res[i]: by its runner in one stop a table (@table:
 * REMOTE_BATCH_BYTES of its memory nothing else uses meanwhile), or
 * one by one where it has none.  The first that fails ends them, an
 * error naming its @what[i] and its first argument (an fd, a number).
 * Not for calls a batch takes not (a clone, remote_batch_add()). */
int remote_calls(struct remote *r, uint64_t table, int n, const char *const *what,
		 const long *nr, const long (*a)[6], long *res);
/* The same, saying nothing: *@failed is the index of the call that
 * failed (its result in @res), the calls after it not made; -1 if none
 * did.  An error of the task (it died) is returned, said. */
int remote_calls_upto(struct remote *r, uint64_t table, int n, const long *nr,
		      const long (*a)[6], long *res, int *failed);
/* (a checkpoint's batches, runner.h: the task run from @regs to the runner's signal stop, every signal
 * blocked again there; @regs then as it stopped) */
int remote_run_signal(struct remote *r, arch_regs_t *regs, long nr);
/* The call @nr whose registers @regs are set up whole (rip, rsp and
 * all), run to its exit stop as any other: its result in *@res. */
int remote_call_regs(struct remote *r, arch_regs_t *regs, long nr, long *res);

/* The same through int $0x80: the 32-bit (compat) system call @nr, its
 * arguments in ebx, ecx, edx, esi, edi, ebp; for what the kernel keeps
 * apart for 32-bit callers (compat sigactions, the compat robust list). */
int remote_call32(struct remote *r, long *res, long nr, long a1, long a2,
		  long a3, long a4, long a5, long a6);
int rcall32_ok(struct remote *r, long *res, const char *what, long nr,
	       long a1, long a2, long a3, long a4);
#define rcheck32(r, res, what, nr, a, b, c, d) \
	rcall32_ok(r, res, what, nr, (long)(a), (long)(b), (long)(c), (long)(d))

int remote_read(struct remote *r, uint64_t addr, void *buf, size_t n);
int remote_write(struct remote *r, uint64_t addr, const void *buf, size_t n);
/* The same without making the queue first: into memory that no queued
 * call reads or writes (a part of the scratch none of them was given). */
int remote_poke(struct remote *r, uint64_t addr, const void *buf, size_t n);
/* Bring the task to a stop inside signal delivery, where the kernel will
 * still apply its syscall-restart logic to whatever registers we set. */
int remote_park(struct remote *r);
/* Put back regs/mask/stolen signals (as found, or as set in r->regs and
 * r->sigmask by the caller) and let the task go. */
int remote_release(struct remote *r);
/* The same in two steps: all but the letting go, then that; @gone_ok:
 * a task that ended meanwhile (its process ended by itself, once
 * another of its threads was let go) is no error. */
int remote_unhold(struct remote *r);
int remote_detach(struct remote *r, bool gone_ok);
/* After the detach: wait (a bounded while) for a stop_on_release thread
 * of the process led by @leader to be stopped again. */
void remote_wait_stopped(struct remote *r, pid_t leader);
/* Let a held thread run its own code from r->regs, every signal blocked
 * (for a thread another process drives: the CUDA driver's restore
 * thread), until remote_halt() stops it again where it is then; its
 * registers there become r->regs, for remote_release(). */
int remote_resume(struct remote *r);
int remote_halt(struct remote *r);
void remote_close(struct remote *r);

#endif
