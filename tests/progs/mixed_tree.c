/* mixed_tree - a tree of 64-bit and 32-bit processes survives.
 *
 *   mixed_tree (64) -+- worker (64, a fork)
 *                    +- child32 (32, build/test/aux/child32) -+- worker (32, a fork)
 *                                                             +- mixed_tree --worker (64)
 *
 * Each worker (tests/aux/worker.h) answers numbers on its own pipes and
 * counts SIGUSR1 with a handler.  After restart every one answers with
 * its own width, and handles a signal (a 32-bit one with 32-bit frames).
 */
#include "tp.h"

#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>

#include "../aux/worker.h"

#define NW 4

int main(int argc, char **argv)
{
	static char self[PATH_MAX], child[PATH_MAX + 32];
	int to[NW][2], from[NW][2];
	uint32_t hello[NW][2], n;
	char a[NW * 2][16];
	const uint32_t width[NW] = { 8, 4, 4, 8 };

	if (argc == 4 && !strcmp(argv[1], "--worker"))
		return worker(atoi(argv[2]), atoi(argv[3]));
	tp_init(argc, argv);
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
		return 2;
	snprintf(child, sizeof(child), "%s/../aux/child32", dirname(strdup(self)));
	for (int i = 0; i < NW; i++) {
		if (pipe(to[i]) || pipe(from[i]))
			return 2;
		snprintf(a[2 * i], 16, "%d", to[i][0]);
		snprintf(a[2 * i + 1], 16, "%d", from[i][1]);
	}
	if (fork() == 0)
		return worker(to[0][0], from[0][1]);
	if (fork() == 0) {
		execl(child, child, self, a[2], a[3], a[4], a[5], a[6], a[7], (char *)NULL);
		_exit(3);
	}
	for (int i = 0; i < NW; i++)
		if (read(from[i][0], hello[i], sizeof(hello[i])) != sizeof(hello[i]) ||
		    hello[i][1] != width[i]) {
			printf("worker %d did not start as %u-byte (%s)\n", i, width[i], child);
			return 2;
		}
	tp_ready();
	tp_wait_go();
	for (int i = 0; i < NW; i++) {
		n = 1000 + i;
		tp_check(write(to[i][1], &n, 4) == 4 && read(from[i][0], &n, 4) == 4 &&
			 n == (1000 + i) * 2 + width[i], "worker %d (pid %u) answers %u", i,
			 hello[i][0], n);
		kill(hello[i][0], SIGUSR1);
		n = 0;
		tp_check(write(to[i][1], &n, 4) == 4 && read(from[i][0], &n, 4) == 4 &&
			 n == 1, "worker %d (pid %u): %u SIGUSR1 handled, not 1", i,
			 hello[i][0], n);
		close(to[i][1]);
	}
	/* each worker holds the others' pipe ends too: none sees EOF */
	for (int i = 0; i < NW; i++)
		kill(hello[i][0], SIGKILL);
	return tp_done();
}
