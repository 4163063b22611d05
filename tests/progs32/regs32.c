/* regs32 - the registers of a 32-bit process survive checkpoint/restart.
 *
 * regs_wait() below loads patterns into esi, edi and ebp, xmm0-7, two
 * values onto the x87 stack, and sets MXCSR, the x87 control word and the
 * direction flag.  With all of that live it waits for GOFILE: nanosleep
 * through the vdso's __kernel_vsyscall (sysenter) and access() through
 * int $0x80, so the checkpoint meets the task inside a 32-bit system call
 * of either kind, which restart must re-arm the 32-bit way.  Only a
 * complete restore of the registers lets it see the patterns again.
 * It also checks the selectors (cs, ds, gs) are a 32-bit task's.
 */
#include "tp.h"

#include <stddef.h>
#include <stdint.h>

#ifndef __i386__
#error "a 32-bit test: build with -m32"
#endif

struct ctx {
	uint32_t gpr_in[3];	/* esi, edi, ebp */
	uint32_t gpr_out[3];
	const char *gofile;
	struct timespec ts;
	uint32_t eflags_out;
	uint32_t mxcsr_in, mxcsr_out, mxcsr_saved;
	uint16_t fcw_in, fcw_out, fcw_saved, pad;
	double x87_in[2];
	double x87_out[2];
	_Alignas(16) uint8_t vec_in[8][16];
	uint8_t vec_out[8][16];
};

#define S_(x) #x
#define S(x) S_(x)
#define O_GPR_IN	0
#define O_GPR_OUT	12
#define O_GOFILE	24
#define O_TS		28
#define O_EFLAGS	36
#define O_MXCSR_IN	40
#define O_MXCSR_OUT	44
#define O_MXCSR_SAVED	48
#define O_FCW_IN	52
#define O_FCW_OUT	54
#define O_FCW_SAVED	56
#define O_X87_IN	60
#define O_X87_OUT	76
#define O_VEC_IN	96
#define O_VEC_OUT	224
#define CHECK_OFF(f, o) _Static_assert(offsetof(struct ctx, f) == o, #f)
CHECK_OFF(gpr_out, O_GPR_OUT);
CHECK_OFF(gofile, O_GOFILE);
CHECK_OFF(ts, O_TS);
CHECK_OFF(eflags_out, O_EFLAGS);
CHECK_OFF(mxcsr_in, O_MXCSR_IN);
CHECK_OFF(mxcsr_out, O_MXCSR_OUT);
CHECK_OFF(mxcsr_saved, O_MXCSR_SAVED);
CHECK_OFF(fcw_in, O_FCW_IN);
CHECK_OFF(fcw_out, O_FCW_OUT);
CHECK_OFF(fcw_saved, O_FCW_SAVED);
CHECK_OFF(x87_in, O_X87_IN);
CHECK_OFF(x87_out, O_X87_OUT);
CHECK_OFF(vec_in, O_VEC_IN);
CHECK_OFF(vec_out, O_VEC_OUT);

void regs_wait(struct ctx *c);

