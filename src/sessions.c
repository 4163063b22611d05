/* sessions.c - the processes of the tree made, held from their first
 * instant: each forked by its parent puppet with its pid (clone3
 * set_tid), in its session and group as saved, and the zombies exited
 * again.  A session or group whose leader has exited gets a stand-in
 * leader with that pid for a moment (a helper), which makes it and goes.
 * restart.c then builds each process (the kinds) and lets them go.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "kinds/ns_pid.h"
#include "model.h"
#include "sessions.h"

int rst_pid_holder(struct rst_ctx *c, pid_t pid)
{
	char state = '?', comm[64] = "?";

	if (proc_state(pid, &state))
		return 0;
	if (state == 'Z' || state == 'X')
		return 1;
	proc_status_str(pid, "Name", comm, sizeof(comm));
	return log_err(c->log, EEXIST, "pid %d is in use by another process (%s, state %c)",
		       pid, comm, state);
}

/* @t has made its session: the kinds set up what its members inherit. */
static int session_made(struct rst_ctx *c, struct rst_task *t)
{
	int ret = 0;

	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->session_made)
			ret = ckpt_kinds[i]->session_made(c, t);
	return ret;
}

/* A child is forked by its (puppet) parent, with its pid (@tids: at
 * every level, innermost first, @pid last, as clone3 wants them): it is
 * then a copy of the parent puppet, trampoline and image fd included,
 * and held by us from its first instant (PTRACE_O_TRACEFORK). */
static int puppet_fork(struct rst_ctx *c, struct rst_task *parent, const pid_t *tids, int n,
		       uint64_t flags, int exit_signal, struct remote *child)
{
	struct clone_args ca = {
		.flags = flags,
		.exit_signal = exit_signal,
		.set_tid_size = n,
	};
	pid_t pid = tids[n - 1], want = ns_pid_in(c, parent, pid);
	uint64_t ca_at, tid_at;
	long got;
	int ret;

	if (ptrace(PTRACE_SETOPTIONS, parent->pid, 0, PTRACE_O_TRACESYSGOOD |
		   PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK))
		return log_err(c->log, errno, "pid %d: PTRACE_SETOPTIONS:", parent->pid);
	ret = rst_scratch_put(parent, 128, tids, n * sizeof(*tids), &tid_at);
	ca.set_tid = tid_at;
	if (!ret)
		ret = rst_scratch_put(parent, 0, &ca, sizeof(ca), &ca_at);
	/* a pid whose zombie is being reaped is a moment from free */
	for (int tries = 0; !ret; tries++) {
		struct timespec tick = { 0, 10 * 1000 * 1000 };

		ret = remote_call(&parent->rm, &got, SYS_clone3, ca_at, sizeof(ca),
				  0, 0, 0, 0);
		if (ret || got != -EEXIST || tries * 10 >= ZOMBIE_WAIT_MS)
			break;
		ret = rst_pid_holder(c, pid);
		if (ret < 0)
			return ret;
		ret = 0;
		nanosleep(&tick, NULL);
	}
	/* (the parent sees it by its number in its own namespace) */
	if (!ret && got != want)
		return log_err(c->log, got == -EEXIST ? EEXIST : got > 0 ? EIO : (int)-got,
			       got == -EEXIST ? "pid %d is in use by another process"
					      : "creating pid %d:", pid);
	return ret ? ret : remote_adopt(child, pid, &parent->rm);
}

