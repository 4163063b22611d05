/* remote.c - ptrace seize/stop/release and remote system calls.
 *
 * A remote call puts the syscall number and arguments in the task's
 * registers, its instruction pointer at a syscall instruction, marked
 * so that the kernel does not treat the stop we came from as a syscall
 * to restart (arch_set_call()), runs it to the syscall-exit stop and
 * reads the result there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "remote.h"
#include "testpoint.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif
#define SEIZE_WAIT_MS	2000
#define STOP_WAIT_TICKS	50000	/* of 100 us and more: 5 s or so */
#define STOP_GRACE_TICKS 100

#define STOP_SPIN_NS	20000

/* The stops of a call made in two (call_wait()) come within
 * microseconds.  Asked for without sleeping over that time, each costs
 * half as much on a VM (7 against 12-13 us here): ckpt's CPU is not
 * woken from idle for it.  Only a checkpoint's target (struct remote's
 * spin): a restart's puppets share ckpt's pinned CPU (pin.c), where a
 * spin would only keep them from running. */
static pid_t waitpid_spin(pid_t pid, int *status)
{
	uint64_t end = log_now() + STOP_SPIN_NS;
	pid_t p;

	while (!(p = waitpid(pid, status, __WALL | WNOHANG)) && log_now() < end)
		;
	return p ? p : waitpid(pid, status, __WALL);
}

static int wait_stop_how(struct remote *r, int *status, bool spin)
{
	for (;;) {
		pid_t p = spin && r->spin ? waitpid_spin(r->pid, status) :
			  waitpid(r->pid, status, __WALL);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			return log_err(r->log, errno, "waitpid %d:", r->pid);
		if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
			r->seized = false;
			return log_err(r->log, ESRCH, "pid %d ended while held (%s %d)",
				       r->pid, WIFEXITED(*status) ? "exit" : "signal",
				       WIFEXITED(*status) ? WEXITSTATUS(*status)
							  : WTERMSIG(*status));
		}
		if (WIFSTOPPED(*status))
			return 0;
	}
}

static int wait_stop(struct remote *r, int *status)
{
	return wait_stop_how(r, status, false);
}

/* The first stop after PTRACE_INTERRUPT.  A task in a killable or
 * uninterruptible sleep (a parent in vfork(), a stuck NFS read) does not
 * stop until the sleep ends: say so instead of waiting forever. */
static int wait_first_stop(struct remote *r, int *status)
{
	struct timespec t = { 0, 20 * 1000 };
	long waited_us = 0;
	char *sc = NULL;
	long nr = -1;

	for (;;) {
		pid_t p = waitpid(r->pid, status, __WALL | WNOHANG);

		if (p > 0 && (WIFEXITED(*status) || WIFSIGNALED(*status))) {
			r->seized = false;	/* it ended before it stopped */
			return -ESRCH;
		}
		if (p != 0)
			return p < 0 && errno == EINTR ? wait_stop(r, status) :
			       p < 0 ? log_err(r->log, errno, "waitpid %d:", r->pid) :
			       WIFSTOPPED(*status) ? 0 : wait_stop(r, status);
		if (waited_us > SEIZE_WAIT_MS * 1000L)
			break;
		nanosleep(&t, NULL);
		waited_us += t.tv_nsec / 1000;
		/* most tasks stop within a few hundred us (a sleeping one must
		 * be woken and scheduled): polled finely for the first ms,
		 * where doubling from the start overslept by up to 1 ms */
		if (waited_us >= 1000 && t.tv_nsec < 10 * 1000 * 1000)
			t.tv_nsec *= 2;
	}
	if (proc_read(r->pid, "syscall", &sc, NULL) == 0)
		nr = strtol(sc, NULL, 10);
	free(sc);
	if (nr == SYS_vfork || nr == SYS_clone || nr == SYS_clone3)
		return log_err(r->log, EBUSY,
			       "pid %d does not stop: it is in vfork() until its child execs or exits (checkpoint it after that)",
			       r->pid);
	return log_err(r->log, EBUSY,
		       "pid %d does not stop within %d ms: it sleeps uninterruptibly (system call %ld)",
		       r->pid, SEIZE_WAIT_MS, nr);
}

static bool is_event_stop(int status)
{
	return (status >> 16) == PTRACE_EVENT_STOP;
}

/* A clone() or fork we made it do (threads and children of a restored
 * process). */
