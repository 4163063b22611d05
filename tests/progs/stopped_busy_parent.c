/* stopped_busy_parent.c - a child stopped by SIGSTOP whose parent looks
 * for that stop the moment it runs again.  The child shares its CPU with
 * a spinning sibling, both at SCHED_IDLE, whose wakeups preempt no one:
 * let go, the child waits for a tick of the sibling's CPU before it can
 * stop.  A restart that lets the parent go meanwhile (on another CPU)
 * has the parent find its child running. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tp.h"

static void pin(pid_t pid, int n)
{
	cpu_set_t cpu;

	CPU_ZERO(&cpu);
	CPU_SET(n, &cpu);
	if (sched_setaffinity(pid, sizeof(cpu), &cpu))
		exit(2);
}

/* (set up by the parent: one to be stopped may not have run yet) */
static pid_t idle_child(bool spin)
{
	struct sched_param sp = { 0 };
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			if (!spin)
				pause();
	}
	pin(pid, 0);
	if (sched_setscheduler(pid, SCHED_IDLE, &sp))
		exit(2);
	return pid;
}

int main(int argc, char **argv)
{
	siginfo_t si = { 0 };
	pid_t pid, spinner;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	tp_init(argc, argv);
	pin(0, cpus > 1 ? cpus - 1 : 0);	/* (one CPU: a weaker test) */
	pid = idle_child(false);
	kill(pid, SIGSTOP);
	if (waitid(P_PID, pid, &si, WNOWAIT | WSTOPPED))
		exit(2);
	spinner = idle_child(true);	/* after: let go before the child */
	tp_ready();
	while (access(tp_gofile, F_OK) != 0)
		;	/* no sleep: the CPU is not the children's */
	memset(&si, 0, sizeof(si));
	tp_check(!waitid(P_PID, pid, &si, WNOWAIT | WSTOPPED | WNOHANG) &&
		 si.si_code == CLD_STOPPED && si.si_status == SIGSTOP,
		 "child %d: not stopped when its parent runs again", pid);
	kill(spinner, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(spinner, NULL, 0);
	waitpid(pid, NULL, 0);
	return tp_done();
}
