/* tree.c - finding and holding the process tree of a checkpoint: the
 * root, every descendant, every thread of each, held with ptrace.  A held
 * process cannot fork or clone, so listing children and threads again
 * until a pass finds nothing new catches whatever was created while we
 * went, and nothing escapes the snapshot. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kinds.h"
#include "testpoint.h"

#define MAX_TASKS 65536

/* What we can tell of a process before touching it. */
static int preflight(struct ckpt_log *log, pid_t pid, char *state,
		     unsigned long long f[PROC_STAT_FIELDS])
{
	int ret;

	if (pid == getpid())
		return log_err(log, EINVAL, "pid %d is ckpt itself", pid);
	ret = proc_stat(pid, state, f);
	if (ret)
		return log_err(log, -ret == ENOENT ? ESRCH : -ret, "pid %d:", pid);
	if (f[9] & 0x00200000)	/* PF_KTHREAD */
		return log_err(log, EINVAL, "pid %d is a kernel thread", pid);
	return 0;
}

static int add_thread(struct cpt_ctx *c, struct cpt_task *t, pid_t tid)
{
	struct cpt_thread *n;

	if (VEC_ROOM(t->threads, t->nr_threads, t->cap_threads))
		return log_err(c->log, ENOMEM, "thread table:");
	n = t->threads;
	/* the table may have moved: the remotes it holds moved with it */
	for (int i = 1; i < t->nr_threads; i++)
		n[i].rm = &n[i].own;
	n[t->nr_threads] = (struct cpt_thread){ .tid = tid };
	n[t->nr_threads].rm = t->nr_threads ? &n[t->nr_threads].own : &t->rm;
	t->nr_threads++;
	return 0;
}

/* Thread @i is held: found again by its tid. */
static int keep_thread(struct cpt_ctx *c, struct cpt_task *t, int i)
{
	if (id_add(&t->tids, t->threads[i].tid, i))
		return log_err(c->log, ENOMEM, "thread table:");
	return 0;
}

/* Thread @i (not the main one) exited before it stopped: out of the
 * table, the remotes of those after it moved down with them. */
static void drop_thread(struct cpt_task *t, int i)
{
	struct cpt_thread *n = t->threads;

	memmove(&n[i], &n[i + 1], (t->nr_threads - i - 1) * sizeof(*n));
	t->nr_threads--;
	for (int k = i; k < t->nr_threads; k++)
		n[k].rm = &n[k].own;
}

/* The stops of threads [@first, nr_threads), all asked for already:
 * each waited for, even after one failed, so that every thread asked is
 * held as it should be whatever happens next. */
static int seize_ends(struct cpt_ctx *c, struct cpt_task *t, int first)
{
	int ret = 0;

	for (int i = first; i < t->nr_threads;) {
		int r = t->threads[i].rm->seized ? remote_seize_end(t->threads[i].rm) : 0;

		if (r == -ESRCH) {	/* it exited meanwhile */
			drop_thread(t, i);
			continue;
		}
		if (!r && t->threads[i].rm->seized)
			r = keep_thread(c, t, i);
		ret = ret ? ret : r;
		i++;
	}
	return ret;
}

/* Hold every thread of @t; one that exits before we get to it is simply
 * not part of the image.  The threads of a listing are all asked to stop
 * before the first stop is waited for: they stop together (a JVM's 22
 * took 4 ms one after the other). */
static int seize_threads(struct cpt_ctx *c, struct cpt_task *t)
{
	int ret = remote_seize(&t->rm, t->pid, false, c->log), r;
	bool more = true;

	if (ret == -ESRCH)
		return ret;	/* the caller says if that matters */
	t->rm.spin = true;	/* its own CPU: a stop is spun for */
	if (!ret)
		ret = add_thread(c, t, t->pid);
	if (!ret)
		ret = keep_thread(c, t, 0);
	while (!ret && more) {
		int first = t->nr_threads;
		char path[64];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
		d = opendir(path);
		if (!d)
			return log_err(c->log, errno, "pid %d: listing threads:", t->pid);
		more = false;
		while (!ret && (de = readdir(d))) {
			pid_t tid = atoi(de->d_name);

			if (tid <= 0 || id_find(&t->tids, tid) >= 0)
				continue;
			if (t->nr_threads == MAX_THREADS) {
				ret = log_err(c->log, E2BIG, "pid %d: too many threads", t->pid);
				break;
			}
			ret = add_thread(c, t, tid);
			if (ret)
				break;
			ret = remote_seize_start(t->threads[t->nr_threads - 1].rm, tid, false,
						 c->log);
			if (ret == -ESRCH) {	/* it exited meanwhile */
				t->nr_threads--;
				ret = 0;
				continue;
			}
			t->threads[t->nr_threads - 1].rm->spin = true;
			more = true;
		}
		closedir(d);
		r = seize_ends(c, t, first);
		ret = ret ? ret : r;
	}
	return ret;
}

