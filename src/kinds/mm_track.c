/* mm_track.c - which pages a process wrote since its last checkpoint,
 * for incremental checkpoints (CKPT_TRACK_MEM, CKPT_PARENT).
 *
 * There are no soft-dirty bits on this kernel's machines, so the pages
 * are tracked with a userfaultfd made in the process, in asynchronous
 * write-protect mode (UFFD_FEATURE_WP_ASYNC, Linux 6.7): its private
 * areas are registered and write-protected (PAGEMAP_SCAN with
 * PM_SCAN_WP_MATCHING) while the process is held, right after its pages
 * were read; the kernel lifts the protection of a page on its first
 * write without telling anyone, and PAGEMAP_SCAN reports it
 * PAGE_IS_WRITTEN.  The userfaultfd stays open in the process, at a
 * high fd, close-on-exec, which the checkpoints of the tree do not save
 * (cpt_task.own_fd); each tracked checkpoint replaces it with a new one,
 * whose inode its image records (REC_MM_TRACK): so the next one knows
 * that its --parent is the checkpoint the tracking started from, not
 * an older one.
 *
 * What the kernel does keeps it sound: an exec ends the fd (a full
 * dump), a fork child and an mremap'd area lose the registration (no
 * "uw" in smaps: full dump of them), a new area is not registered (full
 * dump), MADV_DONTNEED leaves the page absent (not saved, not the
 * parent's: zero, as it is).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "../chain.h"
#include "mm.h"

#define UFFD_LINK		"anon_inode:[userfaultfd]"
#define UFFD_USER_ONLY		1	/* UFFD_USER_MODE_ONLY: no privilege */
#define UFFD_WP_ASYNC		(1ULL << 15)	/* UFFD_FEATURE_WP_ASYNC */
#define PM_WP_MATCHING		1	/* PM_SCAN_WP_MATCHING */
#define PM_CHECK_WPASYNC	2	/* PM_SCAN_CHECK_WPASYNC */

/* ---- the parent image, read at the start ---- */

static int parent_tail(int fd, uint64_t size, struct rec_tail *t)
{
	/* TAIL is the last record: header, payload, trailer */
	uint64_t at = size - sizeof(struct rec_trailer) - sizeof(*t);

	if (size < sizeof(struct rec_hdr) + sizeof(*t) + sizeof(struct rec_trailer) ||
	    pread(fd, t, sizeof(*t), at) != (ssize_t)sizeof(*t))
		return -EIO;
	return 0;
}

static int note_track(struct mm_track *tr, pid_t pid, const struct rec *r)
{
	const struct rec_mm_track *m = r->data;
	struct track_prev *p;

	if (r->data_len < sizeof(*m) || pid <= 0)
		return -EBADMSG;
	p = VEC_PUSH(tr->prev, tr->nr_prev, tr->cap_prev);
	if (!p)
		return -ENOMEM;
	*p = (struct track_prev){ pid, m->fd, m->ino };
	return 0;
}

/* Every record of the parent, page data skipped: its TASKs' MM_TRACKs,
 * its HEAD's time; the reader checks the frame and the tail. */
static int parent_scan(struct cpt_ctx *c, struct mm_track *tr, int fd)
{
	struct img_reader r;
	struct rec rec;
	pid_t pid = 0;
	int ret = ir_init(&r, fd, c->log);

	r.defer = true;
	while (!ret && (ret = ir_next(&r, &rec)) == 1) {
		ret = 0;
		if (rec.type == REC_HEAD && rec.data_len >= sizeof(struct rec_head))
			tr->par.time_ns = ((const struct rec_head *)rec.data)->time_ns;
		else if (rec.type == REC_TASK && rec.data_len >= sizeof(struct rec_task))
			pid = ((const struct rec_task *)rec.data)->pid;
		else if (rec.type == REC_MM_TRACK && (ret = note_track(tr, pid, &rec)))
			ret = log_err(c->log, -ret, "parent image %s: MM_TRACK record %llu:",
				      c->opts->parent, (unsigned long long)rec.index);
		free(rec.data);
	}
	tr->par.size = r.size;
	ir_free(&r);
	return ret;
}

/* @abs (absolute) relative to directory @dir (absolute, with its
 * trailing '/'): "../" for each of @dir's components past the part they
 * share, then the rest of @abs.  NULL: no memory. */
static char *relative(const char *abs, const char *dir)
{
	size_t common = 0, ups = 0, len;
	char *out;

	for (size_t i = 0; abs[i] && abs[i] == dir[i]; i++)
		if (dir[i] == '/')
			common = i + 1;
	for (const char *p = dir + common; *p; p++)
		ups += *p == '/';
	len = ups * 3 + strlen(abs + common) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < ups; i++)
		strcat(out, "../");
	strcat(out, abs + common);
	return out;
}

