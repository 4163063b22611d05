/* stopped_pending.c - a child stopped by SIGTSTP with more stop signals
 * pending (sent to the stopped task, they wait for it to run), and one
 * stopped by SIGSTOP the same way: ckpt's own calls into them must not
 * trip on those signals, and each comes back stopped by its own signal
 * and runs on after SIGCONT. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tp.h"

static pid_t stopped_child(int sig)
{
	siginfo_t si;
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	kill(pid, sig);
	if (waitid(P_PID, pid, &si, WNOWAIT | WSTOPPED) || si.si_status != sig)
		exit(2);
	syscall(SYS_tkill, pid, SIGSTOP);
	kill(pid, SIGSTOP);
	return pid;
}

static void check(pid_t pid, int sig)
{
	siginfo_t si = { 0 };

	tp_check(!waitid(P_PID, pid, &si, WNOWAIT | WSTOPPED | WNOHANG) &&
		 si.si_code == CLD_STOPPED && si.si_status == sig,
		 "child %d: stopped by %d, wanted %d", pid, si.si_status, sig);
	kill(pid, SIGCONT);
	memset(&si, 0, sizeof(si));
	tp_check(!waitid(P_PID, pid, &si, WCONTINUED) && si.si_code == CLD_CONTINUED,
		 "child %d does not continue", pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	pid_t tstp, stop;

	tp_init(argc, argv);
	setpgid(0, 0);	/* not orphaned: SIGTSTP stops */
	tstp = stopped_child(SIGTSTP);
	stop = stopped_child(SIGSTOP);
	tp_ready();
	tp_wait_go();
	check(tstp, SIGTSTP);
	check(stop, SIGSTOP);
	return tp_done();
}
