/* timerfd.c - timerfds: clock, settime flags, interval, time left and
 * the expirations not yet read, made again at restart by the restored
 * process (timerfd_create, timerfd_settime, then TFD_IOC_SET_TICKS).
 *
 * Checkpoint: a periodic timer left unread keeps one tick in the kernel
 * until something looks at it; timerfd_gettime() (on our own copy of the
 * description) counts the missed periods into the ticks without reading
 * them, after which fdinfo has the true count and time left.
 *
 * Restart, the clock policy (docs/design.md): a timer set with
 * TFD_TIMER_ABSTIME on CLOCK_REALTIME(_ALARM) keeps its wall-clock
 * schedule, and periods that passed while no process ran count as
 * expirations, as across a suspend.  Every other timer keeps the time it
 * had left: monotonic and boot time restart from another origin after a
 * reboot or on another machine, so only the time left means anything.
 * settime() zeroes the ticks and SET_TICKS overwrites them, so an
 * expiration due while they are set would be lost: those due within
 * MARGIN of the restore are counted here instead (waiting for them when
 * the period allows), and the timer is armed for the next one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "../files.h"

#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS	_IOW('T', 0, uint64_t)
#endif
#define NS		1000000000LL
#define TIME_MAX	(1LL << 62)
#define MARGIN		(5 * 1000 * 1000LL)	/* ns */
#define TFD_SETTIME_FLAGS (TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)
#define SAMPLE_TRIES	20

static bool clock_ok(int32_t clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC ||
	       clk == CLOCK_BOOTTIME || clk == CLOCK_REALTIME_ALARM ||
	       clk == CLOCK_BOOTTIME_ALARM;
}

/* The clock to read for a timer's: the alarm clocks need an RTC to be
 * read, and run as their base clocks. */
