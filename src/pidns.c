/* pidns.c - CKPT_PIDNS (`ckpt restart --pidns`): restart the tree in a
 * fresh pid namespace, where its pids are always free (the seeds
 * restarted containers this way).  The caller's child is the namespace's
 * init (pid 1), which mounts its own /proc, restores the tree as its
 * children and reaps whatever is orphaned there until the restored root
 * ends; its status is then init's.  With CKPT_DETACH, init stays behind
 * as the reaper and the caller gets the root's pid as seen from outside.
 * An ordinary user's gets a user namespace with it (unpriv.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "pidns.h"
#include "proc.h"
#include "unpriv.h"

/* What init tells the caller once the tree is restored, or is not: the
 * failure is init's, but the caller's to report. */
struct ns_report {
	long pid;		/* the root's pid inside, or -errno */
	struct ckpt_result res;
};

static volatile pid_t ns_root;

static void forward(int sig)
{
	if (ns_root > 0)
		kill(ns_root, sig);
}

/* pid 1 of the namespace.  Reports the restored root on @report, then
 * reaps until the root is gone; returns the status ckpt restart exits
 * with. */
static int ns_init(pid_t want, int fd, unsigned long flags, int logfd, int report,
		   restart_fn restart)
{
	struct ckpt_log log = { .fd = logfd };
	struct ns_report rep = { 0 };
	int status, code = 0;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		rep.pid = log_err(&log, errno, "mounting /proc for the new pid namespace:");
		rep.res.err = log.err;
		snprintf(rep.res.msg, sizeof(rep.res.msg), "%s", log.msg);
	} else {
		/* The caller's session and group are outside the namespace,
		 * where the restored root could not see them (getsid() gives
		 * 0): they become ours, which the root then stands in. */
		if (!(flags & CKPT_SHELL_JOB))
			setsid();
		rep.pid = restart(want, fd, flags & ~(CKPT_DETACH | CKPT_PIDNS),
				  logfd, &rep.res);
	}
	if (write(report, &rep, sizeof(rep)) != sizeof(rep) || rep.pid < 0)
		return 125;
	close(report);
	ns_root = rep.pid;
	signal(SIGINT, forward);
	signal(SIGTERM, forward);
	signal(SIGHUP, forward);
	for (;;) {
		pid_t p = waitpid(-1, &status, 0);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			return code;
		if (p == rep.pid)
			code = WIFSIGNALED(status) ? 128 + WTERMSIG(status)
						   : WEXITSTATUS(status);
		if (p == rep.pid)
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

static void result(struct ckpt_result *res, pid_t pid, const struct ckpt_log *log)
{
	if (!res)
		return;
	res->pid = pid;
	res->err = log->err;
	snprintf(res->msg, sizeof(res->msg), "%s", log->msg);
}

int pidns_restart(pid_t pid, int fd, unsigned long flags, int logfd,
		  struct ckpt_result *res, restart_fn restart)
{
	struct ckpt_log log = { .fd = logfd };
	struct ns_report rep = { .pid = -EIO };
	struct clone_args ca = {
		.flags = CLONE_NEWPID | CLONE_NEWNS,
		.exit_signal = SIGCHLD,
	};
	/* an ordinary user: with a user namespace of its own (unpriv.c) */
	bool userns = unpriv_needs_ns();
	int p[2], sync[2] = { -1, -1 }, status, ret;
	pid_t init, root;

	if (userns) {
		ca.flags |= CLONE_NEWUSER;
		if (pipe2(sync, O_CLOEXEC)) {
			ret = log_err(&log, errno, "a pipe to the new user namespace:");
			result(res, 0, &log);
			return ret;
		}
	}
	if (pipe2(p, O_CLOEXEC)) {
		ret = log_err(&log, errno, "a pipe to the new pid namespace:");
		result(res, 0, &log);
		return ret;
	}
	/* clone3, not unshare(): our own later children (a sanitizer's, say)
	 * must not land in a namespace whose init may be gone */
	init = syscall(SYS_clone3, &ca, sizeof(ca));
	if (init < 0) {
		ret = log_err(&log, errno, userns ? "new user and pid namespace (an ordinary user's restart needs unprivileged user namespaces):"
						  : "new pid namespace:");
		close(p[0]);
		close(p[1]);
		if (userns) {
			close(sync[0]);
			close(sync[1]);
		}
		result(res, 0, &log);
		return ret;
	}
	if (init == 0) {
		close(p[0]);
		if (userns && unpriv_ns_wait(sync))
			_exit(125);
		_exit(ns_init(pid, fd, flags, logfd, p[1], restart));
	}
	close(p[1]);
	if (userns && (ret = unpriv_ns_map(&log, init, sync))) {
		close(p[0]);
		while (waitpid(init, &status, 0) < 0 && errno == EINTR)
			;
		result(res, 0, &log);
		return ret;
	}
	if (read(p[0], &rep, sizeof(rep)) != sizeof(rep)) {
		rep.pid = log_err(&log, EIO, "the new pid namespace's init ended before it reported");
		rep.res.err = log.err;
		snprintf(rep.res.msg, sizeof(rep.res.msg), "%s", log.msg);
	}
	close(p[0]);
	if (rep.pid < 0) {
		while (waitpid(init, &status, 0) < 0 && errno == EINTR)
			;
		if (res)
			*res = rep.res;
		return rep.pid;
	}
	root = outside_pid(init);
	result(res, root, &log);
	return flags & CKPT_DETACH ? root : init;
}
