/* holder.c - a target for failure tests: holds a resource ckpt cannot
 * save (or none), counts in a loop, and after GOFILE checks that it was
 * left exactly as it was: its counter kept running, its memory intact.
 * usage: holder MODE GOFILE [MiB]
 * MODE: plain iouring netlink thread child clonevm orphansession farjump
 * (iouring and netlink: fds of kinds ckpt does not support)
 * (orphansession: a grandchild re-parented to us, in a session whose
 * leader, its parent, has exited)
 * (farjump, 64-bit only: after READY it switches to 32-bit code and
 * sleeps there for good) */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *gofile;

/* a child sharing our memory (as after vfork): gone once the test is over */
static int wait_go_file(void *arg)
{
	(void)arg;
	while (access(gofile, F_OK) != 0)
		usleep(2000);
	return 0;
}

static void orphan_session(void)
{
	pid_t leader;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	leader = fork();
	if (leader == 0) {
		setsid();
		if (fork() == 0) {
			wait_go_file(NULL);	/* waits for GOFILE */
			_exit(0);
		}
		_exit(0);
	}
	waitpid(leader, NULL, 0);
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A 64-bit program that far-jumps to 32-bit code (cs 0x23) and loops
 * there in pause() through int $0x80. */
static void farjump(void)
{
#ifdef __x86_64__
	static const unsigned char code[] = {
		0xb8, 29, 0, 0, 0,	/* mov $29 (pause), %eax */
		0xcd, 0x80,		/* int $0x80 */
		0xeb, 0xf7,		/* jmp back */
	};
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	if (p == MAP_FAILED)
		exit(2);
	memcpy(p, code, sizeof(code));
	__asm__ volatile("pushq $0x23\n\tpushq %0\n\tlretq" : : "r"((uint64_t)p) : "memory");
#endif
	exit(2);
}

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	size_t mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 1;
	size_t len = mib << 20;
	uint64_t *mem, sum = 0, check = 0;
	volatile unsigned long counter = 0;
	pthread_t th;

	if (argc < 3)
		return 2;
	gofile = argv[2];
	setvbuf(stdout, NULL, _IONBF, 0);
	mem = malloc(len);
	for (size_t i = 0; i < len / 8; i++)
		sum += mem[i] = i * 0x9e3779b97f4a7c15ULL;
	if (!strcmp(argv[1], "iouring")) {
		struct io_uring_params p = { 0 };

		syscall(SYS_io_uring_setup, 4, &p);
	} else if (!strcmp(argv[1], "netlink"))
		socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	else if (!strcmp(argv[1], "thread"))
		pthread_create(&th, NULL, idle, NULL);
	else if (!strcmp(argv[1], "child") && fork() == 0)
		idle(NULL);
	else if (!strcmp(argv[1], "orphansession"))
		orphan_session();
	else if (!strcmp(argv[1], "clonevm"))
		clone(wait_go_file, (char *)malloc(65536) + 65536,
		      CLONE_VM | SIGCHLD, NULL);
	printf("READY %d\n", getpid());
	if (!strcmp(argv[1], "farjump"))
		farjump();
	while (access(argv[2], F_OK) != 0) {
		counter++;
		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i < len / 8; i++)
		check += mem[i];
	if (check != sum || counter == 0) {
		printf("FAIL: memory or counter lost\n");
		return 1;
	}
	printf("PASS %lu\n", counter);
	return 0;
}
