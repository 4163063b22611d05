/* sysrestart.c - a system call interrupted by the checkpoint resumes.
 *
 * Right after READY the program sits in one long nanosleep(), so the
 * checkpoint (which the runner takes ~300 ms after READY) meets it inside
 * that call.  Restored, the call must carry on as if nothing happened:
 * return 0, not -1/EINTR (the program has no signal handler that could
 * justify EINTR) nor any other error, and not return before the whole
 * 1.5 s have passed.  Only a lower bound is checked on the time, since
 * the checkpoint and restart themselves take time.
 */
#include "tp.h"

#define NS		1000000000LL
#define SLEEP_NS	1500000000LL
#define MAX_NS		(30 * NS)
#define ABS_NS		300000000LL

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct timespec req = { SLEEP_NS / NS, SLEEP_NS % NS };
	struct timespec rem = { -1, -1 }, deadline;
	long long start, elapsed, ddl;
	int ret, err;

	tp_init(argc, argv);

	tp_ready();
	start = mono_ns();
	ret = nanosleep(&req, &rem);
	err = errno;
	elapsed = mono_ns() - start;

	tp_check(ret == 0, "nanosleep returned %d (%s), rem %lld.%09ld s",
		 ret, ret ? strerror(err) : "", (long long)rem.tv_sec,
		 rem.tv_nsec);
	tp_check(elapsed >= SLEEP_NS,
		 "nanosleep(1.5 s) returned after only %lld ns", elapsed);
	tp_check(elapsed <= MAX_NS,
		 "nanosleep(1.5 s) returned after %lld ns (> 30 s)", elapsed);
	/* The request is input only; a restore must not have clobbered it. */
	tp_check(req.tv_sec == SLEEP_NS / NS && req.tv_nsec == SLEEP_NS % NS,
		 "nanosleep request changed to %lld.%09ld",
		 (long long)req.tv_sec, req.tv_nsec);

	tp_wait_go();

	/* An absolute sleep after restart: clock_nanosleep() returns the
	 * error number itself, 0 on success. */
	ddl = mono_ns() + ABS_NS;
	deadline.tv_sec = ddl / NS;
	deadline.tv_nsec = ddl % NS;
	ret = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
	tp_check(ret == 0, "clock_nanosleep(TIMER_ABSTIME) returned %d (%s)",
		 ret, strerror(ret));
	tp_check(mono_ns() >= ddl,
		 "clock_nanosleep(TIMER_ABSTIME) returned %lld ns early",
		 ddl - mono_ns());

	return tp_done();
}
