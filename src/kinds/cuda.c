/* cuda.c - CUDA processes (REC_CUDA): the GPU state is the driver's.
 *
 * The NVIDIA driver (r570 and later) checkpoints a CUDA process itself,
 * called from another process on its pid: cuCheckpointProcessLock()
 * waits for its GPU work and blocks its further CUDA calls,
 * cuCheckpointProcessCheckpoint() moves its GPU memory and contexts into
 * its own host memory and closes its /dev/nvidia* descriptors; then it is
 * an ordinary process, which ckpt saves as any other.  At restart,
 * cuCheckpointProcessRestore() puts that state back on a GPU and
 * cuCheckpointProcessUnlock() lets its CUDA calls go on.
 *
 * The driver does this work through threads of the target, which must
 * run meanwhile: so at checkpoint it is done before ckpt seizes the tree
 * (cuda_freeze) and undone after ckpt lets it go (cuda_thaw) unless the
 * tree was killed; at restart it is done once every process is built
 * and none released (restore_end): only the thread the driver names
 * (cuCheckpointProcessGetRestoreThreadId) is let run meanwhile, every
 * signal blocked, and stopped again where it is before the release.
 *
 * libcuda.so.1 is opened at run time, only when a process of the tree
 * has a CUDA device open or an image holds CUDA state: ckpt has no build
 * or run dependency on it.  A process ckpt cannot have the driver
 * checkpoint is refused before anything is changed, naming pid, fd,
 * device and why: no driver, a driver without the API, a device file
 * shared with a process outside the tree, or the driver's own refusal.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "cuda.h"

/* ---- the driver, as cuda.h (r570+) declares its checkpoint API ---- */

typedef int cu_result;
#define CU_SUCCESS		0
#define CU_NOT_INITIALIZED	3

enum cu_state {
	CU_RUNNING = 0,
	CU_LOCKED = 1,
	CU_CHECKPOINTED = 2,
	CU_FAILED = 3,
};

struct cu_lock_args {
	unsigned int timeout_ms;	/* 0: none */
	unsigned int reserved0;
	uint64_t reserved1[7];
};

_Static_assert(sizeof(struct cu_lock_args) == 64, "CUcheckpointLockArgs");

static struct cuda_drv {
	bool tried, ok, inited;
	char why[300];		/* why not ok */
	char driver[32];	/* kernel module version */
	int cuda_version;
	cu_result (*init)(unsigned int);
	cu_result (*error_name)(cu_result, const char **);
	cu_result (*error_string)(cu_result, const char **);
	cu_result (*get_version)(int *);
	cu_result (*lock)(int, struct cu_lock_args *);
	cu_result (*checkpoint)(int, void *);
	cu_result (*restore)(int, void *);
	cu_result (*unlock)(int, void *);
	cu_result (*get_state)(int, int *);
	cu_result (*restore_tid)(int, int *);
} drv;

bool cuda_device_path(const char *path)
{
	return !strncmp(path, "/dev/nvidia", 11);
}

static void driver_version(char *out, size_t n)
{
	char *s = NULL, *p;

	snprintf(out, n, "unknown");
	if (file_read("/sys/module/nvidia/version", &s, NULL) == 0) {
		s[strcspn(s, "\n")] = 0;
		snprintf(out, n, "%s", s);
	} else if (file_read("/proc/driver/nvidia/version", &s, NULL) == 0 &&
		   (p = strstr(s, "Kernel Module"))) {
		p += strlen("Kernel Module");
		p += strspn(p, " \t");
		p[strcspn(p, " \t\n")] = 0;
		snprintf(out, n, "%s", p);
	}
	free(s);
}

#define SYM(f, name) (*(void **)&drv.f = dlsym(h, name))

/* Open the driver once; false (drv.why says why) if it is not there or
 * has no checkpoint API. */
