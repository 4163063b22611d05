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
#include "arch/x86/cpu.h"
#include "kinds.h"

#define SCRATCH_LEN (2 * 4096)

/* What we can tell before touching the task at all. */
static int preflight(struct ckpt_log *log, pid_t pid)
{
	char state, *s;
	unsigned long long f[PROC_STAT_FIELDS];
	uint64_t seccomp;
	int ret;

	if (pid <= 0)
		return log_err(log, ESRCH, "bad pid %d", pid);
	if (pid == getpid())
		return log_err(log, EINVAL, "pid %d is ckpt itself", pid);
	ret = proc_stat(pid, &state, f);
	if (ret)
		return log_err(log, -ret == ENOENT ? ESRCH : -ret, "pid %d:", pid);
	if (state == 'Z' || state == 'X')
		return log_err(log, ESRCH,
			       "pid %d has exited (or its main thread has, leaving others)",
			       pid);
	if (f[9] & 0x00200000)	/* PF_KTHREAD */
		return log_err(log, EINVAL, "pid %d is a kernel thread", pid);
	ret = proc_status_u64(pid, "Seccomp", 10, &seccomp);
	if (ret)
		return log_err(log, -ret, "pid %d: reading status:", pid);
	if (seccomp)
		return log_err(log, EOPNOTSUPP,
			       "pid %d runs under seccomp, not supported yet", pid);
	{
		char name[64];

		snprintf(name, sizeof(name), "task/%d/children", pid);
		ret = proc_read(pid, name, &s, NULL);
		if (ret)
			return log_err(log, -ret, "pid %d: reading children:", pid);
		ret = s[0] ? log_err(log, EOPNOTSUPP,
				     "pid %d has children (%.40s): process trees are not supported yet",
				     pid, s) : 0;
		free(s);
	}
	return ret;
}

/* A syscall instruction in the task's own code: the vdso has some. */
static int find_syscall_insn(struct cpt_task *t)
{
	uint8_t *buf = malloc(1 << 16);
	int ret = -ENOENT;

	if (!buf)
		return -ENOMEM;
	for (int pass = 0; pass < 2 && ret; pass++) {
		for (int i = 0; i < t->maps.n && ret; i++) {
			const struct vma *v = &t->maps.v[i];
			uint64_t len = v->end - v->start;

			if (v->perms[2] != 'x' || !strcmp(v->path, "[vsyscall]") ||
			    (pass == 0) != !strcmp(v->path, "[vdso]"))
				continue;
			if (len > (1 << 16))
				len = 1 << 16;
			if (pread(t->rm.memfd, buf, len, v->start) != (ssize_t)len)
				continue;
			for (uint64_t k = 0; k + 1 < len; k++)
				if (buf[k] == 0x0f && buf[k + 1] == 0x05) {
					t->rm.sc_ip = v->start + k;
					ret = 0;
					break;
				}
		}
	}
	free(buf);
	return ret;
}

static int add_thread(struct cpt_ctx *c, struct cpt_task *t, pid_t tid)
{
	struct cpt_thread *n = realloc(t->threads, (t->nr_threads + 1) * sizeof(*n));

	if (!n)
		return log_err(c->log, ENOMEM, "thread table:");
	t->threads = n;
	/* the table moved: the remotes it holds moved with it */
	for (int i = 1; i < t->nr_threads; i++)
		n[i].rm = &n[i].own;
	n[t->nr_threads] = (struct cpt_thread){ .tid = tid };
	n[t->nr_threads].rm = t->nr_threads ? &n[t->nr_threads].own : &t->rm;
	t->nr_threads++;
	return 0;
}

static bool held(const struct cpt_task *t, pid_t tid)
{
	for (int i = 0; i < t->nr_threads; i++)
		if (t->threads[i].tid == tid)
			return true;
	return false;
}

/* Hold every thread.  A thread may clone another while we go: list the
 * threads again until a pass finds none we do not hold.  One that exits
 * before we get to it is simply not part of the image. */
static int seize_threads(struct cpt_ctx *c, struct cpt_task *t)
{
	int ret = remote_seize(&t->rm, t->pid, false, c->log);
	bool more = true;

	if (ret == -ESRCH)
		return log_err(c->log, ESRCH, "pid %d: no such process", t->pid);
	if (!ret)
		ret = add_thread(c, t, t->pid);
	while (!ret && more) {
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
			struct cpt_thread *th;

			if (tid <= 0 || held(t, tid))
				continue;
			if (t->nr_threads == MAX_THREADS) {
				ret = log_err(c->log, E2BIG, "pid %d: too many threads", t->pid);
				break;
			}
			ret = add_thread(c, t, tid);
			if (ret)
				break;
			th = &t->threads[t->nr_threads - 1];
			ret = remote_seize(th->rm, tid, false, c->log);
			if (ret == -ESRCH) {	/* it exited meanwhile */
				t->nr_threads--;
				ret = 0;
				continue;
			}
			more = true;
		}
		closedir(d);
	}
	return ret;
}

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
	h.arch = CKPT_ARCH_X86_64;
	h.page_size = sysconf(_SC_PAGESIZE);
	h.xstate_size = cpu_xstate_size();
	h.xfeatures = cpu_xfeatures();
	h.time_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	h.flags = c->flags;
	h.root_pid = c->task->pid;
	h.nr_tasks = 1;
	snprintf(h.kernel, sizeof(h.kernel), "%s", u.release);
	snprintf(h.host, sizeof(h.host), "%s", u.nodename);
	snprintf(h.tool, sizeof(h.tool), "ckpt %s", CKPT_VERSION_STRING);
	return iw_record(&c->w, REC_HEAD, &h, sizeof(h));
}

