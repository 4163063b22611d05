/* container.c - checkpoint and restart of a container: a tree whose root
 * is the init (pid 1) of a pid namespace of its own.
 *
 * Its pids, mounts, network and ipc objects are only what they are seen
 * from inside, so ckpt does its work there.  At checkpoint a child of
 * ours joins the root's pid, net, ipc, uts and time namespaces and forks
 * the engine, which unshares a private mount namespace (a copy of ours:
 * our paths and programs still work), mounts the container's /proc on it
 * and checkpoints pid 1 as any tree, knowing our namespaces (the
 * host's), to tell the container's own from those it shares with the
 * host.
 *
 * The engine is a process of the container's pid namespace, and dies
 * with its init, which no process inside may kill.  So with CKPT_KILL
 * it kills every other process itself and keeps the init held (with
 * PTRACE_O_EXITKILL: it dies if the engine does), reports, and waits:
 * we kill the init, and the namespace with the engine in it, once we
 * have the report.
 *
 * At restart the root is made here, a puppet cloned into a new pid
 * namespace (where it is pid 1), and the engine, forked into that
 * namespace with a pid far from the image's, builds the tree from it as
 * any restart would.  If the restart fails, we kill the root, and with
 * it whatever the namespace holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"
#include "container.h"
#include "image.h"
#include "image_format.h"
#include "kinds/ns_user.h"
#include "log.h"
#include "proc.h"

/* What the engine tells us: its result, and the root's pid as it sees
 * it, or -errno. */
struct engine_report {
	long ret;
	struct ckpt_result res;
};

static void set_result(struct ckpt_result *res, pid_t pid, const struct ckpt_log *log)
{
	if (!res)
		return;
	res->pid = pid;
	res->err = log->err;
	snprintf(res->msg, sizeof(res->msg), "%s", log->msg);
}

int container_root(pid_t pid, struct ckpt_log *log)
{
	char buf[256], *last;
	struct stat own, its;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	if (stat("/proc/self/ns/pid", &own) || stat(path, &its))
		return 0;	/* no such process: the checkpoint says so */
	if (own.st_ino == its.st_ino && own.st_dev == its.st_dev)
		return 0;
	if (proc_status_str(pid, "NSpid", buf, sizeof(buf)))
		return 0;
	last = strrchr(buf, '\t');
	last = last ? last + 1 : buf;
	return atoi(last) == 1;
}

/* In the engine: a mount namespace of its own, with the container's
 * /proc (the engine's pid namespace is the container's). */
static int engine_proc(struct ckpt_log *log)
{
	if (unshare(CLONE_NEWNS))
		return log_err(log, errno, "container: a mount namespace for ckpt:");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return log_err(log, errno, "container: making ckpt's mounts private:");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return log_err(log, errno, "container: mounting its /proc:");
	return 0;
}

/* A child of ours ends if we do: an engine whose caller was killed must
 * not go on with a checkpoint or restart that nobody will report.
 * @parent: getppid() while we live (0 for the engine, whose parent is
 * outside its pid namespace). */
static void die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
}

/* Fork the engine into the pid namespace we joined (pid_for_children),
 * as pid @want there (0: any); it runs @body and reports on @fd. */
static pid_t fork_engine(pid_t want)
{
	struct clone_args ca = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&want,
		.set_tid_size = want ? 1 : 0,
	};

	if (!want)
		ca.set_tid = 0;
	return syscall(SYS_clone3, &ca, sizeof(ca));
}

