/* worker.h - a process of the mixed 64/32-bit tree (state_mixed_tree):
 * it tells its pid and width, then answers each number N read from IN
 * with N * 2 + its width in bytes, and 0 with the number of SIGUSR1 it
 * has handled, until IN is closed. */
#ifndef WORKER_H
#define WORKER_H
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

static volatile sig_atomic_t worker_usr1;

static void worker_on_usr1(int sig)
{
	(void)sig;
	worker_usr1++;
}

static inline int worker(int in, int out)
{
	struct sigaction sa = { .sa_handler = worker_on_usr1, .sa_flags = SA_RESTART };
	uint32_t hello[2] = { (uint32_t)getpid(), (uint32_t)sizeof(void *) }, n;

	sigaction(SIGUSR1, &sa, NULL);
	if (write(out, hello, sizeof(hello)) != sizeof(hello))
		return 1;
	while (read(in, &n, sizeof(n)) == sizeof(n)) {
		n = n ? n * 2 + sizeof(void *) : (uint32_t)worker_usr1;
		if (write(out, &n, sizeof(n)) != sizeof(n))
			return 1;
	}
	return 0;
}
#endif
