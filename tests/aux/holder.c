/* holder.c - a target for failure tests: holds a resource ckpt cannot
 * save (or none), counts in a loop, and after GOFILE checks that it was
 * left exactly as it was: its counter kept running, its memory intact.
 * usage: holder MODE GOFILE [MiB]
 * MODE: plain iouring netlink thread child clonevm orphansession unixfds
 * unixlog
 * (iouring and netlink: fds of kinds ckpt does not support; unixfds: an
 * fd in flight on a unix socket, which must still be there after;
 * unixlog: a datagram socket connected to the path $CKPT_TEST_LOG, as a
 * syslog client's to /dev/log, which says "before" and after GOFILE
 * "after") 
 * (orphansession: a grandchild re-parented to us, in a session whose
 * leader, its parent, has exited) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <sys/prctl.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
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

static int fds_pair[2] = { -1, -1 };

/* an fd in flight: /dev/null sent with a message over a socketpair */
static void send_fd(void)
{
	int fd = open("/dev/null", O_RDONLY);
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr h; } u;
	struct iovec iov = { "with-fd", 7 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds_pair) || sendmsg(fds_pair[0], &m, 0) != 7)
		exit(3);
	close(fd);
}

/* it is still in flight, with its message, exactly once */
static bool fd_still_there(void)
{
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr h; } u;
	char data[16] = "";
	struct iovec iov = { data, sizeof(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;

	if (recvmsg(fds_pair[1], &m, MSG_DONTWAIT) != 7 || memcmp(data, "with-fd", 7))
		return false;
	c = CMSG_FIRSTHDR(&m);
	return c && c->cmsg_type == SCM_RIGHTS && recv(fds_pair[1], data, 1, MSG_DONTWAIT) < 0;
}

static int log_sk = -1;

static void log_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *path = getenv("CKPT_TEST_LOG");

	log_sk = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (!path || strlen(path) >= sizeof(a.sun_path))
		exit(3);
	memcpy(a.sun_path, path, strlen(path));
	if (connect(log_sk, (struct sockaddr *)&a, sizeof(a)) || send(log_sk, "before", 6, 0) != 6)
		exit(3);
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
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
	else if (!strcmp(argv[1], "unixfds"))
		send_fd();
	else if (!strcmp(argv[1], "unixlog"))
		log_connect();
	else if (!strcmp(argv[1], "clonevm"))
		clone(wait_go_file, (char *)malloc(65536) + 65536,
		      CLONE_VM | SIGCHLD, NULL);
	printf("READY %d\n", getpid());
	while (access(argv[2], F_OK) != 0) {
		counter++;
		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i < len / 8; i++)
		check += mem[i];
	if (log_sk >= 0 && send(log_sk, "after", 5, 0) != 5) {
		printf("FAIL: the log socket: %s\n", strerror(errno));
		return 1;
	}
	if (fds_pair[1] >= 0 && !fd_still_there()) {
		printf("FAIL: the fd in flight is lost\n");
		return 1;
	}
	if (check != sum || counter == 0) {
		printf("FAIL: memory or counter lost\n");
		return 1;
	}
	printf("PASS %lu\n", counter);
	return 0;
}