static bool drv_load(void)
{
	void *h;

	if (drv.tried)
		return drv.ok;
	drv.tried = true;
	driver_version(drv.driver, sizeof(drv.driver));
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(drv.why, sizeof(drv.why),
			 "the CUDA driver is not available (%s)", dlerror());
		return false;
	}
	if (!SYM(init, "cuInit") || !SYM(get_version, "cuDriverGetVersion") ||
	    !SYM(error_name, "cuGetErrorName") || !SYM(error_string, "cuGetErrorString")) {
		snprintf(drv.why, sizeof(drv.why),
			 "the CUDA driver is not available (libcuda.so.1 lacks cuInit)");
		return false;
	}
	if (drv.get_version(&drv.cuda_version))
		drv.cuda_version = 0;
	if (!SYM(lock, "cuCheckpointProcessLock") ||
	    !SYM(checkpoint, "cuCheckpointProcessCheckpoint") ||
	    !SYM(restore, "cuCheckpointProcessRestore") ||
	    !SYM(unlock, "cuCheckpointProcessUnlock") ||
	    !SYM(get_state, "cuCheckpointProcessGetState") ||
	    !SYM(restore_tid, "cuCheckpointProcessGetRestoreThreadId")) {
		snprintf(drv.why, sizeof(drv.why),
			 "the CUDA driver (module %s, CUDA %d.%d) cannot checkpoint a process: it has no cuCheckpointProcess* API (driver r570 or later needed)",
			 drv.driver, drv.cuda_version / 1000, drv.cuda_version % 1000 / 10);
		return false;
	}
	drv.ok = true;
	return true;
}

static const char *cu_err(cu_result r, char *buf, size_t n)
{
	const char *name = NULL, *str = NULL;

	if (drv.error_name)
		drv.error_name(r, &name);
	if (drv.error_string)
		drv.error_string(r, &str);
	snprintf(buf, n, "%s (%d: %s)", name ? name : "CUDA error", r,
		 str ? str : "no description");
	return buf;
}

/* The first call made: some drivers want cuInit() in the caller. */
static cu_result cu_state(pid_t pid, int *st)
{
	cu_result r = drv.get_state(pid, st);

	if (r == CU_NOT_INITIALIZED && !drv.inited) {
		drv.inited = true;
		r = drv.init(0);
		if (r == CU_SUCCESS)
			r = drv.get_state(pid, st);
	}
	return r;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- one driver call per process, the processes in parallel ---- */

enum cu_op { OP_LOCK, OP_CHECKPOINT, OP_RESTORE, OP_UNLOCK };

struct cu_job {
	pid_t pid;
	enum cu_op op;
	bool skip;
	cu_result res;
	uint64_t ns;
	pthread_t th;
	bool started;
};

static unsigned int lock_timeout_ms(void)
{
	const char *s = getenv("CKPT_CUDA_LOCK_TIMEOUT_MS");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 && v < 3600000 ? (unsigned int)v : 10000;
}

static void *cu_run(void *arg)
{
	struct cu_job *j = arg;
	struct cu_lock_args la = { .timeout_ms = lock_timeout_ms() };
	uint64_t t0;
	sigset_t all;

	/* a signal to ckpt (a cancel) is for the main thread, not to cut
	 * short a system call of the driver's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	t0 = now_ns();

	switch (j->op) {
	case OP_LOCK: j->res = drv.lock(j->pid, &la); break;
	case OP_CHECKPOINT: j->res = drv.checkpoint(j->pid, NULL); break;
	case OP_RESTORE: j->res = drv.restore(j->pid, NULL); break;
	case OP_UNLOCK: j->res = drv.unlock(j->pid, NULL); break;
	}
	j->ns = now_ns() - t0;
	return NULL;
}

/* Each job not skipped, in parallel, each in a thread of its own (the
 * main thread only waits); false if any failed. */
static bool cu_all(struct cu_job *jobs, int n, enum cu_op op)
{
	bool ok = true;

	for (int i = 0; i < n; i++) {
		jobs[i].op = op;
		jobs[i].res = CU_SUCCESS;
		jobs[i].ns = 0;
		jobs[i].started = false;
		if (jobs[i].skip)
			continue;
		if (!pthread_create(&jobs[i].th, NULL, cu_run, &jobs[i]))
			jobs[i].started = true;
		else
			cu_run(&jobs[i]);
	}
	for (int i = 0; i < n; i++) {
		if (jobs[i].started)
			pthread_join(jobs[i].th, NULL);
		if (!jobs[i].skip && jobs[i].res != CU_SUCCESS)
			ok = false;
	}
	return ok;
}

/* ---- checkpoint ---- */

struct cuda_proc {
	pid_t pid;
	int fd;			/* its first device fd, for messages */
	char dev[64];		/* and that fd's device */
	int nr_fds;
	char devices[128];
	bool has_lib;		/* libcuda mapped */
	enum cu_state done;	/* what ckpt did to it */
	int restore_tid;
	uint64_t rss0, rss1;	/* VmRSS before and after, bytes */
	uint64_t lock_ns, checkpoint_ns;
};

struct cuda_cpt {
	struct cuda_proc *p;
	int n;
	size_t cap;
	pid_t *tree;
	int nr_tree;
	size_t cap_tree;
};

static int pid_add(struct cuda_cpt *cc, pid_t pid)
{
	pid_t *m = VEC_PUSH(cc->tree, cc->nr_tree, cc->cap_tree);

	if (!m)
		return -ENOMEM;
	*m = pid;
	return 0;
}

/* The tree as it is now, running: each process, then its children. */
static int walk_tree(struct cpt_ctx *c, struct cuda_cpt *cc, pid_t root)
{
	int ret = pid_add(cc, root);

	for (int i = 0; i < cc->nr_tree && !ret; i++) {
		char path[64];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", cc->tree[i]);
		d = opendir(path);
		if (!d) {
			if (i == 0)
				return log_err(c->log, errno == ENOENT ? ESRCH : errno,
					       "pid %d:", root);
			continue;	/* gone meanwhile: the seize sees it */
		}
		while (!ret && (de = readdir(d))) {
			char *s = NULL, *p, *end;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "task/%d/children", atoi(de->d_name));
			if (proc_read(cc->tree[i], path, &s, NULL))
				continue;
			for (p = s; !ret; p = end) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				ret = pid_add(cc, v);
			}
			free(s);
		}
		closedir(d);
	}
	return ret ? log_err(c->log, -ret, "pid %d: listing its tree:", root) : 0;
}

