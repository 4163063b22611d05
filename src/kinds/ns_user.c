/* ns_user.c - a container's own user namespace (NS_USER, for ns.c).
 *
 * ckpt stays in its caller's user namespace on both sides: the engine has
 * every capability over a child namespace's objects from there, and the
 * ids it reads (/proc status, stat, IPC_STAT) are the caller's, the same
 * whatever map the namespace had.  So the image keeps host ids and the
 * maps; restart clones the root into a new user namespace and pid
 * namespace at once (the pid namespace, and every namespace the root
 * unshares after, are then the new user namespace's, as the original's
 * were), writes the maps before the root runs anything, and maps ids
 * only where the puppet itself names them (its credentials).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/nsfs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../image.h"
#include "../kinds.h"
#include "../proc.h"
#include "ns.h"
#include "ns_user.h"

static const char *const map_file[2] = { "uid_map", "gid_map" };

/* ---- checkpoint ---- */

static int same_file(int a, int b)
{
	struct stat x, y;

	return !fstat(a, &x) && !fstat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The user namespace that owns @pid's @name namespace, or -errno. */
static int owner_of(pid_t pid, const char *name)
{
	char path[64];
	int fd, u;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	u = ioctl(fd, NS_GET_USERNS);
	u = u < 0 ? -errno : u;
	close(fd);
	return u;
}

int ns_user_check(struct cpt_ctx *c, pid_t root, uint32_t own)
{
	char path[64];
	int user, mine, parent, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", root);
	user = open(path, O_RDONLY | O_CLOEXEC);
	mine = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	parent = user < 0 ? -1 : ioctl(user, NS_GET_PARENT);
	if (user < 0 || mine < 0 || parent < 0)
		ret = log_err(c->log, errno, "pid 1: its user namespace (%s):", path);
	else if (!same_file(parent, mine))
		ret = log_err(c->log, EOPNOTSUPP,
			      "pid 1: its user namespace is nested in another one than ckpt's (not saved yet)");
	for (int i = 0; i < NR_NS_TYPES && !ret; i++) {
		int o;

		if (i == NS_USER || !(own & (1u << i)))
			continue;
		o = owner_of(root, ns_name(i));
		if (o < 0)
			ret = log_err(c->log, -o, "pid 1: the owner of its %s namespace:", ns_name(i));
		else if (!same_file(o, user))
			ret = log_err(c->log, EOPNOTSUPP,
				      "pid 1: its %s namespace belongs to another user namespace than its own (not saved yet)",
				      ns_name(i));
		if (o >= 0)
			close(o);
	}
	if (parent >= 0)
		close(parent);
	if (user >= 0)
		close(user);
	if (mine >= 0)
		close(mine);
	return ret;
}

/* "first lower count" lines, as the kernel writes them. */
static int read_map(struct cpt_ctx *c, pid_t root, int which, struct ns_user_maps *m)
{
	char *text, *p;
	size_t len;
	int ret = proc_read(root, map_file[which], &text, &len);

	if (ret)
		return log_err(c->log, -ret, "pid 1: reading its %s:", map_file[which]);
	for (p = text; p < text + len && !ret;) {
		struct rec_ns_user_extent *e = &m->ext[which][m->nr[which]];
		char *nl = strchr(p, '\n');

		if (!nl || m->nr[which] >= NS_USER_MAX_EXTENTS ||
		    sscanf(p, "%u %u %u", &e->first, &e->lower, &e->count) != 3) {
			ret = log_err(c->log, EIO, "pid 1: its %s: unexpected line", map_file[which]);
			break;
		}
		m->nr[which]++;
		p = nl + 1;
	}
	free(text);
	return ret;
}

/* Where setgroups() is denied (an unprivileged user's namespace) its
 * processes have the groups its maker had, which restart gives its root
 * before it makes the namespace. */
static int read_groups(struct cpt_ctx *c, pid_t root, struct ns_user_maps *m)
{
	char *text, *p, *end;
	size_t len;
	int ret = proc_read(root, "status", &text, &len);

	if (ret)
		return log_err(c->log, -ret, "pid 1: reading its groups:");
	p = strstr(text, "\nGroups:");
	m->groups = malloc(NS_USER_MAX_GROUPS * sizeof(*m->groups));
	if (!p || !m->groups) {
		free(text);
		return log_err(c->log, p ? ENOMEM : EIO, "pid 1: its groups:");
	}
	for (p += 8; *p != '\n' && m->nr_groups < NS_USER_MAX_GROUPS; p = end) {
		unsigned long g = strtoul(p, &end, 10);

		if (end == p)
			break;
		m->groups[m->nr_groups++] = g;
	}
	free(text);
	return 0;
}

int ns_user_dump(struct cpt_ctx *c, pid_t root)
{
	struct ns_user_maps *m = calloc(1, sizeof(*m));
	struct rec_ns_user r = { 0 };
	char *sg = NULL;
	size_t len;
	int ret;

	if (!m)
		return log_err(c->log, ENOMEM, "user namespace maps:");
	ret = read_map(c, root, 0, m) ?: read_map(c, root, 1, m);
	if (!ret && (ret = proc_read(root, "setgroups", &sg, &len)))
		ret = log_err(c->log, -ret, "pid 1: reading its setgroups:");
	if (!ret && len >= 4 && !strncmp(sg, "deny", 4)) {
		r.flags = NS_USER_SETGROUPS_DENY;
		ret = read_groups(c, root, m);
	}
	if (!ret) {
		r.nr_uid = m->nr[0];
		r.nr_gid = m->nr[1];
		r.nr_groups = m->nr_groups;
		ret = iw_begin(&c->w, REC_NS_USER, sizeof(r) + (r.nr_uid + r.nr_gid) *
			       sizeof(struct rec_ns_user_extent) + r.nr_groups * 4);
	}
	if (!ret)
		ret = iw_write(&c->w, &r, sizeof(r));
	for (int i = 0; i < 2 && !ret; i++)
		ret = iw_write(&c->w, m->ext[i], m->nr[i] * sizeof(m->ext[i][0]));
	if (!ret && m->nr_groups)
		ret = iw_write(&c->w, m->groups, m->nr_groups * 4);
	if (!ret)
		ret = iw_end(&c->w);
	free(sg);
	ns_user_maps_free(m);
	return ret;
}

void ns_user_maps_free(struct ns_user_maps *m)
{
	if (m)
		free(m->groups);
	free(m);
}

/* ---- restart ---- */

static bool overlap(uint32_t a, uint32_t b, uint32_t n, uint32_t m)
{
	return a < b + (uint64_t)m && b < a + (uint64_t)n;
}

/* As the kernel checks a map written to it: extents of ids that exist,
 * overlapping neither side. */
static bool map_bad(const struct rec_ns_user_extent *e, uint32_t n)
{
	if (!n)
		return true;
	for (uint32_t i = 0; i < n; i++) {
		if (!e[i].count || e[i].first + (uint64_t)e[i].count > 0xffffffffULL ||
		    e[i].lower + (uint64_t)e[i].count > 0xffffffffULL)
			return true;
		for (uint32_t j = 0; j < i; j++)
			if (overlap(e[i].first, e[j].first, e[i].count, e[j].count) ||
			    overlap(e[i].lower, e[j].lower, e[i].count, e[j].count))
				return true;
	}
	return false;
}

int ns_user_parse(struct ckpt_log *log, const void *data, uint64_t len, struct ns_user_maps *m)
{
	const struct rec_ns_user *r = data;
	const struct rec_ns_user_extent *e = (const void *)(r + 1);
	uint64_t ext_len = len < sizeof(*r) ? 0 :
			   (r->nr_uid + (uint64_t)r->nr_gid) * sizeof(*e);

	if (len < sizeof(*r) || r->nr_uid > NS_USER_MAX_EXTENTS ||
	    r->nr_gid > NS_USER_MAX_EXTENTS || r->flags & ~NS_USER_SETGROUPS_DENY ||
	    r->nr_groups > NS_USER_MAX_GROUPS ||
	    (r->nr_groups && !(r->flags & NS_USER_SETGROUPS_DENY)) ||
	    len != sizeof(*r) + ext_len + r->nr_groups * 4ULL ||
	    map_bad(e, r->nr_uid) || map_bad(e + r->nr_uid, r->nr_gid))
		return log_err(log, EBADMSG,
			       "bad NS_USER record (1 to %d extents of ids each, none overlapping; groups only where setgroups is denied)",
			       NS_USER_MAX_EXTENTS);
	m->nr[0] = r->nr_uid;
	m->nr[1] = r->nr_gid;
	m->flags = r->flags;
	m->nr_groups = r->nr_groups;
	m->groups = malloc(r->nr_groups * 4 + 4);
	if (!m->groups)
		return log_err(log, ENOMEM, "groups:");
	memcpy(m->ext[0], e, r->nr_uid * sizeof(*e));
	memcpy(m->ext[1], e + r->nr_uid, r->nr_gid * sizeof(*e));
	memcpy(m->groups, (const char *)e + ext_len, r->nr_groups * 4);
	return 0;
}

bool ns_user_id(const struct ns_user_maps *m, bool gid, uint32_t id, uint32_t *out)
{
	for (uint32_t i = 0; i < m->nr[gid]; i++) {
		const struct rec_ns_user_extent *e = &m->ext[gid][i];

		if (id >= e->lower && id - e->lower < e->count) {
			*out = e->first + (id - e->lower);
			return true;
		}
	}
	return false;
}

/* The records before the root's NS: its TASK, a 32-bit task's IA32, its
 * NSPID.  Anything else first: not a container's image as we write them. */
static bool before_ns(uint32_t type)
{
	return type == REC_HEAD || type == REC_TASK || type == REC_IA32 || type == REC_NSPID;
}

int ns_user_prescan(int fd, struct ns_user_maps *m, struct ckpt_log *log)
{
	struct img_reader r;
	struct rec rec = { 0 };
	off_t at = lseek(fd, 0, SEEK_CUR);
	bool own = false;
	int ret;

	if (at < 0)
		return log_err(log, errno, "the image:");
	ret = ir_init(&r, fd, log);
	while (!ret) {
		ret = ir_next(&r, &rec);
		if (ret <= 0)
			break;
		if (rec.type == REC_NS && rec.len == sizeof(struct rec_ns)) {
			own = ((const struct rec_ns *)rec.data)->own & (1u << NS_USER);
			ret = own ? 0 : 2;
		} else if (rec.type == REC_NS_USER && own) {
			ret = ns_user_parse(log, rec.data, rec.len, m) ?: 3;
		} else {
			ret = before_ns(rec.type) && !own ? 0 : 2;
		}
		free(rec.data);
		rec.data = NULL;
	}
	ir_free(&r);
	if (ret == 2 && own)
		ret = log_err(log, EBADMSG, "the image's own user namespace has no NS_USER record after NS");
	if (lseek(fd, at, SEEK_SET) < 0 && ret >= 0)
		ret = log_err(log, errno, "the image:");
	/* a bad image is refused by the restart that reads all of it */
	return ret == 3 ? 1 : ret < 0 ? ret : 0;
}

static int put_map(pid_t pid, const char *file, const char *text, struct ckpt_log *log)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = write(fd, text, strlen(text));
		close(fd);
	}
	return n == (ssize_t)strlen(text) ? 0 :
	       log_err(log, errno, "the container's user namespace: writing %s:", path);
}

