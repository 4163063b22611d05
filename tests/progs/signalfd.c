/* signalfd.c - signalfds keep their mask and flags, a signal pending at
 * the checkpoint is read through one after restart, new signals too, and
 * one shared with a child stays one description. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/kcmp.h>

#include "tp.h"

static unsigned long long fdinfo_mask(int fd)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strstr(buf, "sigmask:");
	return p ? strtoull(p + 8, NULL, 16) : 0;
}

static int read_sig(int fd, struct signalfd_siginfo *si, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return read(fd, si, sizeof(*si)) == sizeof(*si) ? (int)si->ssi_signo : -1;
}

static void child(int sfd, int hold)
{
	struct signalfd_siginfo si;
	int ok;
	char c;

	tp_wait_go();
	kill(getpid(), SIGUSR2);
	ok = read_sig(sfd, &si, 5000) == SIGUSR2 && si.ssi_pid == (uint32_t)getpid();
	_exit(read(hold, &c, 1) == 0 && ok ? 0 : 1);	/* until kcmp is done */
}

int main(int argc, char **argv)
{
	int rt = SIGRTMIN + 1, fast, slow, st, hold[2];
	unsigned long long want;
	struct signalfd_siginfo si;
	union sigval val = { .sival_int = 42 };
	sigset_t m;
	pid_t pid;

	tp_init(argc, argv);
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	sigaddset(&m, SIGUSR2);
	sigaddset(&m, rt);
	sigprocmask(SIG_BLOCK, &m, NULL);
	sigdelset(&m, SIGUSR2);
	fast = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	slow = signalfd(-1, &m, 0);
	if (fast < 0 || slow < 0 || sigqueue(getpid(), rt, val))
		return 1;
	if (pipe(hold))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(hold[1]);
		child(slow, hold[0]);
	}
	close(hold[0]);
	tp_ready();
	tp_wait_go();

	want = (1ULL << (SIGUSR1 - 1)) | (1ULL << (rt - 1));
	tp_check(fdinfo_mask(fast) == want, "mask %llx, want %llx", fdinfo_mask(fast), want);
	tp_check(fdinfo_mask(slow) == 1ULL << (SIGUSR2 - 1), "second mask %llx",
		 fdinfo_mask(slow));
	tp_check(fcntl(fast, F_GETFL) & O_NONBLOCK, "O_NONBLOCK lost");
	tp_check(!(fcntl(slow, F_GETFL) & O_NONBLOCK), "O_NONBLOCK appeared");
	tp_check(fcntl(fast, F_GETFD) & FD_CLOEXEC, "FD_CLOEXEC lost");
	tp_check(read_sig(fast, &si, 0) == rt && si.ssi_int == 42,
		 "the signal pending at the checkpoint was not read through the signalfd");
	tp_check(read(fast, &si, sizeof(si)) < 0 && errno == EAGAIN,
		 "more than the pending signal");
	kill(getpid(), SIGUSR1);
	tp_check(read_sig(fast, &si, 1000) == SIGUSR1 && si.ssi_pid == (uint32_t)getpid(),
		 "a new SIGUSR1 was not read through the signalfd");
	kill(getpid(), SIGUSR2);	/* not in its mask */
	tp_check(read(fast, &si, sizeof(si)) < 0 && errno == EAGAIN,
		 "SIGUSR2 read through a signalfd without it in its mask");
	tp_check(read_sig(slow, &si, 1000) == SIGUSR2, "SIGUSR2 not read through the second");
	tp_check(syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, slow, slow) == 0,
		 "the child's signalfd is another description");
	close(hold[1]);
	tp_check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		 "child did not read its signal through the signalfd (0x%x)", st);
	return tp_done();
}
