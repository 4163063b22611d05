/* thp.c - transparent huge pages disabled (PR_SET_THP_DISABLE) survive
 * the restart. */
#define _GNU_SOURCE
#include <sys/prctl.h>

#include "tp.h"

int main(int argc, char **argv)
{
	tp_init(argc, argv);
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		return printf("FAIL: PR_SET_THP_DISABLE: %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	tp_check(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1, "THP disable is %d, not 1",
		 prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	return tp_done();
}