/* Let a held task run to its end, passing on the signals it stops for. */
static int run_to_death(struct rst_ctx *c, struct remote *r)
{
	int status, sig = 0;

	for (;;) {
		if (ptrace(PTRACE_CONT, r->pid, 0, sig))
			return log_err(c->log, errno, "pid %d: PTRACE_CONT:", r->pid);
		while (waitpid(r->pid, &status, __WALL) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		sig = (status >> 16) ? 0 : WSTOPSIG(status);
	}
	r->seized = false;
	return 0;
}

/* A held task exits with @code. */
static int exit_with(struct rst_ctx *c, struct remote *r, int code)
{
	const long a[6] = { code };
	arch_regs_t regs = r->regs;

	arch_set_call(&regs, SYS_exit_group, a, r->sc_ip);
	if (arch_set_regs(r->pid, &regs))
		return log_err(c->log, errno, "pid %d: regs:", r->pid);
	return run_to_death(c, r);
}

/* The parent of a child that just died forgets the SIGCHLD it brings
 * (and, with @reap, reaps it). */
static int forget_child(struct rst_ctx *c, struct rst_task *parent, pid_t child, bool reap)
{
	uint64_t set = 1ULL << (SIGCHLD - 1), zero[2] = { 0, 0 }, at, zat;
	long got;
	int ret = 0;

	if (reap)
		ret = rcheck(&parent->rm, NULL, "wait4", SYS_wait4, ns_pid_in(c, parent, child),
			     0, __WALL, 0);
	if (!ret)
		ret = rst_scratch_put(parent, 0, &set, sizeof(set), &at);
	if (!ret)
		ret = rst_scratch_put(parent, 64, zero, sizeof(zero), &zat);
	if (!ret)
		ret = remote_call(&parent->rm, &got, SYS_rt_sigtimedwait, at, 0,
				  zat, 8, 0, 0);
	return ret;
}

#define MAX_HELPERS 64

/* A stand-in for a session or group leader that has exited. */
struct helper {
	struct remote rm;
	struct rst_task *parent;
	struct rst_task as;	/* seen as a task, to fork from it */
};

struct helpers {
	struct helper h[MAX_HELPERS];
	int n;
};

static struct helper *helper_of(struct helpers *hs, pid_t pid)
{
	for (int i = 0; i < hs->n; i++)
		if (hs->h[i].rm.pid == pid)
			return &hs->h[i];
	return NULL;
}

/* A helper with @pid forked by @parent; with @session it makes a session
 * (and so a group), else a group. */
static struct helper *new_helper(struct rst_ctx *c, struct helpers *hs,
				 struct rst_task *parent, pid_t pid, bool session,
				 int *ret)
{
	struct helper *n;

	if (hs->n == MAX_HELPERS) {
		*ret = log_err(c->log, E2BIG, "too many groups and sessions without a leader");
		return NULL;
	}
	/* its pid at the levels below the root's is not saved */
	if (ns_nested(parent)) {
		*ret = log_err(c->log, EOPNOTSUPP,
			       "%s %d, whose leader has exited, of pid %d in a nested pid namespace: not supported",
			       session ? "session" : "group", pid, parent->pid);
		return NULL;
	}
	n = &hs->h[hs->n++];
	memset(n, 0, sizeof(*n));
	n->rm.memfd = -1;
	n->parent = parent;
	*ret = puppet_fork(c, parent, &pid, 1, 0, SIGCHLD, &n->rm);
	if (!*ret)
		*ret = session ? rcheck(&n->rm, NULL, "setsid", SYS_setsid, 0)
			       : rcheck(&n->rm, NULL, "setpgid", SYS_setpgid, 0, 0);
	n->as = *parent;	/* same trampoline and scratch as its parent */
	n->as.rm = n->rm;
	n->as.pid = pid;
	return *ret ? NULL : n;
}

static int end_helpers(struct rst_ctx *c, struct helpers *hs)
{
	int ret = 0;

	for (int i = 0; i < hs->n; i++) {
		struct helper *h = &hs->h[i];
		bool made = h->rm.seized;
		int r = made ? exit_with(c, &h->rm, 0) : 0;

		/* one never made has no pid (0): wait4(0) would wait for
		 * any child of its parent, and hang */
		if (made && !r && !ret)
			r = forget_child(c, h->parent, h->rm.pid, true);
		remote_close(&h->rm);
		ret = ret ? ret : r;
	}
	hs->n = 0;
	return ret;
}

/* A process in a session whose leader has exited is forked, with
 * CLONE_PARENT, by a stand-in leader of that session that its parent
 * forked: so it has its parent, and is in that session (unless its
 * parent is in the session: then the parent forks it as usual). */
static int fork_child(struct rst_ctx *c, struct helpers *hs,
		      struct rst_task *parent, struct rst_task *t)
{
	uint64_t flags = (t->t.flags & TASK_SHARES_FILES ? CLONE_FILES : 0) |
			 (t->t.flags & TASK_SHARES_FS ? CLONE_FS : 0) |
			 (t->t.flags & TASK_SHARES_VM ? CLONE_VM : 0) |
			 (t->t.flags & TASK_SHARES_SIGHAND ? CLONE_SIGHAND : 0);
	struct rst_task *forker = parent;
	pid_t sid = t->t.sid, tids[NSPID_LEVELS + 1];
	int ret = 0, n = nspid_set_tid(t, 0, tids);

	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->fork_prepare)
			ret = ckpt_kinds[i]->fork_prepare(c, parent);
	if (ret)
		return ret;

	/* a parent in that session forks it into the session itself */
	if (sid != (pid_t)c->tasks[0]->t.sid && sid != t->pid && !rst_task_by_pid(c, sid) &&
	    (pid_t)parent->t.sid != sid) {
		struct helper *h = helper_of(hs, sid);

		if (!h)
			h = new_helper(c, hs, parent, sid, true, &ret);
		if (ret)
			return ret;
		if (h->parent != parent)
			return log_err(c->log, EOPNOTSUPP,
				       "session %d: its members have different parents (not supported yet)",
				       sid);
		forker = &h->as;
		flags |= CLONE_PARENT;
	}
	ret = nspid_fork_into(c, parent, t, &flags);
	/* with CLONE_PARENT the exit signal is the forker's (clone3 wants 0) */
	if (!ret)
		ret = puppet_fork(c, forker, tids, n, flags,
				  flags & CLONE_PARENT ? 0 : t->t.exit_signal, &t->rm);

	t->tramp = parent->tramp;
	t->tramp_len = parent->tramp_len;
	t->scratch = parent->scratch;
	t->scratch_len = parent->scratch_len;
	t->img_fd = parent->img_fd;
	return ret;
}

