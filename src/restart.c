/* restart.c - ckpt_restart(): read and verify the whole image, then build
 * the process in a puppet and let it go.
 *
 * The puppet is a child cloned with the saved pid (clone3 set_tid) that
 * waits in pause() with all signals blocked.  Under ptrace it is made to
 * map a trampoline page (a syscall instruction and scratch space) where
 * neither it nor the image has anything, and then, one remote call at a
 * time, to tear down what it inherited from us and build the saved
 * process: each kind of state in the order of the kinds table.  Last, its
 * registers are set and it is released.  Any failure kills it: a half
 * restored process never runs.
 *
 * The image is read and checked into the model by model.c; the other
 * processes of a tree are forked from the puppet, in their sessions and
 * groups, by sessions.c; here is the order of it all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "arch/arch.h"
#include "auth.h"
#include "chain.h"
#include "container.h"
#include "kinds.h"
#include "kinds/cgroup.h"
#include "kinds/mm.h"
#include "kinds/ns_pid.h"
#include "model.h"
#include "sessions.h"
#include "pidns.h"
#include "unpriv.h"
#include "testpoint.h"
#include "pageverify.h"
#include "progress.h"
#include "timing.h"

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif
#define TRAMP_LEN	(16 * 4096)

/* ckpt's signal actions, which a puppet it makes starts with (the
 * puppet and the middle child change none): NULL if one cannot be read. */
static struct rec_sighand *own_actions(void)
{
	struct rec_sighand *h = malloc(sizeof(*h));

	for (int sig = 1; h && sig <= 64; sig++)
		if (syscall(SYS_rt_sigaction, sig, NULL, &h->act[sig - 1], 8)) {
			free(h);
			h = NULL;
		}
	return h;
}

/* One try at the puppet: its clone_args, and what the clone gave. */
struct puppet_try {
	struct clone_args args;
	long r;
};

/* The puppet made by us, all signals blocked: it starts with them so. */
static long try_here(struct puppet_try *p)
{
	sigset_t all, old;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	p->r = ckpt_puppet_clone(&p->args, sizeof(p->args));
	sigprocmask(SIG_SETMASK, &old, NULL);
	return p->r;
}

/* The middle process of a detached puppet.  It shares our memory and
 * runs while we wait (CLONE_VM | CLONE_VFORK): no C of ours but this,
 * no allocation, no sanitizer (its stack is ours, borrowed). */
__attribute__((no_sanitize_address))
static int middle(void *arg)
{
	struct puppet_try *p = arg;
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	p->r = ckpt_puppet_clone(&p->args, sizeof(p->args));
	return 0;
}

/* The puppet made by a middle process that exits at once, so that it is
 * orphaned to init (or the nearest subreaper).  The middle process is no
 * fork: a copy of our address space cost a millisecond, and the puppet
 * makes one anyway. */
static long try_detached(struct puppet_try *p)
{
	char stack[16384] __attribute__((aligned(16)));
	int status;
	pid_t mid;

	p->r = -ECHILD;
	mid = clone(middle, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, p);
	if (mid < 0)
		return -errno;
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	return p->r;
}

/* Clone the puppet with the saved pid.  A pid still held by a zombie (a
 * `checkpoint --kill` just before, whose parent has not reaped it yet) is
 * waited for a while. */
static int make_puppet(struct rst_ctx *c, pid_t pid)
{
	pid_t tid = pid;
	struct puppet_try p = {
		.args = {
			.exit_signal = SIGCHLD,
			.set_tid = (uintptr_t)&tid,
			.set_tid_size = 1,
		},
	};

	if (c->root_made)	/* a container's init (container.c) */
		return pid;
	for (int waited = 0;; waited += 10) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		long r = (c->flags & CKPT_DETACH) ? try_detached(&p) : try_here(&p);
		int held;

		if (r > 0)
			return r;
		if (r != -EEXIST)
			return log_err(c->log, (int)-r, "creating pid %d:", pid);
		held = rst_pid_holder(c, pid);
		if (held < 0)
			return held;
		if (waited >= ZOMBIE_WAIT_MS)
			return log_err(c->log, EEXIST,
				       "pid %d is still held by an unreaped zombie after %d ms",
				       pid, ZOMBIE_WAIT_MS);
		nanosleep(&ts, NULL);
	}
}

