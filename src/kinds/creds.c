/* creds.c - credentials (CREDS): uids, gids, groups, capabilities,
 * securebits, no_new_privs.  Restored last among the system calls, as
 * dropping privilege ends what the puppet may do. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "../kinds.h"
#include "ns_user.h"

#define MAX_GROUPS 65536
#define SECBIT_KEEP_CAPS_ 0x10

struct creds_state {
	struct rec_creds c;
	uint32_t *groups;
	bool have;
	int cap_top;		/* this kernel's last capability, -1: not known */
};

static int parse_ids(const char *status, const char *key, uint32_t out[4])
{
	char s[128];
	int ret = status_str(status, key, s, sizeof(s));

	if (ret)
		return ret;
	return sscanf(s, "%u %u %u %u", &out[0], &out[1], &out[2], &out[3]) == 4
	       ? 0 : -EINVAL;
}

/* The ids, capabilities and groups (up to 256: the rest is refused
 * later) of one status text. */
static int parse_creds(const char *st, struct rec_creds *rc, uint64_t *nnp,
		       uint32_t groups[256])
{
	char s[4096], *p, *end;
	int ret = parse_ids(st, "Uid", rc->uid) ?: parse_ids(st, "Gid", rc->gid) ?:
		  status_u64(st, "CapInh", 16, &rc->cap_inh) ?:
		  status_u64(st, "CapPrm", 16, &rc->cap_prm) ?:
		  status_u64(st, "CapEff", 16, &rc->cap_eff) ?:
		  status_u64(st, "CapBnd", 16, &rc->cap_bnd) ?:
		  status_u64(st, "CapAmb", 16, &rc->cap_amb) ?:
		  status_u64(st, "NoNewPrivs", 10, nnp) ?:
		  status_str(st, "Groups", s, sizeof(s));

	if (ret)
		return ret;
	for (p = s; *p && rc->nr_groups < 256; p = end) {
		unsigned long g = strtoul(p, &end, 10);

		if (end == p)
			break;
		groups[rc->nr_groups++] = g;
	}
	return 0;
}

static int creds_dump(struct cpt_ctx *c, struct cpt_task *t)
{
	struct rec_creds rc = { 0 };
	uint32_t groups[256];
	char *st;
	uint64_t nnp;
	long sb;
	int ret = proc_read(t->pid, "status", &st, NULL);

	if (!ret) {
		ret = parse_creds(st, &rc, &nnp, groups);
		free(st);
	}
	if (ret)
		return log_err(c->log, -ret, "pid %d: reading credentials:", t->pid);
	rc.no_new_privs = nnp;
	ret = rcheck(&t->rm, &sb, "prctl(PR_GET_SECUREBITS)", SYS_prctl,
		     PR_GET_SECUREBITS);
	if (ret)
		return ret;
	rc.securebits = sb;
	ret = iw_begin(&c->w, REC_CREDS, sizeof(rc) + rc.nr_groups * 4);
	if (!ret)
		ret = iw_write(&c->w, &rc, sizeof(rc));
	if (!ret)
		ret = iw_write(&c->w, groups, rc.nr_groups * 4);
	return ret ? ret : iw_end(&c->w);
}

static int creds_load(struct rst_ctx *c, struct rst_task *t, struct rec *r)
{
	struct creds_state *s = kind_state(t, &kind_creds, sizeof(*s));
	const struct rec_creds *rc = r->data;
	int ret = rec_want(c->log, r, sizeof(*rc), "CREDS");

	if (!s)
		return log_err(c->log, ENOMEM, "creds:");
	if (ret)
		return ret;
	if (s->have || rc->nr_groups > MAX_GROUPS || rc->reserved ||
	    r->data_len != sizeof(*rc) + rc->nr_groups * 4ULL ||
	    rc->no_new_privs > 1 || rc->securebits > 0xff)
		return log_err(c->log, EBADMSG, "bad or repeated CREDS record");
	s->c = *rc;
	s->groups = r->data;	/* the record; groups follow the struct */
	r->data = NULL;
	s->have = true;
	return 0;
}