static bool is_clone_stop(int status)
{
	return (status >> 16) == PTRACE_EVENT_CLONE ||
	       (status >> 16) == PTRACE_EVENT_FORK;
}

static bool is_syscall_stop(int status)
{
	return (status >> 16) == 0 && WSTOPSIG(status) == (SIGTRAP | 0x80);
}

/* A signal-delivery stop (not a ptrace event, nor a syscall stop) */
static bool is_signal_stop(int status)
{
	return (status >> 16) == 0 && WSTOPSIG(status) != (SIGTRAP | 0x80);
}

/* A signal-delivery stop: keep the signal to queue it back later. */
static int steal_signal(struct remote *r)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, r->pid, 0, &si))
		return log_err(r->log, errno, "PTRACE_GETSIGINFO:");
	/* SIGSTOP cannot be blocked while it waits to be queued back, nor
	 * kept pending in the image (the next call would take it again): it
	 * makes the task one to stop, which it is already if it was in a
	 * group stop (where SIGCONT would have discarded it anyway). */
	if (si.si_signo == SIGSTOP) {
		if (!r->group_stop)
			r->stop_sig = SIGSTOP;
		r->group_stop = true;
		r->stop_on_release = true;
		return 0;
	}
	if (r->nr_stolen == REMOTE_MAX_STOLEN)
		return log_err(r->log, EBUSY, "too many signals in flight");
	if (!r->stolen)
		r->stolen = malloc(REMOTE_MAX_STOLEN * sizeof(*r->stolen));
	if (!r->stolen)
		return log_err(r->log, ENOMEM, "pid %d: a signal in flight:", r->pid);
	r->stolen[r->nr_stolen++] = si;
	return 0;
}

/* Resume until the PTRACE_EVENT_STOP that PTRACE_INTERRUPT asked for. */
static int wait_event_stop(struct remote *r, int status, int *final)
{
	int ret;

	while (!is_event_stop(status)) {
		if (!is_syscall_stop(status)) {
			ret = steal_signal(r);
			if (ret)
				return ret;
		}
		if (ptrace(PTRACE_CONT, r->pid, 0, 0))
			return log_err(r->log, errno, "PTRACE_CONT %d:", r->pid);
		ret = wait_stop(r, &status);
		if (ret)
			return ret;
	}
	if (final)
		*final = status;
	return 0;
}

/* A task we trace already (a container's root, seized by the engine as
 * soon as it started: container.c). */
static bool ours_already(pid_t pid, int err)
{
	char buf[32];

	return err == EPERM && !proc_status_str(pid, "TracerPid", buf, sizeof(buf)) &&
	       atoi(buf) == getpid();
}

int remote_seize_start(struct remote *r, pid_t pid, bool exitkill,
		       struct ckpt_log *log)
{
	long opts = PTRACE_O_TRACESYSGOOD | (exitkill ? PTRACE_O_EXITKILL : 0);

	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->log = log;
	r->memfd = -1;
	r->exitkill = exitkill;
	if (ptrace(PTRACE_SEIZE, pid, 0, opts)) {
		int err = errno;	/* (ours_already() reads /proc) */
		char state = 0;

		if (ours_already(pid, err))
			goto seized;
		/* gone, or ending (a zombie cannot be traced): the caller
		 * knows if that matters */
		if (err == ESRCH || (err == EPERM &&
				     (proc_state(pid, &state) || state == 'Z' || state == 'X')))
			return -ESRCH;
		if (err == EPERM)
			return log_err(log, EPERM,
				       "cannot trace pid %d: not permitted (traced by another tool, or protected)",
				       pid);
		return log_err(log, err, "cannot trace pid %d:", pid);
	}
seized:
	r->seized = true;
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0))
		return log_err(log, errno, "PTRACE_INTERRUPT %d:", pid);
	return 0;
}

/* A task whose registers do not read as this architecture's own is one
 * of its compat mode (s390x's 31-bit tasks), which ckpt does not save. */
static int regs_err(struct remote *r, pid_t tid)
{
#ifdef ARCH_COMPAT_REFUSED
	if (errno == EOPNOTSUPP)
		return log_err(r->log, EOPNOTSUPP,
			       "pid %d: a %s task, which ckpt cannot checkpoint on %s",
			       tid, ARCH_COMPAT_REFUSED, ARCH_NAME);
#endif
	return log_err(r->log, errno, "registers of %d:", tid);
}

