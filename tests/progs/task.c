/* task - per-task and per-process fields survive checkpoint/restart.
 *
 * comm, clear_child_tid, the rseq registration glibc made, personality,
 * umask, the working directory and resource limits.  Each is set to a
 * value a freshly started process would not have.
 */
#include "tp.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define COMM		"tp-task-xyz"
#define UMASK		027
/* Flags that only matter at the next exec, or not at all any more. */
#define PERSONA		(PER_LINUX | ADDR_NO_RANDOMIZE | \
			 WHOLE_SECONDS | SHORT_INODE)

static volatile int tid_slot = 0x7e57;

struct lim {
	int res;
	const char *name;
	struct rlimit want;
};

static struct lim lims[] = {
	{ RLIMIT_NOFILE, "RLIMIT_NOFILE", { 0, 0 } },
	{ RLIMIT_CORE, "RLIMIT_CORE", { 0, 0 } },
	{ RLIMIT_CPU, "RLIMIT_CPU", { 0, 0 } },
	{ RLIMIT_STACK, "RLIMIT_STACK", { 0, 0 } },
};
#define NLIMS (sizeof(lims) / sizeof(lims[0]))

static rlim_t min_rlim(rlim_t a, rlim_t b)
{
	/* RLIM_INFINITY is the largest rlim_t, so this handles it too. */
	return a < b ? a : b;
}

/* New limits: soft and hard no higher than now, so that an unprivileged
 * restore can set them, yet unlike what a fresh process inherits. */
static int set_limits(void)
{
	for (size_t i = 0; i < NLIMS; i++) {
		struct rlimit cur, *w = &lims[i].want;

		if (getrlimit(lims[i].res, &cur))
			return -1;
		*w = cur;
		switch (lims[i].res) {
		case RLIMIT_NOFILE:
			w->rlim_cur = min_rlim(200, cur.rlim_max);
			break;
		case RLIMIT_CORE:
			w->rlim_max = min_rlim(54321 * 4096UL, cur.rlim_max);
			w->rlim_cur = min_rlim(12345 * 4096UL, w->rlim_max);
			break;
		case RLIMIT_CPU:
			w->rlim_max = min_rlim(234567, cur.rlim_max - 1);
			w->rlim_cur = min_rlim(123456, w->rlim_max - 1);
			break;
		case RLIMIT_STACK:
			w->rlim_cur = min_rlim(cur.rlim_cur, 64UL << 20) -
				      (1 << 20) - 12345;
			break;
		}
		if (setrlimit(lims[i].res, w)) {
			perror(lims[i].name);
			return -1;
		}
	}
	return 0;
}

static struct rseq *rseq_area(void)
{
	char *tp;

	/* The TCB starts with a pointer to itself: the thread pointer. */
#ifdef __i386__
	__asm__("mov %%gs:0, %0" : "=r"(tp));
#else
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#endif
	return (struct rseq *)(tp + __rseq_offset);
}

/*
 * The length glibc registered the area with: it may exceed __rseq_size,
 * the size of the features in use (20 and 32 on Debian 12).  The kernel
 * answers EBUSY only to the exact registration, EINVAL to any other
 * length, and registers nothing in either case.
 */
static unsigned int rseq_registered_len(void)
{
	for (unsigned int len = __rseq_size; len <= 1024; len++)
		if (syscall(SYS_rseq, rseq_area(), len, 0, RSEQ_SIG) < 0 &&
		    errno == EBUSY)
			return len;
	return 0;
}

/* The Umask line of /proc/self/status; -1 if missing. */
static long status_umask(void)
{
	static char buf[8192];
	ssize_t n, len = 0;
	char *p;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	p = strstr(buf, "\nUmask:");
	return p ? strtol(p + strlen("\nUmask:"), NULL, 8) : -1;
}

