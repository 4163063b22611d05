/* dumpable.c - the dumpable flag (PR_SET_DUMPABLE 0) survives the
 * restart, though the credential changes of the restore reset it. */
#define _GNU_SOURCE
#include <sys/prctl.h>

#include "tp.h"

int main(int argc, char **argv)
{
	tp_init(argc, argv);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return printf("FAIL: PR_SET_DUMPABLE: %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	tp_check(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0, "dumpable is %d, not 0",
		 prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	return tp_done();
}
