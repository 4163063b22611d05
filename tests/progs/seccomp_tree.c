/* seccomp_tree.c - a parent under a seccomp filter that refuses wait4
 * (EPERM), with two children.  checkpoint --kill reaps a killed parent's
 * children by a remote wait4 in the parent: its filters must stay
 * suspended for it (tests/cases/restart.sh, kill_frees_pids, checks the
 * children are gone at once).  After the restart the filter is there
 * still, and the parent reaps its children with waitid.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tp.h"

static int refuse_wait4(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_wait4, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p);
}

int main(int argc, char **argv)
{
	pid_t kids[2];
	siginfo_t si;

	tp_init(argc, argv);
	for (int i = 0; i < 2; i++)
		if ((kids[i] = fork()) == 0) {
			tp_wait_go();
			_exit(40 + i);
		}
	if (refuse_wait4()) {
		printf("FAIL: seccomp: %s\n", strerror(errno));
		return 1;
	}
	tp_check(syscall(SYS_wait4, -1, NULL, WNOHANG, NULL) < 0 && errno == EPERM,
		 "wait4 not refused before the checkpoint");
	tp_ready();
	tp_wait_go();
	tp_check(syscall(SYS_wait4, -1, NULL, WNOHANG, NULL) < 0 && errno == EPERM,
		 "wait4 not refused after the restart: the filter is gone");
	for (int i = 0; i < 2; i++) {
		memset(&si, 0, sizeof(si));
		tp_check(!waitid(P_PID, kids[i], &si, WEXITED) && si.si_code == CLD_EXITED &&
			 si.si_status == 40 + i, "child %d: status %d", i, si.si_status);
	}
	return tp_done();
}
