/* puppet.c - the first breath of a restored process (see arch.h):
 * clone3() in assembly, the child looping in pause() at
 * ckpt_puppet_syscall until ptrace takes it over. */
#include "../arch.h"

__asm__(
	".text\n"
	".globl ckpt_puppet_clone\n"
	".type ckpt_puppet_clone, @function\n"
	"ckpt_puppet_clone:\n"
	"	li 0, 435\n"			/* clone3(args, size): r3, r4 */
	"	sc\n"
	"	bns+ 1f\n"
	"	neg 3, 3\n"			/* an error: -errno */
	"	blr\n"
	"1:	cmpdi 3, 0\n"
	"	bnelr\n"			/* the parent */
	"2:	li 0, 29\n"			/* pause() */
	".globl ckpt_puppet_syscall\n"
	"ckpt_puppet_syscall:\n"
	"	sc\n"
	"	b 2b\n"
	".size ckpt_puppet_clone, .-ckpt_puppet_clone\n");