int remote_seize_end(struct remote *r)
{
	long opts = PTRACE_O_TRACESYSGOOD | (r->exitkill ? PTRACE_O_EXITKILL : 0);
	pid_t pid = r->pid;
	char path[64];
	int status, ret = wait_first_stop(r, &status);

	if (!ret)
		ret = wait_event_stop(r, status, &status);
	/* (seized before with other options: these now) */
	if (!ret && ptrace(PTRACE_SETOPTIONS, pid, 0, opts))
		ret = log_err(r->log, errno, "PTRACE_SETOPTIONS %d:", pid);
	if (ret)
		return ret;
	/* the event stop of a task in a group stop carries the stop signal */
	r->group_stop = WSTOPSIG(status) != SIGTRAP;
	r->stop_sig = r->group_stop ? WSTOPSIG(status) : 0;
	if (arch_get_regs(pid, &r->regs))
		return regs_err(r, pid);
	if (ptrace(PTRACE_GETSIGMASK, pid, sizeof(uint64_t), &r->sigmask))
		return log_err(r->log, errno, "signal mask of %d:", pid);
	test_point(r->log, "seized");
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	r->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (r->memfd < 0)
		return log_err(r->log, errno, "open %s:", path);
	return 0;
}

int remote_seize(struct remote *r, pid_t pid, bool exitkill,
		 struct ckpt_log *log)
{
	return remote_seize_start(r, pid, exitkill, log) ?: remote_seize_end(r);
}

int remote_block(struct remote *r)
{
	uint64_t all = ~0ULL;

	if (r->blocked)
		return 0;
	if (ptrace(PTRACE_SETSIGMASK, r->pid, sizeof(uint64_t), &all))
		return log_err(r->log, errno, "signal mask of %d:", r->pid);
	r->blocked = true;
	return 0;
}

int remote_requeue(struct remote *r)
{
	/* The siginfo is staged below the red zone (or below the guard's
	 * frame), which the ABI lets any signal handler clobber, so no
	 * program can keep data there. */
	uint64_t below = r->guarded ? r->call_sp : arch_sp(&r->regs) - ARCH_RED_ZONE;
	uint64_t stage = (below - sizeof(siginfo_t)) & ~15ULL;
	int ret = r->nr_stolen ? remote_block(r) : 0;

	while (r->nr_stolen && !ret) {
		ret = remote_write(r, stage, &r->stolen[0], sizeof(siginfo_t));
		if (!ret)
			ret = rcheck(r, NULL, "re-queueing a signal",
				     SYS_rt_tgsigqueueinfo, r->pid, r->pid,
				     r->stolen[0].si_signo, stage);
		if (!ret)
			memmove(&r->stolen[0], &r->stolen[1],
				--r->nr_stolen * sizeof(r->stolen[0]));
	}
	return ret;
}

int remote_adopt(struct remote *r, pid_t tid, const struct remote *like)
{
	char path[64];
	int status, ret;

	memset(r, 0, sizeof(*r));
	r->pid = tid;
	r->log = like->log;
	r->memfd = -1;
	r->seized = true;
	r->sc_ip = like->sc_ip;
	r->sc32_ip = like->sc32_ip;
	r->sp = like->sp;
	r->fast_ip = like->fast_ip;
	r->fast_end = like->fast_end;
	r->batch_ip = like->batch_ip;
	ret = wait_stop(r, &status);
	if (!ret)
		ret = wait_event_stop(r, status, NULL);
	if (ret)
		return ret;
	if (arch_get_regs(tid, &r->regs))
		return regs_err(r, tid);
	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof(uint64_t), &r->sigmask))
		return log_err(r->log, errno, "tid %d: signal mask:", tid);
	snprintf(path, sizeof(path), "/proc/%d/mem", tid);
	r->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (r->memfd < 0)
		return log_err(r->log, errno, "open %s:", path);
	return 0;
}

/* A call its seccomp would not let through goes in as one it would: a
 * getpid, or else a read of fd -1 (*@as: those registers), so that a
 * ckpt dying at the entry stop leaves the task nothing worse to run.
 * false: no need, or nothing it lets through (the call goes as it is). */