static void report(int fd, long ret, const struct ckpt_result *res)
{
	struct engine_report rep = { .ret = ret };

	if (res)
		rep.res = *res;
	if (write(fd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(125);
}

/* Read the engine's report.  If our caller cancels (ckpt_cancel(), a
 * signal's), the engine is killed, which ends it as a ckpt killed at
 * that point would: the target as it was (its guards), unless it was
 * being killed already. */
static long read_report(int fd, pid_t e, const volatile sig_atomic_t *cancelled,
			struct ckpt_result *res, struct ckpt_log *log)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct engine_report rep;
	int grace = 20;		/* the engine may have had the signal too */
	ssize_t n = -1;

	for (;;) {
		int k = poll(&p, 1, cancelled ? 100 : -1);

		if (k > 0) {
			while ((n = read(fd, &rep, sizeof(rep))) < 0 && errno == EINTR)
				;
			break;
		}
		if (k < 0 && errno != EINTR)
			break;
		if (cancelled && *cancelled && !grace--) {
			kill(e, SIGKILL);	/* the engine ends with it */
			rep.ret = log_err(log, EINTR, "checkpoint interrupted by a signal");
			set_result(&rep.res, 0, log);
			if (res)
				*res = rep.res;
			return rep.ret;
		}
	}
	if (n != (ssize_t)sizeof(rep)) {
		rep.ret = log_err(log, EIO, "container: ckpt's engine inside the container ended before it reported");
		set_result(&rep.res, 0, log);
	}
	if (res)
		*res = rep.res;
	if (rep.ret < 0 && !log->err) {
		log->err = rep.res.err;
		snprintf(log->msg, sizeof(log->msg), "%s", rep.res.msg);
	}
	return rep.ret;
}

/* In the child that forked the engine @e: it stays the engine's parent
 * until the engine is gone, or the container's init would be, and hear
 * of its end.  Its report, on @rep, is read by our parent. */
static void __attribute__((noreturn)) wait_engine(pid_t e, int rep, pid_t pid,
						  struct ckpt_log *log)
{
	struct ckpt_result res = { 0 };
	int status;

	if (e < 0) {
		log_err(log, errno, "container: forking ckpt's engine into it:");
		set_result(&res, pid, log);
		report(rep, -(long)log->err, &res);
		_exit(0);
	}
	while (waitpid(e, &status, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* ---- checkpoint ---- */

/* @pidfd: the init's, opened by our caller when it found it to be one
 * (a pid number could name another process by now). */
static void cpt_engine(int pidfd, int fd, const struct ckpt_checkpoint_opts *o,
		       int rep, const struct ns_ids *host, checkpoint_fn checkpoint)
{
	struct ckpt_log log = { .fd = o->logfd };
	struct ckpt_checkpoint_opts in = *o;
	pid_t pid = o->pid;
	struct ckpt_result res = { 0 };
	pid_t e;

	/* its time namespace too: the clocks we read are the ones its
	 * timers are set on */
	if (pidfd < 0 || setns(pidfd, CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
				      CLONE_NEWTIME)) {
		log_err(&log, errno, "container: joining pid %d's namespaces:", pid);
		set_result(&res, pid, &log);
		report(rep, -(long)log.err, &res);
		_exit(0);
	}
	close(pidfd);
	e = fork_engine(0);
	if (e == 0) {
		long ret;

		die_with_parent(0);
		ret = engine_proc(&log);

		if (ret)
			set_result(&res, pid, &log);
		else
		{
			in.pid = 1;	/* the init, as the container sees it */
			ret = checkpoint(1, fd, &in, &res, host, pid);
		}
		res.pid = pid;
		report(rep, ret, &res);
		/* the init, which the checkpoint left held (tree_kill()),
		 * cannot be killed from inside: our caller kills it, and
		 * the namespace with us in it, once it has our report */
		while (!ret && (o->flags & CKPT_KILL))
			pause();
		_exit(0);
	}
	wait_engine(e, rep, pid, &log);
}

static void reap(pid_t e)
{
	int status;

	while (waitpid(e, &status, 0) < 0 && errno == EINTR)
		;
}

/* The image is synced and the rest of the tree dead: the init, still
 * held by the engine, ends, and the namespace with it, engine and all.
 * Waited for, so that checkpoint --kill returns with the container
 * gone. */
static int kill_root(int pidfd, pid_t pid, struct ckpt_log *log)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int n;

	if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0))
		return log_err(log, errno, "killing pid %d:", pid);
	while ((n = poll(&p, 1, 10000)) < 0 && errno == EINTR)
		;
	if (n == 1)
		return 0;
	return log_err(log, ETIMEDOUT, "container: pid %d did not end after its checkpoint", pid);
}

int container_checkpoint(int fd, const struct ckpt_checkpoint_opts *o,
			 struct ckpt_result *res, checkpoint_fn checkpoint,
			 const volatile sig_atomic_t *cancelled)
{
	struct ckpt_log log = { .fd = o->logfd };
	pid_t pid = o->pid;
	pid_t e, me = getpid();
	struct ns_ids host;
	int p[2], pidfd;
	long ret;

	ret = ns_ids_read(0, &host, &log);
	if (ret) {
		set_result(res, pid, &log);
		return ret;
	}
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	/* still the init we found, now that a pidfd holds it */
	if (pidfd >= 0 && !container_root(pid, &log)) {
		close(pidfd);
		pidfd = -1;
		errno = ESRCH;
	}
	if (pidfd < 0 || pipe2(p, O_CLOEXEC)) {
		ret = log_err(&log, errno, "pid %d:", pid);
		if (pidfd >= 0)
			close(pidfd);
		set_result(res, pid, &log);
		return ret;
	}
	e = fork();
	if (e == 0) {
		die_with_parent(me);
		close(p[0]);
		cpt_engine(pidfd, fd, o, p[1], &host, checkpoint);
	}
	close(p[1]);
	if (e < 0)
		ret = log_err(&log, errno, "fork:");
	else
		ret = read_report(p[0], e, cancelled, res, &log);
	close(p[0]);
	if (!ret && (o->flags & CKPT_KILL))
		ret = kill_root(pidfd, pid, &log);
	/* (the engine waits for the init's end, which takes it too: if that
	 * failed, it ends now, and the init it holds with it) */
	if (ret && e > 0)
		kill(e, SIGKILL);
	if (e > 0)
		reap(e);
	close(pidfd);
	if (ret && res && !res->err)
		set_result(res, pid, &log);
	if (res)
		res->pid = pid;
	return ret;
}

/* ---- restart ---- */

int container_image(int fd, struct ckpt_log *log)
{
	struct img_reader r;
	struct rec rec = { 0 };
	int ret = ir_init(&r, fd, log);

	if (!ret)
		ret = ir_next(&r, &rec);
	if (ret == 1)
		ret = rec.type == REC_HEAD && rec.data_len >= sizeof(struct rec_head) &&
		      (((const struct rec_head *)rec.data)->flags & HEAD_CONTAINER);
	else if (ret == 0)
		ret = log_err(log, EBADMSG, "the image has no HEAD record");
	free(rec.data);
	ir_free(&r);
	return ret;
}

/* The root: pid 1 of a new pid namespace, a puppet as restart.c makes
 * them, in a new user namespace too for an image with one (@um).  With
 * CKPT_DETACH a middle child makes it and exits, so that it is orphaned
 * to init (or the nearest subreaper).  Where setgroups is denied in the
 * user namespace the root must have its groups before it is made: a
 * middle child takes them and makes it, our child (CLONE_PARENT) unless
 * detached. */
static pid_t clone_root(unsigned long flags, const struct ns_user_maps *um,
			struct ckpt_log *log)
{
	bool deny = um && (um->flags & NS_USER_SETGROUPS_DENY);
	struct clone_args ca = { .flags = CLONE_NEWPID | (um ? CLONE_NEWUSER : 0),
				 .exit_signal = SIGCHLD };
	sigset_t all, old;
	int p[2], status;
	long r = 0;
	pid_t mid;

	sigfillset(&all);
	if (!(flags & CKPT_DETACH) && !deny) {
		sigprocmask(SIG_SETMASK, &all, &old);
		r = ckpt_puppet_clone(&ca, sizeof(ca));
		sigprocmask(SIG_SETMASK, &old, NULL);
		return r < 0 ? log_err(log, (int)-r, "container: a new pid namespace:") : r;
	}
	if (!(flags & CKPT_DETACH))
		ca.flags |= CLONE_PARENT;
	if (pipe2(p, O_CLOEXEC))
		return log_err(log, errno, "pipe:");
	mid = fork();
	if (mid == 0) {
		sigprocmask(SIG_SETMASK, &all, &old);
		r = deny && syscall(SYS_setgroups, um->nr_groups, um->groups) ? -errno : 0;
		if (!r)
			r = ckpt_puppet_clone(&ca, sizeof(ca));
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (mid < 0) {
		r = -errno;
	} else {
		ssize_t n;

		while ((n = read(p[0], &r, sizeof(r))) < 0 && errno == EINTR)
			;
		if (n != sizeof(r))
			r = -EIO;
	}
	close(p[0]);
	while (mid > 0 && waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	return r < 0 ? log_err(log, (int)-r, "container: a new pid namespace:") : r;
}

/* The engine's pid in the new namespace: the highest there is, which an
 * image will hardly hold (and if it does, restart says it is in use). */
static pid_t engine_pid(void)
{
	char buf[32] = "";
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);
	long max = 0;

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) > 0)
			max = atol(buf);
		close(fd);
	}
	return max > 2 ? max - 1 : 0;
}

