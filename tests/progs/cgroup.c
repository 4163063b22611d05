/* cgroup - cgroup membership, the groups and a cgroup namespace.
 *
 * In a named v1 hierarchy of its own (name=ckpt_test, reached through a
 * detached mount, closed while it waits) under T = /ckpt-test.PID: the
 * process in T/a, a thread of it in T/b (v1 threads each have their
 * own), an empty group T/a/empty, T owned by 1000:1000 with mode 0750,
 * T/a's notify_on_release and clone_children set, its notify_on_release
 * owned by 1000 with mode 0600; a child in T/c that made a cgroup
 * namespace there.  Where a v1 pids hierarchy is mounted, the process is
 * in its group /ckpt-test.PID with pids.max 77.  After the restart
 * (tests/cases/cgroup.sh removes the groups in between too: then restart
 * makes them again) each is where it was, with all of the above; then
 * every group is removed again.
 */
#include "tp.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdbool.h>
#include <sys/wait.h>

#define HIER	"name=ckpt_test"

static char top[64];
static int go_pipe[2], back_pipe[2];
static pid_t child;

/* The root of a v1 hierarchy: name=X, or a controller. */
static int hier(const char *what)
{
	int fs = fsopen("cgroup", FSOPEN_CLOEXEC), m = -1;

	if (fs < 0)
		return -1;
	if (!strncmp(what, "name=", 5) ?
	    fsconfig(fs, FSCONFIG_SET_FLAG, "none", NULL, 0) ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "name", what + 5, 0) :
	    fsconfig(fs, FSCONFIG_SET_FLAG, what, NULL, 0))
		goto out;
	if (!fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		m = fsmount(fs, FSMOUNT_CLOEXEC, 0);
out:
	close(fs);
	return m;
}

static int put(int root, const char *file, const char *val)
{
	int fd = openat(root, file, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static void get(int root, const char *file, char *buf, size_t n)
{
	int fd = openat(root, file, O_RDONLY);
	ssize_t got = fd < 0 ? -1 : read(fd, buf, n - 1);

	buf[got < 0 ? 0 : got] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (fd >= 0)
		close(fd);
}

static int join(int root, const char *group, pid_t tid)
{
	char f[128], v[16];

	snprintf(f, sizeof(f), "%s/tasks", group);
	snprintf(v, sizeof(v), "%d", tid);
	return put(root, f, v);
}

/* The group of @tid (0: in the process) in hierarchy @h, as this
 * process's cgroup namespace shows it. */
static void where(pid_t pid, pid_t tid, const char *h, char *out, size_t n)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), tid ? "/proc/%d/task/%d/cgroup" : "/proc/%d/cgroup",
		 pid, tid);
	out[0] = 0;
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = 0;
		if (!strcmp(a + 1, h)) {
			snprintf(out, n, "%s", b + 1);
			out[strcspn(out, "\n")] = 0;
		}
	}
	if (f)
		fclose(f);
}

static bool have_pids(void)
{
	char g[256];

	where(getpid(), 0, "pids", g, sizeof(g));
	return g[0] != 0;
}

static pid_t gettid_(void)
{
	return syscall(SYS_gettid);
}

static pid_t thread_tid;
static pthread_barrier_t bar;

static void *thread_fn(void *arg)
{
	int root = *(int *)arg;
	char g[128];

	thread_tid = gettid_();
	snprintf(g, sizeof(g), "%s/b", top + 1);
	tp_check(join(root, g, thread_tid) == 0, "thread: joining %s: %s", g, strerror(errno));
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);	/* until the checks are done */
	return NULL;
}

/* The child: in T/c, in a cgroup namespace rooted there. */
static void child_main(int root)
{
	char g[128], c;

	snprintf(g, sizeof(g), "%s/c", top + 1);
	if (join(root, g, getpid()) || unshare(CLONE_NEWCGROUP))
		_exit(3);
	close(root);
	c = 1;
	if (write(back_pipe[1], &c, 1) != 1 || read(go_pipe[0], &c, 1) != 1)
		_exit(4);
	where(getpid(), 0, HIER, g, sizeof(g));
	_exit(strcmp(g, "/") ? 5 : 0);
}

static int setup(int root, int pids)
{
	char g[128];
	int ok = 0;

	snprintf(g, sizeof(g), "%s/a", top + 1);
	ok |= mkdirat(root, top + 1, 0700);
	ok |= mkdirat(root, g, 0700);
	snprintf(g, sizeof(g), "%s/a/empty", top + 1);
	ok |= mkdirat(root, g, 0700);
	snprintf(g, sizeof(g), "%s/b", top + 1);
	ok |= mkdirat(root, g, 0700);
	snprintf(g, sizeof(g), "%s/c", top + 1);
	ok |= mkdirat(root, g, 0700);
	snprintf(g, sizeof(g), "%s/a/notify_on_release", top + 1);
	ok |= put(root, g, "1");
	ok |= fchownat(root, g, 1000, 1000, 0) | fchmodat(root, g, 0600, 0);
	snprintf(g, sizeof(g), "%s/a/cgroup.clone_children", top + 1);
	ok |= put(root, g, "1");
	ok |= fchownat(root, top + 1, 1000, 1000, 0) | fchmodat(root, top + 1, 0750, 0);
	snprintf(g, sizeof(g), "%s/a", top + 1);
	ok |= join(root, g, getpid());
	if (pids >= 0) {
		ok |= mkdirat(pids, top + 1, 0755);
		snprintf(g, sizeof(g), "%s/pids.max", top + 1);
		ok |= put(pids, g, "77");
		ok |= join(pids, top + 1, getpid());
	}
	return ok;
}

