/* ns_time.c - a container's own time namespace (NS_TIME, for ns.c).
 *
 * A time namespace shifts CLOCK_MONOTONIC and CLOCK_BOOTTIME by its
 * offsets.  The image keeps what the container's clocks read at the
 * checkpoint; restart gives the new namespace the offsets that make them
 * go on from those readings, here or on another machine (as if the
 * container had been frozen in between).  Offsets can be set only before
 * any process is in the namespace: the root unshares it, sets them, then
 * enters it itself (setns); the others join it with the rest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../kinds.h"
#include "../model.h"
#include "ns_time.h"

#define NSEC	1000000000LL

/* The offsets of @pid's time namespace (0: ours), in ns. */
static int read_offsets(struct ckpt_log *log, pid_t pid, int64_t *mono, int64_t *boot)
{
	char path[64], name[32];
	long long s, ns;
	FILE *f;
	int n = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/timens_offsets", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/timens_offsets");
	f = fopen(path, "re");
	if (!f)
		return log_err(log, errno, "%s:", path);
	*mono = *boot = 0;
	while (fscanf(f, "%31s %lld %lld", name, &s, &ns) == 3) {
		if (!strcmp(name, "monotonic"))
			*mono = s * NSEC + ns, n++;
		else if (!strcmp(name, "boottime"))
			*boot = s * NSEC + ns, n++;
	}
	fclose(f);
	return n == 2 ? 0 : log_err(log, EIO, "%s: no monotonic and boottime offsets", path);
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

/* The host's own clocks (ours, less our namespace's offsets). */
static int host_clocks(struct ckpt_log *log, int64_t *mono, int64_t *boot)
{
	int64_t om, ob;
	int ret = read_offsets(log, 0, &om, &ob);

	*mono = clock_ns(CLOCK_MONOTONIC) - om;
	*boot = clock_ns(CLOCK_BOOTTIME) - ob;
	return ret;
}

int ns_time_dump(struct cpt_ctx *c, pid_t root)
{
	struct rec_ns_time t;
	int64_t hm, hb, om, ob;
	int ret = read_offsets(c->log, root, &om, &ob);

	if (!ret)
		ret = host_clocks(c->log, &hm, &hb);
	if (ret)
		return ret;
	t.monotonic_ns = hm + om;
	t.boottime_ns = hb + ob;
	/* what restart would refuse is refused now, while it runs on */
	if (ns_time_bad(&t))
		return log_err(c->log, ERANGE, "pid %d: its time namespace's clocks (%lld, %lld ns) are out of range",
			       root, (long long)t.monotonic_ns, (long long)t.boottime_ns);
	return iw_record(&c->w, REC_NS_TIME, &t, sizeof(t));
}

bool ns_time_bad(const struct rec_ns_time *t)
{
	/* readings a clock can have: from 0 to ~146 years */
	/* (each clock has its own offset: boottime may read less) */
	return t->monotonic_ns < 0 || t->boottime_ns < 0 ||
	       t->monotonic_ns > (INT64_MAX >> 1) || t->boottime_ns > (INT64_MAX >> 1);
}

/* "NAME SECS NSECS\n" of an offset, nanoseconds in [0, 1s). */
static int offset_line(char *buf, size_t n, const char *name, int64_t off)
{
	long long s = off / NSEC, ns = off % NSEC;

	if (ns < 0) {
		s--;
		ns += NSEC;
	}
	return snprintf(buf, n, "%s %lld %lld\n", name, s, ns);
}

/* In the root puppet @t: a time namespace for its children with the
 * offsets @saved asks for, which it then enters itself. */
int ns_time_restore(struct rst_ctx *c, struct rst_task *t, const struct rec_ns_time *saved)
{
	static const char offsets[] = "/proc/self/timens_offsets";
	static const char children[] = "/proc/self/ns/time_for_children";
	char buf[128];
	int64_t hm, hb;
	uint64_t a;
	long fd;
	int len, ret = host_clocks(c->log, &hm, &hb);

	if (ret)
		return ret;
	len = offset_line(buf, sizeof(buf), "monotonic", saved->monotonic_ns - hm);
	len += offset_line(buf + len, sizeof(buf) - len, "boottime", saved->boottime_ns - hb);
	ret = rcheck(&t->rm, NULL, "unshare(CLONE_NEWTIME)", SYS_unshare, CLONE_NEWTIME);
	if (!ret)
		ret = rst_scratch_put(t, 0, offsets, sizeof(offsets), &a);
	if (!ret)
		ret = rcheck(&t->rm, &fd, "open timens_offsets", SYS_openat, AT_FDCWD, a,
			     O_WRONLY | O_CLOEXEC);
	if (ret)
		return ret;
	ret = rst_scratch_put(t, 64, buf, len, &a);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "write timens_offsets", SYS_write, fd, a, len);
	rcheck(&t->rm, NULL, "close", SYS_close, fd);
	if (!ret)
		ret = rst_scratch_put(t, 0, children, sizeof(children), &a);
	if (!ret)
		ret = rcheck(&t->rm, &fd, "open its time namespace", SYS_openat, AT_FDCWD, a,
			     O_RDONLY | O_CLOEXEC);
	if (ret)
		return ret;
	ret = rcheck(&t->rm, NULL, "setns(CLONE_NEWTIME)", SYS_setns, fd, CLONE_NEWTIME);
	rcheck(&t->rm, NULL, "close", SYS_close, fd);
	return ret;
}