struct rseq_cfg {
	uint64_t ptr;
	uint32_t len, sig, flags, pad;
};

/* Take the puppet in hand: drop the rseq area it inherited from us (the
 * kernel would fault writing to it once our memory is gone), map the
 * trampoline, move the image fd out of the way of the saved fd numbers. */
static int setup_puppet(struct rst_ctx *c, struct rst_task *t)
{
	struct rseq_cfg rs = { 0 };
	struct vma_list busy;
	struct rlimit nofile;
	uint64_t gap;
	long res;
	int ret;

	ret = remote_seize(&t->rm, t->pid, true, c->log);
	if (!ret)
		ret = remote_block(&t->rm);
	if (ret)
		return ret;
	t->rm.sc_ip = (uintptr_t)ckpt_puppet_syscall;
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, t->pid, sizeof(rs), &rs) < 0)
		return log_err(c->log, errno, "puppet rseq configuration:");
	if (rs.ptr)
		ret = rcheck(&t->rm, NULL, "rseq unregister", SYS_rseq, rs.ptr,
			     rs.len, 1 /* RSEQ_FLAG_UNREGISTER */, rs.sig);
	if (ret)
		return ret;
	ret = proc_maps(t->pid, &busy);
	if (ret)
		return log_err(c->log, -ret, "reading puppet maps:");
	ret = rst_find_gap(c, &busy, TRAMP_LEN, &gap);
	vma_list_free(&busy);
	/* the arguments of a 32-bit call are 32 bits */
	if (ret || (rst_first_ia32(c) && gap + TRAMP_LEN > ARCH_COMPAT_LIMIT))
		return log_err(c->log, ENOMEM, "no room for the trampoline");
	ret = rcheck(&t->rm, &res, "mmap trampoline", SYS_mmap, gap, TRAMP_LEN,
		     PROT_READ | PROT_WRITE | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (ret)
		return ret;
	t->tramp = gap;
	t->tramp_len = TRAMP_LEN;
	t->scratch = gap + 4096;
	t->scratch_len = TRAMP_LEN - 2 * 4096;	/* the last page is stack */
	ret = remote_write(&t->rm, gap, arch_tramp.code, arch_tramp.len);
	if (ret)
		return ret;
	t->rm.sc_ip = gap + arch_tramp.sc_off;
	t->rm.sc32_ip = arch_tramp.sc32_off < 0 ? 0 : gap + arch_tramp.sc32_off;
	if (arch_tramp.fast_off >= 0) {
		t->rm.fast_ip = gap + arch_tramp.fast_off;
		t->rm.fast_end = gap + arch_tramp.fast_end;
	}
	if (arch_tramp.batch_off >= 0)
		t->rm.batch_ip = gap + arch_tramp.batch_off;
	t->rm.sp = gap + TRAMP_LEN - 64;
	/* fds may be numbered up to the hard limit in the saved process */
	getrlimit(RLIMIT_NOFILE, &nofile);
	nofile.rlim_cur = nofile.rlim_max;
	ret = rst_scratch_put(t, 0, &nofile, sizeof(nofile), (uint64_t *)&res);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "prlimit(NOFILE)", SYS_prlimit64, 0,
			     RLIMIT_NOFILE, res, 0);
	if (!ret)
		ret = rcheck(&t->rm, &res, "fcntl(F_DUPFD image)", SYS_fcntl,
			     c->img_fd, F_DUPFD, c->fd_floor);
	t->img_fd = res;
	return ret;
}

/* Each kind's side of thread @th for phase @ph.  Its calls whose result
 * is not asked for go in one batch (remote.h), made at its end (timed
 * as the last kind's): a thread's own state is a dozen calls (its ids,
 * robust list, rseq, name, altstack), and a JVM has 23 threads.  Not for
 * the registers (PHASE_LAST), which are set from outside. */