static bool stand_in(const struct remote *r, const arch_regs_t *regs,
		     bool compat, arch_regs_t *as)
{
	struct seccomp_data d;

	if (!r->seccomp)
		return false;
	arch_call_data(regs, compat, &d);
	if (sfilter_harmless(r->seccomp, &d))
		return false;
	for (int k = 0; k < 2; k++) {
		*as = *regs;
		if (!arch_stand_in(as, compat, k))
			return false;
		arch_call_data(as, compat, &d);
		if (sfilter_harmless(r->seccomp, &d))
			return true;
	}
	return false;
}

/* At the entry stop of the stand-in: the call made the real one. */
static int make_real(struct remote *r, const arch_regs_t *real)
{
	arch_regs_t now;

	if (arch_get_regs(r->pid, &now))
		return log_err(r->log, errno, "registers of %d:", r->pid);
	arch_make_real(&now, real);
	if (arch_set_regs(r->pid, &now))
		return log_err(r->log, errno, "setting registers of %d:", r->pid);
	return 0;
}

/* A call in flight (run_call(), remote_call_each()). */
struct call {
	arch_regs_t regs, real;
	bool swap;		/* entered as a stand-in (sfilter.h) */
	bool gadget;		/* at a 64-bit guard's call gadget (guard.h) */
	int again;		/* stops on the way, resumed again */
};

/* Set up the call in @k->regs and resume the task towards its entry. */
static int call_start(struct remote *r, struct call *k, bool compat)
{
	arch_regs_t as;

	if (r->sp && !r->guarded)
		arch_set_sp(&k->regs, r->sp);
	k->real = k->regs;
	k->again = 0;
	k->swap = stand_in(r, &k->regs, compat, &as);
	if (arch_set_regs(r->pid, k->swap ? &as : &k->regs))
		return log_err(r->log, errno, "setting registers of %d:", r->pid);
	test_point(r->log, "call set");
	if (ptrace(PTRACE_SYSCALL, r->pid, 0, 0))
		return log_err(r->log, errno, "PTRACE_SYSCALL %d:", r->pid);
	return 0;
}

/* Wait for the call's @stop (0: entry, 1: exit), the task resumed
 * towards it.  A task in a group stop (SIGSTOP) reports it again when
 * resumed before it gets to the call: resume it once more.  So does one
 * that takes a signal before the call (a SIGSTOP sent again to a stopped
 * task waits for it to run): the signal is kept, as when it was seized. */
static int call_wait(struct remote *r, struct call *k, int stop, long nr)
{
	int status, ret;

	for (;;) {
		ret = wait_stop_how(r, &status, true);
		if (ret)
			return ret;
		if (!(is_event_stop(status) || is_clone_stop(status) ||
		      (!stop && is_signal_stop(status))) || k->again++ >= 16)
			break;
		if (!is_event_stop(status) && !is_clone_stop(status) &&
		    (ret = steal_signal(r)))
			return ret;
		if (ptrace(PTRACE_SYSCALL, r->pid, 0, 0))
			return log_err(r->log, errno, "PTRACE_SYSCALL %d:", r->pid);
	}
	if (!is_syscall_stop(status))
		return log_err(r->log, EIO,
			       "pid %d: unexpected stop 0x%x during remote syscall %ld",
			       r->pid, status, nr);
	test_point(r->log, stop ? "call exit stop" : "call entry stop");
	return !stop && k->swap ? make_real(r, &k->real) : 0;
}

/* From the entry stop on to the exit stop. */
static int call_exit(struct remote *r, struct call *k)
{
	if (ptrace(PTRACE_SYSCALL, r->pid, 0, 0))
		return log_err(r->log, errno, "PTRACE_SYSCALL %d:", r->pid);
	return 0;
}

/* A result the kernel takes as "make the call again" when the task
 * goes on without a handler to run. */
static bool restarts(long res)
{
	return res == -ERESTARTSYS || res == -ERESTARTNOINTR ||
	       res == -ERESTARTNOHAND || res == -ERESTART_RESTARTBLOCK;
}

/* At the exit stop: the result.  A call made at the guard's call
 * gadget leaves the task where it is: let go, it runs the rest of the
 * gadget, whose ret lands on the frame's rt_sigreturn (guard.h), as
 * from the park, so the next call's registers are the only ones set.
 * Not one the kernel would make again if we died now (the real call of
 * a seccomp stand-in, under the filter then), nor any other call of a
 * guarded task (a 32-bit one: guard32.c): those go back to the park. */
