/* child32 - the 32-bit part of the mixed tree (tests/progs/mixed_tree.c):
 * child32 ROOT IN OUT IN2 OUT2 IN3 OUT3 answers on IN/OUT, forks a
 * 32-bit worker on IN2/OUT2 and a 64-bit one (ROOT --worker IN3 OUT3). */
#include <stdlib.h>
#include <stdio.h>

#include "worker.h"

int main(int argc, char **argv)
{
	if (argc != 8)
		return 2;
	if (fork() == 0)
		return worker(atoi(argv[4]), atoi(argv[5]));
	if (fork() == 0) {
		execl(argv[1], argv[1], "--worker", argv[6], argv[7], (char *)NULL);
		_exit(3);
	}
	return worker(atoi(argv[2]), atoi(argv[3]));
}