static int run_thread(struct rst_ctx *c, struct rst_task *t, struct rst_thread *th,
		      enum kind_phase ph)
{
	bool batch = ph != PHASE_LAST;
	int ret = batch ? rst_batch_begin(t, th->rm) : 0, last = -1, end;
	uint64_t t0;

	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->phase == ph && ckpt_kinds[i]->restore_thread) {
			t0 = log_now();
			ret = ckpt_kinds[i]->restore_thread(c, t, th);
			log_kind_took(c->log, i, t0);
			last = i;
		}
	t0 = log_now();
	end = batch ? rst_batch_end(t, th->rm, !ret) : 0;
	if (last >= 0)
		log_kind_took(c->log, last, t0);
	return ret ? ret : end;
}

/* The process-wide side of each kind of a phase, then (once the threads
 * exist) each thread's side. */
static int run_phase(struct rst_ctx *c, struct rst_task *t, enum kind_phase ph,
		     bool threads)
{
	bool batch = false;
	uint64_t t0;
	int ret = 0, end;

	for (int i = 0; i < ckpt_nr_kinds && !ret; i++) {
		const struct kind_ops *k = ckpt_kinds[i];

		if (k->phase != ph || !k->restore)
			continue;
		/* (the calls of kinds that may have them queued, one after
		 * the other, in one stop) */
		if (k->rst_batch != batch) {
			ret = batch ? rst_batch_end(t, &t->rm, true) : rst_batch_begin(t, &t->rm);
			batch = !batch;
			if (ret)
				break;
		}
		log_info(c->log, "pid %d: restoring %s", t->pid, k->name);
		t0 = log_now();
		ret = k->restore(c, t);
		log_kind_took(c->log, i, t0);
		ret = test_fail_point(c->log, k->name, ret);
	}
	end = batch ? rst_batch_end(t, &t->rm, !ret) : 0;
	ret = ret ? ret : end;
	for (int j = 0; j < t->nr_threads && threads && !ret; j++)
		ret = run_thread(c, t, &t->threads[j], ph);
	return ret;
}

/* The other threads, cloned by the main one with their tids (at every
 * level of a nested pid namespace); under PTRACE_O_TRACECLONE each
 * starts held by us. */
static int create_threads(struct rst_ctx *c, struct rst_task *t)
{
	struct clone_args ca = {
		.flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			 CLONE_THREAD | CLONE_SYSVSEM,
		.stack = t->tramp + t->tramp_len - 4096,
		.stack_size = 4096 - 64,
	};
	uint64_t ca_at, tid_at;
	long got;
	int ret = 0;

	if (t->nr_threads > 1 &&
	    ptrace(PTRACE_SETOPTIONS, t->pid, 0, PTRACE_O_TRACESYSGOOD |
		   PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE))
		return log_err(c->log, errno, "pid %d: PTRACE_SETOPTIONS:", t->pid);
	for (int i = 1; i < t->nr_threads && !ret; i++) {
		pid_t tid = t->threads[i].tid, tids[NSPID_LEVELS + 1];

		ca.set_tid_size = nspid_set_tid(t, i, tids);
		ret = rst_scratch_put(t, 128, tids, ca.set_tid_size * sizeof(*tids), &tid_at);
		ca.set_tid = tid_at;
		if (!ret)
			ret = rst_scratch_put(t, 0, &ca, sizeof(ca), &ca_at);
		if (!ret)
			ret = remote_call(&t->rm, &got, SYS_clone3, ca_at, sizeof(ca),
					  0, 0, 0, 0);
		if (!ret && got != ns_tid_in(t, tid))
			ret = log_err(c->log, got == -EEXIST ? EEXIST : got > 0 ? EIO : (int)-got,
				      "pid %d: creating thread %d:", t->pid, tid);
		if (!ret)
			ret = remote_adopt(&t->threads[i].own, tid, &t->rm);
	}
	return ret;
}

/* Every pid and tid of the image must be free.  One still held by a
 * zombie (a `checkpoint --kill` just before: its parent, or init, which
 * reaps only every second or two here, has not reaped it yet) is waited
 * for a while; one held by a live process is an error naming it. */
