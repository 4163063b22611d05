/* locks.c - file locks of every kind, held by two processes, and an fd
 * owner (F_SETOWN_EX/F_SETSIG).
 *
 * The parent holds, on one file: a POSIX write lock on bytes 10-19 and a
 * POSIX read lock from 100 to the end (through fd p), a flock LOCK_SH
 * through a description it shares with the child, and an OFD write lock
 * on bytes 50-59 (through description o).  The child holds its own POSIX
 * write lock on bytes 30-39.  After restart a new process, forked to see
 * them from outside, must find every lock with its holder, and nothing
 * else locked; fd p must still name its owner and signal, fd o a thread
 * of the parent as its owner.  A fresh process holds no locks at all.
 */
#include "tp.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>

static char dir[4096], path[4200];
static volatile pid_t thread_tid;

static void *idle(void *arg)
{
	(void)arg;
	thread_tid = gettid();
	for (;;)
		pause();
	return NULL;
}

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static int xopen(int flags)
{
	int fd = open(path, flags | O_CREAT, 0600);

	if (fd < 0) {
		tp_fail("setup: open %s: %s", path, strerror(errno));
		exit(1);
	}
	return fd;
}

static int lock(int fd, int cmd, int type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl);
}

/* Who holds a lock conflicting with a write lock on the range (0: none,
 * -1: an OFD lock, else the pid). */
static int holder(int fd, int cmd, off_t start, off_t len, short *type)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };

	if (fcntl(fd, cmd, &fl))
		return -2;
	*type = fl.l_type;
	return fl.l_type == F_UNLCK ? 0 : fl.l_pid;
}

/* Run in a process of its own, outside the restored ones. */
static int look(pid_t parent, pid_t kid)
{
	int fd = xopen(O_RDWR), other = xopen(O_RDONLY), h;
	short type = F_UNLCK;

	h = holder(fd, F_GETLK, 10, 10, &type);
	tp_check(h == parent && type == F_WRLCK, "bytes 10-19: holder %d type %d, want %d write",
		 h, type, parent);
	h = holder(fd, F_GETLK, 100, 1000, &type);
	tp_check(h == parent && type == F_RDLCK, "bytes 100-1099: holder %d type %d, want %d read",
		 h, type, parent);
	h = holder(fd, F_GETLK, 30, 10, &type);
	tp_check(h == kid && type == F_WRLCK, "bytes 30-39: holder %d, want the child %d", h, kid);
	h = holder(fd, F_OFD_GETLK, 50, 10, &type);
	tp_check(h == -1 && type == F_WRLCK, "bytes 50-59: holder %d type %d, want an OFD write lock",
		 h, type);
	h = holder(fd, F_OFD_GETLK, 0, 10, &type);
	tp_check(h == 0, "bytes 0-9 locked by %d", h);
	h = holder(fd, F_OFD_GETLK, 60, 30, &type);
	tp_check(h == 0, "bytes 60-89 locked by %d", h);
	errno = 0;
	tp_check(flock(other, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK,
		 "flock LOCK_EX: %s, want EWOULDBLOCK (no shared flock held)", strerror(errno));
	tp_check(flock(other, LOCK_SH | LOCK_NB) == 0, "flock LOCK_SH: %s", strerror(errno));
	return tp_failures ? 1 : 0;
}

static int child(void)
{
	int fd = xopen(O_RDWR);

	if (lock(fd, F_SETLK, F_WRLCK, 30, 10))
		tp_fail("child: lock: %s", strerror(errno));
	printf("child locked\n");
	tp_wait_go();
	pause();	/* killed by the parent when it is done */
	return 0;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TP_TMPDIR");
	struct f_owner_ex ow = { F_OWNER_PID, 0 };
	int p, sh, o, st;
	pid_t kid, looker;
	pthread_t th;

	tp_init(argc, argv);
	snprintf(dir, sizeof(dir), "%s/ckpt-locks-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		tp_fail("setup: mkdtemp: %s", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/file", dir);
	atexit(cleanup);
	p = xopen(O_RDWR);
	sh = xopen(O_RDONLY);
	o = xopen(O_RDWR);
	if (lock(p, F_SETLK, F_WRLCK, 10, 10) || lock(p, F_SETLK, F_RDLCK, 100, 0) ||
	    flock(sh, LOCK_SH) || lock(o, F_OFD_SETLK, F_WRLCK, 50, 10))
		tp_fail("setup: locking: %s", strerror(errno));
	ow.pid = getpid();
	if (fcntl(p, F_SETOWN_EX, &ow) || fcntl(p, F_SETSIG, SIGUSR2))
		tp_fail("setup: F_SETOWN_EX/F_SETSIG: %s", strerror(errno));
	kid = fork();
	if (kid == 0)
		return child();
	pthread_create(&th, NULL, idle, NULL);
	while (!thread_tid)
		usleep(1000);
	ow = (struct f_owner_ex){ F_OWNER_TID, thread_tid };
	if (fcntl(o, F_SETOWN_EX, &ow))
		tp_fail("setup: F_SETOWN_EX thread: %s", strerror(errno));
	for (int i = 0; i < 1000; i++) {	/* the child's lock is taken */
		short type;

		if (holder(o, F_GETLK, 30, 10, &type) == kid)
			break;
		usleep(1000);
	}
	if (tp_failures)
		return 1;

	tp_ready();
	tp_wait_go();

	memset(&ow, 0, sizeof(ow));
	tp_check(fcntl(p, F_GETOWN_EX, &ow) == 0 && ow.type == F_OWNER_PID &&
		 ow.pid == getpid(), "F_GETOWN_EX: type %d pid %d, want %d %d", ow.type,
		 ow.pid, F_OWNER_PID, getpid());
	memset(&ow, 0, sizeof(ow));
	tp_check(fcntl(o, F_GETOWN_EX, &ow) == 0 && ow.type == F_OWNER_TID &&
		 ow.pid == thread_tid, "F_GETOWN_EX of fd %d: type %d pid %d, want thread %d",
		 o, ow.type, ow.pid, thread_tid);
	tp_check(fcntl(p, F_GETSIG) == SIGUSR2, "F_GETSIG %d, want %d", fcntl(p, F_GETSIG),
		 SIGUSR2);
	looker = fork();
	if (looker == 0)
		_exit(look(getppid(), kid));
	tp_check(waitpid(looker, &st, 0) == looker && WIFEXITED(st) && !WEXITSTATUS(st),
		 "the locks are not as they were (status %#x)", st);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	return tp_done();
}