static int call_end(struct remote *r, struct call *k, long *res)
{
	if (arch_get_regs(r->pid, &k->regs))
		return log_err(r->log, errno, "registers of %d:", r->pid);
	*res = arch_call_result(&k->regs);
	if (r->guarded && (!k->gadget || restarts(*res)) &&
	    arch_set_regs(r->pid, &r->park))
		return log_err(r->log, errno, "setting registers of %d:", r->pid);
	return 0;
}

/* The task run from @regs until it stops on signal @sig at @ip or @ip2
 * (the stop its own code ends with), @regs then as it stopped; the test
 * points @set and @stop on the way.  A signal met before is kept, as
 * when the task was seized (a SIGSTOP of someone else's too:
 * steal_signal()). */
static int run_to_signal(struct remote *r, arch_regs_t *regs, long nr, int sig,
			 uint64_t ip, uint64_t ip2, const char *set, const char *stop)
{
	int status, ret;

	if (arch_set_regs(r->pid, regs))
		return log_err(r->log, errno, "setting registers of %d:", r->pid);
	test_point(r->log, set);
	for (int again = 0;; again++) {
		if (ptrace(PTRACE_CONT, r->pid, 0, 0))
			return log_err(r->log, errno, "PTRACE_CONT %d:", r->pid);
		ret = wait_stop(r, &status);
		if (ret)
			return ret;
		if (arch_get_regs(r->pid, regs))
			return log_err(r->log, errno, "registers of %d:", r->pid);
		if (is_signal_stop(status) && WSTOPSIG(status) == sig &&
		    (arch_ip(regs) == ip || arch_ip(regs) == ip2))
			break;
		if (again >= 16 || !(is_event_stop(status) || is_signal_stop(status)))
			return log_err(r->log, EIO,
				       "pid %d: unexpected stop 0x%x during remote syscall %ld",
				       r->pid, status, nr);
		if (!is_event_stop(status) && (ret = steal_signal(r)))
			return ret;
	}
	test_point(r->log, stop);
	return 0;
}

/* The call set up in @k->regs run through the one-stop sequence: on
 * to the SIGSTOP it sends itself after the call (the signal discarded:
 * it never stops the task). */
int remote_run_stop(struct remote *r, arch_regs_t *regs, uint64_t end, long nr)
{
	if (r->sp)
		arch_set_sp(regs, r->sp);
	return run_to_signal(r, regs, nr, SIGSTOP, end, end, "call set", "call exit stop");
}

/* The same to the runner's stop (arch_runner_map()): its signal, at
 * either place it may come, then every signal blocked again.  The
 * signal is never delivered: the next resume discards it. */
int remote_run_signal(struct remote *r, arch_regs_t *regs, long nr)
{
	uint64_t all = ~0ULL;
	int ret = run_to_signal(r, regs, nr, r->runner_sig, r->runner_stop[0],
				r->runner_stop[1], "runner set", "runner stop");

	if (!ret && ptrace(PTRACE_SETSIGMASK, r->pid, sizeof(uint64_t), &all))
		ret = log_err(r->log, errno, "signal mask of %d:", r->pid);
	return ret;
}

static int run_fast(struct remote *r, struct call *k, long *res, long nr)
{
	int ret = remote_run_stop(r, &k->regs, r->fast_end, nr);

	if (!ret)
		*res = arch_fast_result(&k->regs);
	return ret;
}

/* Run the call set up in @k->regs to its syscall-exit stop. */
static int run_call_timed(struct remote *r, struct call *k, long *res, long nr,
			  bool compat)
{
	int ret;

	/* (a child would run the sequence's SIGSTOP too) */
	if (r->fast_ip && !compat && !r->guarded && !r->seccomp &&
	    nr != SYS_clone && nr != SYS_clone3)
		return run_fast(r, k, res, nr);
	ret = call_start(r, k, compat);

	if (!ret)
		ret = call_wait(r, k, 0, nr);
	if (!ret)
		ret = call_exit(r, k);
	if (!ret)
		ret = call_wait(r, k, 1, nr);
	return ret ? ret : call_end(r, k, res);
}

/* Every call counted and timed for -v (timing.h). */
static int run_call(struct remote *r, struct call *k, long *res, long nr,
		    bool compat)
{
	if (!r->log)
		return run_call_timed(r, k, res, nr, compat);
	return LOG_TIMED(r->log, LP_REMOTE, run_call_timed(r, k, res, nr, compat));
}

