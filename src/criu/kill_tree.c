/* kill_tree.c - a restored tree its caller refused (a notification it
 * failed, a pidfile that could not be written): every process of it
 * ends, not only the root, whose children would run on under init.
 * Each is stopped before its children are read, so that none forks
 * behind the walk; then all are killed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "criu.h"

#define MAX_TREE 65536

struct tree {
	pid_t *pid;
	size_t n, cap;
};

static int add(struct tree *t, pid_t pid)
{
	pid_t *p;

	if (t->n == MAX_TREE)
		return -1;
	if (t->n == t->cap) {
		p = realloc(t->pid, (t->cap ? 2 * t->cap : 64) * sizeof(*p));
		if (!p)
			return -1;
		t->pid = p;
		t->cap = t->cap ? 2 * t->cap : 64;
	}
	t->pid[t->n++] = pid;
	return 0;
}

/* @pid's children, through each of its threads */
static void children(struct tree *t, pid_t pid)
{
	char path[64 + 256];	/* and a directory entry's name */
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		FILE *f;
		int kid;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", pid, e->d_name);
		f = fopen(path, "re");
		while (f && fscanf(f, "%d", &kid) == 1)
			if (kid > 0 && !kill(kid, SIGSTOP))
				add(t, kid);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

void criu_kill_tree(pid_t root)
{
	int pidfd = syscall(SYS_pidfd_open, root, 0);
	struct tree t = { 0 };

	/* through a pidfd: the root may have ended and its number gone on */
	if (pidfd < 0 || syscall(SYS_pidfd_send_signal, pidfd, SIGSTOP, NULL, 0) ||
	    add(&t, root)) {
		if (pidfd >= 0)
			syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0), close(pidfd);
		free(t.pid);
		return;
	}
	for (size_t i = 0; i < t.n; i++)
		children(&t, t.pid[i]);
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	for (size_t i = 1; i < t.n; i++)
		kill(t.pid[i], SIGKILL);
	close(pidfd);
	free(t.pid);
}
