/* seccomp_threads.c - threads with different seccomp states in one
 * process.
 *
 * Thread C enters strict mode and sleeps in read() on a pipe.  Then the
 * main thread (root, so without no_new_privs) installs a filter making
 * getppid() fail with EBADFD, and clones threads A and B, which inherit
 * it; B sets its own no_new_privs and adds a filter of its own making
 * uname() fail with EREMOTE.  After the restart every thread must have
 * its own mode, filters and no_new_privs, and C, still in strict mode,
 * must be woken by a byte on its pipe and answer by writing back (the
 * only calls it has).
 */
#include "tp.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#define E_PPID	EBADFD
#define E_UNAME	EREMOTE

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;	/* 1: B set up, 2: go, checks, 4: A and B done */
static int to_c[2], from_c[2];
static pid_t tid_c;

/* The calls are checked whatever the architecture says: one nr. */
static int deny(int nr, int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static long status_field(const char *path, const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return v;
}

static void check(const char *who, long filters, long nnp, int uname_err)
{
	const char *me = "/proc/thread-self/status";
	struct utsname u;
	long r;

	tp_check(status_field(me, "Seccomp") == 2 &&
		 status_field(me, "Seccomp_filters") == filters &&
		 status_field(me, "NoNewPrivs") == nnp,
		 "%s: Seccomp %ld, %ld filters, NoNewPrivs %ld; want 2, %ld, %ld", who,
		 status_field(me, "Seccomp"), status_field(me, "Seccomp_filters"),
		 status_field(me, "NoNewPrivs"), filters, nnp);
	errno = 0;
	r = syscall(SYS_getppid);
	tp_check(r == -1 && errno == E_PPID, "%s: getppid %ld errno %d", who, r, errno);
	errno = 0;
	r = syscall(SYS_uname, &u);
	tp_check(uname_err ? r == -1 && errno == uname_err : r == 0,
		 "%s: uname %ld errno %d, want errno %d", who, r, errno, uname_err);
}

static void wait_stage(int s)
{
	pthread_mutex_lock(&mu);
	while (stage < s)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void add_stage(int s)
{
	pthread_mutex_lock(&mu);
	stage += s;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void *thread_a(void *arg)
{
	(void)arg;
	wait_stage(2);
	check("thread A", 1, 0, 0);
	add_stage(1);
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || deny(SYS_uname, E_UNAME))
		tp_fail("thread B setup: %s", strerror(errno));
	add_stage(1);
	wait_stage(2);
	check("thread B", 2, 1, E_UNAME);
	add_stage(1);
	return NULL;
}

/* Strict: read, write, exit and sigreturn only (no futex: never joined). */
static void *thread_c(void *arg)
{
	char c;

	(void)arg;
	tid_c = syscall(SYS_gettid);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0))
		return NULL;
	if (write(from_c[1], "r", 1) != 1)
		syscall(SYS_exit, 1);
	while (syscall(SYS_read, to_c[0], &c, 1) == 1)
		if (syscall(SYS_write, from_c[1], "w", 1) != 1)
			break;
	syscall(SYS_exit, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b, c;
	char path[64], r = 0;

	tp_init(argc, argv);
	if (pipe(to_c) || pipe(from_c) || pthread_create(&c, NULL, thread_c, NULL) ||
	    read(from_c[0], &r, 1) != 1 || r != 'r' || deny(SYS_getppid, E_PPID) ||
	    pthread_create(&a, NULL, thread_a, NULL) ||
	    pthread_create(&b, NULL, thread_b, NULL)) {
		perror("setup");
		return 2;
	}
	wait_stage(1);
	tp_ready();
	tp_wait_go();

	check("main", 1, 0, 0);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid_c);
	tp_check(status_field(path, "Seccomp") == 1, "thread C: Seccomp %ld, want 1",
		 status_field(path, "Seccomp"));
	tp_check(write(to_c[1], "x", 1) == 1 && read(from_c[0], &r, 1) == 1 && r == 'w',
		 "thread C did not answer");
	add_stage(1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return tp_done();
}