static uint64_t rss_bytes(pid_t pid)
{
	uint64_t kb = 0;

	proc_status_u64(pid, "VmRSS", 10, &kb);
	return kb * 1024;
}

/* Its CUDA device fds: the first into *fd/dev, their count returned. */
static int device_fds(pid_t pid, int *fd, char *dev, size_t devlen,
		      char *all, size_t alllen)
{
	char path[64], link[256];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;
	if (all && alllen)
		all[0] = 0;
	while ((de = readdir(d))) {
		ssize_t l;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, atoi(de->d_name));
		l = readlink(path, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = 0;
		if (!cuda_device_path(link))
			continue;
		if (!n++ || atoi(de->d_name) < *fd) {
			*fd = atoi(de->d_name);
			size_t k = strlen(link) < devlen - 1 ? strlen(link) : devlen - 1;

			memcpy(dev, link, k);
			dev[k] = 0;
		}
		if (all && !strstr(all, link) &&
		    strlen(all) + strlen(link) + 2 < alllen) {
			if (all[0])
				strcat(all, " ");
			strcat(all, link);
		}
	}
	closedir(d);
	return n;
}

static bool maps_libcuda(pid_t pid)
{
	char *s = NULL;
	bool yes = proc_read(pid, "maps", &s, NULL) == 0 && strstr(s, "/libcuda.so");

	free(s);
	return yes;
}

static bool cuda_in_tree(const struct cuda_cpt *cc, pid_t pid)
{
	for (int i = 0; i < cc->nr_tree; i++)
		if (cc->tree[i] == pid)
			return true;
	return false;
}

/* A device description of the tree's held by a process outside it
 * (a CUDA process forked: the child has its parent's): refused, the
 * driver checkpoints a process, not a description. */
