/* timing.c - the -v breakdown: "ckpt: timing: ..." lines, one for the
 * steps, one for the kinds, one for what is counted inside them. */
#include <stdio.h>

#include "kinds.h"
#include "timing.h"

static const char *const phase_names[LP_NR] = {
	[LP_SEIZE] = "seize", [LP_PREP] = "prepare", [LP_KINDS] = "kinds", [LP_FSYNC] = "fsync",
	[LP_KILL] = "kill", [LP_RELEASE] = "release", [LP_READ] = "read image",
	[LP_PIDWAIT] = "pid wait", [LP_PUPPET] = "puppets",
	[LP_THREADS] = "threads", [LP_REMOTE] = "remote calls",
	[LP_PROC] = "/proc maps", [LP_PAGES] = "pages",
};

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

/* Appends "name X.X" to @buf for each phase of [from, to) that took any
 * time; returns the sum. */
static uint64_t steps(const struct log_times *t, int from, int to, char *buf,
		      size_t len)
{
	uint64_t sum = 0;
	size_t n = 0;

	buf[0] = '\0';
	for (int i = from; i < to && n < len; i++) {
		if (!t->n[i])
			continue;
		n += snprintf(buf + n, len - n, ", %s %.1f", phase_names[i], ms(t->ns[i]));
		sum += t->ns[i];
	}
	return sum;
}

static void kinds_line(struct ckpt_log *l, const struct log_times *t)
{
	char buf[1024];
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < ckpt_nr_kinds && i < LOG_MAX_KINDS && n < sizeof(buf); i++)
		if (t->kind_ns[i] >= 50000)	/* 0.05 ms: the rest is noise */
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s %.1f", n ? ", " : "",
				      ckpt_kinds[i]->name, ms(t->kind_ns[i]));
	if (n)
		log_info(l, "timing: kinds (ms): %s", buf);
}

/* What was counted inside the steps; only what happened (a restart
 * reads no maps, and its page loads are not counted here yet). */
static void inside_line(struct ckpt_log *l, const struct log_times *t)
{
	char buf[256];
	size_t n = 0;

	buf[0] = '\0';
	if (t->n[LP_REMOTE])
		n += snprintf(buf + n, sizeof(buf) - n, "%u remote calls %.1f ms",
			      t->n[LP_REMOTE], ms(t->ns[LP_REMOTE]));
	if (t->batches && n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, " (%u of them in %u batches)",
			      t->batched, t->batches);
	if (t->n[LP_PROC] && n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, "%s%u /proc maps reads %.1f ms",
			      n ? ", " : "", t->n[LP_PROC], ms(t->ns[LP_PROC]));
	if (t->n[LP_PAGES] && n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, "%s%.1f MB of pages from %u areas %.1f ms",
			      n ? ", " : "", t->bytes / 1e6, t->n[LP_PAGES], ms(t->ns[LP_PAGES]));
	if (n)
		log_info(l, "timing: inside those: %s", buf);
}

void timing_report(struct ckpt_log *l, const char *what)
{
	const struct log_times *t = &l->times;
	uint64_t total, sum;
	char buf[512];

	if (!l->verbose || !t->start)
		return;
	l->pos = NULL;		/* the image's last position says nothing here */
	total = log_now() - t->start;
	sum = steps(t, 0, LP_REMOTE, buf, sizeof(buf));
	log_info(l, "timing: %s %.1f ms%s, other %.1f", what, ms(total), buf,
		 total > sum ? ms(total - sum) : 0.0);
	kinds_line(l, t);
	inside_line(l, t);
}