static int add_task(struct cpt_ctx *c, pid_t pid, pid_t ppid)
{
	unsigned long long f[PROC_STAT_FIELDS];
	struct cpt_task *t;
	char state = '?';
	int ret = preflight(c->log, pid, &state, f);

	if (ret)
		return ret;
	if (c->nr_tasks == MAX_TASKS)
		return log_err(c->log, E2BIG, "more than %d processes", MAX_TASKS);
	if (!ppid && (state == 'Z' || state == 'X'))
		return log_err(c->log, ESRCH,
			       "pid %d has exited (or its main thread has, leaving others)",
			       pid);
	t = calloc(1, sizeof(*t));
	if (!t || VEC_ROOM(c->tasks, c->nr_tasks, c->cap_tasks)) {
		free(t);
		return log_err(c->log, ENOMEM, "task table:");
	}
	t->pid = pid;
	t->ppid = ppid;
	t->rm.memfd = -1;
	c->tasks[c->nr_tasks++] = t;
	if (id_add(&c->pids, pid, c->nr_tasks - 1))
		return log_err(c->log, ENOMEM, "task table:");
	if (state != 'Z')
		ret = seize_threads(c, t);
	/* A child that ended before it stopped stays a zombie: its parent,
	 * held already, cannot reap it. */
	if (ret == -ESRCH && ppid && !preflight(c->log, pid, &state, f) && state == 'Z') {
		t->nr_threads = 0;
		ret = 0;
	}
	if (ret == -ESRCH)
		return log_err(c->log, ESRCH, "pid %d exited while being checkpointed", pid);
	if (state == 'Z') {
		t->zombie = true;
		t->exit_code = f[52];	/* as wait() would report it */
		return 0;
	}
	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->hold)
			ret = ckpt_kinds[i]->hold(c, t);
	return ret;
}

/* Children of every thread of @t not yet in the tree; *found is set if
 * there were any. */
static int add_children(struct cpt_ctx *c, struct cpt_task *t, bool *found)
{
	for (int i = 0; i < t->nr_threads; i++) {
		char name[64], *s, *p, *end;
		int ret;

		snprintf(name, sizeof(name), "task/%d/children", t->threads[i].tid);
		ret = proc_read(t->pid, name, &s, NULL);
		if (ret == -ENOENT)
			continue;	/* the thread is gone */
		if (ret)
			return log_err(c->log, -ret, "pid %d: reading children:", t->pid);
		for (p = s; !ret; p = end) {
			pid_t child = strtol(p, &end, 10);

			if (end == p)
				break;
			if (id_find(&c->pids, child) >= 0)
				continue;
			*found = true;
			ret = add_task(c, child, t->pid);
		}
		free(s);
		if (ret)
			return ret;
	}
	return 0;
}

static bool shares(pid_t a, pid_t b, int type)
{
	return syscall(SYS_kcmp, a, b, type, 0, 0) == 0;
}

static const struct {
	int type;
	const char *what;
} shared_kinds[] = {
	{ KCMP_VM, "memory (CLONE_VM)" },
	{ KCMP_FILES, "fd table (CLONE_FILES)" },
	{ KCMP_FS, "fs info (CLONE_FS)" },
	{ KCMP_SIGHAND, "signal handlers (CLONE_SIGHAND)" },
};

static int kcmp_order(const void *a, const void *b, void *type)
{
	long r = syscall(SYS_kcmp, (*(struct cpt_task *const *)a)->pid,
			 (*(struct cpt_task *const *)b)->pid, *(int *)type, 0, 0);

	return r == 1 ? -1 : r == 2 ? 1 : 0;
}

/* Processes that share one of these are restored sharing it only along
 * parent-child links (the child cloned with the flag): each group of
 * sharers must be one process and descendants that share with their
 * parents.  Anything else (a sibling made with CLONE_PARENT|CLONE_VM)
 * is refused rather than restored as copies. */
static int check_groups(struct cpt_ctx *c, struct cpt_task **v, int n, int k)
{
	int type = shared_kinds[k].type;

	qsort_r(v, n, sizeof(*v), kcmp_order, &type);
	for (int i = 0, j; i < n; i = j) {
		struct cpt_task *owner = NULL;

		for (j = i; j < n && (j == i || !kcmp_order(&v[i], &v[j], &type)); j++) {
			if (v[j]->ppid && shares(v[j]->ppid, v[j]->pid, type))
				continue;
			if (owner)
				return log_err(c->log, EOPNOTSUPP,
					       "pids %d and %d share their %s, and neither has it from its parent: not supported",
					       owner->pid, v[j]->pid, shared_kinds[k].what);
			owner = v[j];
		}
	}
	return 0;
}