/* The registers of the 64-bit call @nr(@a) in @r. */
static int call_regs(struct remote *r, struct call *k, long nr, const long in[6])
{
	long a[6] = { in[0], in[1], in[2], in[3], in[4], in[5] };
	uint8_t mem[ARCH_CALL_MEM];
	int arg = 0;
	size_t n = arch_call_mem(nr, a, mem, &arg);

	if (n) {	/* below the stack the call runs on */
		uint64_t sp = r->sp ? r->sp : arch_sp(&r->regs);
		uint64_t at = (sp - ARCH_RED_ZONE - n - 64) & ~15ULL;
		int ret = remote_write(r, at, mem, n);

		if (ret)
			return ret;
		a[arg] = at;
	}
	k->regs = r->regs;
	k->gadget = r->guarded && !r->call32_ip;
	/* (at fast_ip the call's own syscall instruction comes first: the
	 * two-stop way works there too) */
	arch_set_call(&k->regs, nr, a, r->fast_ip ? r->fast_ip : r->sc_ip);
	if (r->guarded) {
		/* its return goes to rt_sigreturn: the frame's return
		 * address (x86), r14 (s390x), LR (ppc64le) */
		if (!r->call_ip)
			return log_err(r->log, ENOSYS, "pid %d: no guarded 64-bit call now",
				       r->pid);
		arch_set_call(&k->regs, nr, a, r->call_ip);
		arch_set_sp(&k->regs, r->call_sp);
		arch_set_ret(&k->regs, r->ret_ip);
	}
	return 0;
}

int remote_call(struct remote *r, long *res, long nr, long a1, long a2,
		long a3, long a4, long a5, long a6)
{
	const long a[6] = { a1, a2, a3, a4, a5, a6 };
	struct call k;
	int ret = remote_flush_call(r, nr, a, res);

	if (ret != 1)
		return ret;
	ret = remote_flush(r) ?: call_regs(r, &k, nr, a);
	return ret ? ret : run_call(r, &k, res, nr, false);
}

int remote_call_regs(struct remote *r, arch_regs_t *regs, long nr, long *res)
{
	struct call k = { .regs = *regs, .gadget = r->guarded && !r->call32_ip };
	int ret = remote_flush(r);

	return ret ? ret : run_call(r, &k, res, nr, false);
}

#define EACH_BATCH 64

/* Up to EACH_BATCH of remote_call_each(): every step of the call made
 * by each thread before the next step is waited for. */
static int each_batch(struct remote **rms, int n, long nr, const long (*a)[6],
		      long *res)
{
	struct call k[EACH_BATCH];
	bool live[EACH_BATCH] = { false };
	int ret = 0, r;

	/* A thread under seccomp has its filter suspended only while we
	 * trace it: one let go towards its call's exit must have passed
	 * the filter before we could die (and the filter see the real
	 * call): its calls go one at a time, each waited for at once. */
	for (int i = 0; i < n; i++)
		if (rms[i]->seccomp) {
			for (int j = 0; j < n && !ret; j++)
				ret = call_regs(rms[j], &k[j], nr, a[j]) ?:
				      run_call_timed(rms[j], &k[j], &res[j], nr, false);
			return ret;
		}
	for (int i = 0; i < n && !ret; i++) {
		ret = call_regs(rms[i], &k[i], nr, a[i]);
		if (!ret)
			ret = call_start(rms[i], &k[i], false);
		live[i] = !ret;
	}
	/* one that fails leaves the others' calls to end, not midway */
	for (int i = 0; i < n; i++) {
		r = live[i] ? call_wait(rms[i], &k[i], 0, nr) : 0;
		if (!r && live[i])
			r = call_exit(rms[i], &k[i]);
		live[i] = live[i] && !r;
		ret = ret ? ret : r;
	}
	for (int i = 0; i < n; i++) {
		r = live[i] ? call_wait(rms[i], &k[i], 1, nr) : 0;
		if (!r && live[i])
			r = call_end(rms[i], &k[i], &res[i]);
		ret = ret ? ret : r;
	}
	return ret;
}

int remote_call_each(struct remote **rms, int n, long nr, const long (*a)[6],
		     long *res)
{
	struct ckpt_log *l = n ? rms[0]->log : NULL;
	uint64_t t0 = log_now();
	int ret = 0;

	for (int i = 0; i < n && !ret; i++)
		ret = remote_flush(rms[i]);
	for (int i = 0; i < n && !ret; i += EACH_BATCH)
		ret = each_batch(rms + i, n - i < EACH_BATCH ? n - i : EACH_BATCH, nr,
				 a + i, res + i);
	if (l) {
		l->times.ns[LP_REMOTE] += log_now() - t0;
		l->times.n[LP_REMOTE] += n;
	}
	return ret;
}

