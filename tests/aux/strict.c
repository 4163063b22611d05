/* strict.c - a process in seccomp strict mode (only read, write, exit
 * and sigreturn allowed), for test_seccomp_strict in tests/run.sh.
 * usage: strict < INPUT > OUTPUT
 * It enters strict mode, writes "READY <pid>", then reads its stdin a
 * byte at a time: 'c' counts, 'x' writes "PASS <count>" and exits (with
 * SYS_exit: exit_group is not allowed), 'k' calls getpid(), for which
 * strict mode kills it with SIGKILL. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		syscall(SYS_exit, 3);
}

int main(void)
{
	char buf[64], c;
	unsigned long count = 0;

	snprintf(buf, sizeof(buf), "READY %d\n", getpid());
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0))
		return 2;
	say(buf);
	for (;;) {
		long r = syscall(SYS_read, 0, &c, 1);

		if (r != 1)
			syscall(SYS_exit, r == 0 ? 4 : 10 + errno);
		if (c == 'c')
			count++;
		else if (c == 'k')
			syscall(SYS_getpid);
		else if (c == 'x')
			break;
	}
	/* no snprintf here: it might call something strict mode forbids */
	strcpy(buf, "PASS ");
	buf[5] = '0' + count % 10;
	buf[6] = '\n';
	buf[7] = 0;
	say(buf);
	syscall(SYS_exit, 0);
	return 0;
}
