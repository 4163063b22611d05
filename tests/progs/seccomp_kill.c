/* seccomp_kill.c - a seccomp filter that kills the process on calls
 * ckpt itself makes in it while checkpointing (sigaltstack, getitimer),
 * whatever the architecture says, and a second thread under it.
 *
 * ckpt suspends the filter while it holds the process, but a ckpt killed
 * at the entry stop of one of those calls would leave the process to
 * run it under the filter (src/sfilter.h): the kill tests run this one.
 * After the restart the filter must still be there: a child calling
 * getitimer() dies of SIGSYS; the second thread still runs under it.
 * And those two calls must have been made for real behind their
 * stand-ins (remote.c): the interval timer (read by getitimer) still
 * fires after the restart, its handler on the alternate stack (read by
 * sigaltstack).  The process cannot ask either itself: the filter
 * would kill it.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp.h"

static volatile int stop;
static char alt[64 << 10];
static volatile int alarms, off_stack;

static void on_alarm(int sig)
{
	char here;

	(void)sig;
	if (&here < alt || &here >= alt + sizeof(alt))
		off_stack++;
	alarms++;
}

static int timer_on_altstack(void)
{
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_ONSTACK | SA_RESTART };
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } };

	return sigaltstack(&ss, NULL) || sigaction(SIGALRM, &sa, NULL) ||
	       setitimer(ITIMER_REAL, &it, NULL);
}

static int install(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sigaltstack, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getitimer, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

static void *spin(void *arg)
{
	(void)arg;
	while (!stop)
		usleep(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	struct itimerval it;
	pthread_t th;
	int st = 0;
	pid_t child;

	tp_init(argc, argv);
	if (timer_on_altstack() || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    pthread_create(&th, NULL, spin, NULL) || install()) {
		perror("setup");
		return 2;
	}
	tp_ready();
	tp_wait_go();
	alarms = off_stack = 0;
	for (int i = 0; i < 300 && alarms < 2; i++)
		usleep(10000);
	tp_check(alarms >= 2, "the interval timer fired %d times in 3 s after the restart, want 2",
		 alarms);
	tp_check(!off_stack, "%d alarms handled off the alternate stack", off_stack);

	child = fork();
	if (child == 0) {
		syscall(SYS_getitimer, ITIMER_REAL, &it);
		_exit(0);
	}
	tp_check(child > 0 && waitpid(child, &st, 0) == child && WIFSIGNALED(st) &&
		 WTERMSIG(st) == SIGSYS, "getitimer in a child: status %#x, want SIGSYS", st);
	stop = 1;
	pthread_join(th, NULL);
	return tp_done();
}
