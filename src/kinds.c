/* kinds.c - the registry of resource kinds: the table (kinds.def), and
 * their state per checkpoint, task, thread and image. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "pageverify.h"

/* In kinds.def, which says why in that order. */
const struct kind_ops *const ckpt_kinds[] = {
#define KIND(x) &kind_##x,
#include "kinds.def"
#undef KIND
};
const int ckpt_nr_kinds = sizeof(ckpt_kinds) / sizeof(ckpt_kinds[0]);
_Static_assert(sizeof(ckpt_kinds) / sizeof(ckpt_kinds[0]) <=
	       sizeof(((struct rst_task *)0)->kind_state) / sizeof(void *),
	       "more kinds than kind_state slots");

int kind_index(const struct kind_ops *k)
{
	for (int i = 0; i < ckpt_nr_kinds; i++)
		if (ckpt_kinds[i] == k)
			return i;
	return -1;
}

int kind_dump_init(struct cpt_ctx *c)
{
	for (int i = 0; i < ckpt_nr_kinds; i++) {
		size_t size = ckpt_kinds[i]->dump_size;

		if (size && !(c->kind_state[i] = calloc(1, size)))
			return log_err(c->log, ENOMEM, "%s state:", ckpt_kinds[i]->name);
	}
	return 0;
}

void kind_dump_free(struct cpt_ctx *c)
{
	for (int i = 0; i < ckpt_nr_kinds; i++) {
		if (c->kind_state[i] && ckpt_kinds[i]->dump_free)
			ckpt_kinds[i]->dump_free(c, c->kind_state[i]);
		free(c->kind_state[i]);
		c->kind_state[i] = NULL;
	}
}

void *kind_dump_state(struct cpt_ctx *c, const struct kind_ops *k)
{
	return c->kind_state[kind_index(k)];
}

void *kind_state(struct rst_task *t, const struct kind_ops *k, size_t size)
{
	int i = kind_index(k);

	if (!t->kind_state[i])
		t->kind_state[i] = calloc(1, size);
	return t->kind_state[i];
}

int rst_thread_add(struct rst_task *t, pid_t tid)
{
	struct rst_thread *n, *old = t->threads;

	/* model.c's load_thread() counts them against the TASK's count */
	if (t->nr_threads >= MAX_THREADS)
		return -E2BIG;
	/* grown by doubling, not to the TASK's count: a forged count of
	 * 65,536 with one THREAD costs one */
	if (VEC_ROOM(t->threads, t->nr_threads, t->cap_threads))
		return -ENOMEM;
	/* the table moved: the remotes it holds moved with it */
	for (int i = 1; t->threads != old && i < t->nr_threads; i++)
		t->threads[i].rm = &t->threads[i].own;
	n = &t->threads[t->nr_threads];
	memset(n, 0, sizeof(*n));
	n->tid = tid;
	n->own.memfd = -1;
	n->rm = t->nr_threads ? &n->own : &t->rm;
	t->nr_threads++;
	return 0;
}

void rst_task_free(struct rst_task *t)
{
	if (!t)
		return;
	for (int i = 0; i < ckpt_nr_kinds; i++) {
		const struct kind_ops *k = ckpt_kinds[i];

		for (int j = 0; j < t->nr_threads; j++) {
			void *s = t->threads[j].kind_state[i];

			if (s && k->free_thread)
				k->free_thread(s);
			else
				free(s);
		}
		if (t->kind_state[i] && k->free)
			k->free(t, t->kind_state[i]);
		else
			free(t->kind_state[i]);
	}
	for (int j = 0; j < t->nr_threads; j++)
		free(t->threads[j].cpus);
	for (int j = 1; j < t->nr_threads; j++)
		remote_close(&t->threads[j].own);
	remote_close(&t->rm);
	free(t->threads);
	free(t);
}

void *kind_ctx_state(struct rst_ctx *c, const struct kind_ops *k, size_t size)
{
	int i = kind_index(k);

	if (!c->kind_state[i])
		c->kind_state[i] = calloc(1, size);
	return c->kind_state[i];
}

