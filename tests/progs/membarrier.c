/* membarrier.c - membarrier registrations survive the restart: a
 * private expedited barrier works after it without registering again. */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <sys/syscall.h>

#include "tp.h"

static int mb(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

int main(int argc, char **argv)
{
	tp_init(argc, argv);
	if (mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) ||
	    mb(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED))
		return printf("FAIL: registering: %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	tp_check(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0,
		 "MEMBARRIER_CMD_PRIVATE_EXPEDITED: %s", strerror(errno));
	return tp_done();
}
