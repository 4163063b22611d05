/* timerfd.c - timerfds keep their clock, flags, interval, time left and
 * the expirations nobody read yet, and keep firing.
 *
 * periodic: 50 ms, never read before the checkpoint, so by READY it owes
 *   more than 30 expirations; a restore that loses them (or that only
 *   looked at the kernel's unforwarded count of 1) owes a handful.
 * boot:     CLOCK_BOOTTIME one-shot 30 s, relative: time left kept.
 * wall:     CLOCK_REALTIME, TFD_TIMER_ABSTIME at a wall time: fires then,
 *   not before.
 * wallp:    CLOCK_REALTIME, TFD_TIMER_ABSTIME, periodic 100 ms: keeps its
 *   wall-clock schedule, the periods of the downtime counted.
 * later:    CLOCK_MONOTONIC, TFD_TIMER_ABSTIME 20 s ahead: time left kept.
 * expired:  CLOCK_MONOTONIC absolute one-shot, expired and unread: shared
 *   with a child, who reads it, so the parent finds it empty.
 * idle:     disarmed, with an interval set.
 * A fresh process has none of these.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <linux/kcmp.h>

#include "tp.h"

#define NS	1000000000LL
#define MS	1000000LL
#define PERIOD	(50 * MS)
#define BEFORE	(1500 * MS)	/* unread before READY */
#define WALLP	(100 * MS)

static long long now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static struct timespec ts(long long ns)
{
	return (struct timespec){ ns / NS, ns % NS };
}

static long long ts_ns(struct timespec t)
{
	return t.tv_sec * NS + t.tv_nsec;
}

static int mktimer(clockid_t clk, int fl, int setfl, long long value, long long interval)
{
	struct itimerspec its = { ts(interval), ts(value) };
	int fd = timerfd_create(clk, fl);

	if (fd < 0 || timerfd_settime(fd, setfl, &its, NULL))
		exit(1);
	return fd;
}

/* "clockid: N" and "settime flags: 0N" of its fdinfo */
static void fdinfo(int fd, int *clk, unsigned int *flags)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	*clk = -1;
	*flags = ~0u;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	if ((p = strstr(buf, "clockid:")))
		*clk = atoi(p + 8);
	if ((p = strstr(buf, "settime flags:")))
		*flags = strtoul(p + 14, NULL, 8);
}

/* blocks at most @ms; the expirations, 0 if none came */
static uint64_t expirations(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t n = 0;

	if (poll(&p, 1, ms) == 1 && read(fd, &n, 8) != 8)
		n = 0;
	return n;
}

static void check_kind(int fd, int clk, unsigned int flags, const char *name)
{
	int c;
	unsigned int f;

	fdinfo(fd, &c, &f);
	tp_check(c == clk && f == flags, "%s: clock %d flags 0%o, want %d 0%o", name,
		 c, f, clk, flags);
}

static void check_periodic(int fd, long long start)
{
	long long t0, waited;
	uint64_t n = expirations(fd, 0);
	long long most = (now_ns(CLOCK_MONOTONIC) - start) / PERIOD + 1;
	struct itimerspec g;

	tp_check(n >= BEFORE / PERIOD && (long long)n <= most,
		 "periodic: %llu expirations waiting, want %lld..%lld",
		 (unsigned long long)n, BEFORE / PERIOD, most);
	timerfd_gettime(fd, &g);
	tp_check(ts_ns(g.it_interval) == PERIOD, "periodic: interval %lld",
		 ts_ns(g.it_interval));
	t0 = now_ns(CLOCK_MONOTONIC);
	n = expirations(fd, 2000);
	waited = now_ns(CLOCK_MONOTONIC) - t0;
	tp_check(n >= 1 && waited < 2 * PERIOD + 200 * MS,
		 "periodic: next expiration after %lld ms (%llu)", waited / MS,
		 (unsigned long long)n);
}

static void check_boot(int fd, long long start)
{
	struct itimerspec g;
	long long left, gone = now_ns(CLOCK_BOOTTIME) - start;

	timerfd_gettime(fd, &g);
	left = ts_ns(g.it_value);
	tp_check(left > 0 && left <= 30 * NS - BEFORE,
		 "boot: %lld ms left, want 1..%lld", left / MS, (30 * NS - BEFORE) / MS);
	tp_check(left >= 30 * NS - gone - 100 * MS, "boot: %lld ms left after %lld ms",
		 left / MS, gone / MS);
	tp_check(expirations(fd, 0) == 0, "boot: expired early");
	check_kind(fd, CLOCK_BOOTTIME, 0, "boot");
}