static int shared_outside(struct cpt_ctx *c, struct cuda_cpt *cc)
{
	DIR *procs = opendir("/proc");
	struct dirent *pe;
	int ret = 0;

	if (!procs)
		return log_err(c->log, errno, "/proc:");
	while (!ret && (pe = readdir(procs))) {
		pid_t q = atoi(pe->d_name);
		char path[64], link[256];
		struct dirent *de;
		DIR *d;

		if (q <= 0 || q == getpid() || cuda_in_tree(cc, q))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", q);
		d = opendir(path);
		if (!d)
			continue;
		while (!ret && (de = readdir(d))) {
			int qfd = atoi(de->d_name);
			ssize_t l;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%d", q, qfd);
			l = readlink(path, link, sizeof(link) - 1);
			if (l <= 0)
				continue;
			link[l] = 0;
			if (!cuda_device_path(link))
				continue;
			for (int i = 0; i < cc->n && !ret; i++) {
				struct cuda_proc *p = &cc->p[i];
				char mine[64];
				struct dirent *fe;
				DIR *fd;

				snprintf(mine, sizeof(mine), "/proc/%d/fd", p->pid);
				fd = opendir(mine);
				while (fd && !ret && (fe = readdir(fd))) {
					int f = atoi(fe->d_name);

					if (fe->d_name[0] == '.')
						continue;
					if (syscall(SYS_kcmp, p->pid, q, KCMP_FILE, f, qfd) == 0)
						ret = log_err(c->log, EOPNOTSUPP,
							      "pid %d fd %d: %s is shared with pid %d, outside the tree (inherited over fork?): the CUDA driver cannot checkpoint a device description two processes hold",
							      p->pid, f, link, q);
				}
				if (fd)
					closedir(fd);
			}
		}
		closedir(d);
	}
	closedir(procs);
	return ret;
}

static const char *cuda_state_name(int st)
{
	switch (st) {
	case CU_RUNNING: return "running";
	case CU_LOCKED: return "locked";
	case CU_CHECKPOINTED: return "checkpointed";
	case CU_FAILED: return "failed";
	}
	return "unknown";
}

static struct cu_job *jobs_for(struct cuda_cpt *cc)
{
	struct cu_job *j = calloc(cc->n > 0 ? (size_t)cc->n : 1, sizeof(*j));

	for (int i = 0; j && i < cc->n; i++)
		j[i].pid = cc->p[i].pid;
	return j;
}

/* Put back every process as it was: restore what was checkpointed,
 * unlock what was locked.  0, or the first failure (reported). */
static int cuda_undo(struct cpt_ctx *c, struct cuda_cpt *cc)
{
	struct cu_job *j = jobs_for(cc);
	char buf[200];
	int ret = 0;

	if (!j)
		return log_err(c->log, ENOMEM, "CUDA jobs:");
	for (int i = 0; i < cc->n; i++)
		j[i].skip = cc->p[i].done != CU_CHECKPOINTED;
	cu_all(j, cc->n, OP_RESTORE);
	for (int i = 0; i < cc->n; i++) {
		struct cuda_proc *p = &cc->p[i];

		if (j[i].skip)
			continue;
		if (j[i].res) {
			ret = ret ? ret : log_err(c->log, EIO,
				"pid %d: the CUDA driver could not put its GPU state back: %s",
				p->pid, cu_err(j[i].res, buf, sizeof(buf)));
			continue;
		}
		log_info(c->log, "pid %d: CUDA restore %.1f ms", p->pid, j[i].ns / 1e6);
		p->done = CU_LOCKED;
	}
	for (int i = 0; i < cc->n; i++)
		j[i].skip = cc->p[i].done != CU_LOCKED;
	cu_all(j, cc->n, OP_UNLOCK);
	for (int i = 0; i < cc->n; i++) {
		struct cuda_proc *p = &cc->p[i];

		if (j[i].skip)
			continue;
		if (j[i].res) {
			ret = ret ? ret : log_err(c->log, EIO,
				"pid %d: the CUDA driver could not unlock it: %s",
				p->pid, cu_err(j[i].res, buf, sizeof(buf)));
			continue;
		}
		log_info(c->log, "pid %d: CUDA unlock %.1f ms", p->pid, j[i].ns / 1e6);
		p->done = CU_RUNNING;
	}
	free(j);
	return ret;
}

