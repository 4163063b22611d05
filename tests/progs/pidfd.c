/* pidfd.c - pidfds: on itself (O_NONBLOCK kept, one description shared
 * with its child; another with PIDFD_THREAD), on a live child (signalled and waited for through it
 * after the restart), and on processes that died and were reaped, which
 * must still read as dead: two descriptions and a dup on one, sharing
 * its inode, another on a second dead process, with an inode of its own.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/kcmp.h>

#include "tp.h"

#define PIDFD_THREAD_ O_EXCL

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(SYS_pidfd_open, pid, flags);
}

static int send_sig(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* fdinfo's field @key (a number in @base), or -2 */
static long fdinfo(int fd, const char *key, int base)
{
	char path[64], line[128];
	long v = -2;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, base);
	if (f)
		fclose(f);
	return v;
}

static int fdinfo_pid(int fd)
{
	return fdinfo(fd, "Pid:", 10);
}

static ino_t ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* A child that dies (killed) and is reaped, @n pidfds opened on it. */
static int dead(int *fds, int n)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		for (;;)
			pause();
	for (int i = 0; i < n; i++)
		fds[i] = pidfd_open(pid, i ? O_NONBLOCK : 0);
	kill(pid, SIGKILL);
	return waitpid(pid, NULL, 0) == pid ? 0 : -1;
}

int main(int argc, char **argv)
{
	int self, thr, live, d1[2], d1dup, d2, st;
	siginfo_t si = { 0 };
	pid_t child;

	tp_init(argc, argv);
	self = pidfd_open(getpid(), O_NONBLOCK);
	if (self < 0 || dead(d1, 2) || dead(&d2, 1) || d1[0] < 0 || d1[1] < 0 || d2 < 0)
		return 1;
	d1dup = dup(d1[0]);
	thr = pidfd_open(getpid(), PIDFD_THREAD_);	/* -1 before Linux 6.9 */
	child = fork();
	if (child == 0) {
		tp_wait_go();
		for (;;)
			pause();	/* until the parent's SIGTERM */
	}
	live = pidfd_open(child, 0);
	if (live < 0)
		return 1;
	tp_ready();
	tp_wait_go();

	tp_check(fdinfo_pid(self) == getpid(), "self pidfd: Pid %d, want %d",
		 fdinfo_pid(self), getpid());
	tp_check(fcntl(self, F_GETFL) & O_NONBLOCK, "self pidfd: O_NONBLOCK lost");
	tp_check(send_sig(self, 0) == 0, "self pidfd: signal 0: %m");
	tp_check(thr < 0 || (fdinfo(thr, "flags:", 8) & PIDFD_THREAD_),
		 "PIDFD_THREAD lost (flags 0%lo)", fdinfo(thr, "flags:", 8));
	tp_check(thr < 0 || fdinfo_pid(thr) == getpid(), "thread pidfd: Pid %d",
		 fdinfo_pid(thr));
	st = syscall(SYS_kcmp, getpid(), child, KCMP_FILE, self, self);
	tp_check(st == 0, "the child's self pidfd is another description (kcmp %d)", st);

	for (int i = 0; i < 2; i++)
		tp_check(fdinfo_pid(d1[i]) == -1, "dead pidfd %d: Pid %d, want -1", i,
			 fdinfo_pid(d1[i]));
	tp_check(fdinfo_pid(d2) == -1, "second dead pidfd: Pid %d", fdinfo_pid(d2));
	tp_check(!(fcntl(d1[0], F_GETFL) & O_NONBLOCK) && (fcntl(d1[1], F_GETFL) & O_NONBLOCK),
		 "dead pidfds' O_NONBLOCK not as opened");
	tp_check(ino(d1[0]) == ino(d1[1]), "pidfds on one dead process: inodes %lu, %lu",
		 (unsigned long)ino(d1[0]), (unsigned long)ino(d1[1]));
	tp_check(ino(d1[0]) != ino(d2), "pidfds on two dead processes share inode %lu",
		 (unsigned long)ino(d2));
	st = syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, d1[0], d1dup);
	tp_check(st == 0, "a dup of a dead pidfd is another description (kcmp %d)", st);
	st = syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, d1[0], d1[1]);
	tp_check(st != 0, "two dead pidfds became one description");
	tp_check(send_sig(d2, 0) < 0 && errno == ESRCH, "signal to a dead pidfd: %m");

	tp_check(fdinfo_pid(live) == child, "child pidfd: Pid %d, want %d",
		 fdinfo_pid(live), child);
	tp_check(send_sig(live, SIGTERM) == 0, "SIGTERM through the child's pidfd: %m");
	tp_check(waitid(P_PIDFD, live, &si, WEXITED) == 0 && si.si_pid == child &&
		 si.si_code == CLD_KILLED && si.si_status == SIGTERM,
		 "waitid(P_PIDFD): pid %d code %d status %d", si.si_pid, si.si_code, si.si_status);
	return tp_done();
}
