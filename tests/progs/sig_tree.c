/* sig_tree.c - the signal dispositions of every process of a tree, each
 * its own: checkpoint reads those of all the processes at once (their
 * calls spread over the threads of each, and over the processes), so a
 * table read into the wrong process's record, or a signal read from the
 * wrong thread's slot, shows here.
 *
 * The root, two children and a grandchild each set every catchable
 * signal to a disposition of their own (a handler, SIG_IGN or SIG_DFL,
 * flags and a mask that depend on the process and the signal).  The
 * second child has three threads; the grandchild runs under a seccomp
 * filter that allows everything (its calls go one at a time).  After
 * the restart each compares its table, signal by signal, with what it
 * set, and the handlers run.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tp.h"

#define NSIGS 64
#define SA_RESTORER_ 0x04000000

struct k_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static volatile sig_atomic_t hits;

static void h0(int s) { (void)s; hits++; }
static void h1(int s) { (void)s; hits += 2; }

/* What process @who sets signal @sig to. */
static void want(int who, int sig, struct sigaction *sa)
{
	int k = (who * 7 + sig) % 5;

	memset(sa, 0, sizeof(*sa));
	sa->sa_handler = k == 0 ? SIG_DFL : k == 1 ? SIG_IGN : k == 2 ? h0 : h1;
	sa->sa_flags = (k >= 2 ? SA_RESTART : 0) | ((who + sig) % 3 == 0 ? SA_NODEFER : 0);
	sigemptyset(&sa->sa_mask);
	sigaddset(&sa->sa_mask, 1 + (who * 11 + sig) % 31);	/* the kernel drops 9, 19 */
	if (sig == SIGCHLD)	/* the parents wait for their children */
		sa->sa_handler = SIG_DFL;
}

static bool skip(int sig)
{
	return sig == SIGKILL || sig == SIGSTOP || sig == 32 || sig == 33;
}

static void set_all(int who)
{
	struct sigaction sa;

	for (int sig = 1; sig <= NSIGS; sig++) {
		if (skip(sig))
			continue;
		want(who, sig, &sa);
		if (sigaction(sig, &sa, NULL))
			tp_fail("process %d: sigaction(%d): %s", who, sig, strerror(errno));
	}
}

/* 0 if every disposition is as set (the kernel's view, raw). */
static int check_all(int who)
{
	int bad = 0;

	for (int sig = 1; sig <= NSIGS; sig++) {
		struct k_sigaction ka;
		struct sigaction sa;
		uint64_t m = 0;

		if (skip(sig))
			continue;
		want(who, sig, &sa);
		for (int s = 1; s <= NSIGS; s++)
			if (!skip(s) && sigismember(&sa.sa_mask, s))
				m |= 1ULL << (s - 1);
		if (syscall(SYS_rt_sigaction, sig, NULL, &ka, 8)) {
			printf("FAIL: process %d: rt_sigaction(%d): %s\n", who, sig,
			       strerror(errno));
			bad = 1;
			continue;
		}
		if (ka.handler != (void *)sa.sa_handler ||
		    (ka.flags & ~(unsigned long)SA_RESTORER_) != (unsigned long)sa.sa_flags ||
		    ka.mask != m) {
			printf("FAIL: process %d: signal %d is %p 0x%lx 0x%llx, want %p 0x%x 0x%llx\n",
			       who, sig, ka.handler, ka.flags, (unsigned long long)ka.mask,
			       (void *)sa.sa_handler, sa.sa_flags, (unsigned long long)m);
			bad = 1;
		}
	}
	return bad;
}

/* The handlers run as restored: one signal of each kind it catches. */
static int run_handlers(int who)
{
	sig_atomic_t expect = 0;
	struct sigaction sa;

	hits = 0;
	for (int sig = SIGUSR1; sig <= SIGUSR2; sig += SIGUSR2 - SIGUSR1) {
		want(who, sig, &sa);
		if (sa.sa_handler == h0 || sa.sa_handler == h1) {
			expect += sa.sa_handler == h0 ? 1 : 2;
			raise(sig);
		}
	}
	if (hits != expect)
		printf("FAIL: process %d: handlers ran for %d, want %d\n", who, hits, expect);
	return hits != expect;
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void allow_all(void)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog p = { 1, f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p))
		printf("FAIL: seccomp: %s\n", strerror(errno));
}

static int wait_child(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st);
}

/* Process @who: its own table, its own children, then the check. */
static int member(int who)
{
	pid_t kid = 0;
	pthread_t th;

	if (who == 1 && (kid = fork()) == 0) {
		allow_all();
		set_all(3);
		tp_wait_go();
		_exit(check_all(3) | run_handlers(3));
	}
	if (who == 2)
		for (int i = 0; i < 2; i++)
			pthread_create(&th, NULL, idle, NULL);
	set_all(who);
	tp_wait_go();
	return check_all(who) | run_handlers(who) | (kid ? wait_child(kid) : 0);
}

int main(int argc, char **argv)
{
	pid_t kids[2];
	int bad;

	tp_init(argc, argv);
	for (int i = 0; i < 2; i++)
		if ((kids[i] = fork()) == 0)
			_exit(member(i + 1));
	set_all(0);
	sleep(1);	/* every process has set its table */
	tp_ready();
	tp_wait_go();
	bad = check_all(0) | run_handlers(0);
	for (int i = 0; i < 2; i++)
		tp_check(!wait_child(kids[i]), "child %d failed", i + 1);
	tp_check(!bad, "the root's table");
	return tp_done();
}
