/* lease.c - file leases (F_SETLEASE), active and being broken.
 *
 * Four files: a read lease on an O_RDONLY fd, a write lease on an
 * O_WRONLY fd (its F_SETSIG SIGRTMIN+1), a write lease being downgraded
 * (a read open broke it) and a read lease being removed (a write open
 * broke it), both with F_SETSIG SIGUSR1, whose break signals arrived
 * before the checkpoint.
 *
 * After restart: F_GETLEASE reads READ, WRITE, READ and UNLCK (a fresh
 * process has none), no break signal came again, and the leases are
 * live: a conflicting open (O_NONBLOCK) of the first two fails with
 * EWOULDBLOCK and sends each its signal, with its fd in si_fd.
 */
#include "tp.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>

#define NR 4

static char path[NR][PATH_MAX];
static volatile sig_atomic_t got_sig[NR], other_sig;
static int fds[NR];

static void on_sig(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	for (int i = 0; i < NR; i++)
		if (si->si_fd == fds[i] && (sig == SIGUSR1 || sig == SIGRTMIN + 1)) {
			got_sig[i]++;
			return;
		}
	other_sig++;
}

static void sibling(char *buf, const char *name)
{
	char *slash;

	snprintf(buf, PATH_MAX, "%s", tp_gofile);
	slash = strrchr(buf, '/');
	snprintf(slash + 1, PATH_MAX - (slash + 1 - buf), "%s", name);
}

/* A conflicting open of @i: must fail for the lease. */
static int conflict(int i, int flags)
{
	int fd = open(path[i], flags | O_NONBLOCK);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EWOULDBLOCK;
}

static int setup(void)
{
	static const int acc[NR] = { O_RDONLY, O_WRONLY, O_WRONLY, O_RDONLY };
	static const int lease[NR] = { F_RDLCK, F_WRLCK, F_WRLCK, F_RDLCK };
	struct sigaction sa = { .sa_sigaction = on_sig, .sa_flags = SA_SIGINFO };

	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	for (int i = 0; i < NR; i++) {
		char name[32];
		int fd;

		snprintf(name, sizeof(name), "lease-%d", i);
		sibling(path[i], name);
		fd = open(path[i], O_RDWR | O_CREAT, 0644);
		if (fd < 0 || close(fd) || (fds[i] = open(path[i], acc[i])) < 0 ||
		    fcntl(fds[i], F_SETLEASE, lease[i]) ||
		    fcntl(fds[i], F_SETSIG, i == 1 ? SIGRTMIN + 1 : SIGUSR1))
			return -1;
	}
	if (!conflict(2, O_RDONLY) || !conflict(3, O_WRONLY))
		return -1;
	while (got_sig[2] != 1 || got_sig[3] != 1)
		usleep(1000);
	return 0;
}

int main(int argc, char **argv)
{
	static const int want[NR] = { F_RDLCK, F_WRLCK, F_RDLCK, F_UNLCK };

	tp_init(argc, argv);
	if (setup()) {
		tp_fail("setup: %s", strerror(errno));
		return 1;
	}
	tp_ready();
	tp_wait_go();
	for (int i = 0; i < NR; i++) {
		int got = fcntl(fds[i], F_GETLEASE);

		tp_check(got == want[i], "fd %d: lease %d, not %d", fds[i], got, want[i]);
	}
	tp_check(got_sig[2] == 1 && got_sig[3] == 1 && !other_sig,
		 "break signals came again: %d %d, other %d", got_sig[2], got_sig[3], other_sig);
	tp_check(conflict(0, O_WRONLY), "the read lease does not stop a write open");
	tp_check(conflict(1, O_RDONLY), "the write lease does not stop a read open");
	for (int n = 0; n < 1000 && (!got_sig[0] || !got_sig[1]); n++)
		usleep(1000);
	tp_check(got_sig[0] == 1 && got_sig[1] == 1 && !other_sig,
		 "break signals: %d %d, other %d", got_sig[0], got_sig[1], other_sig);
	for (int i = 0; i < NR; i++) {
		fcntl(fds[i], F_SETLEASE, F_UNLCK);
		unlink(path[i]);
	}
	return tp_done();
}
