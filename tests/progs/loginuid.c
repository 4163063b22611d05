/* loginuid.c - the audit login uid survives the restart (writing it
 * needs CAP_AUDIT_CONTROL; skipped without /proc/self/loginuid). */
#define _GNU_SOURCE
#include <fcntl.h>

#include "tp.h"

static long long rw(const char *val)
{
	char buf[24] = "";
	int fd = open("/proc/self/loginuid", val ? O_WRONLY : O_RDONLY);
	long long ret = 0;

	if (fd < 0)
		return -2;
	if (val ? write(fd, val, strlen(val)) < 0 : read(fd, buf, sizeof(buf) - 1) < 0)
		ret = -3;
	close(fd);
	return val || ret ? ret : atoll(buf);
}

int main(int argc, char **argv)
{
	tp_init(argc, argv);
	if (rw("1234"))
		return printf("FAIL: writing loginuid: %s\n", strerror(errno)), 1;
	tp_ready();
	tp_wait_go();
	tp_check(rw(NULL) == 1234, "loginuid is %lld, not 1234", rw(NULL));
	return tp_done();
}
