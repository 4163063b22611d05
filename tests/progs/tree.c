/* tree.c - a process tree: children and grandchildren with their parent
 * links, a child that leads its own session, a grandchild in its own
 * process group, zombies whose status (an exit code, death by SIGKILL)
 * their parent reaps after the restart, and a file description all of
 * them share (one offset). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "tp.h"

static int shared_fd;

/* Each process checks its own links and writes one line through the
 * shared description, then waits for its children. */
static int check_self(pid_t want_ppid, int want_pgid_self, int want_sid_self,
		      const char *tag)
{
	char line[64];
	int bad = 0;

	if (getppid() != want_ppid) {
		printf("FAIL: %s: parent %d, want %d\n", tag, getppid(), want_ppid);
		bad = 1;
	}
	if (want_pgid_self && getpgid(0) != getpid()) {
		printf("FAIL: %s: not its group's leader\n", tag);
		bad = 1;
	}
	if (want_sid_self && getsid(0) != getpid()) {
		printf("FAIL: %s: not its session's leader\n", tag);
		bad = 1;
	}
	snprintf(line, sizeof(line), "%s\n", tag);
	if (write(shared_fd, line, strlen(line)) != (ssize_t)strlen(line))
		bad = 1;
	return bad;
}

static int wait_children(int n)
{
	int bad = 0, st;

	for (int i = 0; i < n; i++)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	return bad;
}

static void grandchild(pid_t parent, int own_group, const char *tag)
{
	if (own_group)
		setpgid(0, 0);
	tp_wait_go();
	_exit(check_self(parent, own_group, 0, tag));
}

static void child(int i)
{
	pid_t me = getpid(), parent = getppid();
	char tag[32];

	if (i == 1)
		setsid();
	for (int j = 0; j < 2; j++) {
		snprintf(tag, sizeof(tag), "grandchild-%d-%d", i, j);
		if (fork() == 0)
			grandchild(me, i == 0 && j == 1, tag);
	}
	tp_wait_go();
	snprintf(tag, sizeof(tag), "child-%d", i);
	_exit(check_self(parent, i == 1, i == 1, tag) | wait_children(2));
}

int main(int argc, char **argv)
{
	char path[4096], buf[4096];
	pid_t zombie, killed;
	int st, n;

	tp_init(argc, argv);
	snprintf(path, sizeof(path), "%s/tree.log", getenv("TP_TMPDIR") ?: "/tmp");
	shared_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 3; i++)
		if (fork() == 0)
			child(i);
	zombie = fork();
	if (zombie == 0)
		_exit(42);
	killed = fork();
	if (killed == 0)
		for (;;)
			pause();
	kill(killed, SIGKILL);
	while (waitid(P_PID, zombie, NULL, WEXITED | WNOWAIT) < 0 ||
	       waitid(P_PID, killed, NULL, WEXITED | WNOWAIT) < 0)
		;	/* they are zombies now, and stay so */
	sleep(1);	/* every process sits in tp_wait_go() */
	tp_ready();
	tp_wait_go();
	tp_check(waitpid(zombie, &st, 0) == zombie && WIFEXITED(st) &&
		 WEXITSTATUS(st) == 42, "the zombie's status 42 was lost (0x%x)", st);
	tp_check(waitpid(killed, &st, 0) == killed && WIFSIGNALED(st) &&
		 WTERMSIG(st) == SIGKILL, "the zombie killed by SIGKILL has status 0x%x", st);
	tp_check(!wait_children(3), "a child or grandchild failed");
	tp_check(!check_self(getppid(), 0, 0, "root"), "root");
	/* ten lines through one description: one offset, no line lost */
	n = pread(shared_fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	tp_check(lseek(shared_fd, 0, SEEK_CUR) == n && n > 0,
		 "the shared offset is not shared (%ld of %d)",
		 (long)lseek(shared_fd, 0, SEEK_CUR), n);
	n = 0;
	for (char *p = buf; (p = strchr(p, '\n')); p++)
		n++;
	tp_check(n == 10, "%d lines through the shared description, want 10", n);
	unlink(path);
	return tp_done();
}
