/* puppet.c - the first breath of a restored process (see arch.h):
 * clone3() in assembly, the child looping in pause() at
 * ckpt_puppet_syscall until ptrace takes it over. */
#include "../arch.h"

__asm__(
	".text\n"
	".globl ckpt_puppet_clone\n"
	".type ckpt_puppet_clone, @function\n"
	"ckpt_puppet_clone:\n"
	"	lghi %r1, 435\n"		/* clone3(args, size): r2, r3 */
	"	svc 0\n"
	"	ltgr %r2, %r2\n"
	"	jnz 2f\n"
	"1:	lghi %r1, 29\n"			/* pause() */
	".globl ckpt_puppet_syscall\n"
	"ckpt_puppet_syscall:\n"
	"	svc 0\n"
	"	j 1b\n"
	"2:	br %r14\n"
	".size ckpt_puppet_clone, .-ckpt_puppet_clone\n");
