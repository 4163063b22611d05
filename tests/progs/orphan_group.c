/* orphan_group.c - processes in a process group whose leader has exited:
 * after restart they are still in that group (ckpt stands a helper with
 * the leader's pid in for a moment), and a signal to the group reaches
 * each of them. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tp.h"

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got = 1;
}

static void member(pid_t pgid)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	tp_wait_go();
	if (getpgid(0) != pgid)
		_exit(2);
	for (int i = 0; i < 2000 && !got; i++)
		nanosleep(&ts, NULL);
	_exit(got ? 0 : 3);
}

int main(int argc, char **argv)
{
	pid_t leader, m[2];
	int p[2], st;

	tp_init(argc, argv);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGUSR1, on_usr1);
	if (pipe(p))
		return 1;
	leader = fork();
	if (leader == 0) {
		setpgid(0, 0);
		for (int i = 0; i < 2; i++) {
			pid_t k = fork();

			if (k == 0) {
				close(p[0]);
				close(p[1]);
				member(getpgid(0));
			}
			if (write(p[1], &k, sizeof(k)) != sizeof(k))
				_exit(1);
		}
		_exit(0);	/* the group lives on without its leader */
	}
	/* two writes: a read may return the first alone */
	for (size_t got = 0; got < sizeof(m);) {
		ssize_t n = read(p[0], (char *)m + got, sizeof(m) - got);

		if (n <= 0)
			return 1;
		got += n;
	}
	close(p[0]);
	close(p[1]);
	waitpid(leader, NULL, 0);
	signal(SIGUSR1, SIG_IGN);
	tp_ready();
	tp_wait_go();
	usleep(50 * 1000);	/* the members are checking their group */
	tp_check(kill(-leader, SIGUSR1) == 0, "no process group %d any more", leader);
	for (int i = 0; i < 2; i++)
		tp_check(waitpid(m[i], &st, 0) == m[i] && WIFEXITED(st) && !WEXITSTATUS(st),
			 "member %d: status 0x%x (2: wrong group, 3: no signal)", m[i], st);
	return tp_done();
}
