/* uselib.c - a program of a library user, built by the install test
 * against the installed libckpt (pkg-config), not by the Makefile: what
 * ckpt.h promises beyond the ckpt(3) example.
 * usage: uselib version            the header's version
 *        uselib info [--json] IMG  ckpt_info() on IMG; exit 0, or 1 and
 *                                  "info: -ERRNO" on stderr
 *        uselib pidns IMG          ckpt_restart() with CKPT_PIDNS, then
 *                                  wait for init: exit with its status
 */
#define _GNU_SOURCE
#include <ckpt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int info(const char *img, unsigned long flags)
{
	int fd = open(img, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0) {
		perror(img);
		return 2;
	}
	ret = ckpt_info(fd, flags, stdout, 2);
	fflush(stdout);
	close(fd);
	if (ret) {
		fprintf(stderr, "info: %d\n", ret);
		return 1;
	}
	return 0;
}

static int pidns(const char *img)
{
	struct ckpt_result r = { 0 };
	int fd = open(img, O_RDONLY | O_CLOEXEC), status;
	pid_t init;

	if (fd < 0) {
		perror(img);
		return 2;
	}
	init = ckpt_restart_r(0, fd, CKPT_PIDNS, 2, &r);
	close(fd);
	if (init < 0) {
		fprintf(stderr, "restart failed: %s (%s)\n", r.msg, strerror(-init));
		return 125;
	}
	/* the root is init's child, not ours, and outside has its own pid */
	if (r.pid <= 0 || r.pid == init || getpgid(r.pid) < 0) {
		fprintf(stderr, "init %d, but root %d\n", init, r.pid);
		return 3;
	}
	printf("init %d root %d\n", init, r.pid);
	fflush(stdout);
	while (waitpid(init, &status, 0) < 0)
		if (errno != EINTR)
			return 4;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "version"))
		return puts(CKPT_VERSION_STRING) < 0;
	if (argc == 3 && !strcmp(argv[1], "info"))
		return info(argv[2], 0);
	if (argc == 4 && !strcmp(argv[1], "info") && !strcmp(argv[2], "--json"))
		return info(argv[3], CKPT_INFO_JSON);
	if (argc == 3 && !strcmp(argv[1], "pidns"))
		return pidns(argv[2]);
	fprintf(stderr, "usage: uselib version | info [--json] IMG | pidns IMG\n");
	return 2;
}
