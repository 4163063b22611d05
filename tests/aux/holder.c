/* holder.c - a target for failure tests: holds a resource ckpt cannot
 * save (or none), counts in a loop, and after GOFILE checks that it was
 * left exactly as it was: its counter kept running, its memory intact.
 * usage: holder MODE GOFILE [MiB]
 * MODE: plain mlock iouring netlink vsock thread child vfork vmsibling orphansession
 *       evfds files lock lease fifo linkeddel deleted futurewrite shmlater
 *       epollring epollgone epolllater unixfds unixlog farjump
 * (iouring and vsock: fds of kinds ckpt does not support; netlink: an
 * unbound NETLINK_ROUTE socket; vfork: we
 * wait in vfork() for our child; vmsibling: two children sharing memory
 * with each other, not with us; evfds: an eventfd, a timerfd and a
 * signalfd, at fds 3, 4, 5)
 * (linkeddel: a file open under a removed name that has another link,
 * not in the removed name's directory;
 * deleted: a deleted file in GOFILE's directory's sub/)
 * (futurewrite: a writable shared mapping of a memfd sealed afterwards
 * with F_SEAL_FUTURE_WRITE; shmlater: shared anonymous memory we map,
 * open as a file only by our child)
 * (epollring: an epoll watching an io_uring; epollgone: an epoll
 * watching a pipe end whose fd we closed, kept open only by a process
 * outside the tree; epolllater: the same, kept open only by our child)
 * (unixfds: an fd in flight on a unix socket, which must still be there
 * after; unixlog: a datagram socket connected to the path $CKPT_TEST_LOG,
 * as a syslog client's to /dev/log, which says "before" and after GOFILE
 * "after")
 * (orphansession: a grandchild re-parented to us, in a session whose
 * leader, its parent, has exited)
 * (files: GOFILE's directory/ro open read-only, .../rw read-write;
 * lock: .../lock open with a flock and a POSIX lock on bytes 10-19;
 * lease: a read lease on .../lease;
 * fifo: FIFO .../fifo open read-write with "data" in it)
 * (mlock: its MiB locked in memory, pages the restored process reads
 * itself, not placed by ckpt)
 * (farjump, 64-bit only: after READY it switches to 32-bit code and
 * sleeps there for good)
 * (seccomp: no_new_privs and a seccomp filter making getppid() fail with
 * ENOTNAM, checked at the end; usernotif: a filter that hands getppid()
 * to a supervisor, SECCOMP_RET_USER_NOTIF, its listener fd open) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
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

/* Epoll @ep watching @fd (and our fd of it closed, if @close_it). */
static void epoll_watching(int ep, int fd, int close_it)
{
	struct epoll_event ev = { .events = EPOLLIN };

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	if (close_it)
		close(fd);
}

/* A pipe read end held by a daemon (not our descendant any more), or
 * (@child) by our child. */
static int pipe_held_by_other(int child)
{
	int p[2];

	if (pipe(p))
		return -1;
	if (fork() == 0) {
		if (child || fork() == 0) {
			while (access(gofile, F_OK) != 0)
				usleep(2000);
			_exit(0);
		}
		_exit(0);
	}
	if (!child) {
		wait(NULL);
		close(p[1]);
	}
	return p[0];
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

static void event_fds(void)
{
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	sigset_t m;
	int t;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	eventfd(5, EFD_SEMAPHORE);
	t = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	timerfd_settime(t, 0, &its, NULL);
	signalfd(-1, &m, 0);
}

/* A file next to GOFILE, opened with @flags; holder exits if it cannot. */
static int open_beside(const char *name, int flags)
{
	char *dup = strdup(gofile), path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dirname(dup), name);
	free(dup);
	fd = open(path, flags | O_CREAT, 0600);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static void hold_locks(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 10, .l_len = 10 };
	int fd = open_beside("lock", O_RDWR);

	if (flock(open_beside("lock", O_RDONLY), LOCK_EX) || fcntl(fd, F_SETLK, &fl)) {
		perror("locking");
		exit(1);
	}
}

/* A file in DIR(gofile)/sub, open after its name is gone; with @link,
 * another name for it remains. */
static void deleted_file(int link_too)
{
	char *copy = strdup(gofile), sub[4096], name[4200], other[4200];
	int fd;

	snprintf(sub, sizeof(sub), "%s/sub", dirname(copy));
	snprintf(name, sizeof(name), "%s/file", sub);
	/* linkeddel's other name is outside sub/: ckpt cannot find it */
	snprintf(other, sizeof(other), "%s/../linkeddel-other", sub);
	mkdir(sub, 0755);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "content", 7) != 7 || (link_too && link(name, other)))
		exit(3);
	unlink(name);
	free(copy);
}

static void future_write(void)
{
	int fd = memfd_create("fw", MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, 4096) ||
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE))
		exit(3);
}

/* shmlater: shared anonymous memory we only map, which our child opens
 * through map_files (once it has, we go on) */