static void rst_engine(pid_t root, int fd, const struct ckpt_restart_opts *o,
		       const struct rst_extra *x, int rep, restart_run_fn restart)
{
	struct ckpt_log log = { .fd = o->logfd };
	struct ckpt_restart_opts in = *o;
	struct ckpt_result res = { 0 };
	int pidfd = syscall(SYS_pidfd_open, root, 0);
	pid_t e;

	in.flags = o->flags & ~CKPT_DETACH;
	in.pid = 0;
	if (pidfd < 0 || setns(pidfd, CLONE_NEWPID)) {
		log_err(&log, errno, "container: joining the new pid namespace:");
		set_result(&res, 0, &log);
		report(rep, -(long)log.err, &res);
		_exit(0);
	}
	close(pidfd);
	e = fork_engine(engine_pid());
	if (e == 0) {
		long ret;

		die_with_parent(0);
		/* the root dies with us from now on, whenever we die */
		ret = ptrace(PTRACE_SEIZE, 1, 0, PTRACE_O_EXITKILL) ?
		      log_err(&log, errno, "container: holding its root:") : 0;
		if (!ret)
			ret = engine_proc(&log);
		if (ret)
			set_result(&res, 0, &log);
		else
			ret = restart(fd, &in, x, &res);
		report(rep, ret, &res);
		_exit(0);
	}
	wait_engine(e, rep, 0, &log);
}

