/* epoll.c - epoll instances survive, with every registration's mask and
 * data, and sleepers in epoll_wait wake after restart.
 *
 * Epoll E watches pipe read ends:
 *   A  level-triggered EPOLLIN, data in it at checkpoint: reported again.
 *   B  EPOLLET, empty: one event per write after restart.
 *   C  EPOLLONESHOT, fired before the checkpoint (disarmed): silent after
 *      restart though data waits, until EPOLL_CTL_MOD re-arms it by fd.
 *   D  the write end of a pipe, EPOLLOUT|EPOLLEXCLUSIVE.
 *   F  registered under fd FK, a dup that was then closed: the
 *      registration lives on under the old number.
 *   G, H  both registered under fd GK: G through a dup there, closed,
 *      then H dup'ed there and registered too; GK is H's at checkpoint.
 *   I  registered under fd IK, a dup closed since, and IK now holds
 *      /dev/null (close-on-exec), which must be back there after restart.
 * The child's own epoll Q2 watches J's read end, which only the parent
 * holds (the child closed its copy): restored from the parent's.
 * Epoll N watches E (nested).  A child process shares E and the pipes
 * (it writes B's pipe after restart) and sleeps in epoll_wait on its
 * own epoll Q; a thread of ours sleeps in epoll_wait on epoll T.  Both
 * wake on the writes after restart; epoll_wait may return EINTR once,
 * as after a stop signal (man 7 signal), which they retry.
 */
#include "tp.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define FK 40
#define GK 41
#define IK 42

enum { A, B, C, D, F, G, H, I, J, TH, CH, NPIPES };
static int p[NPIPES][2];
static int ep, nest, th_ep;

struct sleeper {
	uint64_t data;
	int eintr, ret;
};

/* epoll_wait until an event, retrying EINTR; the event's data. */
static struct sleeper sleep_in_epoll(int efd)
{
	struct sleeper s = { 0 };
	struct epoll_event ev;

	for (;;) {
		s.ret = epoll_wait(efd, &ev, 1, 30000);
		if (s.ret < 0 && errno == EINTR && s.eintr++ < 5)
			continue;
		break;
	}
	if (s.ret == 1)
		s.data = ev.data.u64;
	return s;
}

static void *thread_main(void *arg)
{
	*(struct sleeper *)arg = sleep_in_epoll(th_ep);
	return NULL;
}

static int ctl(int efd, int op, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(efd, op, fd, &ev);
}

static int mkepoll(int fd, uint32_t events, uint64_t data)
{
	int e = epoll_create1(EPOLL_CLOEXEC);

	if (e < 0 || ctl(e, EPOLL_CTL_ADD, fd, events, data))
		exit(3);
	return e;
}

/* The events epoll_wait(timeout 0) gives: their data, or'ed as bits. */
static int ready(int efd, uint64_t want_data, uint32_t *events)
{
	struct epoll_event ev[16];
	int n = epoll_wait(efd, ev, 16, 0), hit = 0;

	for (int i = 0; i < n; i++)
		if (ev[i].data.u64 == want_data) {
			hit++;
			if (events)
				*events = ev[i].events;
		}
	return hit;
}

static void child(void)
{
	int q = mkepoll(p[CH][0], EPOLLIN, 0xc41d), q2 = mkepoll(p[J][0], EPOLLIN, 0x1a);
	struct sleeper s;
	char c;

	close(p[J][0]);
	close(p[J][1]);

	s = sleep_in_epoll(q);
	if (s.ret != 1 || s.data != 0xc41d) {
		printf("FAIL: child: epoll_wait %d, data %#llx, %d EINTR\n", s.ret,
		       (unsigned long long)s.data, s.eintr);
		_exit(1);
	}
	printf("# child: epoll_wait returned EINTR %d times\n", s.eintr);
	if (ready(q2, 0x1a, NULL) != 1) {
		printf("FAIL: child: its epoll of the parent's pipe J saw nothing\n");
		_exit(1);
	}
	if (read(p[CH][0], &c, 1) != 1 || write(p[B][1], "b", 1) != 1)
		_exit(1);
	_exit(0);
}

static void setup(void)
{
	char c;
	int n;

	for (int i = 0; i < NPIPES; i++)
		if (pipe2(p[i], O_CLOEXEC))
			exit(3);
	ep = epoll_create1(0);
	if (ep < 0 ||
	    ctl(ep, EPOLL_CTL_ADD, p[A][0], EPOLLIN, 0x1111222233334444ULL) ||
	    ctl(ep, EPOLL_CTL_ADD, p[B][0], EPOLLIN | EPOLLET, 0xbb) ||
	    ctl(ep, EPOLL_CTL_ADD, p[C][0], EPOLLIN | EPOLLONESHOT, 0xcc) ||
	    ctl(ep, EPOLL_CTL_ADD, p[D][1], EPOLLOUT | EPOLLEXCLUSIVE, 0xdd) ||
	    dup2(p[F][0], FK) != FK ||
	    ctl(ep, EPOLL_CTL_ADD, FK, EPOLLIN | EPOLLRDHUP, 0xff) || close(FK))
		exit(3);
	if (dup2(p[G][0], GK) != GK || ctl(ep, EPOLL_CTL_ADD, GK, EPOLLIN, 0x66) ||
	    dup2(p[H][0], GK) != GK || ctl(ep, EPOLL_CTL_ADD, GK, EPOLLIN, 0x88) ||
	    dup2(p[I][0], IK) != IK || ctl(ep, EPOLL_CTL_ADD, IK, EPOLLIN, 0x99) ||
	    (n = open("/dev/null", O_RDONLY)) < 0 || dup3(n, IK, O_CLOEXEC) != IK ||
	    close(n))
		exit(3);
	nest = mkepoll(ep, EPOLLIN, 0x4e57);
	th_ep = mkepoll(p[TH][0], EPOLLIN, 0x7407);
	if (write(p[A][1], "a", 1) != 1 || write(p[C][1], "c", 1) != 1)
		exit(3);
	/* C fires once, and is disarmed; its byte stays */
	tp_check(ready(ep, 0xcc, NULL) == 1, "oneshot C did not fire before checkpoint");
	tp_check(ready(ep, 0xcc, NULL) == 0, "oneshot C fired twice before checkpoint");
	(void)c;
}