/* The parent's path as the new image records it: relative to the new
 * image's directory (images moved together keep their chain), absolute
 * when the new image is no file (a pipe). */
static int parent_path(struct cpt_ctx *c, struct mm_track *tr)
{
	char self[64], img[PATH_MAX], *abs = realpath(c->opts->parent, NULL), *slash;
	ssize_t n;

	if (!abs)
		return log_err(c->log, errno, "parent image %s:", c->opts->parent);
	tr->path = abs;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", c->w.fd);
	n = readlink(self, img, sizeof(img) - 1);
	if (n <= 0 || img[0] != '/')
		return 0;
	img[n] = '\0';
	slash = strrchr(img, '/');
	slash[1] = '\0';
	tr->path = relative(abs, img);
	free(abs);
	return tr->path ? 0 : log_err(c->log, ENOMEM, "parent path:");
}

int mm_track_begin(struct cpt_ctx *c, pid_t root)
{
	struct mm_track *tr = &((struct mm_cpt *)kind_dump_state(c, &kind_mm))->track;
	struct rec_tail tail;
	int fd, ret;

	(void)root;
	if (!(c->flags & CKPT_PARENT))
		return 0;
	if (!c->opts->parent)
		return log_err(c->log, EINVAL, "an incremental checkpoint needs its parent image");
	fd = open(c->opts->parent, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return log_err(c->log, errno, "parent image %s:", c->opts->parent);
	ret = parent_scan(c, tr, fd);
	if (!ret && parent_tail(fd, tr->par.size, &tail))
		ret = log_err(c->log, EIO, "parent image %s: reading its tail:",
			      c->opts->parent);
	close(fd);
	if (ret)
		return ret;
	tr->par.nr_records = tail.nr_records;
	tr->par.chain = tail.chain;
	if (!tr->nr_prev)
		return log_err(c->log, EINVAL,
			       "parent image %s tracks no memory: checkpoint with --track-mem first",
			       c->opts->parent);
	ret = chain_depth(c->opts->parent, c->log);
	if (ret >= CKPT_MAX_CHAIN)
		return log_err(c->log, ELOOP,
			       "parent image %s ends a chain of %d images, the most a restart reads: make a whole checkpoint (--track-mem) to start a new one",
			       c->opts->parent, ret);
	return ret < 0 ? ret : parent_path(c, tr);
}

/* ---- ckpt's own fd in the process ---- */

static uint64_t uffd_features(pid_t pid, int fd)
{
	char name[64], *buf = NULL, *api;
	unsigned long long a = 0, f = 0;
	size_t len;

	snprintf(name, sizeof(name), "fdinfo/%d", fd);
	if (proc_read(pid, name, &buf, &len))
		return 0;
	api = strstr(buf, "API:");
	if (!api || sscanf(api, "API:\t%llx:%llx", &a, &f) != 2)
		f = 0;
	free(buf);
	/* the kernel's own bits: initialized, and WP_ASYNC's implied
	 * UFFD_FEATURE_WP_UNPOPULATED */
	return f & ~((1ULL << 31) | (1ULL << 13));
}

/* Where ckpt puts its userfaultfd: the top of @pid's fds (high_fd()). */
static long fd_top(pid_t pid)
{
	struct rlimit rl;

	if (prlimit(pid, RLIMIT_NOFILE, NULL, &rl))
		return 0;
	return rl.rlim_cur > 4096 ? 4096 : (long)rl.rlim_cur;
}

/* Ckpt's userfaultfd in @pid: a userfaultfd with exactly the one
 * feature ckpt asks for, the highest such fd above 2 and among the top
 * 64 of its fds (ckpt puts its own at the highest free one; an
 * application's own, lower, is its, saved or refused as any fd); -1 if
 * none. */
static int find_uffd(pid_t pid, uint64_t *ino)
{
	char path[64], link[64];
	struct dirent *de;
	long low = fd_top(pid) - 64;
	int best = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		int fd = atoi(de->d_name);
		char name[64];
		struct stat st;

		snprintf(name, sizeof(name), "fd/%d", fd);
		if (de->d_name[0] == '.' || fd <= best || fd < 3 || fd < low ||
		    proc_readlink(pid, name, link, sizeof(link)) ||
		    strcmp(link, UFFD_LINK) || uffd_features(pid, fd) != UFFD_WP_ASYNC)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		if (stat(path, &st))
			continue;
		best = fd;
		*ino = st.st_ino;
	}
	if (d)
		closedir(d);
	return best;
}

