/* load.c - a process far past the usual, for bench/load.sh:
 *   load tree N      N processes (the root, N-1 children in a fan of 32)
 *   load threads N   N threads (64 KiB stacks)
 *   load fds N       N open file descriptions (each its own open of a file)
 *   load vmas N      N memory areas (one page each, every other one
 *                    writable, so that none merges with its neighbour)
 *   load sparse G    G GiB of anonymous memory, one page in each MiB written
 * It prints READY once built, and waits for SIGUSR1; then (restored, or
 * not) it checks that what it built is all there, prints PASS or FAIL,
 * and exits (its children too).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t go;
static long n;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void wait_go(void)
{
	sigset_t none;

	sigemptyset(&none);
	while (!go)
		sigsuspend(&none);
}

static int tree(void)
{
	pid_t *kids = calloc(n, sizeof(*kids));
	long made = 0;

	/* a fan of 32 at each level: children fork grandchildren */
	for (long i = 1; i < n && i <= 32; i++) {
		long share = (n - 1) / 32 + ((i - 1) < (n - 1) % 32);
		pid_t p = fork();

		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (long j = 1; j < share; j++)
				if (fork() == 0) {
					prctl(PR_SET_PDEATHSIG, SIGKILL);
					pause();
					_exit(0);
				}
			pause();
			_exit(0);
		}
		kids[made++] = p;
	}
	printf("READY %d\n", getpid());
	fflush(stdout);
	wait_go();
	for (long i = 0; i < made; i++)
		if (kill(kids[i], 0)) {
			printf("FAIL: child %d gone\n", kids[i]);
			fflush(stdout);
			kill(0, SIGKILL);
		}
	printf("PASS %ld processes\n", n);
	fflush(stdout);
	kill(0, SIGKILL);
	return 0;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int threads(void)
{
	pthread_attr_t a;
	char path[64];
	long seen = 0;
	FILE *f;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 << 10);
	for (long i = 1; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &a, sleeper, NULL)) {
			printf("FAIL: thread %ld not made\n", i);
			return 1;
		}
	}
	printf("READY %d\n", getpid());
	fflush(stdout);
	wait_go();
	snprintf(path, sizeof(path), "/proc/%d/status", getpid());
	f = fopen(path, "r");
	while (f && fscanf(f, "Threads: %ld", &seen) != 1 && fscanf(f, "%*[^\n]\n") != EOF)
		;
	if (f)
		fclose(f);
	printf("%s %ld threads\n", seen == n ? "PASS" : "FAIL", seen);
	return seen != n;
}

static int fds(void)
{
	char path[] = "/tmp/ckpt-load-XXXXXX";
	int fd = mkstemp(path), bad = 0;

	if (fd < 0)
		return 1;
	unlink(path);
	for (long i = 1; i < n; i++) {
		/* each its own description, at its own offset */
		int nfd = open("/dev/null", O_RDONLY);

		if (nfd < 0) {
			printf("FAIL: fd %ld: %m\n", i);
			return 1;
		}
		lseek(nfd, i, SEEK_SET);
	}
	printf("READY %d\n", getpid());
	fflush(stdout);
	wait_go();
	for (int i = 3; i < n + 3; i++)
		if (i != fd && fcntl(i, F_GETFD) < 0)
			bad++;
	printf("%s %ld fds (%d missing)\n", bad ? "FAIL" : "PASS", n, bad);
	return bad != 0;
}

static int vmas(void)
{
	long pg = sysconf(_SC_PAGESIZE), bad = 0;
	char *base = mmap(NULL, n * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (base == MAP_FAILED)
		return 1;
	/* every other page writable: no two neighbours merge, n areas */
	for (long i = 1; i < n; i += 2) {
		char *p = base + i * pg;

		if (mprotect(p, pg, PROT_READ | PROT_WRITE)) {
			printf("FAIL: area %ld: %m\n", i);
			return 1;
		}
		*(long *)p = i;
	}
	printf("READY %d\n", getpid());
	fflush(stdout);
	wait_go();
	for (long i = 1; i < n; i += 2)
		bad += *(long *)(base + i * pg) != i;
	printf("%s %ld areas (%ld wrong)\n", bad ? "FAIL" : "PASS", n, bad);
	return bad != 0;
}

static int sparse(void)
{
	size_t len = (size_t)n << 30, mib = 1 << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	long bad = 0;

	if (p == MAP_FAILED)
		return 1;
	for (size_t off = 0; off < len; off += mib)
		*(size_t *)(p + off) = off;
	printf("READY %d\n", getpid());
	fflush(stdout);
	wait_go();
	for (size_t off = 0; off < len; off += mib)
		bad += *(size_t *)(p + off) != off;
	printf("%s %ld GiB (%ld pages wrong)\n", bad ? "FAIL" : "PASS", n, bad);
	return bad != 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	if (argc != 3 || (n = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: %s tree|threads|fds|vmas|sparse N\n", argv[0]);
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	if (!strcmp(argv[1], "tree"))
		return tree();
	if (!strcmp(argv[1], "threads"))
		return threads();
	if (!strcmp(argv[1], "fds"))
		return fds();
	if (!strcmp(argv[1], "vmas"))
		return vmas();
	if (!strcmp(argv[1], "sparse"))
		return sparse();
	return 2;
}