void rst_ctx_free(struct rst_ctx *c)
{
	pv_abort(c);
	free(c->spans);
	c->spans = NULL;
	free(c->puppet_act);
	c->puppet_act = NULL;
	for (int i = 0; i < c->nr_tasks; i++)
		rst_task_free(c->tasks[i]);
	free(c->tasks);
	c->tasks = NULL;
	c->nr_tasks = 0;
	id_table_free(&c->pids);
	id_table_free(&c->tids);
	for (int i = 0; i < ckpt_nr_kinds; i++) {
		if (c->kind_state[i] && ckpt_kinds[i]->free_ctx)
			ckpt_kinds[i]->free_ctx(c->kind_state[i]);
		else
			free(c->kind_state[i]);
		c->kind_state[i] = NULL;
	}
}

void *kind_thread_state(struct rst_task *t, const struct kind_ops *k,
			size_t size)
{
	struct rst_thread *th;
	int i = kind_index(k);

	if (!t->nr_threads)
		return NULL;
	th = &t->threads[t->nr_threads - 1];
	if (!th->kind_state[i])
		th->kind_state[i] = calloc(1, size);
	return th->kind_state[i];
}

void rst_slow_calls(struct rst_task *t)
{
	for (int j = 0; j < t->nr_threads; j++)
		if (t->threads[j].rm)
			t->threads[j].rm->fast_ip = 0;
	t->rm.fast_ip = 0;
}

int rst_batch_begin(struct rst_task *t, struct remote *rm)
{
	if (!t->tramp)
		return 0;
	t->batch_rm = rm;
	t->win = t->win_hi = 0;
	t->win_seen = rm->nr_queued;
	return remote_batch_begin(rm, t->tramp + RST_BATCH_OFF);
}

int rst_batch_end(struct rst_task *t, struct remote *rm, bool run)
{
	if (t->batch_rm == rm)
		t->batch_rm = NULL;
	return remote_batch_end(rm, run);
}

/* Where the puts for a call go while calls are queued: from WIN_FIRST
 * (the direct users of t->scratch stay below it), and moved back to the
 * start (the queue made first) when fewer than WIN_ROOM are left, room
 * for the largest call's arguments (a seccomp filter of 4,096
 * instructions, a preadv's 1,024 iovecs). */
#define WIN_FIRST	4096
#define WIN_ROOM	(40 * 1024)

static int scratch_window(struct rst_task *t, struct remote *q)
{
	uint32_t next;
	int ret;

	if (q->nr_queued == t->win_seen)	/* the same call's puts */
		return 0;
	t->win_seen = q->nr_queued;
	next = (t->win + t->win_hi + 63) & ~63U;
	next = next < WIN_FIRST ? WIN_FIRST : next;
	if (!remote_batch_pending(q)) {		/* nothing queued reads any */
		next = 0;
	} else if (next + WIN_ROOM > t->scratch_len) {
		ret = remote_flush(q);
		if (ret)
			return ret;
		next = 0;
	}
	t->win = next;
	t->win_hi = 0;
	return 0;
}

int rst_scratch_put(struct rst_task *t, size_t off, const void *p, size_t n,
		    uint64_t *addr)
{
	struct remote *q = t->batch_rm;
	int ret = q ? scratch_window(t, q) : 0;

	if (ret)
		return ret;
	if (!q)
		t->win = t->win_hi = 0;
	if (off > t->scratch_len - t->win || n > t->scratch_len - t->win - off)
		return log_err(t->rm.log, E2BIG, "scratch area overflow");
	*addr = t->scratch + t->win + off;
	if (off + n > t->win_hi)
		t->win_hi = off + n;
	if (!p)
		return 0;
	/* (no queued call was given this part: no need to make them first) */
	return q ? remote_poke(&t->rm, *addr, p, n) : remote_write(&t->rm, *addr, p, n);
}
