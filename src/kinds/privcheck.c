/* privcheck.c - a restart by an ordinary user never yields more than
 * that user has.
 *
 * Most of it the kernel sees to: the restart runs in a user namespace
 * where only the user's own uid and gid exist (unpriv.c), so a file of
 * another user opens as it would for them, a pid is only one of the new
 * pid namespace, a hard limit cannot be raised (rlimits.c says so
 * first).  What the namespace would grant, or what would only fail late
 * and half-built, is refused here as each record is read, before any
 * process exists, naming the process and what it asks for:
 * - credentials (uids, gids) other than the user's own, and groups other
 *   than ckpt's (which the processes keep: setgroups is denied);
 * - any capability (the namespace would grant it over itself);
 * - cgroups, which restart would have to mount and enter
 *   (--no-cgroups leaves the processes in the user's own);
 * - a setuid or setgid program of another user or group mapped;
 * - a TCP socket with a port (bound again with TCP_REPAIR);
 * - an audit loginuid other than ckpt's.
 * Only a well-formed record is judged: its kind refuses the others.
 *
 * In the namespace restart made (setgroups denied), the creds kind is
 * told so as of a container's (rst_ctx.userns): the user's ids mapped to
 * themselves, and the groups every process has, which it then does not
 * set.  This kind (no records) owns that description.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "../kinds.h"
#include "../unpriv.h"
#include "ns_user.h"

/* what stat() and getgroups() show for an id not mapped in our user
 * namespace: it may be anyone's, never taken for ours */
#define OVERFLOW_ID 65534

static int ids_bad(struct rst_ctx *c, pid_t pid, const char *what,
		   const uint32_t id[4], uint32_t r, uint32_t e)
{
	static const char *const which[4] = { "real", "effective", "saved", "fs" };

	for (int i = 0; i < 4; i++)
		if (id[i] != r && id[i] != e)
			return log_err(c->log, EPERM,
				       "pid %d: its %s %s %u is not yours (%u): only root restarts another user's processes",
				       pid, which[i], what, id[i], e);
	return 0;
}

/* @own[] has @img: taken, marked used.  In the user namespace a group
 * not mapped reads as the overflow gid, which then stands for any group
 * but our own (mapped): taken only when no exact one is left. */
static bool group_take(gid_t *own, int nown, uint32_t img, bool loose)
{
	for (int j = 0; j < nown; j++)
		if (own[j] == (loose ? OVERFLOW_ID : img) && own[j] != (gid_t)-1) {
			own[j] = (gid_t)-1;
			return true;
		}
	return false;
}

static int groups_bad(struct rst_ctx *c, pid_t pid, const uint32_t *img, uint32_t n)
{
	int nown = getgroups(0, NULL), ret = 0;
	gid_t *own = nown >= 0 ? calloc(nown + 1, sizeof(*own)) : NULL;
	bool *got = calloc(n + 1, sizeof(*got)), loose = unpriv_groups_fixed();

	if (own)
		nown = getgroups(nown, own);
	if (!own || !got || nown < 0) {
		ret = log_err(c->log, nown < 0 ? errno : ENOMEM, "pid %d: ckpt's own groups:", pid);
		goto out;
	}
	if ((int)n != nown)
		ret = -1;
	for (uint32_t i = 0; i < n && !ret; i++)
		got[i] = group_take(own, nown, img[i], false);
	for (uint32_t i = 0; i < n && !ret; i++)
		if (!got[i] && (!loose || img[i] == getegid() || !group_take(own, nown, img[i], true)))
			ret = -1;
	if (ret)
		ret = log_err(c->log, EPERM,
			      "pid %d: its %u supplementary groups are not ckpt's own %d (an ordinary user cannot set groups)",
			      pid, n, nown);
out:
	free(own);
	free(got);
	return ret;
}

/* The namespace restart made for the user: ids mapped to themselves,
 * setgroups denied, the groups those of the image's first process,
 * which groups_bad() found to be ckpt's. */
static int own_userns(struct rst_ctx *c, const struct rec_creds *rc)
{
	struct ns_user_maps *m = kind_ctx_state(c, &kind_unpriv, sizeof(*m));

	if (!m || !(m->groups = malloc((rc->nr_groups + 1) * 4)))
		return log_err(c->log, ENOMEM, "the user namespace's groups:");
	m->nr[0] = m->nr[1] = 1;
	m->ext[0][0] = (struct rec_ns_user_extent){ geteuid(), geteuid(), 1 };
	m->ext[1][0] = (struct rec_ns_user_extent){ getegid(), getegid(), 1 };
	m->flags = NS_USER_SETGROUPS_DENY;
	m->nr_groups = rc->nr_groups;
	memcpy(m->groups, rc + 1, rc->nr_groups * 4);
	c->userns = m;
	return 0;
}

