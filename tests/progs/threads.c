/* threads.c - a multi-threaded process: every thread keeps its own tid,
 * TLS (fs base), name, blocked mask, alternate stack and a signal sent to
 * it alone, and each sleeps in a different system call across the
 * checkpoint (futex, nanosleep, poll, sigtimedwait), which must resume. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "tp.h"

#ifndef NTHREADS
#define NTHREADS 8
#endif

static __thread uint64_t tls_val;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int go, ready;
static char errs[NTHREADS][160];
static pid_t tids[NTHREADS];

static int thread_sig(int i)
{
	return SIGRTMIN + 2 + i % 8;
}

static void wait_go(int how)
{
	struct timespec ts = { 0, 3 * 1000 * 1000 };
	sigset_t none;

	sigemptyset(&none);
	switch (how) {
	case 0:		/* futex */
		pthread_mutex_lock(&lock);
		while (!go)
			pthread_cond_wait(&cv, &lock);
		pthread_mutex_unlock(&lock);
		break;
	case 1:
		while (!go)
			nanosleep(&ts, NULL);
		break;
	case 2:
		while (!go)
			poll(NULL, 0, 4);
		break;
	default:	/* a wait for a signal that never comes */
		while (!go)
			sigtimedwait(&none, NULL, &ts);
		break;
	}
}

static void *thread_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	char name[16], got[16];
	stack_t ss = { .ss_size = 65536 + i * 4096 }, cur;
	sigset_t mask, pend;
	siginfo_t si;
	struct timespec zero = { 0, 0 };

	tls_val = 0x1000 + i * 0x1111ULL;
	tids[i] = syscall(SYS_gettid);
	snprintf(name, sizeof(name), "tp-th-%d", i);
	prctl(PR_SET_NAME, name);
	ss.ss_sp = malloc(ss.ss_size);
	sigaltstack(&ss, NULL);
	sigemptyset(&mask);
	sigaddset(&mask, thread_sig(i));
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	wait_go(i % 4);

	char *e = errs[i];
	if (tls_val != 0x1000 + i * 0x1111ULL)
		snprintf(e, 160, "thread %d: TLS value lost", i);
	else if (syscall(SYS_gettid) != tids[i])
		snprintf(e, 160, "thread %d: tid %ld, was %d", i, syscall(SYS_gettid), tids[i]);
	else if (prctl(PR_GET_NAME, got) || strcmp(got, name))
		snprintf(e, 160, "thread %d: name '%s'", i, got);
	else if (sigaltstack(NULL, &cur) || cur.ss_sp != ss.ss_sp || cur.ss_size != ss.ss_size)
		snprintf(e, 160, "thread %d: alternate stack lost", i);
	else if (pthread_sigmask(SIG_BLOCK, NULL, &mask) || !sigismember(&mask, thread_sig(i)))
		snprintf(e, 160, "thread %d: blocked mask lost", i);
	else if (sigpending(&pend) || !sigismember(&pend, thread_sig(i)))
		snprintf(e, 160, "thread %d: its pending signal is gone", i);
	/* raw: glibc's sigtimedwait reports SI_TKILL as SI_USER */
	else if (syscall(SYS_rt_sigtimedwait, &mask, &si, &zero, 8) != thread_sig(i) ||
		 si.si_code != SI_TKILL)
		snprintf(e, 160, "thread %d: pending signal wrong", i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	sigset_t all;
	int n = 0;

	tp_init(argc, argv);
	/* the main thread does not take the threads' signals */
	sigemptyset(&all);
	for (int i = 0; i < 8; i++)
		sigaddset(&all, SIGRTMIN + 2 + i);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i)) {
			printf("FAIL: pthread_create %d\n", i);
			return 1;
		}
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) != NTHREADS)
		usleep(1000);
	for (int i = 0; i < NTHREADS; i++)
		pthread_kill(th[i], thread_sig(i));	/* pending: blocked there */
	tp_ready();
	tp_wait_go();
	pthread_mutex_lock(&lock);
	go = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		if (errs[i][0] && n++ < 10)
			tp_fail("%s", errs[i]);
	}
	tp_check(n == 0, "%d threads lost state", n);
	return tp_done();
}
