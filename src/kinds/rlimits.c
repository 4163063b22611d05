/* rlimits.c - resource limits (RLIMITS), read from /proc/PID/limits
 * (prlimit() on another process may be refused here) and set by the
 * task itself.  A hard limit above ckpt's own cannot be restored without
 * CAP_SYS_RESOURCE: that is refused before any process is created. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "../kinds.h"

#define NLIM 16

static const char *const lim_names[NLIM] = {
	"CPU", "FSIZE", "DATA", "STACK", "CORE", "RSS", "NPROC", "NOFILE",
	"MEMLOCK", "AS", "LOCKS", "SIGPENDING", "MSGQUEUE", "NICE", "RTPRIO",
	"RTTIME",
};

static int parse_val(const char *s, uint64_t *v)
{
	char *end;

	if (!strncmp(s, "unlimited", 9)) {
		*v = RLIM_INFINITY;
		return 0;
	}
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s ? -EINVAL : 0;
}

/* /proc/PID/limits: a header, then one line per limit in resource order,
 * the soft value at column 26 and the hard one at column 47. */
static int rl_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_rlimits rl = { .nr = NLIM };
	char *buf, *line;
	int i = 0, ret = proc_read(t->pid, "limits", &buf, NULL);

	if (ret)
		return log_err(c->log, -ret, "pid %d: reading limits:", t->pid);
	line = strchr(buf, '\n');
	while (line && line[1] && i < NLIM) {
		line++;
		if (strlen(line) < 47 || parse_val(line + 26, &rl.lim[i].cur) ||
		    parse_val(line + 47, &rl.lim[i].max))
			break;
		i++;
		line = strchr(line, '\n');
	}
	free(buf);
	if (i != NLIM)
		return log_err(c->log, EINVAL, "pid %d: cannot parse /proc limits",
			       t->pid);
	return iw_record(&c->w, REC_RLIMITS, &rl, sizeof(rl));
}

static int rl_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct rec_rlimits *s = kind_state(t, &kind_rlimits, sizeof(*s));
	const struct rec_rlimits *rl = r->data;

	if (!s)
		return log_err(c->log, ENOMEM, "rlimits:");
	if (r->data_len != sizeof(*rl) || rl->nr != NLIM || rl->reserved || s->nr)
		return log_err(c->log, EBADMSG, "bad or repeated RLIMITS record");
	for (int i = 0; i < NLIM; i++)
		if (rl->lim[i].cur > rl->lim[i].max)
			return log_err(c->log, EBADMSG, "RLIMITS: soft above hard for %s",
				       lim_names[i]);
	*s = *rl;
	return 0;
}

static int rl_check(struct rst_ctx *c, struct rst_task *t)
{
	struct rec_rlimits *s = t->kind_state[kind_index(&kind_rlimits)];

	if (!s || !s->nr)
		return log_err(c->log, EBADMSG, "pid %d: image has no RLIMITS record",
			       t->pid);
	for (int i = 0; i < NLIM && c->here; i++) {
		struct rlimit own;

		if (getrlimit(i, &own))
			continue;
		if (s->lim[i].max > own.rlim_max)
			return log_err(c->log, EPERM,
				       "cannot restore hard limit RLIMIT_%s=%llu: ckpt's own is %llu and raising it needs CAP_SYS_RESOURCE",
				       lim_names[i], (unsigned long long)s->lim[i].max,
				       (unsigned long long)own.rlim_max);
	}
	return 0;
}

static int rl_restore(struct rst_ctx *c, struct rst_task *t)
{
	struct rec_rlimits *s = t->kind_state[kind_index(&kind_rlimits)];
	uint64_t addr;
	int ret = 0;

	(void)c;
	for (int i = 0; i < NLIM && !ret; i++) {
		struct { uint64_t cur, max; } now;

		/* what the puppet has already (most are ckpt's, which it
		 * inherited) is no remote call; asked from here while the
		 * puppet has ckpt's ids, else set anyway */
		if (!syscall(SYS_prlimit64, t->pid, i, NULL, &now) &&
		    now.cur == s->lim[i].cur && now.max == s->lim[i].max)
			continue;
		ret = rst_scratch_put(t, 0, &s->lim[i], sizeof(s->lim[i]), &addr);
		if (!ret)
			ret = rcheck(&t->rm, NULL, "prlimit", SYS_prlimit64, 0, i,
				     addr, 0);
	}
	return ret;
}

static void rl_show(struct info_out *o, const struct rec *r)
{
	const struct rec_rlimits *rl = r->data;
	char k[32];

	for (int i = 0; i < NLIM; i++) {
		snprintf(k, sizeof(k), "%s", lim_names[i]);
		info_i64(o, k, rl->lim[i].cur == RLIM_INFINITY ? -1 : (int64_t)rl->lim[i].cur);
	}
}

static const struct rec_desc rlimits_recs[] = {
	{ REC_RLIMITS, "RLIMITS", sizeof(struct rec_rlimits) },
	{ 0 }
};

const struct kind_ops kind_rlimits = {
	.name = "rlimits",
	.recs = rlimits_recs,
	.phase = PHASE_STATE,
	.rst_batch = true,
	.dump = rl_dump,
	.load = rl_load,
	.check = rl_check,
	.restore = rl_restore,
	.show = rl_show,
};
