/* subreaper.c - a child re-parented to its subreaper grandparent (its own
 * parent exited) stays the subreaper's child, and the subreaper stays one:
 * an orphan made after the restart comes to it too. */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tp.h"

static pid_t orphan(pid_t *grandchild)
{
	int p[2];
	pid_t mid;

	if (pipe(p))
		return -1;
	mid = fork();
	if (mid == 0) {
		pid_t g = fork();

		if (g == 0) {
			close(p[0]);
			close(p[1]);
			tp_wait_go();
			_exit(7);
		}
		if (write(p[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		_exit(0);	/* its child is now the subreaper's */
	}
	if (read(p[0], grandchild, sizeof(*grandchild)) != sizeof(*grandchild))
		return -1;
	close(p[0]);
	close(p[1]);
	waitpid(mid, NULL, 0);
	return mid;
}

int main(int argc, char **argv)
{
	pid_t g, g2;
	int st = 0, sub = 0;
	char path[64], *line = NULL;
	size_t n = 0;
	FILE *f;

	tp_init(argc, argv);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	orphan(&g);
	tp_ready();
	tp_wait_go();
	prctl(PR_GET_CHILD_SUBREAPER, &sub);
	tp_check(sub == 1, "no longer a child subreaper");
	snprintf(path, sizeof(path), "/proc/%d/stat", g);
	f = fopen(path, "r");
	if (f && getline(&line, &n, f) > 0) {
		char *p = strrchr(line, ')');
		int ppid = p ? atoi(p + 4) : 0;

		tp_check(ppid == getpid(), "the orphan's parent is %d, not us", ppid);
	} else {
		tp_fail("the orphan %d is gone", g);
	}
	if (f)
		fclose(f);
	free(line);
	tp_check(waitpid(g, &st, 0) == g && WIFEXITED(st) && WEXITSTATUS(st) == 7,
		 "the orphan's status came not to us (0x%x)", st);
	orphan(&g2);	/* made after the restart: still ours */
	tp_check(waitpid(g2, &st, 0) == g2, "a new orphan did not come to us");
	return tp_done();
}
