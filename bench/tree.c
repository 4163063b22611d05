/* tree.c - the process tree and the multi-threaded process that tree.sh
 * checkpoints and restarts.
 *
 *   tree procs   N READY GO DONE RESULT    a root and N-1 forked children
 *   tree threads N READY GO DONE RESULT    one process, N threads in all
 *
 * No extra memory: every process (procs) or thread (threads) is the same
 * minimal loop that polls for the file GO every 2 ms with stat(2) and
 * nanosleep(2).  The root (procs) or main thread (threads) is one of the
 * N: it forks the N-1 children (or creates the N-1 other threads), then
 * writes READY and polls like the others.  `procs 1` is a single tiny
 * process: the baseline.
 *
 * When one of them sees GO it appends one line to RESULT (O_APPEND, one
 * write(2), so lines never mix):
 *
 *   TID GO_NS
 *
 * TID is its gettid() (= its pid in procs mode) and GO_NS the
 * CLOCK_REALTIME ns at which it first saw GO, the clock of bash's
 * $EPOCHREALTIME.  It then polls for DONE every 20 ms, so that exits do
 * not compete with the ones still waking up; tree.sh creates DONE once
 * all N have reported.  Then the children exit (reaped by the root) and
 * the other threads end (joined by the main thread), and the root exits.
 * Exit status 0, 2 on a usage or system error.  stdio is left as given;
 * every other descriptor is closed, since ckpt refuses unsupported kinds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *go_path, *done_path, *result_path;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wait_for(const char *path, long ms)
{
	const struct timespec poll = { 0, ms * 1000 * 1000 };
	struct stat st;

	while (stat(path, &st) != 0)
		nanosleep(&poll, NULL);
}

/* the loop every process or thread runs: wait for GO, report, wait for DONE */
static void *member(void *arg)
{
	char line[64];
	uint64_t go_ns;
	int fd, len;

	(void)arg;
	wait_for(go_path, 2);
	go_ns = now_ns();
	len = snprintf(line, sizeof(line), "%d %llu\n", (int)gettid(),
		       (unsigned long long)go_ns);
	fd = open(result_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, len) != len || close(fd)) {
		fprintf(stderr, "tree: %d: writing %s: %s\n", (int)gettid(),
			result_path, strerror(errno));
		_exit(2);
	}
	wait_for(done_path, 20);
	return NULL;
}

static void put_file(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "tree: writing %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	char line[32];
	long n, i;
	int threads;

	if (argc != 7 || (strcmp(argv[1], "procs") && strcmp(argv[1], "threads")) ||
	    (n = atol(argv[2])) < 1 || n > 10000) {
		fprintf(stderr, "usage: tree procs|threads N READY GO DONE RESULT\n");
		return 2;
	}
	threads = !strcmp(argv[1], "threads");
	go_path = argv[4];
	done_path = argv[5];
	result_path = argv[6];
	/* only stdio: a stray inherited descriptor (a pipe of whatever ran
	 * tree.sh) would make the checkpoint refuse the process */
	close_range(3, ~0u, 0);

	if (threads) {
		pthread_t *t = calloc(n, sizeof(*t));
		int e;

		for (i = 1; i < n; i++) {
			e = t ? pthread_create(&t[i], NULL, member, NULL) : ENOMEM;
			if (e) {
				fprintf(stderr, "tree: pthread_create: %s\n", strerror(e));
				_exit(2);	/* ends every thread */
			}
		}
		snprintf(line, sizeof(line), "%d\n", (int)getpid());
		put_file(argv[3], line);
		member(NULL);
		for (i = 1; i < n; i++)
			pthread_join(t[i], NULL);
		return 0;
	}

	pid_t *kids = calloc(n, sizeof(*kids));

	for (i = 1; i < n; i++) {
		pid_t pid = kids ? fork() : -1;

		if (pid == 0) {
			member(NULL);
			_exit(0);
		}
		if (pid < 0) {
			fprintf(stderr, "tree: fork: %s\n", strerror(errno));
			while (--i >= 1) {	/* leave no orphans behind */
				kill(kids[i], SIGKILL);
				waitpid(kids[i], NULL, 0);
			}
			return 2;
		}
		kids[i] = pid;
	}
	snprintf(line, sizeof(line), "%d\n", (int)getpid());
	put_file(argv[3], line);
	member(NULL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return 0;
}
