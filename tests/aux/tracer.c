/* tracer.c - holds PID under ptrace (as a debugger would) until killed,
 * so that tests can show ckpt refusing a task another tool traces. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (ptrace(PTRACE_SEIZE, atoi(argv[1]), 0, 0)) {
		perror("tracer: PTRACE_SEIZE");
		return 1;
	}
	printf("TRACING\n");
	fflush(stdout);
	for (;;)
		pause();
}