static int wait_ids_free(struct rst_ctx *c)
{
	struct timespec start, now, tick = { 0, 10 * 1000 * 1000 };

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int i = 0; i < c->nr_tasks; i++) {
		struct rst_task *t = c->tasks[i];

		for (int j = -1; j < t->nr_threads; j++) {
			pid_t id = j < 0 ? t->pid : t->threads[j].tid;
			int held;

			if (id == t->pid && i == 0 && c->root_made)
				continue;	/* our puppet already */

			while ((held = rst_pid_holder(c, id)) != 0) {
				if (held < 0)
					return held;
				clock_gettime(CLOCK_MONOTONIC, &now);
				if ((now.tv_sec - start.tv_sec) * 1000 +
				    (now.tv_nsec - start.tv_nsec) / 1000000 > ZOMBIE_WAIT_MS)
					return log_err(c->log, EEXIST,
						       "pid %d is still held by an unreaped zombie after %d ms",
						       id, ZOMBIE_WAIT_MS);
				nanosleep(&tick, NULL);
			}
		}
	}
	return 0;
}

/* Everything but the release, for one process. */
static int build(struct rst_ctx *c, struct rst_task *t)
{
	int ret = run_phase(c, t, PHASE_IMAGE, false);

	if (!ret && t->close_img)
		ret = rcheck(&t->rm, NULL, "close image", SYS_close, t->img_fd);
	if (!ret)
		ret = LOG_TIMED(c->log, LP_THREADS, create_threads(c, t));
	if (!ret)
		ret = run_phase(c, t, PHASE_STATE, true);
	if (!ret && t->close_img)	/* with the image: the last on its fd table */
		ret = ns_ckpt_fd_close(t);
	if (!ret && !t->keep_tramp) {	/* the last remote call: the trampoline goes */
		rst_slow_calls(t);	/* (a call's next step would not be there) */
		ret = rcheck(&t->rm, NULL, "munmap trampoline", SYS_munmap,
			     t->tramp, t->tramp_len);
	}
	if (!ret)
		ret = run_phase(c, t, PHASE_LAST, true);
	t->rm.stop_on_release |= !!(t->t.flags & TASK_STOPPED);
	if (t->t.stop_sig)
		t->rm.stop_sig = t->t.stop_sig;
	return ret;
}

/* The image fd goes with the last process built on each fd table, the
 * trampoline with the last one built on each memory. */
static void mark_last_users(struct rst_ctx *c)
{
	for (int i = 0; i < c->nr_tasks; i++) {
		struct rst_task *t = c->tasks[i];

		t->close_img = true;
		for (int j = i + 1; j < c->nr_tasks; j++) {
			struct rst_task *u = c->tasks[j];

			if (u->t.flags & TASK_ZOMBIE)
				continue;
			if (rst_owner(c, u, TASK_SHARES_FILES) ==
			    rst_owner(c, t, TASK_SHARES_FILES))
				t->close_img = false;
			if (rst_owner(c, u, TASK_SHARES_VM) == rst_owner(c, t, TASK_SHARES_VM))
				t->keep_tramp = true;
		}
	}
}

/* Processes are let go one by one; a restart that dies in between
 * must not leave those let go running without the others: a keeper
 * watches them (one process alone is let go at once). */
static int watch_release(struct rst_ctx *c)
{
	int live = 0, ret = 0;

	for (int i = 0; i < c->nr_tasks; i++)
		live += !(c->tasks[i]->t.flags & TASK_ZOMBIE);
	for (int i = 0; i < c->nr_tasks && live > 1 && !ret; i++)
		if (!(c->tasks[i]->t.flags & TASK_ZOMBIE))
			ret = keeper_watch(&c->keeper, c->log, c->tasks[i]->pid);
	return ret;
}

/* Every process is built (unless @ret, an error): once their pages are
 * all known good, the kinds' last steps, then each is let go.  A
 * failure passes the same test points and ends the keeper too. */
