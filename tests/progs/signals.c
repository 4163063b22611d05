/* signals.c - signal dispositions, blocked mask, pending signals (with
 * their siginfo and queue order) and the alternate signal stack.
 *
 * A fresh process has every disposition SIG_DFL with no flags, an empty
 * blocked mask, nothing pending and no alternate stack, so each check
 * below fails if the restore drops that piece of state.  The functional
 * checks after restart (raising signals) make sure the restored handlers
 * are not only reported by sigaction() but actually run as set up.
 */
#include "tp.h"

#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>

#define ALTSTACK_SIZE	(128 * 1024)
#define NSIGS		64

/* Not in the userspace headers; the kernel reports it and it is glibc's
 * business, not state the test set up, so it is masked out. */
#ifndef SA_RESTORER
#define SA_RESTORER	0x04000000
#endif

struct sigsnap {
	int err;		/* errno of rt_sigaction(), 0 if it worked */
	void *handler;
	int flags;
	unsigned char mask[NSIGS + 1];
};

static struct sigsnap before[NSIGS + 1];

static char *altstack;

static volatile sig_atomic_t n_usr1, n_usr2, n_rt3, n_chld, n_int;
static volatile sig_atomic_t n_term, n_winch, n_vtalrm;

/* What the SA_ONSTACK handler (SIGTERM) saw. */
static volatile uintptr_t term_local;
static volatile int term_ss_flags;
static volatile int term_code, term_pid;

/* What the ordinary SA_SIGINFO handler (SIGWINCH) saw. */
static volatile uintptr_t winch_local;
static volatile int winch_signo, winch_code, winch_pid, winch_uid;
static volatile int winch_blocked_self, winch_blocked_hup, winch_blocked_rtmax;

/* What the SA_NODEFER|SA_RESETHAND handler (SIGVTALRM) saw. */
static volatile int vtalrm_blocked_self;

/* Each signal gets its own function so that a restore which mixes up
 * handlers is caught by the pointer comparison. */
static void h_usr1(int sig) { (void)sig; n_usr1++; }
static void h_usr2(int sig) { (void)sig; n_usr2++; }
static void h_chld(int sig) { (void)sig; n_chld++; }

static void h_rt3(int sig, siginfo_t *si, void *uc)
{
	(void)sig; (void)si; (void)uc;
	n_rt3++;
}

static void h_int(int sig, siginfo_t *si, void *uc)
{
	(void)sig; (void)si; (void)uc;
	n_int++;
}

static void h_term(int sig, siginfo_t *si, void *uc)
{
	int local = 0;
	stack_t ss;

	(void)sig; (void)uc;
	term_local = (uintptr_t)&local;
	term_code = si->si_code;
	term_pid = si->si_pid;
	if (sigaltstack(NULL, &ss) == 0)
		term_ss_flags = ss.ss_flags;
	else
		term_ss_flags = -1;
	n_term++;
}

static void h_winch(int sig, siginfo_t *si, void *uc)
{
	int local = 0;
	sigset_t cur;

	(void)uc;
	winch_local = (uintptr_t)&local;
	winch_signo = si->si_signo;
	winch_code = si->si_code;
	winch_pid = si->si_pid;
	winch_uid = si->si_uid;
	/* The mask in effect inside a handler is the blocked mask plus
	 * sa_mask plus the signal itself (no SA_NODEFER): this proves that
	 * the restored sa_mask is really applied by the kernel. */
	sigprocmask(SIG_BLOCK, NULL, &cur);
	winch_blocked_self = sigismember(&cur, SIGWINCH);
	winch_blocked_hup = sigismember(&cur, SIGHUP);
	winch_blocked_rtmax = sigismember(&cur, SIGRTMAX);
	(void)sig;
	n_winch++;
}

static void h_vtalrm(int sig)
{
	sigset_t cur;

	(void)sig;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	vtalrm_blocked_self = sigismember(&cur, SIGVTALRM);
	n_vtalrm++;
}

