/* clone_vm.c - a child process cloned with CLONE_VM|CLONE_SIGHAND (not a
 * thread: its own pid, fd table and exit signal) still shares the memory
 * and the signal handlers with its parent after restart: a mapping the
 * child makes and a handler it installs are the parent's too. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "tp.h"

static volatile int flag;
static volatile int *volatile made;	/* mapped by the child after restart */
static volatile long before = 0x1234;

static void on_usr2(int sig)
{
	(void)sig;
}

static void wait_flag(int v)
{
	struct timespec ts = { 0, 1000 * 1000 };

	for (int i = 0; i < 5000 && flag != v; i++)
		nanosleep(&ts, NULL);
}

static int child(void *arg)
{
	struct sigaction sa = { .sa_handler = on_usr2 };
	int *p;

	(void)arg;
	tp_wait_go();
	if (before != 0x5678)
		return 3;	/* the parent's write before the checkpoint */
	sigaction(SIGUSR2, &sa, NULL);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 4;
	*p = 42;
	made = p;
	flag = 1;
	wait_flag(2);
	return flag == 2 ? 0 : 5;
}

int main(int argc, char **argv)
{
	char *stack = malloc(1 << 16);
	struct sigaction old;
	pid_t pid;
	int st;

	tp_init(argc, argv);
	pid = clone(child, stack + (1 << 16), CLONE_VM | CLONE_SIGHAND | SIGCHLD, NULL);
	if (pid < 0) {
		perror("clone");
		return 1;
	}
	before = 0x5678;
	sleep(1);
	tp_ready();
	tp_wait_go();
	wait_flag(1);
	tp_check(flag == 1, "the child's write did not reach the parent: memory not shared");
	tp_check(made && *made == 42, "the child's new mapping is not the parent's");
	sigaction(SIGUSR2, NULL, &old);
	tp_check(old.sa_handler == on_usr2,
		 "the child's signal handler is not the parent's: handlers not shared");
	flag = 2;
	tp_check(waitpid(pid, &st, __WALL) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the child failed (0x%x)", st);
	return tp_done();
}
