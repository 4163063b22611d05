/* model.c - restart's model of an image: every record read and
 * checksummed (pass 1), then loaded by the kind that owns it into the
 * tasks of the tree and checked (pass 2), before any process exists.
 * Restart builds from it; `ckpt info` validates with it; the kinds look
 * things up in it (rst_owner(), rst_find_gap()), so it calls nothing
 * above the kinds: their load(), check() and areas() it reaches through
 * the table (kinds.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../include/ckpt.h"
#include "arch/arch.h"
#include "model.h"
#include "pageverify.h"
#include "page.h"

void records_free(struct records *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->r[i].data);
	free(rs->r);
}

/* Pass 1: every record read, its checksum verified, the tail found;
 * with @defer (restart), PAGES checksums are left to pageverify.c
 * (c->spans), and the payloads a kind reads again itself are not kept. */
int image_read(struct rst_ctx *c, struct records *rs, bool defer)
{
	struct img_reader r;
	struct rec rec;
	size_t cap = 0;
	int ret = ir_init(&r, c->img_fd, c->log);

	r.defer = defer;
	r.lean = defer;

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
	if (!ret && r.nr_spans) {
		c->spans = r.spans;	/* pv_start checks them */
		r.spans = NULL;
		/* --lazy: the process runs before its pages are read; the
		 * loader checks them (lazy.c) */
		if (c->flags & CKPT_LAZY)
			c->pv_nr = r.nr_spans;
		else
			ret = pv_start(c, c->spans, r.nr_spans, r.span_bytes);
	}
	ir_free(&r);
	return ret;
}

struct rst_task *rst_task_by_pid(struct rst_ctx *c, pid_t pid)
{
	long i = pid > 0 ? id_find(&c->pids, pid) : -1;

	return i >= 0 ? c->tasks[i] : NULL;
}

/* A pid or tid the kernel could have given: a forged 2^31 would be a
 * negative pid_t, which kill() and wait4() read as a group or "any".
 * Pid 1 is a container's init (its image says so), never ours. */
static bool bad_pid(const struct rst_ctx *c, uint32_t pid)
{
	return pid < (c->head.flags & HEAD_CONTAINER ? 1u : 2u) || pid > RST_PID_MAX;
}

/* A session or group id: 0 (outside the checkpoint's pid namespace) or
 * a pid. */
static bool bad_ids(const struct rst_ctx *c, const struct rec_task *rt)
{
	return (rt->sid && bad_pid(c, rt->sid)) || (rt->pgid && bad_pid(c, rt->pgid)) ||
	       rt->ppid > RST_PID_MAX;
}

/* Only a stop signal, and only for a stopped task. */
static bool bad_stop_sig(const struct rec_task *rt)
{
	if (!rt->stop_sig)
		return false;
	if (!(rt->flags & TASK_STOPPED))
		return true;
	return rt->stop_sig != SIGSTOP && rt->stop_sig != SIGTSTP &&
	       rt->stop_sig != SIGTTIN && rt->stop_sig != SIGTTOU;
}

