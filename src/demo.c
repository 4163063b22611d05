/* demo.c - `ckpt demo`: the whole story on a terminal.  A workload counts
 * and keeps a running checksum; it is checkpointed, killed, restarted
 * from its image, and carries on from where it stopped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "cli.h"

#define DEMO_STEPS	30

int demo_workload(void)
{
	struct timespec ts = { 0, 150 * 1000 * 1000 };
	uint64_t sum = 0;
	/* state in the heap that only a faithful restore keeps */
	uint64_t *hist = calloc(DEMO_STEPS + 1, sizeof(*hist));

	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = 1; i <= DEMO_STEPS; i++) {
		sum = sum * 6364136223846793005ULL + i;
		hist[i] = sum;
		printf("  [workload pid %d] step %2d/%d  checksum %016llx\n",
		       getpid(), i, DEMO_STEPS, (unsigned long long)sum);
		nanosleep(&ts, NULL);
	}
	for (int i = 1; i <= DEMO_STEPS; i++)
		if (hist[i] == 0)
			return 1;
	free(hist);
	printf("  [workload pid %d] finished all %d steps, history intact\n",
	       getpid(), DEMO_STEPS);
	return 0;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("\033[1mckpt demo:\033[0m ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

int cmd_demo(const char *self)
{
	char img[] = "/tmp/ckpt-demo-XXXXXX";
	struct timespec ts = { 1, 200 * 1000 * 1000 };
	struct ckpt_result r = { 0 };
	struct stat st;
	int fd, status, ret;
	pid_t pid;

	fd = mkstemp(img);
	if (fd < 0) {
		perror("ckpt demo: mkstemp");
		return 1;
	}
	say("starting a workload that counts to %d and keeps a checksum", DEMO_STEPS);
	pid = fork();
	if (pid == 0) {
		/* only stdio: whatever else we hold is not the workload's */
		syscall(SYS_close_range, 3, ~0U, 0);
		execl("/proc/self/exe", self, "__demo_workload", (char *)NULL);
		_exit(127);
	}
	nanosleep(&ts, NULL);
	say("checkpointing pid %d into %s and killing it", pid, img);
	ret = ckpt_checkpoint_r(pid, fd, CKPT_KILL, -1, &r);
	if (ret) {
		say("checkpoint failed: %s", r.msg);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	fstat(fd, &st);
	say("pid %d is gone (%s); its image holds %lld KiB", pid,
	    kill(pid, 0) ? "killed" : "still there?", (long long)st.st_size / 1024);
	ts.tv_sec = 1;
	ts.tv_nsec = 0;
	nanosleep(&ts, NULL);
	say("restarting it from the image...");
	lseek(fd, 0, SEEK_SET);
	ret = ckpt_restart_r(0, fd, 0, -1, &r);
	close(fd);
	if (ret < 0) {
		say("restart failed: %s", r.msg);
		unlink(img);
		return 1;
	}
	say("pid %d is back and carries on:", ret);
	waitpid(ret, &status, 0);
	unlink(img);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		say("the restored workload finished normally: same pid, same memory, same terminal");
		return 0;
	}
	say("the restored workload failed (status 0x%x)", status);
	return 1;
}