/* Back to holding nothing. */
static void cuda_cpt_reset(struct cuda_cpt *cc)
{
	free(cc->p);
	free(cc->tree);
	*cc = (struct cuda_cpt){ 0 };
}

static void cuda_dump_free(struct cpt_ctx *c, void *state)
{
	cuda_cpt_reset(state);
}

/* The tree's processes with a CUDA device open, into cc->p. */
static int find_procs(struct cpt_ctx *c, struct cuda_cpt *cc)
{
	for (int i = 0; i < cc->nr_tree; i++) {
		struct cuda_proc p = { .pid = cc->tree[i] };

		p.nr_fds = device_fds(p.pid, &p.fd, p.dev, sizeof(p.dev),
				      p.devices, sizeof(p.devices));
		if (!p.nr_fds)
			continue;
		p.has_lib = maps_libcuda(p.pid);
		if (VEC_ROOM(cc->p, cc->n, cc->cap))
			return log_err(c->log, ENOMEM, "CUDA processes:");
		cc->p[cc->n++] = p;
	}
	return 0;
}

/* What can be known before the driver is asked: refusals. */
static int precheck(struct cpt_ctx *c, struct cuda_cpt *cc)
{
	int ret = 0;

	for (int i = 0; i < cc->n && !ret; i++) {
		struct cuda_proc *p = &cc->p[i];

		if (!p->has_lib)
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d fd %d: %s is open, but the process has no CUDA driver (libcuda) loaded: not a CUDA process the driver can checkpoint",
				      p->pid, p->fd, p->dev);
	}
	if (!ret)
		ret = shared_outside(c, cc);
	if (!ret && !drv_load())
		ret = log_err(c->log, EOPNOTSUPP, "pid %d fd %d: %s: %s",
			      cc->p[0].pid, cc->p[0].fd, cc->p[0].dev, drv.why);
	for (int i = 0; i < cc->n && !ret; i++) {
		struct cuda_proc *p = &cc->p[i];
		char buf[200];
		int st = -1;
		cu_result r = cu_state(p->pid, &st);

		if (r)
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d fd %d: %s: the CUDA driver cannot checkpoint it: %s",
				      p->pid, p->fd, p->dev, cu_err(r, buf, sizeof(buf)));
		else if (st != CU_RUNNING)
			ret = log_err(c->log, EBUSY,
				      "pid %d fd %d: %s: its CUDA state is already %s (by another tool?)",
				      p->pid, p->fd, p->dev, cuda_state_name(st));
	}
	return ret;
}

static int lock_and_checkpoint(struct cpt_ctx *c, struct cuda_cpt *cc)
{
	struct cu_job *j = jobs_for(cc);
	char buf[200];
	int ret = 0;

	if (!j)
		return log_err(c->log, ENOMEM, "CUDA jobs:");
	cu_all(j, cc->n, OP_LOCK);
	for (int i = 0; i < cc->n; i++) {
		struct cuda_proc *p = &cc->p[i];
		int st = -1;

		p->lock_ns = j[i].ns;
		if (j[i].res == CU_SUCCESS) {
			p->done = CU_LOCKED;
			continue;
		}
		/* a failed lock may still have locked it */
		if (drv.get_state(p->pid, &st) == CU_SUCCESS && st == CU_LOCKED)
			p->done = CU_LOCKED;
		if (!ret)
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d fd %d: %s: the CUDA driver could not lock it (within %u ms): %s",
				      p->pid, p->fd, p->dev, lock_timeout_ms(),
				      cu_err(j[i].res, buf, sizeof(buf)));
	}
	if (!ret && *c->cancelled)
		ret = log_err(c->log, EINTR, "checkpoint interrupted by a signal");
	if (!ret) {
		for (int i = 0; i < cc->n; i++)
			cc->p[i].rss0 = rss_bytes(cc->p[i].pid);
		cu_all(j, cc->n, OP_CHECKPOINT);
	}
	for (int i = 0; !ret && i < cc->n; i++) {
		struct cuda_proc *p = &cc->p[i];
		int st = -1;

		p->checkpoint_ns = j[i].ns;
		if (j[i].res == CU_SUCCESS) {
			p->done = CU_CHECKPOINTED;
			p->rss1 = rss_bytes(p->pid);
			continue;
		}
		if (drv.get_state(p->pid, &st) == CU_SUCCESS && st == CU_CHECKPOINTED)
			p->done = CU_CHECKPOINTED;
		ret = log_err(c->log, EOPNOTSUPP,
			      "pid %d fd %d: %s: the CUDA driver could not checkpoint it: %s",
			      p->pid, p->fd, p->dev, cu_err(j[i].res, buf, sizeof(buf)));
		/* the others' results still count, for the undo */
		for (int k = i + 1; k < cc->n; k++)
			if (j[k].res == CU_SUCCESS)
				cc->p[k].done = CU_CHECKPOINTED;
	}
	free(j);
	return ret;
}