static const char *const join_types[NR_NS_TYPES] = {
	[NS_MNT] = "mnt", [NS_NET] = "net", [NS_IPC] = "ipc", [NS_UTS] = "uts",
	[NS_TIME] = "time",
};

static const int join_clone[NR_NS_TYPES] = {
	[NS_MNT] = CLONE_NEWNS, [NS_NET] = CLONE_NEWNET, [NS_IPC] = CLONE_NEWIPC,
	[NS_UTS] = CLONE_NEWUTS, [NS_TIME] = CLONE_NEWTIME,
};

/* --join-ns TYPE:PATH: each namespace opened, and checked to be of its
 * type, before the root is cloned (it has them then, as we do). */
static int open_joins(const struct ckpt_restart_opts *o, struct rst_extra *x,
		      struct ckpt_log *log)
{
	for (int i = 0; i < NR_NS_TYPES; i++)
		x->join_fd[i] = -1;
	for (int k = 0; k < o->nr_join_ns; k++) {
		const char *s = o->join_ns[k], *colon = strchr(s, ':');
		int type = -1, fd;

		for (int i = 0; i < NR_NS_TYPES && colon; i++)
			if (join_types[i] && strlen(join_types[i]) == (size_t)(colon - s) &&
			    !strncmp(s, join_types[i], colon - s))
				type = i;
		if (type < 0)
			return log_err(log, EINVAL, "--join-ns %s: TYPE:PATH, TYPE one of net, ipc, uts, mnt, time",
				       s);
		if (x->join & (1u << type))
			return log_err(log, EINVAL, "--join-ns %s: %s given twice", s, join_types[type]);
		fd = open(colon + 1, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return log_err(log, errno, "--join-ns %s:", s);
		x->join_fd[type] = fd;
		x->join |= 1u << type;
		if (ioctl(fd, NS_GET_NSTYPE) != join_clone[type])
			return log_err(log, EINVAL, "--join-ns %s: not a %s namespace", s,
				       join_types[type]);
	}
	return 0;
}

static void close_joins(struct rst_extra *x)
{
	for (int i = 0; i < NR_NS_TYPES; i++)
		if (x->join_fd[i] >= 0)
			close(x->join_fd[i]);
	for (int i = 0; i < 2; i++)
		if (x->give[i] >= 0)
			close(x->give[i]);
}

int container_restart(int fd, const struct ckpt_restart_opts *o, struct ckpt_result *res,
		      restart_run_fn restart)
{
	struct ckpt_log log = { .fd = o->logfd };
	pid_t root = 0, e, me = getpid();
	struct rst_extra x = { .give = { -1, -1 } };
	struct ns_user_maps *um = calloc(1, sizeof(*um));
	int p[2], status, userns = 0;
	long ret;

	ret = o->pid && o->pid != 1 ?
	      log_err(&log, EINVAL, "the image holds a container, its root pid 1, not %d", o->pid) : 0;
	if (!ret)
		ret = um ? open_joins(o, &x, &log) : log_err(&log, ENOMEM, "user namespace maps:");
	if (!ret && lseek(fd, 0, SEEK_SET) < 0)
		ret = log_err(&log, errno, "the image:");
	/* its own user namespace owns its pid namespace: made together */
	if (!ret) {
		userns = ns_user_prescan(fd, um, &log);
		ret = userns < 0 ? userns : 0;
	}
	/* the root's, which it has from ckpt when cloned, and the engine's */
	if (!ret && userns && socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, x.give))
		ret = log_err(&log, errno, "socketpair:");
	if (!ret) {
		root = clone_root(o->flags, userns ? um : NULL, &log);
		ret = root < 0 ? root : 0;
	}
	if (ret) {
		ns_user_maps_free(um);
		close_joins(&x);
		set_result(res, 0, &log);
		return ret;
	}
	/* before the root runs anything in it */
	ret = userns ? ns_user_write_maps(root, um, &log) : 0;
	ns_user_maps_free(um);
	if (ret)
		goto fail;
	if (pipe2(p, O_CLOEXEC)) {
		ret = log_err(&log, errno, "pipe:");
		goto fail;
	}
	e = fork();
	if (e == 0) {
		die_with_parent(me);
		close(p[0]);
		rst_engine(root, fd, o, &x, p[1], restart);
	}
	close(p[1]);
	ret = e < 0 ? log_err(&log, errno, "fork:") : read_report(p[0], e, NULL, res, &log);
	close(p[0]);
	if (e > 0)
		reap(e);
	if (ret >= 0) {
		close_joins(&x);
		if (res)
			res->pid = root;
		return root;
	}
fail:
	/* the namespace, and whatever was made in it, ends with its init */
	close_joins(&x);
	kill(root, SIGKILL);
	if (!(o->flags & CKPT_DETACH))
		while (waitpid(root, &status, 0) < 0 && errno == EINTR)
			;
	if (res && !res->err)
		set_result(res, 0, &log);
	if (res)
		res->pid = 0;
	return ret;
}
