/* checkpoint.c - ckpt_checkpoint(): hold the task, write its image, then
 * let it run on or (CKPT_KILL) end it once the image is safe. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "arch/arch.h"
#include "container.h"
#include "kinds.h"
#include "kinds/cgroup.h"
#include "prealloc.h"
#include "progress.h"
#include "runner.h"
#include "testpoint.h"
#include "timing.h"

static int write_head(struct cpt_ctx *c)
{
	struct rec_head h;
	struct utsname u;
	struct timespec ts;

	memset(&h, 0, sizeof(h));
	clock_gettime(CLOCK_REALTIME, &ts);
	uname(&u);
	h.magic = CKPT_MAGIC;
	h.major = CKPT_FMT_MAJOR;
	h.minor = CKPT_FMT_MINOR;
	h.page_size = sysconf(_SC_PAGESIZE);
	arch_head_fill(&h);
	h.time_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	h.flags = (c->flags & 0xffffffffUL & ~CKPT_PROGRESS) | (c->host_ns ? HEAD_CONTAINER : 0);
	h.root_pid = c->tasks[0]->pid;
	h.nr_tasks = c->nr_tasks;
	snprintf(h.kernel, sizeof(h.kernel), "%s", u.release);
	snprintf(h.host, sizeof(h.host), "%s", u.nodename);
	snprintf(h.tool, sizeof(h.tool), "ckpt %s", CKPT_VERSION_STRING);
	return iw_record(&c->w, REC_HEAD, &h, sizeof(h));
}

/* A kind's step @e, timed as the kind of index @i (timing.h). */
#define KIND_TIMED(c, i, e) ({ uint64_t t0_ = log_now(); int r_ = (e); \
	log_kind_took((c)->log, (i), t0_); r_; })

/* What the remote calls need: a syscall instruction, every thread
 * guarded (*@below: room below the main thread's guard frame). */
static int prepare(struct cpt_ctx *c, struct cpt_task *t, uint64_t *below)
{
	if (arch_find_syscall(t))
		return log_err(c->log, ENOEXEC,
			       "pid %d: no syscall instruction found in its code", t->pid);
	for (int i = 1; i < t->nr_threads; i++) {
		t->threads[i].rm->sc_ip = t->rm.sc_ip;
		t->threads[i].rm->sc32_ip = t->rm.sc32_ip;
	}
	return arch_guard_task(c, t, below);
}

/* Process @t made ready for the kinds: its layout read before anything
 * of it changes, every thread guarded, room for the calls' arguments. */
static int task_ready(struct cpt_ctx *c, struct cpt_task *t)
{
	uint64_t below = 0;
	long addr;
	int ret;

	ret = LOG_TIMED(c->log, LP_PROC, proc_smaps(t->pid, &t->maps));
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading maps:", t->pid);
	ret = LOG_TIMED(c->log, LP_PREP, prepare(c, t, &below));
	if (ret)
		return ret;
	t->scratch_len = SCRATCH_LEN;
	if (below) {
		t->scratch = (below - SCRATCH_LEN) & ~63ULL;
		/* its calls in batches from here on, where it can */
		ret = runner_open(&t->rm);
		return ret < 0 ? ret : 0;
	}
	/* a 32-bit call's pointers are 32 bits */
	ret = rcheck(&t->rm, &addr, "mmap scratch", SYS_mmap, 0, SCRATCH_LEN,
		     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		     (cpt_ia32(t) ? ARCH_MAP_32BIT : 0), -1, 0);
	if (ret)
		return ret;
	t->scratch = addr;
	t->scratch_mapped = true;
	return 0;
}

/* A zombie is only its TASK record. */
static int dump_task(struct cpt_ctx *c, struct cpt_task *t)
{
	int ret = 0;

	if (t->zombie)
		return kind_task.dump(c, t);
	for (int i = 0; i < ckpt_nr_kinds && !ret; i++) {
		uint64_t t0 = log_now();

		log_info(c->log, "pid %d: saving %s", t->pid, ckpt_kinds[i]->name);
		if (ckpt_kinds[i]->dump)
			ret = ckpt_kinds[i]->dump(c, t);
		log_kind_took(c->log, i, t0);
		ret = test_fail_point(c->log, ckpt_kinds[i]->name, ret);
	}
	for (int j = 0; j < t->nr_threads && !ret; j++)
		for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
			if (ckpt_kinds[i]->dump_thread) {
				uint64_t t0 = log_now();

				ret = ckpt_kinds[i]->dump_thread(c, t, &t->threads[j]);
				log_kind_took(c->log, i, t0);
			}
	return ret;
}

/* Every process made ready first, so that a kind can make the calls of
 * all of them at once (dump_ready), their stops overlapping. */