int ns_user_write_maps(pid_t pid, const struct ns_user_maps *m, struct ckpt_log *log)
{
	char *text = malloc(NS_USER_MAX_EXTENTS * 36 + 1);
	int ret = 0;

	if (!text)
		return log_err(log, ENOMEM, "user namespace maps:");
	if (m->flags & NS_USER_SETGROUPS_DENY)
		ret = put_map(pid, "setgroups", "deny", log);
	for (int i = 0; i < 2 && !ret; i++) {
		size_t at = 0;

		for (uint32_t k = 0; k < m->nr[i]; k++)
			at += sprintf(text + at, "%u %u %u\n", m->ext[i][k].first,
				      m->ext[i][k].lower, m->ext[i][k].count);
		ret = put_map(pid, map_file[i], text, log);
	}
	free(text);
	return ret;
}

static bool host_of_root(const struct ns_user_maps *m, int which, uint32_t *out)
{
	for (uint32_t k = 0; k < m->nr[which]; k++)
		if (m->ext[which][k].first == 0) {
			*out = m->ext[which][k].lower;
			return true;
		}
	return false;
}

bool ns_user_root(const struct ns_user_maps *m, uint32_t *uid, uint32_t *gid)
{
	return host_of_root(m, 0, uid) && host_of_root(m, 1, gid);
}