/* Whether NVIDIA's kernel driver is there at all: without it no process
 * can hold one of its devices, and the tree's fds need no look.  (Were
 * this wrong, a device fd would still be refused by fdtable.c, the
 * process left running: never a harm.) */
static bool driver_loaded(void)
{
	return access("/sys/module/nvidia", F_OK) == 0 ||
	       access("/proc/driver/nvidia", F_OK) == 0;
}

/* Checkpoint, before the tree is seized (the driver needs it running):
 * every process of the tree rooted at @root that has a CUDA device open
 * is locked, then checkpointed by the driver (its GPU state moved into
 * its memory, its device files closed).  Refused (reported, naming pid,
 * fd, device and why) if the driver cannot do it; then nothing is left
 * changed. */
static int cuda_freeze(struct cpt_ctx *c, pid_t root)
{
	struct cuda_cpt *cc = kind_dump_state(c, &kind_cuda);
	uint64_t t0 = now_ns();
	int ret;

	if (!driver_loaded())
		return 0;
	ret = walk_tree(c, cc, root);
	if (!ret)
		ret = find_procs(c, cc);
	if (ret || !cc->n) {
		cuda_cpt_reset(cc);
		return ret;
	}
	ret = precheck(c, cc);
	if (!ret)
		ret = lock_and_checkpoint(c, cc);
	for (int i = 0; i < cc->n && !ret; i++) {
		struct cuda_proc *p = &cc->p[i];
		char buf[200], dev[64];
		int fd = -1;
		cu_result r = drv.restore_tid(p->pid, &p->restore_tid);

		if (r)
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d: the CUDA driver names no restore thread: %s",
				      p->pid, cu_err(r, buf, sizeof(buf)));
		else if (device_fds(p->pid, &fd, dev, sizeof(dev), NULL, 0))
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid %d fd %d: %s is still open after the CUDA driver's checkpoint",
				      p->pid, fd, dev);
		else
			log_info(c->log, "pid %d: CUDA lock %.1f ms, checkpoint %.1f ms, %llu MiB of GPU state in its memory, restore thread %d",
				 p->pid, p->lock_ns / 1e6, p->checkpoint_ns / 1e6,
				 (unsigned long long)((p->rss1 > p->rss0 ? p->rss1 - p->rss0 : 0) >> 20),
				 p->restore_tid);
	}
	if (ret) {
		cuda_undo(c, cc);
		cuda_cpt_reset(cc);
	} else {
		log_info(c->log, "CUDA: %d processes checkpointed by the driver in %.1f ms",
			 cc->n, (now_ns() - t0) / 1e6);
	}
	return ret;
}

/* After the tree is let go: unless @killed, each such process is put
 * back on its GPU and unlocked, running as before. */
static int cuda_thaw(struct cpt_ctx *c, bool killed)
{
	struct cuda_cpt *cc = kind_dump_state(c, &kind_cuda);
	int ret = 0;

	if (!cc->n)
		return 0;
	if (!killed)
		ret = cuda_undo(c, cc);
	cuda_cpt_reset(cc);
	return ret;
}

