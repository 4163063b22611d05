/* remote_batch.c - remote calls queued and made in one stop: the
 * trampoline's runner (arch_tramp.batch_off) makes each call of a table
 * in the task in turn and stops at the end or at the first that fails.
 * A restart's calls are mostly of that kind: an area mapped at its
 * place, protected, advised; a call's two ptrace stops cost 15-25 us
 * here, the call itself a microsecond. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "remote.h"

struct rbatch_entry {	/* as the runner reads it: 64 bytes */
	int64_t nr, a[6], res;
};

struct rbatch {
	uint64_t table;		/* its place in the task */
	int n;
	/* the first of its calls that failed, said: the batch's end says
	 * it again, should a caller that had it made drop the error (an
	 * rcall() whose result is not looked at) */
	int err;
	struct rbatch_entry e[REMOTE_BATCH_MAX];
	const char *what[REMOTE_BATCH_MAX];
};

_Static_assert(sizeof(struct rbatch_entry) * REMOTE_BATCH_MAX == REMOTE_BATCH_BYTES,
	       "the runner's entries are 64 bytes");

int remote_batch_begin(struct remote *r, uint64_t table)
{
	if (r->batch || (!r->batch_ip && !r->runner))
		return 0;
	r->batch = calloc(1, sizeof(*r->batch));
	if (!r->batch)
		return log_err(r->log, ENOMEM, "pid %d: a batch of calls:", r->pid);
	r->batch->table = table;
	return 0;
}

int remote_batch_end(struct remote *r, bool run)
{
	int ret = run ? remote_flush(r) : 0;

	if (!ret && run && r->batch)
		ret = r->batch->err;

	free(r->batch);
	r->batch = NULL;
	return ret;
}

/* The trampoline's runner stops on a SIGSTOP, as the one-stop calls
 * do: not where those may not be used.  A checkpoint's runner page has
 * a stop of its own; a call under seccomp goes alone (its filter is
 * ours to suspend only while the call is at its entry stop). */
static bool runner_ok(const struct remote *r)
{
	if (r->seccomp)
		return false;
	return r->runner || (r->batch_ip && r->fast_ip && !r->guarded);
}

/* Whether the call @nr(@a) may be made by the runner, from a table:
 * not a clone (its child would run the runner on), nor one whose
 * arguments go below the stack (arch_call_mem()). */
static bool in_table_ok(const struct remote *r, long nr, const long a[6])
{
	uint8_t mem[ARCH_CALL_MEM];
	int arg;

	return runner_ok(r) && nr != SYS_clone && nr != SYS_clone3 &&
	       !arch_call_mem(nr, a, mem, &arg);
}

int remote_batch_add(struct remote *r, const char *what, long nr, const long a[6])
{
	struct rbatch *b = r->batch;
	int ret;

	if (!in_table_ok(r, nr, a))
		return 1;
	if (b->n == REMOTE_BATCH_MAX && (ret = remote_flush(r)))
		return ret;
	b->e[b->n] = (struct rbatch_entry){
		.nr = nr, .a = { a[0], a[1], a[2], a[3], a[4], a[5] },
	};
	b->what[b->n++] = what;
	r->nr_queued++;
	return 0;
}

int remote_batch_pending(const struct remote *r)
{
	return r->batch ? r->batch->n : 0;
}

/* (its first two arguments say which: an area's start and length) */
static int failed(struct remote *r, struct rbatch *b, int i, long res)
{
	int err = log_err(r->log, res < 0 && res > -4096 ? (int)-res : EIO,
			  "pid %d: %s (0x%llx, 0x%llx):", r->pid, b->what[i],
			  (unsigned long long)b->e[i].a[0], (unsigned long long)b->e[i].a[1]);

	if (!b->err)
		b->err = err;
	return err;
}

/* Without the runner: each call on its own (the queue is empty now). */
static int one_by_one(struct remote *r, struct rbatch *b, int n)
{
	for (int i = 0; i < n; i++) {
		const int64_t *a = b->e[i].a;
		long v;
		int ret = remote_call(r, &v, b->e[i].nr, a[0], a[1], a[2], a[3],
				      a[4], a[5]);

		if (ret)
			return ret;
		if (v < 0 && v > -4096)
			return failed(r, b, i, v);
	}
	return 0;
}

/* The @n entries @e run from @table by the task's runner: how many
 * were made before it stopped (@n: all; else the one there failed, its
 * result in *@res). */
static int run_entries(struct remote *r, uint64_t table, const struct rbatch_entry *e,
		       int n, int *done, long *res)
{
	size_t len = n * sizeof(e[0]);
	arch_regs_t regs = r->regs;
	uint64_t at;
	/* (the queue is empty now: the write makes nothing first) */
	int ret = remote_write(r, table, e, len);

	if (ret)
		return ret;
	if (r->runner) {
		arch_runner_regs(r, &regs, table, table + len);
		ret = remote_run_signal(r, &regs, e[0].nr);
	} else {
		arch_set_batch(&regs, r->batch_ip, table, table + len);
		ret = remote_run_stop(r, &regs, r->fast_end, e[0].nr);
	}
	if (ret)
		return ret;
	arch_batch_result(&regs, &at, res);
	if (at < table || at > table + len || (at - table) % sizeof(e[0]))
		return log_err(r->log, EIO, "pid %d: a batch of calls stopped at 0x%llx",
			       r->pid, (unsigned long long)at);
	*done = (at - table) / sizeof(e[0]);
	return 0;
}