static int stat_ids(pid_t pid, pid_t *pgid, pid_t *sid)
{
	unsigned long long f[PROC_STAT_FIELDS];
	int ret = proc_stat(pid, NULL, f);

	*pgid = ret ? 0 : (pid_t)f[5];
	*sid = ret ? 0 : (pid_t)f[6];
	return ret;
}

/* The root's own session and group, made before any child is forked
 * into them.  A root that led its session leads it again (setsid: its
 * group too).  A root in a session led outside the tree goes on in
 * restart's caller's session, as a job or a command run by ckpt restart
 * would, unless it is detached (--detach, not --shell-job): a daemon, it
 * gets a session and a group of its own, so that a hangup of restart's
 * terminal does not reach it.  A shell job, or any root that led its
 * group, leads its group again (the group of a root led elsewhere: it
 * joins that one with the other groups, in set_ids()). */
static int root_ids(struct rst_ctx *c)
{
	struct rst_task *root = c->tasks[0];
	bool job = c->flags & CKPT_SHELL_JOB;
	int ret = 0;

	if (!job && (root->t.sid == (uint32_t)root->pid || (c->flags & CKPT_DETACH))) {
		ret = rcheck(&root->rm, NULL, "setsid", SYS_setsid, 0);
		if (!ret && root->t.sid == (uint32_t)root->pid)
			ret = session_made(c, root);
	} else if (root->t.pgid == (uint32_t)root->pid) {
		ret = rcheck(&root->rm, NULL, "setpgid", SYS_setpgid, 0, 0);
	}
	return ret;
}

/* What a saved session or group id is now.  One led by a process of the
 * tree keeps its number, as does one whose leader has exited (a
 * stand-in makes it); the root's own, if led outside the tree, is
 * whatever the root has now (see root_ids(); 0 where restart's caller's
 * is outside restart's pid namespace). */
struct id_map {
	uint32_t root_sid, root_pgid;	/* the root's, as saved */
	bool sid_out, pgid_out;		/* led outside the tree */
	pid_t sid_now, pgid_now;	/* the root's, now */
};

static pid_t sid_of(const struct id_map *m, uint32_t sid)
{
	return m->sid_out && sid == m->root_sid ? m->sid_now : (pid_t)sid;
}

static pid_t pgid_of(const struct id_map *m, uint32_t pgid)
{
	return m->pgid_out && pgid == m->root_pgid ? m->pgid_now : (pid_t)pgid;
}

/* A session leader makes its session as soon as it exists, before its
 * children are forked into it. */
static int make_session(struct rst_ctx *c, struct rst_task *t)
{
	pid_t pgid, sid;
	int ret;

	if (t == c->tasks[0] || t->t.sid != (uint32_t)t->pid)
		return 0;
	ret = stat_ids(t->pid, &pgid, &sid);
	if (ret)
		return log_err(c->log, -ret, "pid %d: stat:", t->pid);
	ret = sid == t->pid ? 0 : rcheck(&t->rm, NULL, "setsid", SYS_setsid, 0);
	return ret ? ret : session_made(c, t);
}

/* Process groups, once every process exists; then a check that sessions
 * and groups came out as saved.  A process group whose leader has exited
 * gets a stand-in leader with its pid, forked by its first member (so in
 * the members' session): it makes the group, the members join, and it
 * goes again.  The root joins a group led by another process of the
 * tree last, once that one has made it. */