/* In a container's own user namespace the puppets name ids as it does:
 * the image's (its parent's) are mapped into it once, here. */
static int creds_in_userns(struct rst_ctx *c, struct rst_task *t, struct creds_state *s)
{
	const struct ns_user_maps *m = c->userns;
	uint32_t *groups = (uint32_t *)((char *)s->groups + sizeof(s->c));
	uint32_t *ids[3] = { s->c.uid, s->c.gid, groups };
	uint32_t n[3] = { 4, 4, s->c.nr_groups };
	bool deny = m->flags & NS_USER_SETGROUPS_DENY;

	/* where setgroups is denied every process has its maker's groups,
	 * which the root has from its clone: the same, as they were */
	if (deny && (s->c.nr_groups != m->nr_groups ||
		     memcmp(groups, m->groups, m->nr_groups * 4)))
		return log_err(c->log, EOPNOTSUPP,
			       "pid %d: its groups are not its user namespace's, where setgroups is denied",
			       t->pid);
	for (int k = 0; k < (deny ? 2 : 3); k++)
		for (uint32_t i = 0; i < n[k]; i++)
			if (!ns_user_id(c->userns, k > 0, ids[k][i], &ids[k][i]))
				return log_err(c->log, EOPNOTSUPP,
					       "pid %d: its %s %u is not mapped in its user namespace",
					       t->pid, k ? "gid" : "uid", ids[k][i]);
	return 0;
}

/* The last capability this kernel has: those above it are in no
 * bounding set, and asking to drop one is a remote call (23 a thread
 * here) that can only fail with EINVAL.  -1: not known. */
static int cap_top(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int cap = -1;

	if (f && (fscanf(f, "%d", &cap) != 1 || cap < 0 || cap > 63))
		cap = -1;
	if (f)
		fclose(f);
	return cap;
}

static int creds_check(struct rst_ctx *c, struct rst_task *t)
{
	struct creds_state *s = t->kind_state[kind_index(&kind_creds)];

	if (!s || !s->have)
		return log_err(c->log, EBADMSG, "pid %d: image has no CREDS record",
			       t->pid);
	s->cap_top = cap_top();	/* once, not for each thread */
	return c->userns ? creds_in_userns(c, t, s) : 0;
}

static int set_caps(struct rst_task *t, struct remote *rm,
		    const struct rec_creds *rc)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ rc->cap_eff, rc->cap_prm, rc->cap_inh },
		{ rc->cap_eff >> 32, rc->cap_prm >> 32, rc->cap_inh >> 32 },
	};
	uint64_t ha, da;
	int ret = rst_scratch_put(t, 0, &h, sizeof(h), &ha);

	if (!ret)
		ret = rst_scratch_put(t, 64, d, sizeof(d), &da);
	if (!ret)
		ret = rcheck(rm, NULL, "capset", SYS_capset, ha, da);
	for (int cap = 0; cap < 64 && !ret; cap++)
		if (rc->cap_amb & (1ULL << cap))
			ret = rcheck(rm, NULL, "prctl(PR_CAP_AMBIENT_RAISE)",
				     SYS_prctl, PR_CAP_AMBIENT,
				     PR_CAP_AMBIENT_RAISE, cap, 0, 0);
	return ret;
}

/* Capability @cap out of the bounding set.  Below the kernel's last it
 * cannot fail, and goes in a batch; past it (@top not known, every one
 * asked) EINVAL says there is no such capability. */
static int drop_cap(struct remote *rm, int cap, int top)
{
	long r;
	int ret;

	if (top >= 0)
		return rcheck(rm, NULL, "prctl(PR_CAPBSET_DROP)", SYS_prctl,
			      PR_CAPBSET_DROP, cap);
	ret = remote_call(rm, &r, SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0, 0);
	if (!ret && r < 0 && r != -EINVAL)
		ret = log_err(rm->log, (int)-r, "tid %d: dropping capability %d:",
			      rm->pid, cap);
	return ret;
}