static void install(int sig, void *handler, int flags, const int *mask_sigs)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (; mask_sigs && *mask_sigs; mask_sigs++)
		sigaddset(&sa.sa_mask, *mask_sigs);
	sa.sa_flags = flags;
	if (flags & SA_SIGINFO)
		sa.sa_sigaction = handler;
	else
		sa.sa_handler = handler;
	if (sigaction(sig, &sa, NULL) != 0) {
		tp_fail("setup: sigaction(%d): %s", sig, strerror(errno));
		exit(1);
	}
}

/* The kernel's view through the raw system call: glibc's sigaction()
 * refuses its internal signals 32 and 33, whose dispositions a restore
 * must carry over all the same. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long long mask;
};

static void snap(struct sigsnap *s)
{
	for (int sig = 1; sig <= NSIGS; sig++) {
		struct ksigaction ka;

		memset(&ka, 0, sizeof(ka));
		memset(&s[sig], 0, sizeof(s[sig]));
		if (syscall(SYS_rt_sigaction, sig, NULL, &ka, 8) != 0) {
			s[sig].err = errno;
			continue;
		}
		s[sig].handler = ka.handler;
		s[sig].flags = ka.flags & ~SA_RESTORER;
		for (int m = 1; m <= NSIGS; m++)
			s[sig].mask[m] = (ka.mask >> (m - 1)) & 1;
	}
}

static void compare_sigactions(void)
{
	struct sigsnap after[NSIGS + 1];

	snap(after);
	for (int sig = 1; sig <= NSIGS; sig++) {
		struct sigsnap *b = &before[sig], *a = &after[sig];

		if (b->err != a->err) {
			tp_fail("sigaction(%d): errno %d before, %d after",
				sig, b->err, a->err);
			continue;
		}
		tp_check(b->handler == a->handler,
			 "signal %d: handler %p before, %p after",
			 sig, b->handler, a->handler);
		tp_check(b->flags == a->flags,
			 "signal %d: sa_flags %#x before, %#x after",
			 sig, b->flags, a->flags);
		for (int m = 1; m <= NSIGS; m++)
			tp_check(b->mask[m] == a->mask[m],
				 "signal %d: sa_mask bit %d was %d, now %d",
				 sig, m, b->mask[m], a->mask[m]);
	}
}

/* The handler, flags and mask that setup gave to @sig, as sigaction()
 * reports them: the snapshot comparison alone would pass if both sides
 * were wrong in the same way (e.g. setup silently failing). */
static void expect_action(int sig, void *handler, int flags, const int *mask)
{
	struct sigsnap *b = &before[sig];
	unsigned char want[NSIGS + 1] = { 0 };

	for (; mask && *mask; mask++)
		want[*mask] = 1;
	tp_check(b->handler == handler, "setup: signal %d handler %p, want %p",
		 sig, b->handler, handler);
	tp_check(b->flags == flags, "setup: signal %d flags %#x, want %#x",
		 sig, b->flags, flags);
	for (int m = 1; m <= NSIGS; m++)
		tp_check(b->mask[m] == want[m],
			 "setup: signal %d sa_mask bit %d is %d", sig, m,
			 b->mask[m]);
}

/* Takes one pending @sig without waiting; -1 if none is pending.  The
 * raw system call, because glibc's sigtimedwait() folds SI_TKILL into
 * SI_USER and the test wants to see what the kernel has queued. */
static int take(int sig, siginfo_t *si)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	memset(si, 0, sizeof(*si));
	return syscall(SYS_rt_sigtimedwait, &set, si, &zero, NSIGS / 8);
}

static int in_altstack(uintptr_t p)
{
	return p >= (uintptr_t)altstack &&
	       p < (uintptr_t)altstack + ALTSTACK_SIZE;
}

static char shd_before[64], sig_before[64], shd_after[64], sig_after[64];