static void shm_open_later(void)
{
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int p[2];
	char c;

	if (m == MAP_FAILED || pipe(p))
		exit(3);
	if (fork() == 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)m, (unsigned long)m + 4096);
		if (open(path, O_RDWR) < 0 || munmap(m, 4096))
			_exit(3);
		(void)!write(p[1], "x", 1);
		for (;;)
			pause();
	}
	if (read(p[0], &c, 1) != 1)
		exit(3);
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
static bool filtered;	/* getppid() must fail with ENOTNAM */

/* getppid() gets @action, everything else is allowed */
static int filter_getppid(uint32_t action, unsigned int flags)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

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
	if (!strcmp(argv[1], "mlock") && mlock(mem, len)) {
		printf("FAIL: mlock: %s\n", strerror(errno));
		return 1;
	}
	if (!strcmp(argv[1], "iouring")) {
		struct io_uring_params p = { 0 };

		syscall(SYS_io_uring_setup, 4, &p);
	} else if (!strcmp(argv[1], "netlink"))
		socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	else if (!strcmp(argv[1], "vsock"))
		socket(AF_VSOCK, SOCK_STREAM, 0);
	else if (!strcmp(argv[1], "thread"))
		pthread_create(&th, NULL, idle, NULL);
	else if (!strcmp(argv[1], "child") && fork() == 0)
		idle(NULL);
	else if (!strcmp(argv[1], "epollring")) {
		struct io_uring_params p = { 0 };
		int ep = epoll_create1(0);	/* a lower fd: dumped first */

		epoll_watching(ep, syscall(SYS_io_uring_setup, 4, &p), 0);
	} else if (!strcmp(argv[1], "epollgone"))
		epoll_watching(epoll_create1(0), pipe_held_by_other(0), 1);
	else if (!strcmp(argv[1], "epolllater"))
		epoll_watching(epoll_create1(0), pipe_held_by_other(1), 1);
	else if (!strcmp(argv[1], "orphansession"))
		orphan_session();
	else if (!strcmp(argv[1], "linkeddel") || !strcmp(argv[1], "deleted"))
		deleted_file(!strcmp(argv[1], "linkeddel"));
	else if (!strcmp(argv[1], "futurewrite"))
		future_write();
	else if (!strcmp(argv[1], "shmlater"))
		shm_open_later();
	else if (!strcmp(argv[1], "files")) {
		open_beside("ro", O_RDONLY);
		open_beside("rw", O_RDWR);
	} else if (!strcmp(argv[1], "lock"))
		hold_locks();
	else if (!strcmp(argv[1], "fifo")) {
		char *dup = strdup(gofile), path[4096];

		snprintf(path, sizeof(path), "%s/fifo", dirname(dup));
		free(dup);
		if (mkfifo(path, 0600) || write(open_beside("fifo", O_RDWR), "data", 4) != 4)
			return 1;
	} else if (!strcmp(argv[1], "lease") &&
		 fcntl(open_beside("lease", O_RDONLY), F_SETLEASE, F_RDLCK))
		return 1;
	else if (!strcmp(argv[1], "unixfds"))
		send_fd();
	else if (!strcmp(argv[1], "unixlog"))
		log_connect();
	else if (!strcmp(argv[1], "evfds"))
		event_fds();
	else if (!strcmp(argv[1], "seccomp")) {
		if (filter_getppid(SECCOMP_RET_ERRNO | ENOTNAM, 0))
			return 1;
		filtered = true;
	} else if (!strcmp(argv[1], "usernotif") &&
		 filter_getppid(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER) < 0)
		return 1;
	else if (!strcmp(argv[1], "vmsibling") && fork() == 0) {
		/* our child and its CLONE_PARENT sibling share their memory,
		 * and neither shares ours */
		clone(wait_go_file, (char *)malloc(65536) + 65536,
		      CLONE_VM | CLONE_PARENT, NULL);
		wait_go_file(NULL);
		_exit(0);
	}
	else if (!strcmp(argv[1], "vfork")) {
		/* READY now: we are about to wait in vfork() for a child that
		 * waits for GOFILE and exits */
		printf("READY %d\n", getpid());
		clone(wait_go_file, (char *)malloc(65536) + 65536,
		      CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
		counter++;
	}
	if (strcmp(argv[1], "vfork"))
		printf("READY %d\n", getpid());
	if (!strcmp(argv[1], "farjump"))
		farjump();
	while (access(argv[2], F_OK) != 0) {
		counter++;
		nanosleep(&ts, NULL);
	}
	if (log_sk >= 0 && send(log_sk, "after", 5, 0) != 5) {
		printf("FAIL: the log socket: %s\n", strerror(errno));
		return 1;
	}
	if (fds_pair[1] >= 0 && !fd_still_there()) {
		printf("FAIL: the fd in flight is lost\n");
		return 1;
	}
	if (filtered && (syscall(SYS_getppid) != -1 || errno != ENOTNAM)) {
		printf("FAIL: getppid() is no longer filtered\n");
		return 1;
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