static int dump_all(struct cpt_ctx *c)
{
	int ret = write_head(c);

	for (int i = 0; i < c->nr_tasks && !ret; i++)
		if (!c->tasks[i]->zombie)
			ret = task_ready(c, c->tasks[i]);
	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->dump_ready)
			ret = KIND_TIMED(c, i, ckpt_kinds[i]->dump_ready(c));
	for (int i = 0; i < c->nr_tasks && !ret; i++)
		ret = dump_task(c, c->tasks[i]);
	return ret;
}

/* Our scratch areas go before anything else is given back. */
static int unmap_scratch(struct cpt_ctx *c)
{
	int ret = 0;

	for (int i = 0; i < c->nr_tasks; i++) {
		struct cpt_task *t = c->tasks[i];
		int r = t->scratch_mapped ? rcheck(&t->rm, NULL, "munmap scratch",
						   SYS_munmap, t->scratch, t->scratch_len) : 0;

		t->scratch = 0;
		t->scratch_mapped = false;
		ret = ret ? ret : r;
	}
	return ret;
}

/* A failed checkpoint says why in the image too, so that a restart of
 * it reports the cause (as the seed's error records do). */
static void write_error(struct cpt_ctx *c)
{
	struct img_writer *w = &c->w;

	if (c->log->err == EPIPE || c->log->err == ENOSPC || c->log->err == EIO)
		return;		/* the stream itself failed */
	if (w->nr_records == 0 && !w->open && write_head(c))
		return;
	if (iw_abandon(w) == 0 && iw_record_str(w, REC_ERROR, "", 0, c->log->msg) == 0)
		iw_flush(w);
}

static int sync_image(struct cpt_ctx *c, int fd)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0;	/* a pipe or socket: nothing to sync */
	if (fsync(fd))
		return log_err(c->log, errno, "syncing the image:");
	return 0;
}

static volatile sig_atomic_t cancelled;

void ckpt_cancel(void)
{
	cancelled = 1;
}

static int check_cancel(struct cpt_ctx *c)
{
	return cancelled ? log_err(c->log, EINTR, "checkpoint interrupted by a signal") : 0;
}

/* About the bytes of pages the image will hold, for the progress line. */
static uint64_t tree_mem(const struct cpt_ctx *c)
{
	uint64_t n = 0;

	if (!(c->flags & CKPT_PROGRESS))
		return 0;
	for (int i = 0; i < c->nr_tasks; i++)
		if (cpt_own_mm(c->tasks[i]))
			n += progress_mem_of(c->tasks[i]->pid);
	return n;
}

static void stop_prealloc(void *p)
{
	prealloc_stop(p, true);
}

/* A tmpfs image's pages allocated while the tree's stops are waited
 * for (prealloc.c): not for a compressed or incremental image, whose
 * pages are fewer than the processes hold. */
static void prealloc_tree(struct cpt_ctx *c, int fd)
{
	pid_t *pids;
	int n = 0;

	if (c->w.z || (c->flags & CKPT_PARENT))
		return;
	pids = malloc(c->nr_tasks * sizeof(*pids));
	if (!pids)
		return;
	for (int i = 0; i < c->nr_tasks; i++)
		if (cpt_own_mm(c->tasks[i]))
			pids[n++] = c->tasks[i]->pid;
	c->prealloc = prealloc_start(fd, pids, n);
	free(pids);
	if (c->prealloc)
		iw_on_bulk(&c->w, stop_prealloc, c->prealloc);
}

/* What the image did not use of it is freed, whatever became of the
 * image: a file holding pages past its end would hide them. */
static void prealloc_done(struct cpt_ctx *c)
{
	int ret = prealloc_end(c->prealloc, c->log);

	if (c->prealloc)
		iw_on_bulk(&c->w, NULL, NULL);
	c->prealloc = NULL;
	if (ret)
		log_warn(c->log, "the image file's pages past its end not freed: %s",
			 strerror(-ret));
}

/* Every record of the tree rooted at @pid, through TAIL, synced. */
static int write_image(struct cpt_ctx *c, pid_t pid, int fd)
{
	int ret = 0, r;

	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->dump_begin)
			ret = KIND_TIMED(c, i, ckpt_kinds[i]->dump_begin(c, pid));
	if (!ret)
		ret = check_cancel(c);
	if (!ret)
		ret = LOG_TIMED(c->log, LP_SEIZE, tree_collect(c, pid));
	if (!ret)
		prealloc_tree(c, fd);
	if (!ret)
		progress_begin(c->log, c->flags, "checkpoint", tree_mem(c));
	if (!ret) {
		c->log->pos = &c->w.pos;
		ret = dump_all(c);
	}
	if (!ret)
		ret = check_cancel(c);
	for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
		if (ckpt_kinds[i]->dump_check)
			ret = KIND_TIMED(c, i, ckpt_kinds[i]->dump_check(c));
	r = unmap_scratch(c);
	ret = ret ? ret : r;
	ret = test_fail_point(c->log, "all written", ret);
	if (!ret)
		ret = iw_tail(&c->w);
	prealloc_done(c);
	if (!ret)
		ret = LOG_TIMED(c->log, LP_FSYNC, sync_image(c, fd));
	ret = test_fail_point(c->log, "image synced", ret);
	return ret ? ret : check_cancel(c);
}