static int dump_all(struct cpt_ctx *c, struct cpt_task *t)
{
	long addr;
	int ret;

	ret = proc_smaps(t->pid, &t->maps);
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading maps:", t->pid);
	if (find_syscall_insn(t))
		return log_err(c->log, ENOEXEC,
			       "pid %d: no syscall instruction found in its code", t->pid);
	ret = rcheck(&t->rm, &addr, "mmap scratch", SYS_mmap, 0, SCRATCH_LEN,
		     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ret)
		return ret;
	t->scratch = addr;
	t->scratch_len = SCRATCH_LEN;
	for (int i = 1; i < t->nr_threads; i++)
		t->threads[i].rm->sc_ip = t->rm.sc_ip;
	ret = write_head(c);
	for (int i = 0; i < ckpt_nr_kinds && !ret; i++) {
		log_info(c->log, "pid %d: saving %s", t->pid, ckpt_kinds[i]->name);
		if (ckpt_kinds[i]->dump)
			ret = ckpt_kinds[i]->dump(c, t);
	}
	for (int j = 0; j < t->nr_threads && !ret; j++)
		for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
			if (ckpt_kinds[i]->dump_thread)
				ret = ckpt_kinds[i]->dump_thread(c, t, &t->threads[j]);
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

static int end_task(struct cpt_ctx *c, struct cpt_task *t)
{
	int status;

	if (kill(t->pid, SIGKILL))
		return log_err(c->log, errno, "killing pid %d:", t->pid);
	/* as their tracer we hear of each thread's death; the parent reaps */
	for (int i = t->nr_threads - 1; i >= 0; i--) {
		while (waitpid(t->threads[i].tid, &status, __WALL) < 0 && errno == EINTR)
			;
		t->threads[i].rm->seized = false;
	}
	return 0;
}

static int release_threads(struct cpt_task *t)
{
	int ret = 0;

	for (int i = 0; i < t->nr_threads; i++) {
		int r = t->threads[i].rm->seized ? remote_release(t->threads[i].rm) : 0;

		ret = ret ? ret : r;
	}
	return ret;
}

int ckpt_checkpoint_r(pid_t pid, int fd, unsigned long flags, int logfd,
		      struct ckpt_result *res)
{
	struct ckpt_log log = { .fd = logfd, .verbose = flags & CKPT_VERBOSE };
	struct cpt_task task = { .pid = pid, .rm = { .memfd = -1 } };
	struct cpt_ctx c = { .log = &log, .flags = flags, .task = &task };
	int ret;

	ret = iw_init(&c.w, fd, &log);
	if (!ret)
		ret = preflight(&log, pid);
	if (!ret)
		ret = seize_threads(&c, &task);
	if (!ret) {
		log.pos = &c.w.pos;
		ret = dump_all(&c, &task);
	}
	if (task.scratch) {
		int r = rcheck(&task.rm, NULL, "munmap scratch", SYS_munmap,
			       task.scratch, task.scratch_len);

		ret = ret ? ret : r;
	}
	if (!ret)
		ret = iw_tail(&c.w);
	if (!ret)
		ret = sync_image(&c, fd);
	if (ret && log.err)
		write_error(&c);
	if (!ret && (flags & CKPT_KILL))
		ret = end_task(&c, &task);
	{
		int r = release_threads(&task);

		ret = ret ? ret : r;
	}
	if (!task.nr_threads && task.rm.seized)	/* seized, not yet listed */
		remote_release(&task.rm);
	for (int i = 0; i < task.nr_threads; i++)
		remote_close(task.threads[i].rm);
	free(task.threads);
	vma_list_free(&task.maps);
	iw_free(&c.w);
	if (ret)
		log_info(&log, "checkpoint of pid %d failed; it runs on as before", pid);
	else
		log_info(&log, "checkpoint of pid %d done (%llu bytes)", pid,
			 (unsigned long long)c.w.pos);
	if (res) {
		res->pid = pid;
		res->err = ret ? log.err : 0;
		snprintf(res->msg, sizeof(res->msg), "%s", ret ? log.msg : "");
	}
	return ret;
}

int ckpt_checkpoint(pid_t pid, int fd, unsigned long flags, int logfd)
{
	return ckpt_checkpoint_r(pid, fd, flags, logfd, NULL);
}