static int release_tree(struct rst_ctx *c, int ret)
{
	/* every page is in place: they must all be good before anything
	 * runs or is seen outside the tree */
	if (!ret && (c->flags & CKPT_LAZY) && !c->lazy_checks && c->pv_nr)
		ret = pv_start(c, c->spans, c->pv_nr, 0);	/* no loader did */
	if (!ret)
		ret = pv_finish(c);
	ret = test_fail_point(c->log, "pages verified", ret);
	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->restore_built)
			ret = ckpt_kinds[i]->restore_built(c);
	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->restore_end)
			ret = ckpt_kinds[i]->restore_end(c);
	if (!ret)
		ret = watch_release(c);
	ret = test_fail_point(c->log, "release", ret);
	/* children first: a parent let go before its child could see it
	 * still held.  Every thread of a process is made ready before the
	 * first is let go: from then on the process runs, and may end by
	 * itself before its last thread is let go. */
	for (int i = c->nr_tasks - 1; i >= 0 && !ret; i--) {
		struct rst_task *t = c->tasks[i];

		for (int j = 0; j < t->nr_threads && !ret; j++)
			ret = remote_unhold(t->threads[j].rm);
		for (int j = 0; j < t->nr_threads && !ret; j++)
			ret = remote_detach(t->threads[j].rm, j > 0);
		for (int j = 0; j < t->nr_threads && !ret; j++)
			remote_wait_stopped(t->threads[j].rm,
					    t->threads[0].rm->pid);
		ret = test_fail_point(c->log, "process let go", ret);
	}
	ret = test_fail_point(c->log, "all let go", ret);
	/* failed half-way: the keeper kills those let go */
	keeper_end(&c->keeper, c->log, !ret);
	c->released = !ret;
	return ret;
}

/* The whole tree, held; nothing runs until every process is built. */
static int build_tree(struct rst_ctx *c)
{
	int ret = LOG_TIMED(c->log, LP_PUPPET, setup_puppet(c, c->tasks[0]));

	mark_last_users(c);
	if (!ret)
		ret = LOG_TIMED(c->log, LP_PUPPET, rst_fork_tree(c));
	for (int i = 0; i < c->nr_tasks && !ret; i++) {
		c->log->pid = c->tasks[i]->pid;
		if (!(c->tasks[i]->t.flags & TASK_ZOMBIE))
			ret = build(c, c->tasks[i]);
		ret = test_fail_point(c->log, "task built", ret);
	}
	c->log->pid = 0;
	return LOG_TIMED(c->log, LP_RELEASE, release_tree(c, ret));
}

/* Every process made so far is killed and gone before we return: we
 * reap our child the root, and (being a subreaper while we build) the
 * others it leaves orphaned. */
static void destroy_tree(struct rst_ctx *c)
{
	struct timespec tick = { 0, 2 * 1000 * 1000 };
	/* a container's init is its maker's to end, with the engine */
	int status, ms = 0, root = c->root_made ? 1 : 0;

	for (int i = root; i < c->nr_tasks; i++)
		if (c->tasks[i]->rm.seized || i == 0)
			kill(c->tasks[i]->pid, SIGKILL);
	for (int i = c->nr_tasks - 1; i >= root; i--) {
		struct rst_task *t = c->tasks[i];
		char state;

		if (!t->rm.seized && i)
			continue;	/* never made */
		for (; ms < ZOMBIE_WAIT_MS; ms += 2) {	/* all in one bound */
			pid_t r = waitpid(t->pid, &status, __WALL | WNOHANG);

			/* (a container's: a zombie of its held init, which its
			 * end, our caller's doing, reaps) */
			if (r < 0 && errno != EINTR &&
			    (proc_state(t->pid, &state) || (root && state == 'Z')))
				break;	/* gone */
			nanosleep(&tick, NULL);
		}
	}
	log_info(c->log, "the half-built processes were removed");
}

/* --pidns with a key: the image is authenticated here, then restored
 * in the new namespace from the fd checked (img_private()). */
static int pidns_auth(int fd, const struct ckpt_restart_opts *o, unsigned long flags,
		      struct ckpt_result *res)
{
	struct ckpt_log log = { .fd = o->logfd, .verbose = o->flags & CKPT_VERBOSE };
	int img = img_private(fd, &log), ret;

	ret = img < 0 ? img : auth_verify(img, o->key, o->key_len, &log);
	if (!ret) {
		ret = pidns_restart(o->pid, img, flags, o->logfd, res, ckpt_restart_r);
	} else if (res) {
		res->pid = 0;
		res->err = log.err;
		snprintf(res->msg, sizeof(res->msg), "%s", log.msg);
	}
	if (img >= 0 && img != fd)
		close(img);
	return ret;
}

