/* regs_s390x - s390x register state survives checkpoint/restart.
 *
 * Patterns go into general registers the system calls keep (r6-r8,
 * r10), all floating-point registers f0-f15 (the left halves of v0-v15),
 * the floating-point control register, and, where the CPU has the vector
 * facility, v16-v31.  With all of that live the program polls for GOFILE
 * with raw svc access / nanosleep, so the checkpoint meets it inside the
 * loop (usually in the nanosleep, which restart must re-arm), and only a
 * complete restore lets it read the patterns back.
 */
#include "tp.h"

#include <stdint.h>
#include <sys/auxv.h>

#define HWCAP_VXRS	2048	/* HWCAP_S390_VXRS */

struct regs_ctx {
	uint64_t gpr_in[4], gpr_out[4];			/* 0x000, 0x020 */
	uint64_t fpr_in[16], fpr_out[16];		/* 0x040, 0x0c0 */
	const char *gofile;				/* 0x140 */
	struct timespec ts;				/* 0x148 */
	uint64_t have_vx;				/* 0x158 */
	uint32_t fpc_in, fpc_out;			/* 0x160, 0x164 */
	uint8_t pad[8];
	uint8_t vec_in[16][16], vec_out[16][16];	/* 0x170, 0x270 */
};

_Static_assert(__builtin_offsetof(struct regs_ctx, gofile) == 0x140, "gofile");
_Static_assert(__builtin_offsetof(struct regs_ctx, have_vx) == 0x158, "have_vx");
_Static_assert(__builtin_offsetof(struct regs_ctx, fpc_in) == 0x160, "fpc");
_Static_assert(__builtin_offsetof(struct regs_ctx, vec_in) == 0x170, "vec_in");

static struct regs_ctx ctx __attribute__((aligned(16)));

static void regs_wait(struct regs_ctx *c)
{
	__asm__ volatile(
		"	lgr	%%r9, %0\n"
		"	lmg	%%r6, %%r8, 0x000(%%r9)\n"
		"	lg	%%r10, 0x018(%%r9)\n"
		"	ld	%%f0, 0x040(%%r9)\n"
		"	ld	%%f1, 0x048(%%r9)\n"
		"	ld	%%f2, 0x050(%%r9)\n"
		"	ld	%%f3, 0x058(%%r9)\n"
		"	ld	%%f4, 0x060(%%r9)\n"
		"	ld	%%f5, 0x068(%%r9)\n"
		"	ld	%%f6, 0x070(%%r9)\n"
		"	ld	%%f7, 0x078(%%r9)\n"
		"	ld	%%f8, 0x080(%%r9)\n"
		"	ld	%%f9, 0x088(%%r9)\n"
		"	ld	%%f10, 0x090(%%r9)\n"
		"	ld	%%f11, 0x098(%%r9)\n"
		"	ld	%%f12, 0x0a0(%%r9)\n"
		"	ld	%%f13, 0x0a8(%%r9)\n"
		"	ld	%%f14, 0x0b0(%%r9)\n"
		"	ld	%%f15, 0x0b8(%%r9)\n"
		"	lfpc	0x160(%%r9)\n"
		"	.machine push\n"
		"	.machine z13\n"
		"	ltg	%%r2, 0x158(%%r9)\n"
		"	jz	1f\n"
		"	vlm	%%v16, %%v31, 0x170(%%r9)\n"
		"1:	lg	%%r2, 0x140(%%r9)\n"	/* access(gofile, F_OK) */
		"	lghi	%%r3, 0\n"
		"	svc	33\n"
		"	ltgr	%%r2, %%r2\n"
		"	jz	2f\n"
		"	la	%%r2, 0x148(%%r9)\n"	/* nanosleep(&ts, NULL) */
		"	lghi	%%r3, 0\n"
		"	svc	162\n"
		"	j	1b\n"
		"2:	stmg	%%r6, %%r8, 0x020(%%r9)\n"
		"	stg	%%r10, 0x038(%%r9)\n"
		"	std	%%f0, 0x0c0(%%r9)\n"
		"	std	%%f1, 0x0c8(%%r9)\n"
		"	std	%%f2, 0x0d0(%%r9)\n"
		"	std	%%f3, 0x0d8(%%r9)\n"
		"	std	%%f4, 0x0e0(%%r9)\n"
		"	std	%%f5, 0x0e8(%%r9)\n"
		"	std	%%f6, 0x0f0(%%r9)\n"
		"	std	%%f7, 0x0f8(%%r9)\n"
		"	std	%%f8, 0x100(%%r9)\n"
		"	std	%%f9, 0x108(%%r9)\n"
		"	std	%%f10, 0x110(%%r9)\n"
		"	std	%%f11, 0x118(%%r9)\n"
		"	std	%%f12, 0x120(%%r9)\n"
		"	std	%%f13, 0x128(%%r9)\n"
		"	std	%%f14, 0x130(%%r9)\n"
		"	std	%%f15, 0x138(%%r9)\n"
		"	stfpc	0x164(%%r9)\n"
		"	ltg	%%r2, 0x158(%%r9)\n"
		"	jz	3f\n"
		"	vstm	%%v16, %%v31, 0x270(%%r9)\n"
		"3:\n"
		"	.machine pop\n"
		: : "a"(c)
		: "r2", "r3", "r6", "r7", "r8", "r9", "r10", "f0", "f1", "f2",
		  "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12",
		  "f13", "f14", "f15", "cc", "memory");
}

int main(int argc, char **argv)
{
	tp_init(argc, argv);
	for (int i = 0; i < 4; i++)
		ctx.gpr_in[i] = 0x5a5a000000000000ULL | (0x1111ULL * (i + 1)) << 8 | i;
	for (int i = 0; i < 16; i++)
		ctx.fpr_in[i] = 0x3ff0000000000000ULL + 0x0123456789aULL * (i + 3);
	for (int i = 0; i < 16; i++)
		for (int k = 0; k < 16; k++)
			ctx.vec_in[i][k] = (uint8_t)(0x40 + 16 * i + k * 7);
	ctx.fpc_in = 0x00000001;	/* round toward zero */
	ctx.gofile = tp_gofile;
	ctx.ts.tv_nsec = 20 * 1000 * 1000;
	ctx.have_vx = !!(getauxval(AT_HWCAP) & HWCAP_VXRS);
	printf("vector facility: %s\n", ctx.have_vx ? "yes" : "no");
	tp_ready();
	regs_wait(&ctx);
	for (int i = 0; i < 4; i++)
		tp_check(ctx.gpr_out[i] == ctx.gpr_in[i], "gpr %d: %#llx, want %#llx", i,
			 (unsigned long long)ctx.gpr_out[i], (unsigned long long)ctx.gpr_in[i]);
	for (int i = 0; i < 16; i++)
		tp_check(ctx.fpr_out[i] == ctx.fpr_in[i], "f%d: %#llx, want %#llx", i,
			 (unsigned long long)ctx.fpr_out[i], (unsigned long long)ctx.fpr_in[i]);
	tp_check(ctx.fpc_out == ctx.fpc_in, "fpc %#x, want %#x", ctx.fpc_out, ctx.fpc_in);
	for (int i = 0; ctx.have_vx && i < 16; i++)
		tp_check(!memcmp(ctx.vec_out[i], ctx.vec_in[i], 16), "v%d differs", 16 + i);
	return tp_done();
}