/* The end, however the image went (@ret): the tree let go, or killed
 * (CKPT_KILL) once its image is safe. */
static int finish(struct cpt_ctx *c, int ret)
{
	bool kill = c->flags & CKPT_KILL;
	int r;

	if (ret && c->log->err && c->nr_tasks)
		write_error(c);
	c->failed = ret;
	if (!ret && kill) {
		for (int i = 0; i < ckpt_nr_kinds; i++)
			if (ckpt_kinds[i]->dump_kill)
				ckpt_kinds[i]->dump_kill(c);
		ret = LOG_TIMED(c->log, LP_KILL, tree_kill(c));
	}
	for (int i = 0; i < ckpt_nr_kinds; i++)
		if (ckpt_kinds[i]->dump_end) {
			uint64_t t0 = log_now();

			ckpt_kinds[i]->dump_end(c, !ret && kill);
			log_kind_took(c->log, i, t0);
		}
	r = LOG_TIMED(c->log, LP_RELEASE, tree_release(c));
	ret = ret ? ret : r;
	kill = !ret && kill;	/* and dead */
	for (int i = 0; i < ckpt_nr_kinds; i++) {
		r = ckpt_kinds[i]->dump_finish ?
		    KIND_TIMED(c, i, ckpt_kinds[i]->dump_finish(c, kill)) : 0;
		ret = ret ? ret : r;
	}
	return ret;
}

/* @host: a container's engine (container.c) runs it, inside, with the
 * namespaces of its caller; NULL for any other tree. */
static int checkpoint_run(pid_t pid, int fd, const struct ckpt_checkpoint_opts *o,
			  struct ckpt_result *res, const struct ns_ids *host, pid_t host_pid)
{
	struct ckpt_log log = { .fd = o->logfd, .verbose = o->flags & CKPT_VERBOSE,
				.container = host ? host_pid : 0 };
	struct cpt_ctx c = { .log = &log, .flags = o->flags, .opts = o,
			     .cancelled = &cancelled, .host_ns = host };
	int ret;

	cancelled = 0;
	log.times.start = log_now();
	ret = iw_init(&c.w, fd, &log);
	if (!ret && o->key)
		ret = iw_authenticate(&c.w, o->key, o->key_len);
	if (!ret && (o->flags & CKPT_COMPRESS) && (o->flags & (CKPT_TRACK_MEM | CKPT_PARENT)))
		ret = log_err(&log, EINVAL, "--compress with --track-mem or --parent: not supported (an incremental image's parents are read uncompressed)");
	if (!ret && (o->flags & CKPT_COMPRESS))
		ret = iw_compress(&c.w, o->compress_level);
	if (!ret)
		ret = kind_dump_init(&c);
	if (!ret)
		ret = finish(&c, write_image(&c, pid, fd));
	progress_end(&log);
	tree_free(&c);
	kind_dump_free(&c);
	iw_free(&c.w);
	if (ret)
		log_info(&log, "checkpoint of pid %d failed; it runs on as before", pid);
	else
		log_info(&log, "checkpoint of pid %d done (%llu bytes)", pid,
			 (unsigned long long)c.w.pos);
	timing_report(&log, "checkpoint");
	if (res) {
		res->pid = pid;
		res->err = ret ? log.err : 0;
		snprintf(res->msg, sizeof(res->msg), "%s", ret ? log.msg : "");
	}
	return ret;
}

int ckpt_checkpoint_opts(int fd, const struct ckpt_checkpoint_opts *o,
			 struct ckpt_result *res)
{
	struct ckpt_log log = { .fd = o->logfd };
	int ret = cg_root_args_bad(&log, o->cgroup_root, o->nr_cgroup_root);

	if (ret) {	/* before anything is done, even an image begun */
		if (res) {
			res->pid = o->pid;
			res->err = log.err;
			snprintf(res->msg, sizeof(res->msg), "%s", log.msg);
		}
		return ret;
	}
	if (o->pid > 0 && container_root(o->pid, &log)) {
		cancelled = 0;
		return container_checkpoint(fd, o, res, checkpoint_run, &cancelled);
	}
	return checkpoint_run(o->pid, fd, o, res, NULL, 0);
}

int ckpt_checkpoint_r(pid_t pid, int fd, unsigned long flags, int logfd,
		      struct ckpt_result *res)
{
	struct ckpt_checkpoint_opts o = { .pid = pid, .flags = flags, .logfd = logfd };

	return ckpt_checkpoint_opts(fd, &o, res);
}

int ckpt_checkpoint(pid_t pid, int fd, unsigned long flags, int logfd)
{
	return ckpt_checkpoint_r(pid, fd, flags, logfd, NULL);
}