static void check_file(int root, const char *file, const char *val, uid_t uid,
		       mode_t mode)
{
	struct stat st;
	char buf[64];

	get(root, file, buf, sizeof(buf));
	tp_check(!val || !strcmp(buf, val), "%s reads \"%s\", not %s", file, buf, val);
	tp_check(!fstatat(root, file, &st, 0) && st.st_uid == uid &&
		 (st.st_mode & 07777) == mode, "%s: owner %u mode %o, not %u %o", file,
		 st.st_uid, st.st_mode & 07777, uid, mode);
}

static void check(int root, int pids)
{
	char g[256], want[128];
	struct stat st;
	int status;
	char c = 1;

	where(getpid(), getpid(), HIER, g, sizeof(g));
	snprintf(want, sizeof(want), "%s/a", top);
	tp_check(!strcmp(g, want), "main thread in %s, not %s", g, want);
	where(getpid(), thread_tid, HIER, g, sizeof(g));
	snprintf(want, sizeof(want), "%s/b", top);
	tp_check(!strcmp(g, want), "thread in %s, not %s", g, want);
	where(child, 0, HIER, g, sizeof(g));
	snprintf(want, sizeof(want), "%s/c", top);
	tp_check(!strcmp(g, want), "child in %s, not %s", g, want);
	snprintf(want, sizeof(want), "%s/a/empty", top + 1);
	tp_check(!fstatat(root, want, &st, 0) && S_ISDIR(st.st_mode), "no group %s", want);
	check_file(root, top + 1, NULL, 1000, 0750);
	snprintf(want, sizeof(want), "%s/a/notify_on_release", top + 1);
	check_file(root, want, "1", 1000, 0600);
	snprintf(want, sizeof(want), "%s/a/cgroup.clone_children", top + 1);
	get(root, want, g, sizeof(g));
	tp_check(!strcmp(g, "1"), "%s reads \"%s\"", want, g);
	if (pids >= 0) {
		where(getpid(), 0, "pids", g, sizeof(g));
		tp_check(!strcmp(g, top), "pids: in %s, not %s", g, top);
		snprintf(want, sizeof(want), "%s/pids.max", top + 1);
		get(pids, want, g, sizeof(g));
		tp_check(!strcmp(g, "77"), "%s reads \"%s\"", want, g);
	}
	/* the child checks its own namespace */
	tp_check(write(go_pipe[1], &c, 1) == 1, "waking the child");
	tp_check(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		 !WEXITSTATUS(status), "child: status 0x%x (5: not at its namespace's root)",
		 status);
}

/* Everything back in the roots, every group gone. */
static void cleanup(int root, int pids)
{
	const char *sub[] = { "a/empty", "a", "b", "c", "" };
	char g[128];

	join(root, ".", getpid());
	join(root, ".", thread_tid);
	for (unsigned i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(g, sizeof(g), "%s/%s", top + 1, sub[i]);
		unlinkat(root, g, AT_REMOVEDIR);
	}
	if (pids >= 0) {
		join(pids, ".", getpid());
		join(pids, ".", thread_tid);
		unlinkat(pids, top + 1, AT_REMOVEDIR);
	}
}

int main(int argc, char **argv)
{
	int root, pids = -1;
	pthread_t th;
	char c;

	tp_init(argc, argv);
	snprintf(top, sizeof(top), "/ckpt-test.%d", getpid());
	root = hier(HIER);
	if (root < 0) {
		tp_fail("mounting the hierarchy " HIER ": %s", strerror(errno));
		return tp_done();
	}
	if (have_pids())
		pids = hier("pids");
	if (setup(root, pids)) {
		tp_fail("setting up: %s", strerror(errno));
		cleanup(root, pids);
		return tp_done();
	}
	if (pipe(go_pipe) || pipe(back_pipe))
		return 2;
	child = fork();
	if (child == 0)
		child_main(root);
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&th, NULL, thread_fn, &root);
	pthread_barrier_wait(&bar);
	tp_check(read(back_pipe[0], &c, 1) == 1, "the child did not get ready");
	/* a detached mount is no file ckpt can restore: closed meanwhile */
	close(root);
	if (pids >= 0)
		close(pids);
	tp_ready();
	tp_wait_go();
	root = hier(HIER);
	pids = pids >= 0 ? hier("pids") : -1;
	tp_check(root >= 0, "mounting the hierarchy again: %s", strerror(errno));
	if (root >= 0)
		check(root, pids);
	pthread_barrier_wait(&bar);
	pthread_join(th, NULL);
	if (root >= 0)
		cleanup(root, pids);
	return tp_done();
}