/* The value of a "Key:" line of /proc/self/status. */
static void status_line(const char *key, char *out, size_t n)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			snprintf(out, n, "%s", line + strlen(key));
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	const int rt3 = SIGRTMIN + 3, rt4 = SIGRTMIN + 4;
	const int m_usr1[] = { SIGCHLD, SIGRTMIN + 7, 0 };
	const int m_int[] = { SIGQUIT, SIGTERM, SIGRTMIN + 9, 0 };
	const int m_term[] = { SIGINT, SIGRTMIN + 5, 0 };
	const int m_winch[] = { SIGHUP, SIGRTMAX, 0 };
	const int m_chld[] = { SIGUSR1, 0 };
	unsigned char want_blocked[NSIGS + 1] = { 0 };
	const int blocked[] = { SIGUSR1, SIGUSR2, rt3, rt4, SIGRTMAX - 1, 0 };
	const int pending[] = { SIGUSR1, SIGUSR2, rt3, rt4, 0 };
	unsigned char want_pending[NSIGS + 1] = { 0 };
	union sigval v;
	sigset_t set;
	stack_t ss;
	siginfo_t si;
	pid_t pid;

	tp_init(argc, argv);
	pid = getpid();

	install(SIGUSR1, h_usr1, SA_RESTART, m_usr1);
	install(SIGUSR2, h_usr2, SA_NODEFER | SA_RESETHAND, NULL);
	install(rt3, h_rt3, SA_SIGINFO, NULL);
	install(SIGINT, h_int, SA_SIGINFO | SA_RESTART, m_int);
	install(SIGTERM, h_term, SA_SIGINFO | SA_ONSTACK, m_term);
	install(SIGWINCH, h_winch, SA_SIGINFO | SA_RESTART, m_winch);
	install(SIGVTALRM, h_vtalrm, SA_NODEFER | SA_RESETHAND, NULL);
	install(SIGCHLD, h_chld, SA_NOCLDSTOP | SA_RESTART, m_chld);
	install(SIGPIPE, SIG_IGN, 0, NULL);
	install(SIGHUP, SIG_IGN, 0, NULL);
	/* SIG_DFL with flags and a mask: still state the kernel keeps. */
	install(SIGURG, SIG_DFL, SA_RESTART, m_usr1);

	altstack = malloc(ALTSTACK_SIZE);
	if (!altstack) {
		tp_fail("setup: malloc");
		return 1;
	}
	memset(altstack, 0x5a, ALTSTACK_SIZE);
	ss.ss_sp = altstack;
	ss.ss_size = ALTSTACK_SIZE;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) != 0) {
		tp_fail("setup: sigaltstack: %s", strerror(errno));
		return 1;
	}

	sigemptyset(&set);
	for (const int *p = blocked; *p; p++) {
		sigaddset(&set, *p);
		want_blocked[*p] = 1;
	}
	sigprocmask(SIG_BLOCK, &set, NULL);

	/* Two values of the same real-time signal: both are queued, and
	 * must come back in the order they were sent. */
	v.sival_int = 111;
	sigqueue(pid, rt3, v);
	v.sival_int = 222;
	sigqueue(pid, rt3, v);
	kill(pid, SIGUSR2);
	v.sival_int = 42;
	sigqueue(pid, SIGUSR1, v);
	/* Thread-directed (per-task pending rather than shared pending). */
	syscall(SYS_tgkill, pid, (pid_t)syscall(SYS_gettid), rt4);
	for (const int *p = pending; *p; p++)
		want_pending[*p] = 1;

	snap(before);
	expect_action(SIGUSR1, h_usr1, SA_RESTART, m_usr1);
	expect_action(SIGUSR2, h_usr2, SA_NODEFER | SA_RESETHAND, NULL);
	expect_action(SIGTERM, h_term, SA_SIGINFO | SA_ONSTACK, m_term);
	expect_action(SIGPIPE, SIG_IGN, 0, NULL);
	if (tp_failures)
		return 1;

	/* which signals wait on the process queue and which on the thread's:
	 * a shared one put back as the thread's own would show here */
	status_line("ShdPnd:", shd_before, sizeof(shd_before));
	status_line("SigPnd:", sig_before, sizeof(sig_before));
	tp_ready();
	tp_wait_go();
	status_line("ShdPnd:", shd_after, sizeof(shd_after));
	status_line("SigPnd:", sig_after, sizeof(sig_after));
	tp_check(!strcmp(shd_before, shd_after) && !strcmp(sig_before, sig_after),
		 "pending queues changed: ShdPnd %s -> %s, SigPnd %s -> %s",
		 shd_before, shd_after, sig_before, sig_after);

	/* Dispositions, before anything below changes them. */
	compare_sigactions();
	tp_check(n_usr1 + n_usr2 + n_rt3 + n_chld + n_int + n_term +
		 n_winch + n_vtalrm == 0,
		 "a handler ran during checkpoint/restart");

	/* Blocked mask. */
	sigprocmask(SIG_BLOCK, NULL, &set);
	for (int sig = 1; sig <= NSIGS; sig++)
		tp_check((sigismember(&set, sig) == 1) == want_blocked[sig],
			 "signal %d: blocked is %d, want %d", sig,
			 sigismember(&set, sig), want_blocked[sig]);

	/* Alternate stack. */
	memset(&ss, 0, sizeof(ss));
	tp_check(sigaltstack(NULL, &ss) == 0, "sigaltstack: %s",
		 strerror(errno));
	tp_check(ss.ss_sp == altstack, "ss_sp %p, want %p", ss.ss_sp,
		 (void *)altstack);
	tp_check(ss.ss_size == ALTSTACK_SIZE, "ss_size %zu, want %d",
		 ss.ss_size, ALTSTACK_SIZE);
	tp_check(ss.ss_flags == 0, "ss_flags %#x, want 0", ss.ss_flags);

	/* Pending signals: the set first, then each siginfo. */
	sigemptyset(&set);
	sigpending(&set);
	for (int sig = 1; sig <= NSIGS; sig++)
		tp_check((sigismember(&set, sig) == 1) == want_pending[sig],
			 "signal %d: pending is %d, want %d", sig,
			 sigismember(&set, sig), want_pending[sig]);

	tp_check(take(SIGUSR1, &si) == SIGUSR1, "SIGUSR1 not pending");
	tp_check(si.si_code == SI_QUEUE, "SIGUSR1 si_code %d, want SI_QUEUE",
		 si.si_code);
	tp_check(si.si_value.sival_int == 42, "SIGUSR1 si_value %d, want 42",
		 si.si_value.sival_int);
	tp_check(si.si_pid == pid, "SIGUSR1 si_pid %d, want %d", si.si_pid,
		 pid);
	tp_check(si.si_uid == getuid(), "SIGUSR1 si_uid %d", si.si_uid);
	tp_check(take(SIGUSR1, &si) < 0, "SIGUSR1 pending twice");

	tp_check(take(SIGUSR2, &si) == SIGUSR2, "SIGUSR2 not pending");
	tp_check(si.si_code == SI_USER, "SIGUSR2 si_code %d, want SI_USER",
		 si.si_code);
	tp_check(si.si_pid == pid, "SIGUSR2 si_pid %d, want %d", si.si_pid,
		 pid);
	tp_check(take(SIGUSR2, &si) < 0, "SIGUSR2 pending twice");

	tp_check(take(rt3, &si) == rt3, "SIGRTMIN+3 (1st) not pending");
	tp_check(si.si_code == SI_QUEUE, "SIGRTMIN+3 si_code %d", si.si_code);
	tp_check(si.si_value.sival_int == 111,
		 "SIGRTMIN+3 1st si_value %d, want 111",
		 si.si_value.sival_int);
	tp_check(si.si_pid == pid, "SIGRTMIN+3 si_pid %d", si.si_pid);
	tp_check(take(rt3, &si) == rt3, "SIGRTMIN+3 (2nd) not pending");
	tp_check(si.si_code == SI_QUEUE, "SIGRTMIN+3 si_code %d", si.si_code);
	tp_check(si.si_value.sival_int == 222,
		 "SIGRTMIN+3 2nd si_value %d, want 222",
		 si.si_value.sival_int);
	tp_check(take(rt3, &si) < 0, "SIGRTMIN+3 pending a third time");

	tp_check(take(rt4, &si) == rt4, "SIGRTMIN+4 (tgkill) not pending");
	tp_check(si.si_code == SI_TKILL, "SIGRTMIN+4 si_code %d, want SI_TKILL",
		 si.si_code);
	tp_check(si.si_pid == pid, "SIGRTMIN+4 si_pid %d", si.si_pid);
	tp_check(take(rt4, &si) < 0, "SIGRTMIN+4 pending twice");

	sigemptyset(&set);
	sigpending(&set);
	for (int sig = 1; sig <= NSIGS; sig++)
		tp_check(sigismember(&set, sig) != 1,
			 "signal %d still pending after draining", sig);
	tp_check(n_usr1 + n_usr2 + n_rt3 == 0,
		 "a handler ran for a blocked signal");

	/* The SA_ONSTACK handler must run on the restored alternate stack. */
	raise(SIGTERM);
	tp_check(n_term == 1, "SIGTERM handler ran %d times, want 1", n_term);
	tp_check(in_altstack(term_local),
		 "SIGTERM handler not on the alternate stack (%#lx)",
		 (unsigned long)term_local);
	tp_check(term_ss_flags == SS_ONSTACK,
		 "in SIGTERM handler ss_flags %#x, want SS_ONSTACK",
		 term_ss_flags);
	tp_check(term_code == SI_TKILL && term_pid == pid,
		 "SIGTERM si_code %d si_pid %d", term_code, term_pid);

	/* An ordinary SA_SIGINFO handler: runs on the normal stack, gets
	 * the right siginfo and its sa_mask is applied. */
	raise(SIGWINCH);
	tp_check(n_winch == 1, "SIGWINCH handler ran %d times, want 1",
		 n_winch);
	tp_check(!in_altstack(winch_local),
		 "SIGWINCH handler (no SA_ONSTACK) ran on the alternate stack");
	tp_check(winch_signo == SIGWINCH, "SIGWINCH si_signo %d", winch_signo);
	tp_check(winch_code == SI_TKILL, "SIGWINCH si_code %d, want SI_TKILL",
		 winch_code);
	tp_check(winch_pid == pid, "SIGWINCH si_pid %d, want %d", winch_pid,
		 pid);
	tp_check(winch_uid == (int)getuid(), "SIGWINCH si_uid %d", winch_uid);
	tp_check(winch_blocked_self == 1 && winch_blocked_hup == 1 &&
		 winch_blocked_rtmax == 1,
		 "in SIGWINCH handler blocked self %d SIGHUP %d SIGRTMAX %d",
		 winch_blocked_self, winch_blocked_hup, winch_blocked_rtmax);

	/* SA_NODEFER: not blocked inside; SA_RESETHAND: SIG_DFL after. */
	raise(SIGVTALRM);
	tp_check(n_vtalrm == 1, "SIGVTALRM handler ran %d times", n_vtalrm);
	tp_check(vtalrm_blocked_self == 0,
		 "SIGVTALRM blocked inside its SA_NODEFER handler");
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sigaction(SIGVTALRM, NULL, &sa);
		tp_check(sa.sa_handler == SIG_DFL,
			 "SIGVTALRM not reset to SIG_DFL (SA_RESETHAND)");
	}

	/* SIG_IGN really ignores: these would kill a fresh process. */
	raise(SIGHUP);
	{
		int p[2];

		if (pipe(p) == 0) {
			close(p[0]);
			tp_check(write(p[1], "x", 1) < 0 && errno == EPIPE,
				 "write to a broken pipe did not fail with EPIPE");
			close(p[1]);
		}
	}
	tp_check(n_chld == 0 && n_int == 0, "unexpected handler calls");

	return tp_done();
}
