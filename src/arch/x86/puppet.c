/* puppet.c - the first breath of a restored process.
 *
 * ckpt_puppet_clone() is clone3() done in assembly: the child must not
 * run a single instruction of C (or of the sanitizer runtime) in a copy of
 * our address space it is about to lose.  It loops in pause() with every
 * signal blocked until ptrace takes it over; ckpt_puppet_syscall is the
 * address of its syscall instruction, the first one remote calls use. */
#include "../arch.h"

__asm__(
	".text\n"
	".globl ckpt_puppet_clone\n"
	".type ckpt_puppet_clone, @function\n"
	"ckpt_puppet_clone:\n"
	"	mov $435, %eax\n"		/* clone3(args, size) */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 2f\n"
	"1:	mov $34, %eax\n"		/* pause() */
	".globl ckpt_puppet_syscall\n"
	"ckpt_puppet_syscall:\n"
	"	syscall\n"
	"	jmp 1b\n"
	"2:	ret\n"
	".size ckpt_puppet_clone, .-ckpt_puppet_clone\n");