static int run_table(struct remote *r, struct rbatch *b, int n)
{
	long res;
	int done, ret = run_entries(r, b->table, b->e, n, &done, &res);

	if (ret || done == n)
		return ret;
	return failed(r, b, done, res);
}

/* @n calls made in @runs of the runner since @t0, for -v (timing.h). */
static void count_runs(struct remote *r, uint64_t t0, int n, int runs)
{
	if (!r->log)
		return;
	r->log->times.ns[LP_REMOTE] += log_now() - t0;
	r->log->times.n[LP_REMOTE] += n;
	r->log->times.batches += runs;
	r->log->times.batched += n;
}

/* (one of remote_calls() failed: its first argument, an fd or a number,
 * in decimal after its @what) */
static int calls_failed(struct remote *r, const char *what, long a0, long res)
{
	return log_err(r->log, res < 0 && res > -4096 ? (int)-res : EIO,
		       "pid %d: %s %ld:", r->pid, what, a0);
}

/* How many of @r's queued calls go first in the run of @n calls from
 * @table: all of them, where they fit in its first run (its table the
 * queue's own); none, the queue made first, where not. */
static int queued_first(struct remote *r, uint64_t table, int n)
{
	struct rbatch *b = r->batch;

	if (!b || !b->n || b->table != table || b->n + n > REMOTE_BATCH_MAX)
		return 0;
	return b->n;
}

int remote_calls_upto(struct remote *r, uint64_t table, int n, const long *nr,
		      const long (*a)[6], long *res, int *fail_at)
{
	struct rbatch_entry e[REMOTE_BATCH_MAX];
	struct rbatch *b = r->batch;
	uint64_t t0 = log_now();
	int ret = 0, runs = 0, k = 0, k0;

	*fail_at = -1;
	if (!runner_ok(r) || n == 1) {	/* (each makes the queue first) */
		for (int i = 0; i < n && !ret && *fail_at < 0; i++) {
			ret = remote_call(r, &res[i], nr[i], a[i][0], a[i][1], a[i][2],
					  a[i][3], a[i][4], a[i][5]);
			if (!ret && res[i] < 0 && res[i] > -4096)
				*fail_at = i;
		}
		return ret;
	}
	/* (the queue's calls in the same stop, before these) */
	k = k0 = queued_first(r, table, n);
	if (k) {
		memcpy(e, b->e, k * sizeof(e[0]));
		b->n = 0;
	} else {
		ret = remote_flush(r);
	}
	for (int i = 0, m; i < n && !ret && *fail_at < 0; i += m, k = 0) {
		int done;
		long v;

		m = n - i < REMOTE_BATCH_MAX - k ? n - i : REMOTE_BATCH_MAX - k;
		for (int j = 0; j < m; j++)
			e[k + j] = (struct rbatch_entry){ .nr = nr[i + j],
				.a = { a[i + j][0], a[i + j][1], a[i + j][2], a[i + j][3],
				       a[i + j][4], a[i + j][5] } };
		ret = run_entries(r, table, e, k + m, &done, &v);
		runs++;
		if (!ret && done < k)	/* one of the queue's */
			ret = failed(r, b, done, v);
		if (ret)
			break;
		done -= k;
		if (done < m) {
			*fail_at = i + done;
			res[i + done] = v;
		}
		ret = remote_read(r, table + k * sizeof(e[0]), e + k, done * sizeof(e[0]));
		for (int j = 0; j < done && !ret; j++)
			res[i + j] = e[k + j].res;
	}
	count_runs(r, t0, n + k0, runs);
	return ret;
}

int remote_calls(struct remote *r, uint64_t table, int n, const char *const *what,
		 const long *nr, const long (*a)[6], long *res)
{
	int failed, ret = remote_calls_upto(r, table, n, nr, a, res, &failed);

	if (!ret && failed >= 0)
		ret = calls_failed(r, what[failed], a[failed][0], res[failed]);
	return ret;
}

int remote_flush_call(struct remote *r, long nr, const long a[6], long *res)
{
	struct rbatch *b = r->batch;
	uint64_t t0;
	int n, done, ret;
	long v;

	if (!b || !b->n || b->n == REMOTE_BATCH_MAX || !in_table_ok(r, nr, a))
		return 1;
	b->e[b->n] = (struct rbatch_entry){
		.nr = nr, .a = { a[0], a[1], a[2], a[3], a[4], a[5] },
	};
	n = b->n + 1;
	b->n = 0;
	t0 = log_now();
	ret = run_entries(r, b->table, b->e, n, &done, &v);
	count_runs(r, t0, n, 1);
	if (ret)
		return ret;
	if (done < n - 1)	/* one of the queue's */
		return failed(r, b, done, v);
	/* (the runner's own stop says a failed call's result, not the
	 * last's: that one is in the table) */
	if (done == n)
		ret = remote_read(r, b->table + (n - 1) * sizeof(b->e[0]) +
				  offsetof(struct rbatch_entry, res), &v, sizeof(v));
	if (!ret)
		*res = v;
	return ret;
}

int remote_flush(struct remote *r)
{
	struct rbatch *b = r->batch;
	uint64_t t0;
	int n, ret;

	if (!b || !b->n)
		return 0;
	n = b->n;
	b->n = 0;	/* (the calls made one by one do not queue again) */
	/* (one call: its own stop costs less than writing a table) */
	if (!runner_ok(r) || n == 1)
		return one_by_one(r, b, n);
	t0 = log_now();
	ret = run_table(r, b, n);
	count_runs(r, t0, n, 1);
	return ret;
}
