/* oom_score.c - oom_score_adj (raised: no privilege needed) survives the
 * restart. */
#define _GNU_SOURCE
#include <fcntl.h>

#include "tp.h"

static int rw(const char *val)
{
	char buf[16] = "";
	int fd = open("/proc/self/oom_score_adj", val ? O_WRONLY : O_RDONLY);

	if (fd < 0)
		return -10000;
	if (val ? write(fd, val, strlen(val)) < 0 : read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 'x';
	close(fd);
	return val ? 0 : atoi(buf);
}

int main(int argc, char **argv)
{
	tp_init(argc, argv);
	if (rw("537"))
		return printf("FAIL: writing oom_score_adj\n"), 1;
	tp_ready();
	tp_wait_go();
	tp_check(rw(NULL) == 537, "oom_score_adj is %d, not 537", rw(NULL));
	return tp_done();
}
