/* userns_run.c - run a command as root of a new user namespace whose ids
 * 0..COUNT-1 are the host's BASE..BASE+COUNT-1, as a runtime maps a
 * container's (util-linux's unshare needs newuidmap for that, and loses
 * its capabilities at exec when the host's root is not mapped).
 * usage: userns_run BASE COUNT -- COMMAND... */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void put(pid_t pid, const char *file, const char *text)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(path);
		exit(1);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	int go[2], k = 3, status;
	char map[64], c;
	pid_t pid;

	if (argc < k + 2 || strcmp(argv[k], "--")) {
		fprintf(stderr, "usage: userns_run BASE COUNT -- COMMAND...\n");
		return 2;
	}
	if (pipe(go))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (unshare(CLONE_NEWUSER)) {
			perror("unshare");
			_exit(1);
		}
		/* the parent maps us, then closes its end */
		if (read(go[0], &c, 1) != 0)
			_exit(1);
		if (setresgid(0, 0, 0) || setgroups(0, NULL) || setresuid(0, 0, 0)) {
			perror("becoming the namespace's root");
			_exit(1);
		}
		execvp(argv[k + 1], argv + k + 1);
		perror(argv[k + 1]);
		_exit(127);
	}
	close(go[0]);
	/* the child has unshared once its namespace differs from ours */
	for (int i = 0; i < 1000; i++) {
		char a[64], b[64];
		ssize_t n, m;

		snprintf(map, sizeof(map), "/proc/%d/ns/user", pid);
		n = readlink(map, a, sizeof(a));
		m = readlink("/proc/self/ns/user", b, sizeof(b));
		if (n > 0 && m > 0 && (n != m || memcmp(a, b, n)))
			break;
		usleep(1000);
	}
	snprintf(map, sizeof(map), "0 %s %s\n", argv[1], argv[2]);
	put(pid, "uid_map", map);
	put(pid, "gid_map", map);
	close(go[1]);
	while (waitpid(pid, &status, 0) < 0)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