/* Options that cannot go together, or malformed: checked before any
 * of the image is read, whatever it holds. */
static int opts_bad(const struct ckpt_restart_opts *o, unsigned long flags,
		    struct ckpt_log *log)
{
	if ((flags & CKPT_PIDNS) && (o->nr_join_ns || o->nr_external || o->nr_cgroup_root))
		return log_err(log, EINVAL, "--join-ns, --external and --cgroup-root are not for --pidns%s (a container's image needs none)",
			       o->flags & CKPT_PIDNS ? "" : ", which an ordinary user's restart is");
	if ((flags & CKPT_LAZY) && (flags & CKPT_PIDNS))
		return log_err(log, EINVAL, "--lazy is not for --pidns%s: lazy restart takes a lone process in our pid namespace",
			       o->flags & CKPT_PIDNS ? "" : ", which an ordinary user's restart is");
	if ((o->flags & CKPT_NO_CGROUPS) && o->nr_cgroup_root)
		return log_err(log, EINVAL, "--cgroup-root places the groups that --no-cgroups leaves alone: not both");
	return cg_root_args_bad(log, o->cgroup_root, o->nr_cgroup_root);
}

/* The bytes of pages to place, for the progress line. */
static uint64_t page_bytes(const struct rst_ctx *c)
{
	uint64_t n = 0;

	for (size_t i = 0; c->pv_spans && i < c->pv_nr; i++)
		n += c->pv_spans[i].len;
	return n;
}

/* A compressed image made whole (image_expand.c): *@img becomes the copy. */
static int expand(int fd, int *img, struct ckpt_log *log, unsigned long flags)
{
	struct stat st;
	int e;

	if (!fstat(*img, &st))
		progress_begin(log, flags, "expand", st.st_size);
	e = img_expand(*img, log, NULL);
	progress_end(log);

	if (e < 0)
		return e;
	if (e != *img && *img != fd)
		close(*img);
	*img = e;
	return 0;
}

/* @x: from a container's outer restart (container.c), for its engine;
 * NULL otherwise. */
static int restart_run(int fd, const struct ckpt_restart_opts *o, const struct rst_extra *x,
		       struct ckpt_result *res)
{
	unsigned long flags = o->flags;
	struct ckpt_log log = { .fd = o->logfd, .verbose = flags & CKPT_VERBOSE };
	struct rst_ctx c = { .log = &log, .flags = flags, .keeper.fd = -1, .opts = o };
	struct records rs = { 0 };
	int ret, img;
	pid_t got = 0;

	log.times.start = log_now();