const char *cuda_why_not(struct cpt_ctx *c, pid_t pid)
{
	if (!drv.tried)
		drv_load();
	if (!drv.ok)
		return drv.why;
	return "the CUDA driver did not checkpoint it (it opened a GPU while ckpt was starting, or the driver left this device open)";
}

static int cuda_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	const struct cuda_cpt *cc = kind_dump_state(c, &kind_cuda);
	const struct cuda_proc *p = NULL;
	struct rec_cuda r = { .version = CUDA_REC_VERSION };
	bool found = false;

	for (int i = 0; i < cc->n; i++)
		if (cc->p[i].pid == t->pid && cc->p[i].done == CU_CHECKPOINTED)
			p = &cc->p[i];
	if (!p)
		return 0;
	for (int i = 0; i < t->nr_threads; i++)
		found |= t->threads[i].tid == p->restore_tid;
	if (!found)
		return log_err(c->log, ESRCH,
			       "pid %d: the CUDA driver's restore thread %d is not one of its threads",
			       t->pid, p->restore_tid);
	r.restore_tid = p->restore_tid;
	r.cuda_version = drv.cuda_version;
	r.nr_fds = p->nr_fds;
	r.gpu_bytes = p->rss1 > p->rss0 ? p->rss1 - p->rss0 : 0;
	r.lock_ns = p->lock_ns;
	r.checkpoint_ns = p->checkpoint_ns;
	snprintf(r.driver, sizeof(r.driver), "%s", drv.driver);
	snprintf(r.devices, sizeof(r.devices), "%s", p->devices);
	return iw_record(&c->w, REC_CUDA, &r, sizeof(r));
}

/* ---- restart ---- */

static int cuda_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	const struct rec_cuda *rc = r->data;
	struct rec_cuda *s;

	if (r->data_len != sizeof(*rc))
		return log_err(c->log, EBADMSG, "CUDA record %llu: %zu bytes, not %zu",
			       (unsigned long long)r->index, r->data_len, sizeof(*rc));
	if (rc->version != CUDA_REC_VERSION || rc->restore_tid == 0 ||
	    rc->restore_tid > 0x3fffffff || rc->nr_fds == 0 ||
	    rc->reserved[0] || rc->reserved[1] ||
	    !field_str_ok(rc->driver, sizeof(rc->driver)) ||
	    !field_str_ok(rc->devices, sizeof(rc->devices)))
		return log_err(c->log, EBADMSG, "pid %d: bad CUDA record", t->pid);
	if (KSTATE(t, kind_cuda))
		return log_err(c->log, EBADMSG, "pid %d: two CUDA records", t->pid);
	s = kind_state(t, &kind_cuda, sizeof(*s));
	if (!s)
		return log_err(c->log, ENOMEM, "CUDA record:");
	*s = *rc;
	return 0;
}

static int cuda_check(struct rst_ctx *c, struct rst_task *t)
{
	const struct rec_cuda *rc = KSTATE(t, kind_cuda);
	bool found = false;

	if (!rc)
		return 0;
	for (int i = 0; i < t->nr_threads; i++)
		found |= t->threads[i].tid == (pid_t)rc->restore_tid;
	if (!found)
		return log_err(c->log, EBADMSG,
			       "pid %d: CUDA restore thread %u is not one of its threads",
			       t->pid, rc->restore_tid);
	if (!c->here)
		return 0;
	if (!drv_load())
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: the image holds its GPU state (CUDA, devices %s), but %s",
			       t->pid, rc->devices, drv.why);
	if (access("/dev/nvidiactl", F_OK))
		return log_err(c->log, ENODEV,
			       "pid %d: the image holds its GPU state (CUDA), but this machine has no /dev/nvidiactl:",
			       t->pid);
	if (strcmp(rc->driver, drv.driver))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: its GPU state was checkpointed by NVIDIA driver %s; this machine runs %s (restored only by the same driver)",
			       t->pid, rc->driver, drv.driver);
	return 0;
}

