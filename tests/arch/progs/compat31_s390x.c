/* compat31_s390x - a 31-bit task (s390's compat mode) is refused, and
 * left running as it was.
 *
 * Debian 12 has no 31-bit userland, so this is built freestanding
 * (compat31_s390x.cflags: -m31 -nostdlib) and speaks the 31-bit system
 * call ABI itself: svc 0 with the number in r1.  It says READY, then
 * polls for GOFILE; once there it says PASS.  The guest's refusal test
 * (init.sh, compat31_s390x.refuse) wants the checkpoint refused with
 * the line that file holds, and this program then to finish. */

#define NR_exit		1
#define NR_write	4
#define NR_access	33
#define NR_nanosleep	162

static long sys3(long nr, long a, long b, long c)
{
	register long r1 asm("1") = nr;
	register long r2 asm("2") = a;
	register long r3 asm("3") = b;
	register long r4 asm("4") = c;

	asm volatile("svc 0" : "+d"(r2) : "d"(r1), "d"(r3), "d"(r4) : "memory");
	return r2;
}

static void say(const char *s)
{
	long n = 0;

	while (s[n])
		n++;
	sys3(NR_write, 1, (long)s, n);
}

/* The kernel starts us with argc at 0(%r15) and argv after it. */
int main31(long argc, char **argv);
asm(".globl _start\n"
    "_start:\n"
    "	l	%r2,0(%r15)\n"
    "	la	%r3,4(%r15)\n"
    "	ahi	%r15,-96\n"
    "	xc	0(4,%r15),0(%r15)\n"
    "	bras	%r14,main31\n"
    "	lr	%r2,%r2\n"
    "	lhi	%r1,1\n"
    "	svc	0\n");

int main31(long argc, char **argv)
{
	struct { long sec, nsec; } ts = { 0, 10 * 1000 * 1000 };

	if (argc < 2) {
		say("usage: compat31_s390x GOFILE\n");
		return 2;
	}
	say("READY\n");
	while (sys3(NR_access, (long)argv[1], 0, 0) != 0)
		sys3(NR_nanosleep, (long)&ts, 0, 0);
	say("PASS\n");
	return 0;
}