	/* an ordinary user's processes get their pids back only in a pid
	 * namespace (and user namespace) of their own: unpriv.c */
	if (!x && unpriv_needs_ns())
		flags |= CKPT_PIDNS;
	ret = opts_bad(o, flags, &log);
	if (ret) {
		if (res) {
			res->pid = 0;
			res->err = log.err;
			snprintf(res->msg, sizeof(res->msg), "%s", log.msg);
		}
		return ret;
	}
	if ((flags & CKPT_PIDNS) && o->key)
		return pidns_auth(fd, o, flags, res);
	if (flags & CKPT_PIDNS)
		return pidns_restart(o->pid, fd, flags, o->logfd, res, ckpt_restart_r);
	if (x) {
		c.root_made = true;
		c.ns_join = x->join;
		memcpy(c.join_fd, x->join_fd, sizeof(c.join_fd));
		c.give = x->give[0] >= 0;
		memcpy(c.give_fd, x->give, sizeof(c.give_fd));
	}
	img = o->key ? img_private(fd, &log) : img_seekable(fd, &log);
	ret = img < 0 ? img : 0;
	c.img_fd = img;
	/* before anything of the image is read, a container's too (its
	 * engine checks again what it reads) */
	if (!ret && o->key)
		ret = auth_verify(img, o->key, o->key_len, &log);
	if (!ret)
		ret = expand(fd, &img, &log, flags);
	if (!ret)	/* an incremental image: with its parents, whole */
		ret = LOG_TIMED(&log, LP_READ, chain_open(&img, fd, o->key, o->key_len, &log,
							  c.chain_fd, &c.nr_chain));
	c.img_fd = img;
	if (!ret && !x && (ret = container_image(img, &log)) == 1) {
		ret = (flags & CKPT_LAZY) ?
		      log_err(&log, EINVAL, "--lazy: this is a container's image, which is restarted whole, not lazily") :
		      container_restart(img, o, res, restart_run);
		if ((flags & CKPT_LAZY) && res) {
			res->pid = 0;
			res->err = log.err;
			snprintf(res->msg, sizeof(res->msg), "%s", log.msg);
		}
		if (img != fd)
			close(img);
		for (int i = 0; i < c.nr_chain; i++)
			close(c.chain_fd[i]);
		return ret;
	}
	if (!ret && (o->nr_join_ns || o->nr_external) && !x)
		ret = log_err(&log, EINVAL, "--join-ns and --external are for a container's image");
	if (!ret)
		ret = LOG_TIMED(&log, LP_READ, image_read(&c, &rs, true));
	if (!ret)
		ret = LOG_TIMED(&log, LP_READ, image_model(&c, &rs, true));
	/* where a test changes the image under restart (what a kind reads
	 * again must be what it checked: kind_ops.reread) */
	if (!ret)
		test_point(&log, "image checked");
	if (!ret)
		ret = mm_lazy_check(&c);
	if (!ret)
		progress_begin(&log, flags, "restart", page_bytes(&c));
	if (!ret && o->pid && o->pid != c.tasks[0]->pid)
		ret = log_err(&log, EINVAL, "the image holds pid %d, not %d",
			      c.tasks[0]->pid, o->pid);
	/* a job is a group in its shell's session, never a session's leader */
	if (!ret && (flags & CKPT_SHELL_JOB) && c.tasks[0]->t.sid == (uint32_t)c.tasks[0]->pid)
		ret = log_err(&log, EINVAL,
			      "pid %d leads its own session: it is no shell job (restart it without --shell-job)",
			      c.tasks[0]->pid);
	if (!ret)
		ret = LOG_TIMED(&log, LP_PIDWAIT, wait_ids_free(&c));
	if (!ret) {
		pin_begin(&c.pin);
		if (c.pv_pid)
			pin_beside_task(&c.pin, c.pv_pid);
	}
	if (!ret && !c.root_made)
		c.puppet_act = own_actions();
	if (!ret) {
		got = LOG_TIMED(&log, LP_PUPPET, make_puppet(&c, c.tasks[0]->pid));
		ret = got < 0 ? got : 0;
	}
	if (!ret) {
		int was_subreaper = 0;

		prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper);
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		ret = build_tree(&c);
		if (ret)
			destroy_tree(&c);
		prctl(PR_SET_CHILD_SUBREAPER, was_subreaper);
	}
	pin_end(&c.pin);
	if (!ret)
		log_info(&log, "pid %d restored, with %d processes", got, c.nr_tasks);
	progress_end(&log);
	timing_report(&log, "restart");
	if (res) {
		res->pid = ret ? 0 : got;
		res->err = ret ? log.err : 0;
		snprintf(res->msg, sizeof(res->msg), "%s", ret ? log.msg : "");
	}
	rst_ctx_free(&c);
	records_free(&rs);
	if (img >= 0 && img != fd)
		close(img);
	for (int i = 0; i < c.nr_chain; i++)
		close(c.chain_fd[i]);
	return ret ? ret : got;
}

int ckpt_restart_opts(int fd, const struct ckpt_restart_opts *o, struct ckpt_result *res)
{
	return restart_run(fd, o, NULL, res);
}

int ckpt_restart_r(pid_t pid, int fd, unsigned long flags, int logfd,
		   struct ckpt_result *res)
{
	struct ckpt_restart_opts o = { .pid = pid, .flags = flags, .logfd = logfd };

	return restart_run(fd, &o, NULL, res);
}

int ckpt_restart(pid_t pid, int fd, unsigned long flags, int logfd)
{
	return ckpt_restart_r(pid, fd, flags, logfd, NULL);
}