static struct rst_thread *thread_of(struct rst_task *t, pid_t tid)
{
	for (int i = 0; i < t->nr_threads; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	return NULL;
}

/* Every process is built, none released: each CUDA one is put back on
 * its GPU, its restore thread alone running meanwhile. */
static int cuda_restore_end(struct rst_ctx *c)
{
	struct cu_job *j = NULL;
	struct rst_thread **th = NULL;
	int n = 0, resumed = 0, ret = 0;
	char buf[200];
	uint64_t t0 = now_ns();

	for (int i = 0; i < c->nr_tasks; i++)
		if (KSTATE(c->tasks[i], kind_cuda))
			n++;
	if (!n)
		return 0;
	j = calloc(n, sizeof(*j));
	th = calloc(n, sizeof(*th));
	if (!j || !th) {
		free(j);
		free(th);
		return log_err(c->log, ENOMEM, "CUDA jobs:");
	}
	n = 0;
	for (int i = 0; i < c->nr_tasks; i++) {
		struct rst_task *t = c->tasks[i];
		const struct rec_cuda *rc = KSTATE(t, kind_cuda);

		if (!rc)
			continue;
		j[n].pid = t->pid;
		th[n] = thread_of(t, rc->restore_tid);
		n++;
	}
	for (int i = 0; i < n && !ret; i++) {
		ret = remote_resume(th[i]->rm);
		resumed = i + 1;	/* stopped again below, even if that failed */
	}
	if (!ret && !cu_all(j, n, OP_RESTORE)) {
		for (int i = 0; i < n && !ret; i++)
			if (j[i].res)
				ret = log_err(c->log, EIO,
					      "pid %d: the CUDA driver could not restore its GPU state: %s",
					      j[i].pid, cu_err(j[i].res, buf, sizeof(buf)));
	}
	for (int i = 0; i < n; i++)
		log_info(c->log, "pid %d: CUDA restore %.1f ms", j[i].pid, j[i].ns / 1e6);
	if (!ret && !cu_all(j, n, OP_UNLOCK)) {
		for (int i = 0; i < n && !ret; i++)
			if (j[i].res)
				ret = log_err(c->log, EIO,
					      "pid %d: the CUDA driver could not unlock it: %s",
					      j[i].pid, cu_err(j[i].res, buf, sizeof(buf)));
	}
	for (int i = 0; i < n; i++)
		log_info(c->log, "pid %d: CUDA unlock %.1f ms", j[i].pid, j[i].ns / 1e6);
	for (int i = 0; i < resumed; i++) {
		int r = remote_halt(th[i]->rm);

		ret = ret ? ret : r;
	}
	log_info(c->log, "CUDA: %d processes back on the GPU in %.1f ms", n,
		 (now_ns() - t0) / 1e6);
	free(j);
	free(th);
	return ret;
}

static void cuda_show(struct info_out *o, const struct rec *r)
{
	const struct rec_cuda *rc = r->data;

	if (r->data_len != sizeof(*rc))
		return;
	info_u64(o, "gpu_bytes", rc->gpu_bytes);
	info_str(o, "devices", rc->devices);
	info_u64(o, "fds", rc->nr_fds);
	info_str(o, "driver", rc->driver);
	info_u64(o, "cuda_version", rc->cuda_version);
	info_u64(o, "restore_tid", rc->restore_tid);
	info_u64(o, "lock_us", rc->lock_ns / 1000);
	info_u64(o, "checkpoint_us", rc->checkpoint_ns / 1000);
}

static const struct rec_desc cuda_recs[] = {
	{ REC_CUDA, "CUDA", 0 },
	{ 0 }
};

const struct kind_ops kind_cuda = {
	.name = "cuda",
	.recs = cuda_recs,
	.phase = PHASE_STATE,
	/* the driver works on the tree while it runs: before the seize,
	 * after the release */
	.dump_begin = cuda_freeze,
	.dump = cuda_dump,
	.dump_finish = cuda_thaw,
	.dump_size = sizeof(struct cuda_cpt),
	.dump_free = cuda_dump_free,
	.load = cuda_load,
	.check = cuda_check,
	.restore_end = cuda_restore_end,
	.show = cuda_show,
};