/* Whether the namespace has an id 0 in @which's map. */
static bool has_root(const struct ns_user_maps *m, int which)
{
	for (uint32_t k = 0; k < m->nr[which]; k++)
		if (m->ext[which][k].first == 0)
			return true;
	return false;
}

int ns_user_become_root(struct rst_ctx *c, struct rst_task *t, const struct ns_user_maps *m)
{
	int ret = 0;

	(void)c;
	/* its caps are the namespace's already; its ids ckpt's, unmapped */
	if (has_root(m, 1))
		ret = rcheck(&t->rm, NULL, "setresgid(0) in its user namespace", SYS_setresgid,
			     0, 0, 0);
	if (!ret && has_root(m, 1) && !(m->flags & NS_USER_SETGROUPS_DENY))
		ret = rcheck(&t->rm, NULL, "setgroups in its user namespace", SYS_setgroups, 0, 0);
	if (!ret && has_root(m, 0))
		ret = rcheck(&t->rm, NULL, "setresuid(0) in its user namespace", SYS_setresuid,
			     0, 0, 0);
	return ret;
}

/* ---- info ---- */

/* "first:lower:count,..." of @n extents into @out, as much as fits. */
static void show_map(char *out, size_t size, const struct rec_ns_user_extent *e, uint32_t n)
{
	size_t at = 0;

	out[0] = 0;
	for (uint32_t k = 0; k < n && at < size - 40; k++)
		at += snprintf(out + at, size - at, "%s%u:%u:%u", k ? "," : "", e[k].first,
			       e[k].lower, e[k].count);
}

/* (a record load() has checked) */
void ns_user_show(struct info_out *o, const struct rec *r)
{
	const struct rec_ns_user *u = r->data;
	const struct rec_ns_user_extent *e = (const void *)(u + 1);
	const uint32_t *gr = (const void *)(e + u->nr_uid + u->nr_gid);
	char s[256];
	size_t at = 0;

	show_map(s, sizeof(s), e, u->nr_uid);
	info_str(o, "uid_map", s);
	show_map(s, sizeof(s), e + u->nr_uid, u->nr_gid);
	info_str(o, "gid_map", s);
	info_str(o, "setgroups", u->flags & NS_USER_SETGROUPS_DENY ? "deny" : "allow");
	s[0] = 0;
	for (uint32_t k = 0; k < u->nr_groups && at < sizeof(s) - 12; k++)
		at += snprintf(s + at, sizeof(s) - at, "%s%u", k ? "," : "", gr[k]);
	if (u->nr_groups)
		info_str(o, "groups", s);
}