/* expirations at first, first + WALLP, ... up to now: all counted */
static void check_wallp(int fd, long long first)
{
	uint64_t n = expirations(fd, 0);
	long long want = (now_ns(CLOCK_REALTIME) - first) / WALLP + 1;

	tp_check((long long)n >= want - 1 && (long long)n <= want + 1,
		 "wallp: %llu expirations, want %lld", (unsigned long long)n, want);
	check_kind(fd, CLOCK_REALTIME, TFD_TIMER_ABSTIME, "wallp");
}

static void check_later(int fd)
{
	struct itimerspec g;

	timerfd_gettime(fd, &g);
	tp_check(ts_ns(g.it_value) > 0 && ts_ns(g.it_value) <= 20 * NS - BEFORE,
		 "later: %lld ms left", ts_ns(g.it_value) / MS);
	check_kind(fd, CLOCK_MONOTONIC, TFD_TIMER_ABSTIME, "later");
}

static void check_wall(int fd, long long at)
{
	uint64_t n = expirations(fd, 10000);

	tp_check(n == 1, "wall: %llu expirations", (unsigned long long)n);
	tp_check(now_ns(CLOCK_REALTIME) >= at, "wall: fired %lld ms early",
		 (at - now_ns(CLOCK_REALTIME)) / MS);
	check_kind(fd, CLOCK_REALTIME, TFD_TIMER_ABSTIME, "wall");
}

int main(int argc, char **argv)
{
	long long mono = now_ns(CLOCK_MONOTONIC), boot = now_ns(CLOCK_BOOTTIME);
	long long wall_at = now_ns(CLOCK_REALTIME) + 3 * NS;
	long long wallp_at = now_ns(CLOCK_REALTIME) + WALLP;
	int periodic, bt, wall, expired, idle, wallp, later, st, hold[2];
	struct itimerspec g;
	pid_t pid;

	tp_init(argc, argv);
	periodic = mktimer(CLOCK_MONOTONIC, 0, 0, PERIOD, PERIOD);
	bt = mktimer(CLOCK_BOOTTIME, TFD_NONBLOCK, 0, 30 * NS, 0);
	wall = mktimer(CLOCK_REALTIME, TFD_CLOEXEC, TFD_TIMER_ABSTIME, wall_at, 0);
	expired = mktimer(CLOCK_MONOTONIC, TFD_NONBLOCK, TFD_TIMER_ABSTIME, mono + 100 * MS, 0);
	idle = mktimer(CLOCK_MONOTONIC, 0, 0, 0, 7 * NS);
	wallp = mktimer(CLOCK_REALTIME, 0, TFD_TIMER_ABSTIME, wallp_at, WALLP);
	later = mktimer(CLOCK_MONOTONIC, 0, TFD_TIMER_ABSTIME, mono + 20 * NS, 0);
	if (pipe(hold))
		return 1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(hold[1]);
		tp_wait_go();
		st = expirations(expired, 0) == 1 ? 0 : 1;
		_exit(read(hold[0], &c, 1) == 0 ? st : 1);	/* until kcmp is done */
	}
	close(hold[0]);
	{
		struct timespec d = ts(BEFORE);

		nanosleep(&d, NULL);
	}
	tp_ready();
	tp_wait_go();

	check_periodic(periodic, mono);
	check_boot(bt, boot);
	check_wallp(wallp, wallp_at);
	check_later(later);
	tp_check(fcntl(bt, F_GETFL) & O_NONBLOCK, "boot: O_NONBLOCK lost");
	tp_check(fcntl(wall, F_GETFD) & FD_CLOEXEC, "wall: FD_CLOEXEC lost");
	timerfd_gettime(idle, &g);
	tp_check(ts_ns(g.it_value) == 0 && ts_ns(g.it_interval) == 7 * NS,
		 "idle: value %lld interval %lld", ts_ns(g.it_value), ts_ns(g.it_interval));
	check_kind(expired, CLOCK_MONOTONIC, TFD_TIMER_ABSTIME, "expired");
	tp_check(syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, expired, expired) == 0,
		 "the child's timerfd is another description");
	close(hold[1]);
	tp_check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		 "child did not read the expired timer (0x%x)", st);
	tp_check(expirations(expired, 0) == 0, "expired: still there after the child read it");
	check_wall(wall, wall_at);
	return tp_done();
}