#define VEC(op, i) op " " S(O_VEC_IN) "+" #i "*16(%eax), %xmm" #i "\n"
#define VECOUT(i) "movdqu %xmm" #i ", " S(O_VEC_OUT) "+" #i "*16(%eax)\n"
__asm__(
	".text\n"
	".globl regs_wait\n"
	"regs_wait:\n"
	"	push %ebp\n push %ebx\n push %esi\n push %edi\n"
	"	mov 20(%esp), %eax\n"
	"	push %eax\n"			/* the ctx at 0(%esp) from here */
	"	stmxcsr " S(O_MXCSR_SAVED) "(%eax)\n"
	"	fnstcw " S(O_FCW_SAVED) "(%eax)\n"
	VEC("movdqu", 0) VEC("movdqu", 1) VEC("movdqu", 2) VEC("movdqu", 3)
	VEC("movdqu", 4) VEC("movdqu", 5) VEC("movdqu", 6) VEC("movdqu", 7)
	"	ldmxcsr " S(O_MXCSR_IN) "(%eax)\n"
	"	fldcw " S(O_FCW_IN) "(%eax)\n"
	"	fldl " S(O_X87_IN) "(%eax)\n"
	"	fldl " S(O_X87_IN) "+8(%eax)\n"
	"	mov " S(O_GPR_IN) "(%eax), %esi\n"
	"	mov " S(O_GPR_IN) "+4(%eax), %edi\n"
	"	mov " S(O_GPR_IN) "+8(%eax), %ebp\n"
	"	std\n"
	"1:	mov (%esp), %ebx\n"
	"	lea " S(O_TS) "(%ebx), %ebx\n"
	"	xor %ecx, %ecx\n"
	"	mov $162, %eax\n"		/* nanosleep */
	"	call *%gs:0x10\n"		/* __kernel_vsyscall */
	"	mov (%esp), %ebx\n"
	"	mov " S(O_GOFILE) "(%ebx), %ebx\n"
	"	xor %ecx, %ecx\n"
	"	mov $33, %eax\n"		/* access(gofile, F_OK) */
	"	int $0x80\n"
	"	test %eax, %eax\n"
	"	jnz 1b\n"
	"	pushf\n"
	"	mov 4(%esp), %eax\n"
	"	popl " S(O_EFLAGS) "(%eax)\n"
	"	cld\n"
	"	mov %esi, " S(O_GPR_OUT) "(%eax)\n"
	"	mov %edi, " S(O_GPR_OUT) "+4(%eax)\n"
	"	mov %ebp, " S(O_GPR_OUT) "+8(%eax)\n"
	VECOUT(0) VECOUT(1) VECOUT(2) VECOUT(3)
	VECOUT(4) VECOUT(5) VECOUT(6) VECOUT(7)
	"	stmxcsr " S(O_MXCSR_OUT) "(%eax)\n"
	"	fnstcw " S(O_FCW_OUT) "(%eax)\n"
	"	fstpl " S(O_X87_OUT) "+8(%eax)\n"
	"	fstpl " S(O_X87_OUT) "(%eax)\n"
	"	ldmxcsr " S(O_MXCSR_SAVED) "(%eax)\n"
	"	fldcw " S(O_FCW_SAVED) "(%eax)\n"
	"	pop %eax\n pop %edi\n pop %esi\n pop %ebx\n pop %ebp\n"
	"	ret\n");

int main(int argc, char **argv)
{
	static struct ctx c;
	unsigned short cs, ds, gs;

	tp_init(argc, argv);
	c.gofile = argv[1];
	c.ts.tv_nsec = 2 * 1000 * 1000;
	c.gpr_in[0] = 0x5e5e1234;
	c.gpr_in[1] = 0xd1d15678;
	c.gpr_in[2] = 0xb0b09abc;
	c.mxcsr_in = 0x1f80 | 0x6000 | 0x8040;	/* round to zero, FTZ, DAZ */
	c.fcw_in = 0x027f;	/* double precision */
	c.x87_in[0] = 3.14159265358979;
	c.x87_in[1] = -1234.5678e-9;
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 16; j++)
			c.vec_in[i][j] = (uint8_t)(0x11 * i + 7 * j + 1);

	tp_ready();
	regs_wait(&c);

	for (int i = 0; i < 3; i++)
		tp_check(c.gpr_out[i] == c.gpr_in[i], "gpr %d is %#x, not %#x", i,
			 c.gpr_out[i], c.gpr_in[i]);
	for (int i = 0; i < 8; i++)
		tp_check(!memcmp(c.vec_out[i], c.vec_in[i], 16), "xmm%d changed", i);
	tp_check(c.mxcsr_out == c.mxcsr_in, "mxcsr %#x, not %#x", c.mxcsr_out,
		 c.mxcsr_in);
	tp_check(c.fcw_out == c.fcw_in, "x87 control word %#x, not %#x", c.fcw_out,
		 c.fcw_in);
	tp_check(c.x87_out[0] == c.x87_in[0] && c.x87_out[1] == c.x87_in[1],
		 "x87 stack %g %g, not %g %g", c.x87_out[0], c.x87_out[1],
		 c.x87_in[0], c.x87_in[1]);
	tp_check(c.eflags_out & 0x400, "direction flag lost (eflags %#x)", c.eflags_out);
	__asm__("mov %%cs, %0; mov %%ds, %1; mov %%gs, %2" : "=r"(cs), "=r"(ds), "=r"(gs));
	tp_check(cs == 0x23 && ds == 0x2b, "cs %#x ds %#x: not a 32-bit task's", cs, ds);
	tp_check(gs == 0x63, "gs %#x, not the TLS entry 12", gs);
	return tp_done();
}