static int load_task(struct rst_ctx *c, struct rec *r)
{
	const struct rec_task *rt = r->data;
	struct rst_task *t, **n;
	bool zombie;

	if (r->data_len != sizeof(*rt))
		return log_err(c->log, EBADMSG, "bad TASK record");
	zombie = rt->flags & TASK_ZOMBIE;
	if (bad_pid(c, rt->pid) || bad_ids(c, rt) || rt->flags & ~TASK_FLAGS || bad_stop_sig(rt) ||
	    (zombie ? rt->nr_threads != 0 : rt->nr_threads < 1) ||
	    rt->nr_threads > MAX_THREADS || rt->exit_signal > 64 ||
	    (!zombie && rt->exit_code) || !memchr(rt->comm, 0, sizeof(rt->comm)))
		return log_err(c->log, EBADMSG, "TASK record %llu: bad pid or fields",
			       (unsigned long long)r->index);
	/* a session leader leads its group (setsid makes both, and neither
	 * changes after); an id of 0 (a session or group outside the pid
	 * namespace of the checkpoint) can only be the root's */
	if ((rt->sid == rt->pid && rt->pgid != rt->pid) ||
	    (c->nr_tasks && ((!rt->sid && c->tasks[0]->t.sid) ||
			     (!rt->pgid && c->tasks[0]->t.pgid))))
		return log_err(c->log, EBADMSG, "TASK %u: bad session %u or group %u",
			       rt->pid, rt->sid, rt->pgid);
	if ((rt->flags & (TASK_SHARES_FILES | TASK_SHARES_FS | TASK_SHARES_VM |
			  TASK_SHARES_SIGHAND)) && (!c->nr_tasks || zombie))
		return log_err(c->log, EBADMSG, "TASK %u: the root or a zombie cannot share",
			       rt->pid);
	if ((rt->flags & TASK_SHARES_SIGHAND) && !(rt->flags & TASK_SHARES_VM))
		return log_err(c->log, EBADMSG, "TASK %u: shared signal handlers need shared memory",
			       rt->pid);
	if (id_find(&c->tids, rt->pid) >= 0)
		return log_err(c->log, EBADMSG, "pid %u twice in the image", rt->pid);
	/* the tree is written parents first: the root, then children of
	 * processes already seen */
	if (c->nr_tasks ? !rst_task_by_pid(c, rt->ppid) || rst_task_by_pid(c, rt->ppid)->t.flags & TASK_ZOMBIE
			: rt->pid != c->head.root_pid || zombie)
		return log_err(c->log, EBADMSG, "TASK %u: parent %u is not before it in the image",
			       rt->pid, rt->ppid);
	if (c->nr_tasks >= (int)c->head.nr_tasks)
		return log_err(c->log, EBADMSG, "more TASK records than HEAD's %u",
			       c->head.nr_tasks);
	n = realloc(c->tasks, (c->nr_tasks + 1) * sizeof(*n));
	t = calloc(1, sizeof(*t));
	if (n)
		c->tasks = n;
	if (!n || !t) {
		free(t);
		return log_err(c->log, ENOMEM, "task:");
	}
	if (id_add(&c->tids, rt->pid, c->nr_tasks) ||
	    id_add(&c->pids, rt->pid, c->nr_tasks)) {
		free(t);
		return log_err(c->log, ENOMEM, "task:");
	}
	t->t = *rt;
	t->pid = rt->pid;
	t->rm.memfd = -1;
	c->tasks[c->nr_tasks++] = t;
	c->task = t;
	return 0;
}

struct rst_task *rst_first_ia32(struct rst_ctx *c)
{
	for (int i = 0; i < c->nr_tasks; i++)
		if (task_ia32(c->tasks[i]))
			return c->tasks[i];
	return NULL;
}

/* A THREAD of the last TASK into its thread table (task.c checks its
 * fields): counted against the TASK's own count as it comes, so that a
 * forged image makes no more threads than it claims, and its tid checked
 * against every pid and tid before it. */
static int load_thread(struct rst_ctx *c, const struct rec *r)
{
	struct rst_task *t = c->task;
	uint32_t tid = *(uint32_t *)r->data;
	int ret;

	if (t->nr_threads >= (int)t->t.nr_threads)
		return log_err(c->log, EBADMSG, "pid %d: more THREAD records than its TASK's %u",
			       t->pid, t->t.nr_threads);
	if (bad_pid(c, tid))
		return log_err(c->log, EBADMSG, "THREAD record %llu: bad tid %u",
			       (unsigned long long)r->index, tid);
	/* the main thread's tid is its pid, taken by its TASK */
	ret = tid == (uint32_t)t->pid && !t->nr_threads ? 0 : id_add(&c->tids, tid, 0);
	if (ret == -EEXIST)
		return log_err(c->log, EBADMSG, "THREAD: tid %u twice in the image", tid);
	if (!ret)
		ret = rst_thread_add(t, tid);
	return ret ? log_err(c->log, -ret, "thread table:") : 0;
}

/* Pass 2: records into the model, each checked by the kind that owns it;
 * with @here, also against this machine. */