static void check_after(void)
{
	struct stat st;
	uint32_t evs = 0;
	char c;

	tp_check(ready(ep, 0x1111222233334444ULL, &evs) == 1 && evs == EPOLLIN,
		 "level-triggered A: not reported with its data (events %#x)", evs);
	tp_check(ready(ep, 0xdd, &evs) == 1 && (evs & EPOLLOUT),
		 "EPOLLEXCLUSIVE D: not writable");
	tp_check(ready(ep, 0xcc, NULL) == 0, "disarmed oneshot C reported after restart");
	tp_check(ready(nest, 0x4e57, NULL) == 1, "nested epoll: E not reported ready");
	/* the restored registrations are keyed by their own fd numbers */
	tp_check(ctl(ep, EPOLL_CTL_MOD, p[C][0], EPOLLIN | EPOLLONESHOT, 0xc2) == 0,
		 "EPOLL_CTL_MOD of C: %s", strerror(errno));
	tp_check(ready(ep, 0xc2, NULL) == 1, "re-armed oneshot C not reported");
	tp_check(ready(ep, 0xc2, NULL) == 0, "re-armed oneshot C reported twice");
	tp_check(ctl(ep, EPOLL_CTL_ADD, p[A][0], EPOLLIN, 1) < 0 && errno == EEXIST,
		 "A added twice: its registration is not under its fd");
	/* F, registered as closed fd FK, still reports */
	tp_check(write(p[F][1], "f", 1) == 1, "write F");
	tp_check(ready(ep, 0xff, &evs) == 1 && evs == EPOLLIN,
		 "F (registered as closed fd %d) not reported (events %#x)", FK, evs);
	/* G and H, both under GK; IK is /dev/null again */
	tp_check(write(p[G][1], "g", 1) == 1 && write(p[H][1], "h", 1) == 1 &&
		 write(p[I][1], "i", 1) == 1, "write G H I");
	tp_check(ready(ep, 0x66, NULL) == 1, "G (registered as fd %d, closed) not reported", GK);
	tp_check(ready(ep, 0x88, NULL) == 1, "H (registered as fd %d) not reported", GK);
	tp_check(ready(ep, 0x99, NULL) == 1, "I (registered as fd %d, closed) not reported", IK);
	tp_check(ctl(ep, EPOLL_CTL_MOD, GK, EPOLLIN, 0x89) == 0 && ready(ep, 0x89, NULL) == 1,
		 "EPOLL_CTL_MOD of H by fd %d: %s", GK, strerror(errno));
	tp_check(fstat(IK, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) &&
		 fcntl(IK, F_GETFD) == FD_CLOEXEC, "fd %d is no longer /dev/null, close-on-exec", IK);
	/* B, edge-triggered: the child's write is one edge (at most one
	 * spurious edge after restart is allowed: see epoll.c) */
	ready(ep, 0xbb, NULL);
	tp_check(read(p[B][0], &c, 1) == 1, "read B");
	tp_check(ready(ep, 0xbb, NULL) == 0, "edge-triggered B reported with no new data");
	tp_check(write(p[B][1], "b", 1) == 1, "write B");
	tp_check(ready(ep, 0xbb, NULL) == 1, "edge-triggered B: new data not reported");
	tp_check(ready(ep, 0xbb, NULL) == 0, "edge-triggered B reported twice for one write");
}

int main(int argc, char **argv)
{
	struct sleeper ts = { 0 };
	pthread_t th;
	pid_t kid;
	int st;

	tp_init(argc, argv);
	setup();
	kid = fork();
	if (kid == 0)
		child();
	if (kid < 0 || pthread_create(&th, NULL, thread_main, &ts))
		return 3;
	usleep(100000);	/* both are asleep in epoll_wait */
	tp_ready();
	tp_wait_go();

	tp_check(write(p[J][1], "j", 1) == 1 && write(p[TH][1], "t", 1) == 1 &&
		 write(p[CH][1], "k", 1) == 1,
		 "waking the sleepers");
	pthread_join(th, NULL);
	printf("# thread: epoll_wait returned EINTR %d times\n", ts.eintr);
	tp_check(ts.ret == 1 && ts.data == 0x7407,
		 "thread in epoll_wait: returned %d, data %#llx, %d EINTR", ts.ret,
		 (unsigned long long)ts.data, ts.eintr);
	tp_check(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "child in epoll_wait: status %#x", st);
	check_after();
	return tp_done();
}