/* Credentials belong to each thread: every thread drops to them. */
static int creds_restore_thread(struct rst_ctx *c, struct rst_task *t,
				struct rst_thread *th)
{
	struct creds_state *s = KSTATE(t, kind_creds);
	const struct rec_creds *rc = &s->c;
	const uint32_t *groups = (const uint32_t *)((const char *)s->groups + sizeof(*rc));
	struct remote *rm = th->rm;
	uint64_t addr;
	int ret, top = s->cap_top;

	ret = rst_scratch_put(t, 0, groups, rc->nr_groups * 4, &addr);
	/* (denied in its user namespace: it has them, creds_in_userns()) */
	if (!ret && !(c->userns && (c->userns->flags & NS_USER_SETGROUPS_DENY)))
		ret = rcheck(rm, NULL, "setgroups", SYS_setgroups, rc->nr_groups, addr);
	if (!ret)
		ret = rcheck(rm, NULL, "setresgid", SYS_setresgid, rc->gid[0],
			     rc->gid[1], rc->gid[2]);
	/* (it returns the old fsgid, never an error: queued in a batch) */
	if (!ret)
		ret = rcheck(rm, NULL, "setfsgid", SYS_setfsgid, rc->gid[3]);
	for (int cap = 0; cap <= (top < 0 ? 63 : top) && !ret; cap++)
		if (!(rc->cap_bnd & (1ULL << cap)))
			ret = drop_cap(rm, cap, top);
	/* keep capabilities across the uid change when the target has any */
	if (!ret)
		ret = rcheck(rm, NULL, "prctl(PR_SET_SECUREBITS)", SYS_prctl,
			     PR_SET_SECUREBITS, rc->securebits | SECBIT_KEEP_CAPS_);
	if (!ret && rc->no_new_privs)
		ret = rcheck(rm, NULL, "prctl(PR_SET_NO_NEW_PRIVS)", SYS_prctl,
			     PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (!ret)
		ret = rcheck(rm, NULL, "setresuid", SYS_setresuid, rc->uid[0],
			     rc->uid[1], rc->uid[2]);
	if (!ret)
		ret = rcheck(rm, NULL, "setfsuid", SYS_setfsuid, rc->uid[3]);
	if (!ret)
		ret = set_caps(t, rm, rc);
	if (!ret && !(rc->securebits & SECBIT_KEEP_CAPS_))
		ret = rcheck(rm, NULL, "prctl(PR_SET_KEEPCAPS)", SYS_prctl,
			     PR_SET_KEEPCAPS, 0);
	return ret;
}

static void creds_free(struct rst_task *t, void *state)
{
	struct creds_state *s = state;

	(void)t;
	free(s->groups);
	free(s);
}

static void creds_show(struct info_out *o, const struct rec *r)
{
	const struct rec_creds *rc = r->data;

	info_u64(o, "uid", rc->uid[0]);
	info_u64(o, "euid", rc->uid[1]);
	info_u64(o, "gid", rc->gid[0]);
	info_u64(o, "groups", rc->nr_groups);
	info_hex(o, "cap_eff", rc->cap_eff);
	info_u64(o, "no_new_privs", rc->no_new_privs);
}

static const struct rec_desc creds_recs[] = {
	{ REC_CREDS, "CREDS", sizeof(struct rec_creds) },
	{ 0 }
};

const struct kind_ops kind_creds = {
	.name = "creds",
	.recs = creds_recs,
	.phase = PHASE_STATE,
	.dump = creds_dump,
	.load = creds_load,
	.check = creds_check,
	.restore_thread = creds_restore_thread,
	.free = creds_free,
	.show = creds_show,
};