/* A child cloned (not as a thread) with CLONE_FILES, CLONE_FS, CLONE_VM
 * or CLONE_SIGHAND shares that with its parent, and is restored sharing
 * it. */
static int check_sharing(struct cpt_ctx *c)
{
	struct cpt_task **live = calloc((size_t)c->nr_tasks + 1, sizeof(*live));
	int n = 0, ret = 0;

	if (!live)
		return log_err(c->log, ENOMEM, "sharing check:");
	for (int i = 0; i < c->nr_tasks && !ret; i++) {
		struct cpt_task *t = c->tasks[i];

		if (t->zombie)
			continue;
		live[n++] = t;
		if (!t->ppid)
			continue;
		t->shares_vm = shares(t->ppid, t->pid, KCMP_VM);
		t->shares_sighand = shares(t->ppid, t->pid, KCMP_SIGHAND);
		t->shares_files = shares(t->ppid, t->pid, KCMP_FILES);
		t->shares_fs = shares(t->ppid, t->pid, KCMP_FS);
	}
	for (int k = 0; k < (int)(sizeof(shared_kinds) / sizeof(shared_kinds[0])) && !ret; k++)
		ret = check_groups(c, live, n, k);
	free(live);
	return ret;
}

int tree_collect(struct cpt_ctx *c, pid_t root)
{
	bool found = true;
	int ret;

	if (root <= 0)
		return log_err(c->log, ESRCH, "bad pid %d", root);
	ret = add_task(c, root, 0);
	while (!ret && found) {
		found = false;
		for (int i = 0; i < c->nr_tasks && !ret; i++)
			if (!c->tasks[i]->zombie)
				ret = add_children(c, c->tasks[i], &found);
	}
	return ret ? ret : check_sharing(c);
}

int tree_release(struct cpt_ctx *c)
{
	int ret = 0;

	for (int i = c->root_kept ? 1 : 0; i < c->nr_tasks; i++) {
		struct cpt_task *t = c->tasks[i];

		for (int j = 0; j < t->nr_threads; j++) {
			struct remote *rm = t->threads[j].rm;
			int r = rm->seized ? arch_unguard(rm) : 0;

			if (rm->seized)
				r = remote_release(rm) ?: r;
			ret = ret ? ret : r;
		}
		if (!t->nr_threads && t->rm.seized)	/* seized, not yet listed */
			remote_release(&t->rm);
	}
	return ret;
}

/* A killed process's memory freed by us too (process_mrelease, Linux
 * 5.15), beside its own exit, which we wait for: a 1 GiB process is
 * gone in 29 ms, not 49 (2 CPUs).  Only where there is much to free
 * (the calls cost more than a tiny process's exit); best effort. */
#define MRELEASE_MIN	(16ULL << 20)

static void release_mm(const struct cpt_task *t)
{
#ifdef SYS_process_mrelease
	uint64_t len = 0;
	int pidfd;

	if (!cpt_own_mm(t))
		return;
	for (int i = 0; i < t->maps.n && len < MRELEASE_MIN; i++)
		if (t->maps.v[i].perms[3] == 'p' && t->maps.v[i].perms[1] == 'w')
			len += t->maps.v[i].end - t->maps.v[i].start;
	if (len < MRELEASE_MIN)
		return;
	pidfd = syscall(SYS_pidfd_open, t->pid, 0);
	if (pidfd < 0)
		return;
	syscall(SYS_process_mrelease, pidfd, 0);
	close(pidfd);
#else
	(void)t;
#endif
}

/* Kill task @i (SIGKILL) and hear of each of its threads' deaths, as
 * their tracer, the leader last. */
static int kill_task(struct cpt_ctx *c, int i, bool signal)
{
	struct cpt_task *t = c->tasks[i];
	int status, ret = 0;

	if (signal && !t->zombie && kill(t->pid, SIGKILL))
		ret = log_err(c->log, errno, "killing pid %d:", t->pid);
	if (!ret)
		release_mm(t);
	for (int j = t->nr_threads - 1; j >= 0; j--) {
		while (waitpid(t->threads[j].tid, &status, __WALL) < 0 &&
		       errno == EINTR)
			;
		t->threads[j].rm->seized = false;
	}
	return ret;
}

