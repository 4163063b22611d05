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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "arch/x86/cpu.h"
#include "arch/x86/puppet.h"
#include "kinds.h"
#include "kinds/mm.h"

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif
#define TRAMP_LEN	(16 * 4096)
#define ZOMBIE_WAIT_MS	5000

struct records {
	struct rec *r;
	size_t n;
};

static void records_free(struct records *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->r[i].data);
	free(rs->r);
}

/* Pass 1: every record read, its checksum verified, the tail found. */
static int read_image(struct rst_ctx *c, struct records *rs)
{
	struct img_reader r;
	struct rec rec;
	size_t cap = 0;
	int ret = ir_init(&r, c->img_fd, c->log);

	while (!ret && (ret = ir_next(&r, &rec)) > 0) {
		if (rec.type == REC_ERROR) {
			ret = log_err(c->log, ECANCELED,
				      "the image records a failed checkpoint: %s",
				      rec_str(&rec, 0, rec.data_len) ?: "(no reason given)");
			free(rec.data);
			break;
		}
		if (rs->n == cap) {
			void *p = realloc(rs->r, (cap = cap ? cap * 2 : 256) * sizeof(rec));

			if (!p) {
				free(rec.data);
				ret = log_err(c->log, ENOMEM, "record table:");
				break;
			}
			rs->r = p;
		}
		rs->r[rs->n++] = rec;
		ret = 0;
	}
	ir_free(&r);
	return ret;
}

static int load_task(struct rst_ctx *c, struct rec *r)
{
	struct rst_task *t = c->task;

	if (t)
		return log_err(c->log, EBADMSG,
			       "more than one TASK record (process trees are not supported yet)");
	if (r->data_len != sizeof(struct rec_task))
		return log_err(c->log, EBADMSG, "bad TASK record");
	t = calloc(1, sizeof(*t));
	if (!t)
		return log_err(c->log, ENOMEM, "task:");
	memcpy(&t->t, r->data, sizeof(t->t));
	t->pid = t->t.pid;
	t->rm.memfd = -1;
	c->task = t;
	if (t->pid <= 1 || t->t.nr_threads < 1 || t->t.nr_threads > MAX_THREADS ||
	    t->t.flags & ~TASK_STOPPED ||
	    memchr(t->t.comm, 0, sizeof(t->t.comm)) == NULL)
		return log_err(c->log, EBADMSG, "TASK record: bad pid or fields");
	return 0;
}

/* Pass 2: records into the model, each checked by the kind that owns it. */
static int load_model(struct rst_ctx *c, struct records *rs)
{
	int ret;

	if (!rs->n || rs->r[0].type != REC_HEAD)
		return log_err(c->log, EBADMSG, "image has no HEAD record");
	ret = head_check(c->log, &rs->r[0], true);
	if (ret)
		return ret;
	memcpy(&c->head, rs->r[0].data, sizeof(c->head));
	for (size_t i = 1; i < rs->n && !ret; i++) {
		struct rec *r = &rs->r[i];
		const struct kind_ops *k;

		if (r->type == REC_TASK) {
			ret = load_task(c, r);
			continue;
		}
		if (r->type == REC_THREAD && c->task && r->data_len >= 4) {
			ret = rst_thread_add(c->task, *(uint32_t *)r->data);
			if (ret) {
				ret = log_err(c->log, -ret, "thread table:");
				continue;
			}
		}
		if (r->type == REC_FD && r->data_len >= 4 &&
		    *(uint32_t *)r->data >= c->fd_floor)
			c->fd_floor = *(uint32_t *)r->data + 1;
		k = kind_for_type(r->type);
		if (!k || !c->task)
			ret = log_err(c->log, EBADMSG, "record %s out of place",
				      rec_type_name(r->type));
		else
			ret = k->load(c, c->task, r);
	}
	if (!ret && !c->task)
		ret = log_err(c->log, EBADMSG, "image holds no process");
	if (!ret && c->task->pid != (pid_t)c->head.root_pid)
		ret = log_err(c->log, EBADMSG, "TASK pid differs from HEAD");
	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->check)
			ret = ckpt_kinds[i]->check(c, c->task);
	return ret;
}

static int pid_state(pid_t pid, char *state)
{
	unsigned long long f[PROC_STAT_FIELDS];

	return proc_stat(pid, state, f);
}

/* Clone the puppet with the saved pid.  A pid still held by a zombie (a
 * `checkpoint --kill` just before, whose parent has not reaped it yet) is
 * waited for a while. */