int remote_call32(struct remote *r, long *res, long nr, long a1, long a2,
		  long a3, long a4, long a5, long a6)
{
	const long a[6] = { a1, a2, a3, a4, a5, a6 };
	struct call k;
	int ret = remote_flush(r);

	if (ret)
		return ret;
	if (!r->sc32_ip && !r->call32_ip)
		return log_err(r->log, ENOSYS, "pid %d: no 32-bit syscall instruction to make 32-bit calls with",
			       r->pid);
	k.regs = r->regs;
	k.gadget = false;
	arch_set_call32(&k.regs, nr, a, r->sc32_ip);
	if (r->guarded && r->call32_ip) {
		arch_set_call32(&k.regs, nr, a, r->call32_ip);
		arch_set_sp(&k.regs, r->call_sp);
	}
	return run_call(r, &k, res, nr, true);
}

int rcall32_ok(struct remote *r, long *res, const char *what, long nr,
	       long a1, long a2, long a3, long a4)
{
	long v;
	int ret = remote_call32(r, &v, nr, a1, a2, a3, a4, 0, 0);

	if (ret)
		return ret;
	if (res)
		*res = v;
	if (v < 0 && v > -4096)
		return log_err(r->log, (int)-v, "pid %d: %s:", r->pid, what);
	return 0;
}

int rcall_ok(struct remote *r, long *res, const char *what, long nr,
	     long a1, long a2, long a3, long a4, long a5, long a6)
{
	const long a[6] = { a1, a2, a3, a4, a5, a6 };
	long v;
	int ret = r->batch && !res ? remote_batch_add(r, what, nr, a) : 1;

	if (ret <= 0)
		return ret;
	ret = remote_call(r, &v, nr, a1, a2, a3, a4, a5, a6);

	if (ret)
		return ret;
	if (res)
		*res = v;
	if (v < 0 && v > -4096)
		return log_err(r->log, (int)-v, "pid %d: %s:", r->pid, what);
	return 0;
}

int remote_read(struct remote *r, uint64_t addr, void *buf, size_t n)
{
	int ret = remote_flush(r);
	ssize_t k;

	if (ret)
		return ret;
	k = pread(r->memfd, buf, n, (off_t)addr);

	if (k != (ssize_t)n)
		return log_err(r->log, k < 0 ? errno : EIO,
			       "pid %d: reading %zu bytes at 0x%llx:", r->pid, n,
			       (unsigned long long)addr);
	return 0;
}

int remote_write(struct remote *r, uint64_t addr, const void *buf, size_t n)
{
	return remote_flush(r) ?: remote_poke(r, addr, buf, n);
}

int remote_poke(struct remote *r, uint64_t addr, const void *buf, size_t n)
{
	ssize_t k = pwrite(r->memfd, buf, n, (off_t)addr);

	if (k != (ssize_t)n)
		return log_err(r->log, k < 0 ? errno : EIO,
			       "pid %d: writing %zu bytes at 0x%llx:", r->pid, n,
			       (unsigned long long)addr);
	return 0;
}

int remote_park(struct remote *r)
{
	int status, ret = remote_flush(r);

	if (ret)
		return ret;
	if (ptrace(PTRACE_INTERRUPT, r->pid, 0, 0) ||
	    ptrace(PTRACE_CONT, r->pid, 0, 0))
		return log_err(r->log, errno, "parking pid %d:", r->pid);
	ret = wait_stop(r, &status);
	return ret ? ret : wait_event_stop(r, status, NULL);
}

int remote_unhold(struct remote *r)
{
	int ret = remote_requeue(r);

	if (!ret)
		ret = remote_park(r);
	test_point(r->log, "release parked");
	/* The mask before the registers: until the registers are its own,
	 * a guarded task would rt_sigreturn, which sets the mask anyway. */
	if (!ret && ptrace(PTRACE_SETSIGMASK, r->pid, sizeof(uint64_t), &r->sigmask))
		ret = log_err(r->log, errno, "restoring signal mask of %d:", r->pid);
	test_point(r->log, "release mask");
	if (!ret && arch_set_regs(r->pid, &r->regs))
		ret = log_err(r->log, errno, "restoring registers of %d:", r->pid);
	test_point(r->log, "release regs");
	/* taken in the signal delivery we release it into */
	if (!ret && r->stop_on_release && kill(r->pid, r->stop_sig ? r->stop_sig : SIGSTOP))
		ret = log_err(r->log, errno, "stopping %d:", r->pid);
	return ret;
}