int mm_track_hold(struct cpt_ctx *c, struct cpt_task *t)
{
	struct mm_track *tr = &((struct mm_cpt *)kind_dump_state(c, &kind_mm))->track;
	struct track_prev *h;
	uint64_t ino = 0;
	int fd = find_uffd(t->pid, &ino);

	if (fd < 0)
		return 0;
	h = VEC_PUSH(tr->hidden, tr->nr_hidden, tr->cap_hidden);
	if (!h)
		return log_err(c->log, ENOMEM, "tracking table:");
	*h = (struct track_prev){ t->pid, fd, ino };
	t->own_fd = fd;	/* the fdtable kind leaves it out */
	log_info(c->log, "pid %d: fd %d is ckpt's memory tracking, not saved", t->pid, fd);
	return 0;
}

static const struct track_prev *hidden_of(const struct mm_track *tr, pid_t pid)
{
	for (int i = 0; i < tr->nr_hidden; i++)
		if (tr->hidden[i].pid == pid)
			return &tr->hidden[i];
	return NULL;
}

/* ---- an incremental checkpoint's task ---- */

static int write_parent(struct cpt_ctx *c, struct mm_track *tr)
{
	struct rec_parent p = tr->par;

	p.path_len = strlen(tr->path) + 1;
	tr->parent_written = true;
	return iw_record_str(&c->w, REC_PARENT, &p, sizeof(p), tr->path);
}

int mm_track_task(struct cpt_ctx *c, struct cpt_task *t, bool *tracked)
{
	struct mm_track *tr = &((struct mm_cpt *)kind_dump_state(c, &kind_mm))->track;
	const struct track_prev *h = hidden_of(tr, t->pid), *p = NULL;
	int ret = 0;

	*tracked = false;
	if (!(c->flags & CKPT_PARENT))
		return 0;
	if (!tr->parent_written)
		ret = write_parent(c, tr);
	for (int i = 0; i < tr->nr_prev && !p; i++)
		if (tr->prev[i].pid == t->pid)
			p = &tr->prev[i];
	if (ret || !p || !h) {	/* new since, or exec'd: all its pages */
		if (!ret)
			log_info(c->log, "pid %d: memory not tracked since %s: saved whole",
				 t->pid, c->opts->parent);
		return ret;
	}
	if (h->fd != p->fd || h->ino != p->ino)
		return log_err(c->log, ESTALE,
			       "pid %d: %s is not the last checkpoint its memory was tracked from (--parent names the last one made with --track-mem or --parent)",
			       t->pid, c->opts->parent);
	*tracked = true;
	return 0;
}

/* ---- the tracking (re)started ---- */

/* The highest free fd of @pid below its fd limit, above @floor. */
static int high_fd(pid_t pid, int floor)
{
	struct rlimit rl;
	char path[64];
	long fd;

	if (prlimit(pid, RLIMIT_NOFILE, NULL, &rl))
		return floor;
	fd = rl.rlim_cur > 4096 ? 4096 : (long)rl.rlim_cur;
	while (--fd > floor) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%ld", pid, fd);
		if (access(path, F_OK))
			return fd;
	}
	return floor;
}

/* Only what the image keeps by pagemap: private areas of the process's
 * own (not the vdso, not an AIO ring, not droppable memory). */
static bool trackable(const struct vma *v)
{
	return v->perms[3] == 'p' && strcmp(v->path, "[vdso]") &&
	       strcmp(v->path, "[vvar]") && strcmp(v->path, "[vvar_vclock]") &&
	       strcmp(v->path, "[vsyscall]") && !mm_aio_area(v) && !vmflag(v, "dp");
}

/* Write-protect the pages of [start, end) that there are.  Not the
 * holes: the kernel's fast path (a mask of PAGE_IS_WRITTEN alone) puts
 * a uffd-wp marker in each, which PAGEMAP_SCAN then reports as a
 * swapped page never written, that the parent image does not have. */
static int protect(int pmfd, uint64_t start, uint64_t end)
{
	struct pm_region v[64];
	struct pm_scan a = { .size = sizeof(a), .flags = PM_WP_MATCHING | PM_CHECK_WPASYNC,
			     .end = end, .vec = (uintptr_t)v, .vec_len = 64,
			     .category_mask = PM_IS_WRITTEN,
			     .category_anyof_mask = PM_IS_PRESENT | PM_IS_SWAPPED,
			     .return_mask = PM_IS_WRITTEN };

	for (uint64_t at = start; at < end;) {
		a.start = at;
		if (ioctl(pmfd, PM_SCAN_IOCTL, &a) < 0)
			return -errno;
		if (a.walk_end <= at)
			break;
		at = a.walk_end;
	}
	return 0;
}

/* Register and write-protect every trackable area; one the kernel will
 * not register (a device's) is not tracked: saved whole next time. */