static int clone_puppet(struct rst_ctx *c, pid_t pid)
{
	pid_t tid = pid;
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&tid,
		.set_tid_size = 1,
	};
	sigset_t all, old;
	long r;

	for (int waited = 0;; waited += 10) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		char state = '?';

		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, &old);
		r = ckpt_puppet_clone(&args, sizeof(args));
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (r > 0)
			return r;
		if (r != -EEXIST)
			return log_err(c->log, (int)-r, "creating pid %d:", pid);
		if (pid_state(pid, &state) == 0 && state != 'Z' && state != 'X') {
			char comm[64] = "?";

			proc_status_str(pid, "Name", comm, sizeof(comm));
			return log_err(c->log, EEXIST,
				       "pid %d is in use by another process (%s, state %c)",
				       pid, comm, state);
		}
		if (waited >= ZOMBIE_WAIT_MS)
			return log_err(c->log, EEXIST,
				       "pid %d is still held by an unreaped zombie after %d ms",
				       pid, ZOMBIE_WAIT_MS);
		nanosleep(&ts, NULL);
	}
}

/* With CKPT_DETACH the puppet is made by a short-lived middle child, so
 * that it is orphaned to init (or the nearest subreaper). */
static int make_puppet(struct rst_ctx *c, pid_t pid)
{
	int fds[2], status, err = 0;
	pid_t mid;
	long got = 0;

	if (!(c->flags & CKPT_DETACH))
		return clone_puppet(c, pid);
	if (pipe2(fds, O_CLOEXEC))
		return log_err(c->log, errno, "pipe:");
	mid = fork();
	if (mid < 0) {
		close(fds[0]);
		close(fds[1]);
		return log_err(c->log, errno, "fork:");
	}
	if (mid == 0) {
		struct ckpt_log quiet = { .fd = -1 };
		struct rst_ctx cc = *c;
		long r;

		cc.log = &quiet;
		r = clone_puppet(&cc, pid);
		if (r < 0)
			r = -(long)quiet.err;
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &got, sizeof(got)) != sizeof(got))
		got = -EIO;
	close(fds[0]);
	waitpid(mid, &status, 0);
	if (got < 0) {
		err = (int)-got;
		if (err == EEXIST)
			return log_err(c->log, EEXIST, "pid %d is in use", pid);
		return log_err(c->log, err, "creating pid %d:", pid);
	}
	return got;
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
	/* At 0: syscall; int3.  At TRAMP_AMX (16): ldtilecfg of the tile
	 * configuration at 64 (one 16x64 tile); tilezero tmm0, which touches
	 * tile data (what XFD traps on); tilerelease; syscall; int3. */
	static const uint8_t code[128] = {
		0x0f, 0x05, 0xcc, [16] = 0xc4, 0xe2, 0x78, 0x49, 0x05,
		0x27, 0x00, 0x00, 0x00,		/* rip (25) + 39 = 64 */
		0xc4, 0xe2, 0x7b, 0x49, 0xc0,	/* tilezero %tmm0 */
		0xc4, 0xe2, 0x78, 0x49, 0xc0, 0x0f, 0x05, 0xcc,
		[64] = 1, [80] = 64, [112] = 16,
	};
	struct rseq_cfg rs = { 0 };
	struct vma_list busy;
	struct rlimit nofile;
	uint64_t gap;
	long res;
	int ret;

	ret = remote_seize(&t->rm, t->pid, true, c->log);
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
	ret = proc_smaps(t->pid, &busy);
	if (ret)
		return log_err(c->log, -ret, "reading puppet maps:");
	ret = mm_find_gap(t, &busy, TRAMP_LEN, &gap);
	vma_list_free(&busy);
	if (ret)
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
	ret = remote_write(&t->rm, gap, code, sizeof(code));
	if (ret)
		return ret;
	t->rm.sc_ip = gap;
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

/* The process-wide side of each kind of a phase, then (once the threads
 * exist) each thread's side. */
static int run_phase(struct rst_ctx *c, struct rst_task *t, enum kind_phase ph,
		     bool threads)
{
	int ret = 0;

	for (int i = 0; i < ckpt_nr_kinds && !ret; i++) {
		const struct kind_ops *k = ckpt_kinds[i];

		if (k->phase != ph || !k->restore)
			continue;
		log_info(c->log, "pid %d: restoring %s", t->pid, k->name);
		ret = k->restore(c, t);
	}
	for (int j = 0; j < t->nr_threads && threads && !ret; j++)
		for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
			if (ckpt_kinds[i]->phase == ph && ckpt_kinds[i]->restore_thread)
				ret = ckpt_kinds[i]->restore_thread(c, t, &t->threads[j]);
	return ret;
}

/* The other threads, cloned by the main one with their tids; under
 * PTRACE_O_TRACECLONE each starts held by us. */