int remote_detach(struct remote *r, bool gone_ok)
{
	int ret = 0;

	if (ptrace(PTRACE_DETACH, r->pid, 0, 0)) {
		if (!gone_ok || errno != ESRCH)
			ret = log_err(r->log, errno, "detaching %d:", r->pid);
		else	/* killed by its process's exit: ours to reap, as tracer */
			while (waitpid(r->pid, NULL, __WALL) < 0 && errno == EINTR)
				;
	}
	r->seized = false;
	return ret;
}

/* Is the group stop of @leader's process under way: its stop signal
 * still queued, or the leader stopped already (its other threads
 * follow)?  Neither, and it is not coming: someone sent a SIGCONT, or
 * the kernel dropped a SIGTSTP for an orphaned process group. */
static bool stop_coming(pid_t leader, int sig)
{
	uint64_t shared = 0, own = 0;
	char state;

	if (proc_state(leader, &state))
		return false;
	if (state == 'T' || state == 't')
		return true;
	proc_status_u64(leader, "ShdPnd", 16, &shared);
	proc_status_u64(leader, "SigPnd", 16, &own);
	return (shared | own) & (1ULL << (sig - 1));
}

/* A stop_on_release thread stops only once it runs, after the detach,
 * and dequeues the signal: until then its parent's waitid(WSTOPPED)
 * finds nothing, and a SIGCONT would discard the pending stop for good.
 * So it is seen stopped before we go on to let its parent go. */
void remote_wait_stopped(struct remote *r, pid_t leader)
{
	struct timespec tick = { 0, 100 * 1000 };
	int sig = r->stop_sig ? r->stop_sig : SIGSTOP, grace = STOP_GRACE_TICKS;
	char state;

	if (!r->stop_on_release)
		return;
	for (int i = 0; i < STOP_WAIT_TICKS; i++) {
		if (proc_state(r->pid, &state) || strchr("TtZX", state))
			return;
		/* (between its dequeue and its stop, a SIGTSTP is in neither) */
		if (!stop_coming(leader, sig) && --grace < 0)
			return;
		if (i < 10)
			sched_yield();
		else
			nanosleep(&tick, NULL);
	}
	log_warn(r->log, "pid %d did not stop again (signal %d) in %d ms",
		 r->pid, sig, STOP_WAIT_TICKS / 10);
}

int remote_release(struct remote *r)
{
	int ret = remote_unhold(r), d = remote_detach(r, false);

	return ret ? ret : d;
}

int remote_resume(struct remote *r)
{
	uint64_t all = ~0ULL;
	int ret = remote_park(r);

	if (!ret && arch_set_regs(r->pid, &r->regs))
		ret = log_err(r->log, errno, "setting registers of %d:", r->pid);
	if (!ret && ptrace(PTRACE_SETSIGMASK, r->pid, sizeof(uint64_t), &all))
		ret = log_err(r->log, errno, "blocking the signals of %d:", r->pid);
	if (!ret && ptrace(PTRACE_CONT, r->pid, 0, 0))
		ret = log_err(r->log, errno, "resuming %d:", r->pid);
	return ret;
}

int remote_halt(struct remote *r)
{
	int status, ret;

	if (ptrace(PTRACE_INTERRUPT, r->pid, 0, 0))
		return log_err(r->log, errno, "stopping %d again:", r->pid);
	ret = wait_stop(r, &status);
	if (!ret)
		ret = wait_event_stop(r, status, NULL);
	if (!ret && arch_get_regs(r->pid, &r->regs))
		ret = log_err(r->log, errno, "registers of %d:", r->pid);
	return ret;
}

void remote_close(struct remote *r)
{
	free(r->batch);		/* (queued calls of a failed build: dropped) */
	r->batch = NULL;
	sfilter_set_free(r->seccomp);
	r->seccomp = NULL;
	free(r->stolen);
	r->stolen = NULL;
	r->nr_stolen = 0;
	if (r->memfd >= 0)
		close(r->memfd);
	r->memfd = -1;
}