int image_model(struct rst_ctx *c, struct records *rs, bool here)
{
	int ret;

	if (!rs->n || rs->r[0].type != REC_HEAD)
		return log_err(c->log, EBADMSG, "image has no HEAD record");
	c->here = here;
	ret = head_check(c->log, &rs->r[0], here);
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
		k = kind_for_type(r->type);
		if (!k || !c->task || (c->task->t.flags & TASK_ZOMBIE)) {
			ret = log_err(c->log, EBADMSG, "record %s out of place",
				      rec_type_name(r->type));
			break;
		}
		if (r->type == REC_THREAD && r->data_len >= 4) {
			ret = load_thread(c, r);
			if (ret)
				continue;
		}
		if (r->type == REC_FD && r->data_len >= 4 &&
		    *(uint32_t *)r->data >= c->fd_floor)
			c->fd_floor = *(uint32_t *)r->data + 1;
		for (int k2 = 0; k2 < ckpt_nr_kinds && !ret; k2++)
			if (ckpt_kinds[k2]->load_any)
				ret = ckpt_kinds[k2]->load_any(c, c->task, r);
		if (!ret)
			ret = k->load(c, c->task, r);
	}
	if (!ret && c->nr_tasks != (int)c->head.nr_tasks)
		ret = log_err(c->log, EBADMSG, "HEAD says %u processes, image has %d",
			      c->head.nr_tasks, c->nr_tasks);
	/* Each record is sound (a bad image is refused for what is wrong
	 * with it, whatever the kernel); before it is compared with this
	 * machine (its 32-bit vdso, say), whether it can run here at all. */
	if (!ret && here && rst_first_ia32(c))
		ret = ia32_exec_check(c, rst_first_ia32(c)->pid);
	for (int j = 0; j < c->nr_tasks && !ret; j++) {
		if (c->tasks[j]->t.flags & TASK_ZOMBIE)
			continue;
		for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
			if (ckpt_kinds[i]->check)
				ret = ckpt_kinds[i]->check(c, c->tasks[j]);
	}
	return ret;
}

struct rst_task *rst_owner(struct rst_ctx *c, struct rst_task *t, uint32_t share)
{
	/* image_model() checked each parent is in the image before its
	 * child: the walk ends */
	while (t->t.flags & share)
		t = rst_task_by_pid(c, t->t.ppid);
	return t;
}

int spans_add(struct spans *l, uint64_t start, uint64_t end)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 256;
		struct span *n = realloc(l->s, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->s = n;
		l->cap = cap;
	}
	l->s[l->n++] = (struct span){ start, end };
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The lowest range of @len bytes above 1 MiB clear of every span of @l,
 * with a page to spare either side. */
static int gap_in(struct spans *l, uint64_t len, uint64_t *addr)
{
	uint64_t cand = 1ULL << 20;

	if (l->n)
		qsort(l->s, l->n, sizeof(*l->s), span_cmp);
	for (int i = 0; i < l->n; i++) {
		/* a guard page either side keeps the kernel from merging */
		if (l->s[i].end + PAGE <= cand)
			continue;
		if (l->s[i].start >= cand + len + PAGE)
			break;
		cand = l->s[i].end + PAGE;
	}
	if (cand + len > ARCH_TASK_SIZE)
		return -ENOMEM;
	*addr = cand;
	return 0;
}

int rst_find_gap(struct rst_ctx *c, const struct vma_list *busy,
		 uint64_t len, uint64_t *addr)
{
	struct spans l = { 0 };
	int ret = 0;

	for (int j = 0; j < c->nr_tasks && !ret; j++)
		for (int i = 0; i < ckpt_nr_kinds && !ret; i++)
			if (ckpt_kinds[i]->areas)
				ret = ckpt_kinds[i]->areas(c, c->tasks[j], &l);
	for (int i = 0; i < busy->n && !ret; i++)
		ret = spans_add(&l, busy->v[i].start, busy->v[i].end);
	if (!ret)
		ret = gap_in(&l, len, addr);
	free(l.s);
	return ret;
}