static int64_t clock_now(int32_t clk)
{
	struct timespec ts;

	clk = clk == CLOCK_REALTIME_ALARM ? CLOCK_REALTIME :
	      clk == CLOCK_BOOTTIME_ALARM ? CLOCK_BOOTTIME : clk;
	clock_gettime(clk, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static bool wall_schedule(const struct rec_timerfd *r)
{
	return (r->clockid == CLOCK_REALTIME || r->clockid == CLOCK_REALTIME_ALARM) &&
	       (r->settime_flags & TFD_TIMER_ABSTIME);
}

/* ---- checkpoint ---- */

static bool tfd_match(struct cpt_ctx *c, const struct fd_probe *p)
{
	return !strcmp(p->link, "anon_inode:[timerfd]");
}

static int parse_info(const char *info, struct rec_timerfd *r)
{
	const char *p = fdinfo_field(info, "clockid:");
	unsigned long long ticks, vs, vn, is, in;
	unsigned int flags;

	if (!p || sscanf(p, "%d\nticks: %llu\nsettime flags: %o\nit_value: (%llu, %llu)\nit_interval: (%llu, %llu)",
			 &r->clockid, &ticks, &flags, &vs, &vn, &is, &in) != 7 ||
	    vs >= TIME_MAX / NS || is >= TIME_MAX / NS)
		return -EINVAL;
	r->ticks = ticks;
	r->settime_flags = flags;
	r->value_ns = vs * NS + vn;
	r->interval_ns = is * NS + in;
	return 0;
}

/* fdinfo of our copy right after timerfd_gettime() brought its ticks up
 * to date.  A timer that fired in between (time left by gettime, none by
 * fdinfo) is looked at again; one that fires that often is taken with
 * gettime's time left, the tick of that firing counted twice at most. */
static int sample(struct cpt_ctx *c, const struct fd_probe *p, int fd,
		  struct rec_timerfd *r)
{
	char path[64], *info = NULL;
	struct itimerspec v = { 0 };
	int64_t left = 0;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	for (int i = 0; i < SAMPLE_TRIES && !ret; i++) {
		free(info);
		info = NULL;
		if (syscall(SYS_timerfd_gettime, fd, &v))
			ret = -errno;
		else
			ret = file_read(path, &info, NULL);
		if (!ret && parse_info(info, r))
			ret = -EINVAL;
		if (!ret)
			r->now_ns = clock_now(r->clockid);
		left = v.it_value.tv_sec * NS + v.it_value.tv_nsec;
		if (!ret && !(left > 0 && r->value_ns == 0))
			break;
	}
	if (!ret && left > 0 && r->value_ns == 0)
		r->value_ns = left;
	free(info);
	if (ret)
		return log_err(c->log, -ret, "pid %d fd %d: reading its timerfd:", p->pid,
			       p->fd);
	return 0;
}

static int tfd_dump(struct cpt_ctx *c, const struct fd_probe *p,
		    struct rec_file *f, void **extra, uint32_t *extra_len)
{
	struct rec_timerfd *r;
	int fd = -1, ret;
	long pidfd;

	if (anonfd_dump_flags(c, p, f, "timerfd"))
		return -EOPNOTSUPP;
	pidfd = syscall(SYS_pidfd_open, p->pid, 0);
	if (pidfd >= 0)
		fd = syscall(SYS_pidfd_getfd, pidfd, p->fd, 0);
	if (fd < 0) {
		ret = log_err(c->log, errno, "pid %d fd %d: taking its timerfd:", p->pid, p->fd);
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		ret = log_err(c->log, ENOMEM, "timerfd:");
		goto out;
	}
	ret = sample(c, p, fd, r);
	if (!ret && (!clock_ok(r->clockid) || (r->settime_flags & ~TFD_SETTIME_FLAGS)))
		ret = log_err(c->log, EOPNOTSUPP, "pid %d fd %d: timerfd of clock %d, flags 0%o",
			      p->pid, p->fd, r->clockid, r->settime_flags);
	if (ret) {
		free(r);
		goto out;
	}
	*extra = r;
	*extra_len = sizeof(*r);
out:
	if (fd >= 0)
		close(fd);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

/* ---- restart ---- */

static int tfd_load(struct rst_ctx *c, struct rst_file *f)
{
	struct rec_timerfd r;

	if (anonfd_load(c, f, &r, sizeof(r), "timerfd"))
		return -EBADMSG;
	if (!clock_ok(r.clockid) || (r.settime_flags & ~TFD_SETTIME_FLAGS) ||
	    r.ticks >= (uint64_t)TIME_MAX || r.interval_ns < 0 || r.interval_ns >= TIME_MAX ||
	    r.value_ns < 0 || r.value_ns >= TIME_MAX || r.now_ns < 0 || r.now_ns >= TIME_MAX)
		return log_err(c->log, EBADMSG, "FILE %u: bad timerfd", f->f.id);
	return 0;
}

/* The next expiration at *at (0: none): those before now + MARGIN are
 * counted into *ticks and the timer moved on to the first one after. */
static void count_due(int64_t *at, int64_t interval, int64_t now, uint64_t *ticks)
{
	int64_t k;

	if (!*at || *at >= now + MARGIN)
		return;
	if (!interval) {
		*ticks += 1;
		*at = 0;
		return;
	}
	k = (now + MARGIN - *at) / interval + 1;
	*ticks += k;
	*at += k * interval;
}

/* Armed for @at (absolute, on its clock; 0: disarmed), the count set. */
static int arm(struct rst_task *t, long fd, const struct rec_timerfd *r,
	       int64_t at, uint64_t ticks)
{
	bool abs = r->settime_flags & TFD_TIMER_ABSTIME;
	int64_t v = at && !abs ? at - clock_now(r->clockid) : at;
	struct itimerspec its = {
		{ r->interval_ns / NS, r->interval_ns % NS },
		{ (v > 0 ? v : 1) / NS, (v > 0 ? v : 1) % NS },
	};
	uint64_t its_at, ticks_at;
	int ret;

	if (!at)
		its.it_value = (struct timespec){ 0, 0 };
	ret = rst_scratch_put(t, 0, &its, sizeof(its), &its_at);
	if (!ret)
		ret = rst_scratch_put(t, 64, &ticks, sizeof(ticks), &ticks_at);
	if (!ret)
		ret = rcheck(&t->rm, NULL, "timerfd_settime", SYS_timerfd_settime, fd,
			     r->settime_flags, its_at, 0);
	if (!ret && ticks)
		ret = rcheck(&t->rm, NULL, "ioctl(TFD_IOC_SET_TICKS)", SYS_ioctl, fd,
			     TFD_IOC_SET_TICKS, ticks_at);
	return ret;
}

static int restore_timer(struct rst_task *t, long fd, const struct rec_timerfd *r)
{
	int64_t first = 0, now = clock_now(r->clockid);

	if (r->value_ns)
		first = (wall_schedule(r) ? r->now_ns : now) + r->value_ns;
	for (int i = 0; i < 100; i++) {
		uint64_t ticks = r->ticks;
		int64_t at = first;
		int ret;

		now = clock_now(r->clockid);
		/* due very soon and not again soon after: wait for it, so it
		 * is not counted before its time */
		if (at > now && at < now + MARGIN &&
		    (!r->interval_ns || r->interval_ns >= 2 * MARGIN)) {
			struct timespec d = { 0, at - now };

			nanosleep(&d, NULL);
			now = clock_now(r->clockid);
		}
		count_due(&at, r->interval_ns, now, &ticks);
		ret = arm(t, fd, r, at, ticks);
		/* if it may have fired before SET_TICKS, set it all again */
		if (ret || !at || clock_now(r->clockid) < at)
			return ret;
	}
	return log_err(t->rm.log, ETIME, "pid %d: timerfd keeps expiring while it is restored",
		       t->pid);
}

static int tfd_open(struct rst_ctx *c, struct rst_task *t, struct rst_file *f,
		    long *fd)
{
	struct rec_timerfd r;
	int ret;

	anonfd_get(f->extra, f->f.extra_len, &r, sizeof(r));
	ret = rcheck(&t->rm, fd, "timerfd_create", SYS_timerfd_create, r.clockid,
		     f->f.flags & O_NONBLOCK ? TFD_NONBLOCK : 0);
	return ret ? ret : restore_timer(t, *fd, &r);
}

static void tfd_show(struct info_out *o, const struct rec_file *f,
		     const void *extra, uint32_t extra_len)
{
	struct rec_timerfd r;

	if (!anonfd_get(extra, extra_len, &r, sizeof(r)))
		return;
	info_i64(o, "clock", r.clockid);
	info_hex(o, "settime_flags", r.settime_flags);
	info_u64(o, "ticks", r.ticks);
	info_i64(o, "interval_ns", r.interval_ns);
	info_i64(o, "value_ns", r.value_ns);
}

const struct file_ops file_timerfd = {
	.kind = FILE_TIMERFD,
	.name = "timerfd",
	.match = tfd_match,
	.dump = tfd_dump,
	.load = tfd_load,
	.open = tfd_open,
	.show = tfd_show,
};