static int creds_bad(struct rst_ctx *c, pid_t pid, const struct rec *r)
{
	const struct rec_creds *rc = r->data;
	uint64_t caps;
	int ret;

	if (r->data_len < sizeof(*rc) || r->data_len != sizeof(*rc) + rc->nr_groups * 4ULL)
		return 0;
	ret = ids_bad(c, pid, "uid", rc->uid, getuid(), geteuid());
	if (!ret)
		ret = ids_bad(c, pid, "gid", rc->gid, getgid(), getegid());
	caps = rc->cap_prm | rc->cap_eff | rc->cap_inh | rc->cap_amb;
	if (!ret && caps)
		ret = log_err(c->log, EPERM,
			      "pid %d: it has capabilities (0x%" PRIx64 "), which an ordinary user's restart never gives",
			      pid, caps);
	if (!ret)
		ret = groups_bad(c, pid, (const uint32_t *)(rc + 1), rc->nr_groups);
	if (!ret && !c->userns && unpriv_groups_fixed())
		ret = own_userns(c, rc);
	return ret;
}

static int vma_bad(struct rst_ctx *c, pid_t pid, const struct rec *r)
{
	const struct rec_vma *v = r->data;
	const char *path = (const char *)(v + 1);
	struct stat st;

	if (r->data_len < sizeof(*v) || v->kind != VMA_FILE || !v->path_len ||
	    r->data_len != sizeof(*v) + (uint64_t)v->path_len || path[v->path_len - 1] ||
	    stat(path, &st))
		return 0;	/* the mm kind refuses it, or says the file is gone */
	if ((st.st_mode & S_ISUID) && (st.st_uid != geteuid() || st.st_uid == OVERFLOW_ID))
		return log_err(c->log, EPERM,
			       "pid %d: area 0x%" PRIx64 " maps %s, a program setuid to another user: only root restarts it",
			       pid, v->start, path);
	if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    (st.st_gid != getegid() || st.st_gid == OVERFLOW_ID))
		return log_err(c->log, EPERM,
			       "pid %d: area 0x%" PRIx64 " maps %s, a program setgid to another group: only root restarts it",
			       pid, v->start, path);
	return 0;
}

/* A TCP socket with a port is bound again in repair mode (inet.c),
 * which needs CAP_NET_ADMIN over the network namespace: the host's. */
static int inet_bad(struct rst_ctx *c, pid_t pid, const struct rec *r)
{
	const struct rec_file *f = r->data;
	struct rec_inet in;

	if (r->data_len < sizeof(*f) || f->kind != FILE_INET ||
	    f->extra_len < sizeof(in) ||
	    r->data_len < sizeof(*f) + (uint64_t)f->path_len + f->extra_len)
		return 0;
	/* the path before it leaves it unaligned */
	memcpy(&in, (const char *)(f + 1) + f->path_len, sizeof(in));
	if (in.protocol != IPPROTO_TCP || !in.lport)
		return 0;
	return log_err(c->log, EPERM,
		       "pid %d: a TCP socket on port %u, which restart binds in repair mode (TCP_REPAIR needs CAP_NET_ADMIN, not an ordinary user's)",
		       pid, in.lport);
}

/* The audit loginuid is inherited from ckpt; another needs
 * CAP_AUDIT_CONTROL (procattr.c's check counts the namespace's own
 * capabilities, which the kernel does not). */
static int loginuid_bad(struct rst_ctx *c, pid_t pid, const struct rec *r)
{
	const struct rec_procattr *a = r->data;
	char buf[16] = "";
	int fd, n;

	if (r->data_len < sizeof(*a))
		return 0;
	fd = open("/proc/self/loginuid", O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0 || (uint32_t)strtoul(buf, NULL, 10) == a->loginuid)
		return 0;	/* a kernel without audit, or the same */
	return log_err(c->log, EPERM,
		       "pid %d: its audit loginuid %u is not ckpt's (%u%s): changing it needs CAP_AUDIT_CONTROL",
		       pid, a->loginuid, (uint32_t)strtoul(buf, NULL, 10),
		       unpriv_groups_fixed() ? " in its user namespace, where an id not mapped reads unset" : "");
}

int privcheck_rec(struct rst_ctx *c, struct rst_task *t, const struct rec *r)
{
	if (!c->here || !t || !unpriv_user())
		return 0;
	switch (r->type) {
	case REC_CREDS:
		return creds_bad(c, t->pid, r);
	case REC_VMA:
		return vma_bad(c, t->pid, r);
	case REC_FILE:
		return inet_bad(c, t->pid, r);
	case REC_PROCATTR:
		return loginuid_bad(c, t->pid, r);
	case REC_CGROUP_MEMBER:
		if (c->flags & CKPT_NO_CGROUPS)
			return 0;
		return log_err(c->log, EPERM,
			       "pid %d: the image puts it in cgroups, which an ordinary user cannot enter (--no-cgroups leaves it in restart's own)",
			       t->pid);
	}
	return 0;
}

static void unpriv_free_ctx(void *state)
{
	struct ns_user_maps *m = state;

	free(m->groups);
	free(m);
}

const struct kind_ops kind_unpriv = {
	.name = "unpriv",
	.free_ctx = unpriv_free_ctx,
};