/* The dead children of the held task @t reaped by @t itself, so that
 * their pids are free at once: killed with their parent, they would be
 * init's zombies, and init may take a second or two to reap them, all
 * that time in the way of a restart.  Best effort: the image is safe. */
static void reap_children(struct cpt_ctx *c, struct cpt_task *t, int nr)
{
	long res = 0;

	for (int n = 0; n < nr && t->rm.seized; n++)
		if (rcall(&t->rm, &res, SYS_wait4, -1, 0, WNOHANG | __WALL,
			  0) || res <= 0)
			break;
	if (res < 0 && res != -ECHILD)
		log_info(c->log, "pid %d: reaping its children: %s", t->pid,
			 strerror((int)-res));
}

/* Every thread to die with ckpt from here on (PTRACE_O_EXITKILL): never
 * half a tree left running (a parent reaping its children is a while),
 * nor the init we keep running alone, the rest of its tree dead.  A
 * thread under seccomp keeps its filters suspended.  One already gone
 * (killed by someone else) needs nothing. */
static int exit_kill_all(struct cpt_ctx *c)
{
	for (int i = 0; i < c->nr_tasks; i++)
		for (int j = 0; j < c->tasks[i]->nr_threads; j++) {
			struct cpt_thread *th = &c->tasks[i]->threads[j];
			long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL |
				    (th->rm->seccomp ? PTRACE_O_SUSPEND_SECCOMP : 0);

			if (ptrace(PTRACE_SETOPTIONS, th->tid, 0, opts) && errno != ESRCH)
				return log_err(c->log, errno, "pid %d: PTRACE_O_EXITKILL:",
					       th->tid);
		}
	return 0;
}

/* Every process of the tree in its root's pid namespace.  A nested one's
 * init ends only once everything in it is reaped, by whatever parent,
 * perhaps one outside it still held: such a tree dies all at once. */
static bool one_pidns(struct cpt_ctx *c)
{
	struct stat root, st;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", c->tasks[0]->pid);
	if (stat(path, &root))
		return false;
	for (int i = 1; i < c->nr_tasks; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", c->tasks[i]->pid);
		if (stat(path, &st) || st.st_ino != root.st_ino || st.st_dev != root.st_dev)
			return false;
	}
	return true;
}

/* SIGKILL every process; as their tracer we hear of each thread's death.
 * In one pid namespace, children go first, and each killed parent of the
 * tree reaps its own children before it dies; the root's parent is not
 * ours to make.  A container's init is left held: the engine, in its pid
 * namespace, ends with it, so it kills it last of all (container.c). */
int tree_kill(struct cpt_ctx *c)
{
	int ret = exit_kill_all(c), first = c->host_ns ? 1 : 0;
	bool reap;
	int *kids;

	if (ret)
		return ret;
	kids = calloc(c->nr_tasks ? c->nr_tasks : 1, sizeof(*kids));
	if (!kids)
		return log_err(c->log, ENOMEM, "killing the tree:");
	test_point(c->log, "killing");
	c->root_kept = first;
	reap = c->nr_tasks > 1 && one_pidns(c);
	for (int i = 1; i < c->nr_tasks && reap; i++) {
		long p = c->tasks[i]->ppid > 0 ?
			 id_find(&c->pids, c->tasks[i]->ppid) : -1;

		if (p >= first && p < c->nr_tasks && !c->tasks[p]->zombie)
			kids[p]++;
	}
	/* the leaves at once (all of them, nested pid namespaces), then
	 * each parent, deepest first (the tree lists parents before
	 * children) */
	for (int i = first; i < c->nr_tasks; i++)
		if (!kids[i] && !c->tasks[i]->zombie &&
		    kill(c->tasks[i]->pid, SIGKILL) && !ret)
			ret = log_err(c->log, errno, "killing pid %d:",
				      c->tasks[i]->pid);
	for (int i = c->nr_tasks - 1; i >= first; i--) {
		if (kids[i])
			reap_children(c, c->tasks[i], kids[i]);
		ret = kill_task(c, i, kids[i]) ?: ret;
	}
	free(kids);
	return ret;
}

void tree_free(struct cpt_ctx *c)
{
	for (int i = 0; i < c->nr_tasks; i++) {
		struct cpt_task *t = c->tasks[i];

		for (int j = 0; j < t->nr_threads; j++)
			remote_close(t->threads[j].rm);
		free(t->threads);
		id_table_free(&t->tids);
		vma_list_free(&t->maps);
		free(t);
	}
	free(c->tasks);
	id_table_free(&c->pids);
	arch_cpt_cache_free(&c->guard);
}