static int create_threads(struct rst_ctx *c, struct rst_task *t)
{
	struct clone_args ca = {
		.flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			 CLONE_THREAD | CLONE_SYSVSEM,
		.stack = t->tramp + t->tramp_len - 4096,
		.stack_size = 4096 - 64,
		.set_tid_size = 1,
	};
	uint64_t ca_at, tid_at;
	long got;
	int ret = 0;

	if (t->nr_threads > 1 &&
	    ptrace(PTRACE_SETOPTIONS, t->pid, 0, PTRACE_O_TRACESYSGOOD |
		   PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE))
		return log_err(c->log, errno, "pid %d: PTRACE_SETOPTIONS:", t->pid);
	for (int i = 1; i < t->nr_threads && !ret; i++) {
		pid_t tid = t->threads[i].tid;

		ret = rst_scratch_put(t, 128, &tid, sizeof(tid), &tid_at);
		ca.set_tid = tid_at;
		if (!ret)
			ret = rst_scratch_put(t, 0, &ca, sizeof(ca), &ca_at);
		if (!ret)
			ret = remote_call(&t->rm, &got, SYS_clone3, ca_at, sizeof(ca),
					  0, 0, 0, 0);
		if (!ret && got != tid)
			ret = log_err(c->log, got == -EEXIST ? EEXIST : (int)-got,
				      "pid %d: creating thread %d:", t->pid, tid);
		if (!ret)
			ret = remote_adopt(&t->threads[i].own, tid, &t->rm);
	}
	return ret;
}

static int build(struct rst_ctx *c, struct rst_task *t)
{
	int ret = setup_puppet(c, t);

	if (!ret)
		ret = run_phase(c, t, PHASE_IMAGE, false);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "close image", SYS_close, t->img_fd);
	if (!ret)
		ret = create_threads(c, t);
	if (!ret)
		ret = run_phase(c, t, PHASE_STATE, true);
	if (!ret)	/* the last remote call: the trampoline goes */
		ret = rcheck(&t->rm, NULL, "munmap trampoline", SYS_munmap,
			     t->tramp, t->tramp_len);
	if (!ret)
		ret = run_phase(c, t, PHASE_LAST, true);
	t->rm.stop_on_release = t->t.flags & TASK_STOPPED;
	for (int i = 0; i < t->nr_threads && !ret; i++)
		ret = remote_release(t->threads[i].rm);
	return ret;
}

static void destroy_puppet(struct rst_ctx *c, struct rst_task *t)
{
	int status;

	kill(t->pid, SIGKILL);
	/* our child (or tracee), and its threads: wait for them to be gone */
	for (int i = t->nr_threads - 1; i > 0; i--)
		if (t->threads[i].own.seized)
			while (waitpid(t->threads[i].tid, &status, __WALL) < 0 &&
			       errno == EINTR)
				;
	while (waitpid(t->pid, &status, __WALL) < 0 && errno == EINTR)
		;
	log_info(c->log, "pid %d: half-built process removed", t->pid);
}

int ckpt_restart_r(pid_t pid, int fd, unsigned long flags, int logfd,
		   struct ckpt_result *res)
{
	struct ckpt_log log = { .fd = logfd, .verbose = flags & CKPT_VERBOSE };
	struct rst_ctx c = { .log = &log, .flags = flags };
	struct records rs = { 0 };
	int ret, img;
	pid_t got = 0;

	img = img_seekable(fd, &log);
	ret = img < 0 ? img : 0;
	c.img_fd = img;
	if (!ret)
		ret = read_image(&c, &rs);
	if (!ret)
		ret = load_model(&c, &rs);
	if (!ret && pid && pid != c.task->pid)
		ret = log_err(&log, EINVAL, "the image holds pid %d, not %d",
			      c.task->pid, pid);
	if (!ret) {
		got = make_puppet(&c, c.task->pid);
		ret = got < 0 ? got : 0;
	}
	if (!ret) {
		log.pid = got;
		ret = build(&c, c.task);
		if (ret)
			destroy_puppet(&c, c.task);
	}
	if (!ret)
		log_info(&log, "pid %d restored", got);
	if (res) {
		res->pid = ret ? 0 : got;
		res->err = ret ? log.err : 0;
		snprintf(res->msg, sizeof(res->msg), "%s", ret ? log.msg : "");
	}
	rst_task_free(c.task);
	records_free(&rs);
	if (img >= 0 && img != fd)
		close(img);
	return ret ? ret : got;
}

int ckpt_restart(pid_t pid, int fd, unsigned long flags, int logfd)
{
	return ckpt_restart_r(pid, fd, flags, logfd, NULL);
}