static int set_ids(struct rst_ctx *c, struct helpers *hs)
{
	struct rst_task *root = c->tasks[0];
	struct id_map m = {
		.root_sid = root->t.sid,
		.root_pgid = root->t.pgid,
		.sid_out = root->t.sid != (uint32_t)root->pid,
		.pgid_out = !rst_task_by_pid(c, root->t.pgid),
	};
	pid_t pgid, sid;
	int ret = stat_ids(root->pid, &m.pgid_now, &m.sid_now);

	if (ret)
		return log_err(c->log, -ret, "pid %d: stat:", root->pid);
	for (int k = 1; k <= c->nr_tasks && !ret; k++) {
		struct rst_task *t = c->tasks[k % c->nr_tasks];	/* the root last */
		pid_t want = pgid_of(&m, t->t.pgid);

		if (!rst_task_by_pid(c, t->t.pgid) && !(m.pgid_out && t->t.pgid == m.root_pgid) &&
		    !helper_of(hs, want))
			new_helper(c, hs, t, want, false, &ret);	/* its leader exited */
		if (!ret)
			ret = stat_ids(t->pid, &pgid, &sid);
		/* 0: the root's, outside restart's pid namespace, where it
		 * cannot be named (its members are in it already) */
		if (!ret && want != pgid && want && !ns_pid_in(c, t, want))
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d: its group %d is outside its pid namespace: cannot join it",
				      t->pid, want);
		else if (!ret && want != pgid && want)
			ret = rcheck(&t->rm, NULL, "setpgid", SYS_setpgid, 0,
				     ns_pid_in(c, t, want));
	}
	{
		int r = end_helpers(c, hs);

		ret = ret ? ret : r;
	}
	for (int i = 0; i < c->nr_tasks && !ret; i++) {	/* did it all work out? */
		struct rst_task *t = c->tasks[i];

		ret = stat_ids(t->pid, &pgid, &sid);
		if (!ret && (sid_of(&m, t->t.sid) != sid || pgid_of(&m, t->t.pgid) != pgid))
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d: cannot rebuild its session %u / group %u (it is in %d / %d)",
				      t->pid, t->t.sid, t->t.pgid, sid, pgid);
	}
	return ret;
}

/* A zombie exits again with its status, and its parent forgets the
 * SIGCHLD that brings: it had had that one already. */
static int end_zombie(struct rst_ctx *c, struct rst_task *parent,
		      struct rst_task *t)
{
	int code = t->t.exit_code, ret;
	uint64_t at;

	if (WIFSIGNALED(code) && WTERMSIG(code) == SIGKILL) {
		/* it cannot be blocked nor sent by the task to itself while
		 * we hold it: it ends the task on the spot */
		int st;

		ret = kill(t->pid, SIGKILL) ?
		      log_err(c->log, errno, "pid %d: kill:", t->pid) : 0;
		while (!ret && waitpid(t->pid, &st, __WALL) < 0 && errno == EINTR)
			;
		t->rm.seized = false;
	} else if (WIFSIGNALED(code)) {
		int sig = WTERMSIG(code);
		uint64_t dfl[4] = { 0 }, unblock = ~(1ULL << (sig - 1));

		ret = rst_scratch_put(t, 0, dfl, sizeof(dfl), &at);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "rt_sigaction", SYS_rt_sigaction,
				     sig, at, 0, 8);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "kill", SYS_kill, ns_tid_in(t, t->pid), sig);
		if (!ret && ptrace(PTRACE_SETSIGMASK, t->pid, 8, &unblock))
			ret = log_err(c->log, errno, "pid %d: mask:", t->pid);
		if (!ret)
			ret = run_to_death(c, &t->rm);
	} else {
		ret = exit_with(c, &t->rm, WEXITSTATUS(code));
	}
	return ret ? ret : forget_child(c, parent, t->pid, false);
}

int rst_fork_tree(struct rst_ctx *c)
{
	struct helpers *hs = calloc(1, sizeof(*hs));
	int ret = hs ? root_ids(c) : log_err(c->log, ENOMEM, "helpers:");

	for (int i = 1; i < c->nr_tasks && !ret; i++) {
		ret = fork_child(c, hs, rst_task_by_pid(c, c->tasks[i]->t.ppid), c->tasks[i]);
		if (!ret)
			ret = make_session(c, c->tasks[i]);
	}
	if (!ret)
		ret = set_ids(c, hs);
	else if (hs)
		end_helpers(c, hs);
	free(hs);
	for (int i = 1; i < c->nr_tasks && !ret; i++)
		if (c->tasks[i]->t.flags & TASK_ZOMBIE)
			ret = end_zombie(c, rst_task_by_pid(c, c->tasks[i]->t.ppid),
					 c->tasks[i]);
	return ret;
}
