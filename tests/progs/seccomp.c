/* seccomp.c - seccomp filters and no_new_privs, in two threads and a
 * child process.
 *
 * With no_new_privs set, a second thread running, the main thread
 * installs two filters with TSYNC (so both threads share them): one makes
 * getppid() fail with EBADFD, one makes uname() fail with EREMOTE (with
 * SECCOMP_FILTER_FLAG_LOG).  A forked child inherits both and adds a
 * third of its own, making getppid() fail with ENOANO: as the newest
 * filter's errno wins, that shows the chain is restored in its order.
 * After the restart each thread must be in filter mode with its filters
 * (2, the child 3), the calls must fail with those errors while others
 * work, and the threads
 * must still share their filters: a TSYNC install by the main thread
 * succeeds only if every other thread's chain is one of its ancestors
 * (separate copies of equal filters would not do).
 */
#include "tp.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#if defined(__i386__)
#define MY_ARCH AUDIT_ARCH_I386
#elif defined(__x86_64__)
#define MY_ARCH AUDIT_ARCH_X86_64
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MY_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define MY_ARCH AUDIT_ARCH_S390X
#else
#error "seccomp.c: this architecture's AUDIT_ARCH_"
#endif

#define E_PPID	EBADFD
#define E_UNAME	EREMOTE
#define E_CHILD	ENOANO

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;	/* 1: thread checks, 2: thread done, 3: thread ends */

/* A filter: system call @nr fails with @err, all else is allowed. */
static int deny(int nr, int err, unsigned int flags)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MY_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (!flags)	/* the old way, as most programs did it */
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static long status_field(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/thread-self/status", "r");

	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return v;
}

static void expect_err(const char *who, const char *what, long r, int err)
{
	tp_check(r == -1 && errno == err, "%s: %s returned %ld errno %d, want -1 errno %d",
		 who, what, r, errno, err);
}

/* What every thread and the child must see. */
static void check_filters(const char *who, long nr_filters, int e_ppid)
{
	struct utsname u;
	long r;

	tp_check(status_field("Seccomp") == 2, "%s: Seccomp %ld, want 2", who,
		 status_field("Seccomp"));
	tp_check(status_field("Seccomp_filters") == nr_filters, "%s: %ld filters, want %ld",
		 who, status_field("Seccomp_filters"), nr_filters);
	tp_check(status_field("NoNewPrivs") == 1, "%s: NoNewPrivs %ld", who,
		 status_field("NoNewPrivs"));
	errno = 0;
	r = syscall(SYS_getppid);
	expect_err(who, "getppid", r, e_ppid);
	errno = 0;
	r = syscall(SYS_uname, &u);
	expect_err(who, "uname", r, E_UNAME);
	r = syscall(SYS_getpid);
	tp_check(r == getpid(), "%s: getpid %ld (allowed) failed", who, r);
}

static void *thread_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (stage != 1)
		pthread_cond_wait(&cv, &mu);
	check_filters("thread", 2, E_PPID);
	stage = 2;
	pthread_cond_broadcast(&cv);
	while (stage != 3)
		pthread_cond_wait(&cv, &mu);
	tp_check(status_field("Seccomp_filters") == 3,
		 "thread: %ld filters after the main thread's TSYNC, want 3",
		 status_field("Seccomp_filters"));
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void set_stage(int s, int wait_for)
{
	pthread_mutex_lock(&mu);
	stage = s;
	pthread_cond_broadcast(&cv);
	while (wait_for && stage != wait_for)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static int child_main(int ready)
{
	if (deny(SYS_getppid, E_CHILD, 0))
		return 3;
	if (write(ready, "x", 1) != 1)
		return 3;
	tp_wait_go();
	check_filters("child", 3, E_CHILD);
	return tp_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	pthread_t th;
	int p[2], st = 0;
	pid_t child;
	long r;
	char c;

	tp_init(argc, argv);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    pthread_create(&th, NULL, thread_main, NULL)) {
		perror("setup");
		return 2;
	}
	if (deny(SYS_getppid, E_PPID, SECCOMP_FILTER_FLAG_TSYNC) ||
	    deny(SYS_uname, E_UNAME, SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG)) {
		perror("seccomp");
		return 2;
	}
	if (pipe(p)) {
		perror("pipe");
		return 2;
	}
	child = fork();
	if (child == 0)
		_exit(child_main(p[1]));
	close(p[1]);
	if (child < 0 || read(p[0], &c, 1) != 1) {
		fprintf(stderr, "child failed to start\n");
		return 2;
	}
	close(p[0]);
	tp_ready();
	tp_wait_go();

	check_filters("main", 2, E_PPID);
	set_stage(1, 2);
	r = deny(SYS_getpgid, EPERM, SECCOMP_FILTER_FLAG_TSYNC);
	tp_check(r == 0, "TSYNC after restart: %ld (errno %d): the threads do not share their filters",
		 r, errno);
	set_stage(3, 0);
	pthread_join(th, NULL);
	tp_check(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "child: status %#x", st);
	return tp_done();
}