static int register_all(struct cpt_ctx *c, struct cpt_task *t, int uffd, int pmfd)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_WP_ASYNC };
	int ret = 0, n = 0;

	if (ioctl(uffd, UFFDIO_API, &api))
		return log_err(c->log, errno,
			       "pid %d: userfaultfd write-protect tracking (UFFD_FEATURE_WP_ASYNC, Linux 6.7):",
			       t->pid);
	for (int i = 0; i < t->maps.n && !ret; i++) {
		const struct vma *v = &t->maps.v[i];
		struct uffdio_register r = { .range = { v->start, v->end - v->start },
					     .mode = UFFDIO_REGISTER_MODE_WP };

		if (!trackable(v) || ioctl(uffd, UFFDIO_REGISTER, &r))
			continue;
		ret = protect(pmfd, v->start, v->end);
		if (ret)
			ret = log_err(c->log, -ret, "pid %d: write-protecting 0x%" PRIx64 ":",
				      t->pid, v->start);
		n++;
	}
	log_info(c->log, "pid %d: %d areas tracked", t->pid, n);
	return ret;
}

/* A new userfaultfd in @t at a high fd, the old one (if any) closed. */
static int make_uffd(struct cpt_ctx *c, struct cpt_task *t, long *fd)
{
	struct mm_track *tr = &((struct mm_cpt *)kind_dump_state(c, &kind_mm))->track;
	const struct track_prev *h = hidden_of(tr, t->pid);
	long u;
	int hi, ret = 0;

	if (h)
		ret = rcheck(&t->rm, NULL, "close", SYS_close, h->fd);
	if (!ret)
		ret = rcheck(&t->rm, &u, "userfaultfd", SYS_userfaultfd,
			     O_CLOEXEC | O_NONBLOCK | UFFD_USER_ONLY);
	if (ret)
		return ret;
	hi = high_fd(t->pid, u);
	if (hi < 3)	/* found again by its number: never stdio's */
		ret = log_err(c->log, EMFILE, "pid %d: no fd above 2 free for its memory tracking",
			      t->pid);
	else if (hi != u)
		ret = rcheck(&t->rm, NULL, "dup3", SYS_dup3, u, hi, O_CLOEXEC);
	if (hi != u || ret) {
		long r;

		rcall(&t->rm, &r, SYS_close, u);
	}
	*fd = hi;
	return ret;
}

static int made_add(struct cpt_ctx *c, struct cpt_task *t, int fd)
{
	struct mm_track *tr = &((struct mm_cpt *)kind_dump_state(c, &kind_mm))->track;
	struct track_prev *m = VEC_PUSH(tr->made, tr->nr_made, tr->cap_made);

	if (!m)
		return log_err(c->log, ENOMEM, "tracking table:");
	*m = (struct track_prev){ t->pid, fd, 0 };
	return 0;
}

int mm_track_reset(struct cpt_ctx *c, struct cpt_task *t, int pmfd)
{
	struct rec_mm_track m = { 0 };
	struct stat st;
	long fd = -1;
	int pidfd, uffd = -1, ret;

	if (!(c->flags & (CKPT_TRACK_MEM | CKPT_PARENT)))
		return 0;
	ret = make_uffd(c, t, &fd);
	if (ret)
		return ret;
	pidfd = syscall(SYS_pidfd_open, t->pid, 0);
	if (pidfd >= 0)
		uffd = syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
	if (uffd < 0 || fstat(uffd, &st))
		ret = log_err(c->log, errno, "pid %d: taking its userfaultfd %ld:", t->pid, fd);
	else
		ret = register_all(c, t, uffd, pmfd);
	if (uffd >= 0)
		close(uffd);
	if (pidfd >= 0)
		close(pidfd);
	if (!ret)
		ret = made_add(c, t, fd);
	if (ret)
		return ret;
	m.fd = fd;
	m.ino = st.st_ino;
	return iw_record(&c->w, REC_MM_TRACK, &m, sizeof(m));
}

/* A checkpoint that failed takes its new trackers back (the processes
 * are still held): the tree is left with no fd of ckpt's, untracked (the
 * old trackers are closed already: the next --parent is refused,
 * naming --track-mem). */
void mm_track_end(struct cpt_ctx *c, bool killed)
{
	struct mm_track *tr = &((struct mm_cpt *)kind_dump_state(c, &kind_mm))->track;

	for (int i = 0; c->failed && !killed && i < tr->nr_made; i++)
		for (int k = 0; k < c->nr_tasks; k++)
			if (c->tasks[k]->pid == tr->made[i].pid && !c->tasks[k]->zombie) {
				long r;

				rcall(&c->tasks[k]->rm, &r, SYS_close, tr->made[i].fd);
				log_info(c->log, "pid %d: its memory tracking (fd %d) taken back",
					 tr->made[i].pid, tr->made[i].fd);
			}
}

void mm_track_free(struct mm_track *tr)
{
	free(tr->prev);
	free(tr->hidden);
	free(tr->made);
	free(tr->path);
}
