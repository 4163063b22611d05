/* pidns.c - `ckpt restart --pidns`: restart the tree in a fresh pid
 * namespace, where its pids are always free (the seeds restarted
 * containers this way).  ckpt forks the namespace's init (pid 1), which
 * mounts its own /proc, restores the tree as its children and reaps
 * whatever is orphaned there until the restored root ends; its status is
 * then ckpt's.  With --detach, init stays behind as the reaper and ckpt
 * prints the root's pid as seen from outside. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "cli.h"
#include "proc.h"

static volatile pid_t ns_root;

static void forward(int sig)
{
	if (ns_root > 0)
		kill(ns_root, sig);
}

/* pid 1 of the namespace.  Reports the restored root's pid (or -errno)
 * on @report, then reaps until the root is gone. */
static int ns_init(int fd, unsigned long flags, int logfd, int report)
{
	struct ckpt_result r = { 0 };
	int status, code = 0;
	long pid;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		fprintf(stderr, "ckpt: restart failed: mounting /proc for the new pid namespace: %s\n",
			strerror(errno));
		pid = -errno;
		if (write(report, &pid, sizeof(pid)) < 0)
			return 125;
		return 125;
	}
	/* The caller's session and group are outside the namespace, where
	 * the restored root could not see them (getsid() gives 0): they
	 * become ours, which the root then stands in. */
	if (!(flags & CKPT_SHELL_JOB))
		setsid();
	pid = ckpt_restart_r(0, fd, flags & ~CKPT_DETACH, logfd, &r);
	if (pid < 0 && logfd != 2)
		fprintf(stderr, "ckpt: restart failed: %s\n", r.msg);
	if (write(report, &pid, sizeof(pid)) != sizeof(pid) || pid < 0)
		return 125;
	close(report);
	ns_root = pid;
	signal(SIGINT, forward);
	signal(SIGTERM, forward);
	signal(SIGHUP, forward);
	for (;;) {
		pid_t p = waitpid(-1, &status, 0);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			return code;
		if (p == pid)
			code = WIFSIGNALED(status) ? 128 + WTERMSIG(status)
						   : WEXITSTATUS(status);
		if (p == pid)
			return code;	/* the namespace dies with its init */
	}
}

/* The outside pid of init's child (the restored root). */
static pid_t outside_pid(pid_t init)
{
	char name[64], *s;
	pid_t pid = 0;

	snprintf(name, sizeof(name), "task/%d/children", init);
	if (proc_read(init, name, &s, NULL) == 0) {
		pid = atoi(s);
		free(s);
	}
	return pid;
}

int restart_in_pidns(int fd, unsigned long flags, int logfd)
{
	int p[2], status;
	pid_t init;
	long got = -EIO;

	struct clone_args ca = {
		.flags = CLONE_NEWPID | CLONE_NEWNS,
		.exit_signal = SIGCHLD,
	};

	if (pipe2(p, O_CLOEXEC))
		return 125;
	/* clone3, not unshare(): our own later children (a sanitizer's, say)
	 * must not land in a namespace whose init may be gone */
	init = syscall(SYS_clone3, &ca, sizeof(ca));
	if (init < 0) {
		fprintf(stderr, "ckpt: restart failed: new pid namespace: %s\n",
			strerror(errno));
		return 125;
	}
	if (init == 0) {
		close(p[0]);
		_exit(ns_init(fd, flags, logfd, p[1]));
	}
	close(p[1]);
	if (read(p[0], &got, sizeof(got)) != sizeof(got))
		got = -EIO;
	close(p[0]);
	if (got < 0) {
		waitpid(init, &status, 0);
		return 125;
	}
	if (flags & CKPT_DETACH) {
		printf("%d\n", outside_pid(init));
		return 0;
	}
	return wait_child(init);
}