int main(int argc, char **argv)
{
	static char dir[4096], cwd[4096], comm[32];
	const char *tmp = getenv("TP_TMPDIR");
	struct timespec ms = { 0, 1000 * 1000 };
	unsigned int rseq_len = 0;
	struct rseq *rs;
	struct rlimit rl;
	int *tidp = NULL;
	long ret;
	int err, i;

	tp_init(argc, argv);
	if (!tmp || !*tmp)
		tmp = "/tmp";

	if (prctl(PR_SET_NAME, COMM) ||
	    syscall(SYS_set_tid_address, &tid_slot) < 0 ||
	    personality(PERSONA) < 0 || personality(0xffffffff) != PERSONA)
		return 2;
	umask(UMASK);
	snprintf(dir, sizeof(dir), "%s/tp-task-XXXXXX", tmp);
	if (!mkdtemp(dir) || chdir(dir) || !getcwd(dir, sizeof(dir)))
		return 2;
	if (set_limits())
		return 2;
	if (__rseq_size > 0) {
		rseq_len = rseq_registered_len();
		if (!rseq_len)
			return 2;
	}

	tp_ready();
	tp_wait_go();

	prctl(PR_GET_NAME, comm);
	tp_check(!strcmp(comm, COMM), "comm is '%s', not '%s'", comm, COMM);

	tp_check(prctl(PR_GET_TID_ADDRESS, &tidp) == 0 &&
		 tidp == (int *)&tid_slot,
		 "clear_child_tid is %p, not %p", (void *)tidp,
		 (void *)&tid_slot);
	tp_check(tid_slot == 0x7e57, "clear_child_tid target changed");

	/*
	 * rseq: registering the same area again, with the same arguments,
	 * must fail with EBUSY.  On a thread without rseq it would succeed,
	 * and fail with EINVAL if registered at another place or length.
	 */
	tp_check(__rseq_size > 0, "glibc did not register rseq");
	if (__rseq_size > 0) {
		rs = rseq_area();
		ret = syscall(SYS_rseq, rs, rseq_len, 0, RSEQ_SIG);
		err = errno;
		tp_check(ret == -1 && err == EBUSY,
			 "rseq re-registration gave %ld (%s), not EBUSY", ret,
			 ret ? strerror(err) : "success");
		tp_check((int32_t)rs->cpu_id >= 0, "rseq cpu_id is %d",
			 (int32_t)rs->cpu_id);
		/* The kernel refreshes cpu_id after the task slept. */
		for (i = 0; i < 20; i++) {
			unsigned int cpu = ~0U;
			uint32_t before, after;

			nanosleep(&ms, NULL);
			before = rs->cpu_id;
			syscall(SYS_getcpu, &cpu, NULL, NULL);
			after = rs->cpu_id;
			if (before == cpu && after == cpu)
				break;
		}
		tp_check(i < 20, "rseq cpu_id does not follow getcpu");
	}

	ret = personality(0xffffffff);
	tp_check(ret == PERSONA, "personality is %#lx, not %#x", ret, PERSONA);

	tp_check(status_umask() == UMASK, "Umask in status is %lo",
		 status_umask());
	ret = umask(0);
	umask(ret);
	tp_check(ret == UMASK, "umask is %lo, not %o", ret, UMASK);

	tp_check(getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, dir),
		 "cwd is '%s', not '%s'", cwd, dir);

	for (size_t j = 0; j < NLIMS; j++) {
		getrlimit(lims[j].res, &rl);
		tp_check(rl.rlim_cur == lims[j].want.rlim_cur &&
			 rl.rlim_max == lims[j].want.rlim_max,
			 "%s is %lu/%lu, not %lu/%lu", lims[j].name,
			 (unsigned long)rl.rlim_cur,
			 (unsigned long)rl.rlim_max,
			 (unsigned long)lims[j].want.rlim_cur,
			 (unsigned long)lims[j].want.rlim_max);
	}

	if (chdir("/") == 0)
		rmdir(dir);
	return tp_done();
}
