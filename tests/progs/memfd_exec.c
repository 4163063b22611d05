/* memfd_exec.c - a memfd written through its own (writable) fd can still
 * be executed after the restart: the restored fd is the memfd's own
 * description, not a reopened writer (execveat would fail ETXTBSY).  A
 * read-only reopen and two mappings of it come along. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tp.h"

static const char script[] = "#!/bin/sh\nexit 7\n";

/* Runs the memfd as a program: its exit status, or -errno of execveat. */
static int run(int fd)
{
	int p[2], st, err = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "memfd", NULL }, *envp[] = { NULL };

		syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
		err = errno;
		(void)!write(p[1], &err, sizeof(err));
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &err, sizeof(err)) != sizeof(err))
		err = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return err ? -err : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(int argc, char **argv)
{
	char path[64], *priv, *shared;
	int fd, ro;

	tp_init(argc, argv);
	fd = memfd_create("exec", 0);
	if (fd < 0 || write(fd, script, sizeof(script) - 1) != sizeof(script) - 1)
		return printf("FAIL: memfd: %s\n", strerror(errno)), 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY);
	priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0);
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ro < 0 || priv == MAP_FAILED || shared == MAP_FAILED)
		return printf("FAIL: setup: %s\n", strerror(errno)), 1;
	if (run(fd) != 7)
		return printf("FAIL: execveat before: %d\n", run(fd)), 1;
	tp_ready();
	tp_wait_go();
	int rc = run(fd);

	tp_check(rc == 7, "execveat of the memfd after restart: %d (%s)", rc,
		 rc < 0 ? strerror(-rc) : "status");
	tp_check(fcntl(fd, F_GETFL) & O_RDWR, "the memfd's fd is not read-write");
	tp_check(!memcmp(shared, script, 8) && !memcmp(priv, script, 8),
		 "mappings lost the content");
	return tp_done();
}
