/* regs_ppc64le - ppc64le register state survives checkpoint/restart.
 *
 * Patterns go into registers the system calls keep: general registers
 * r14-r21, all 64 VSX registers whole (vs0-vs31, whose left halves are
 * the floating-point registers f0-f31, and vs32-vs63, the AltiVec
 * registers v0-v31), the FPSCR (round toward zero), the VSCR (non-Java
 * mode), VRSAVE and the condition register's fields 2-4.  With all of
 * that live the program polls for GOFILE with raw `sc` access /
 * nanosleep, so the checkpoint meets it inside the loop (usually in the
 * nanosleep, which restart must re-arm), and only a complete restore
 * lets it read the patterns back.  The FPSCR, VSCR, VRSAVE and CR are
 * read once before the loop and once after: they must agree.
 */
#include "tp.h"

#include <stdint.h>

struct regs_ctx {
	uint64_t gpr_in[8], gpr_out[8];			/* 0x000, 0x040 */
	const char *gofile;				/* 0x080 */
	struct timespec ts;				/* 0x088 */
	uint64_t fpscr_in;				/* 0x098 */
	uint64_t fpscr_before, fpscr_after;		/* 0x0a0, 0x0a8 */
	uint64_t cr_before, cr_after;			/* 0x0b0, 0x0b8 */
	uint64_t vrsave_before, vrsave_after;		/* 0x0c0, 0x0c8 */
	uint8_t vscr_in[16];				/* 0x0d0 */
	uint8_t vscr_before[16], vscr_after[16];	/* 0x0e0, 0x0f0 */
	uint8_t vsx_in[64][16];				/* 0x100 */
	uint8_t vsx_out[64][16];			/* 0x500 */
};

_Static_assert(__builtin_offsetof(struct regs_ctx, gofile) == 0x080, "gofile");
_Static_assert(__builtin_offsetof(struct regs_ctx, fpscr_in) == 0x098, "fpscr_in");
_Static_assert(__builtin_offsetof(struct regs_ctx, vscr_in) == 0x0d0, "vscr_in");
_Static_assert(__builtin_offsetof(struct regs_ctx, vsx_in) == 0x100, "vsx_in");
_Static_assert(__builtin_offsetof(struct regs_ctx, vsx_out) == 0x500, "vsx_out");

static struct regs_ctx ctx __attribute__((aligned(16)));

/* VSX register N from / to the table at OFF in the context (r31) */
#define LX(n, off)	"li 10, " #off " + 16 * (" #n ")\n lxvd2x " #n ", 31, 10\n"
#define STX(n, off)	"li 10, " #off " + 16 * (" #n ")\n stxvd2x " #n ", 31, 10\n"
#define LX8(n, off)	LX(n, off) LX(n + 1, off) LX(n + 2, off) LX(n + 3, off) \
			LX(n + 4, off) LX(n + 5, off) LX(n + 6, off) LX(n + 7, off)
#define STX8(n, off)	STX(n, off) STX(n + 1, off) STX(n + 2, off) STX(n + 3, off) \
			STX(n + 4, off) STX(n + 5, off) STX(n + 6, off) STX(n + 7, off)

static void regs_wait(struct regs_ctx *c)
{
	__asm__ volatile(
		"	mr	31, %0\n"
		/* the FPSCR, VSCR, VRSAVE, CR2-4 set, and read back once */
		"	lfd	0, 0x098(31)\n"
		"	mtfsf	0xff, 0\n"
		"	mffs	0\n"
		"	stfd	0, 0x0a0(31)\n"
		"	li	10, 0x0d0\n"
		"	lvx	0, 31, 10\n"
		"	mtvscr	0\n"
		"	mfvscr	0\n"
		"	li	10, 0x0e0\n"
		"	stvx	0, 31, 10\n"
		"	lis	10, 0x5a5a\n"
		"	ori	10, 10, 0x1234\n"
		"	mtvrsave 10\n"
		"	mfvrsave 10\n"
		"	std	10, 0x0c0(31)\n"
		"	lis	10, 0x0075\n"	/* CR2 = 7, CR3 = 5, CR4 = 9 */
		"	ori	10, 10, 0x9000\n"
		"	mtcrf	0x38, 10\n"
		"	mfcr	10\n"
		"	std	10, 0x0b0(31)\n"
		/* the patterns */
		"	ld	14, 0x000(31)\n"
		"	ld	15, 0x008(31)\n"
		"	ld	16, 0x010(31)\n"
		"	ld	17, 0x018(31)\n"
		"	ld	18, 0x020(31)\n"
		"	ld	19, 0x028(31)\n"
		"	ld	20, 0x030(31)\n"
		"	ld	21, 0x038(31)\n"
		LX8(0, 0x100) LX8(8, 0x100) LX8(16, 0x100) LX8(24, 0x100)
		LX8(32, 0x100) LX8(40, 0x100) LX8(48, 0x100) LX8(56, 0x100)
		/* access(gofile, F_OK); an error sets CR0[SO] */
		"1:	ld	3, 0x080(31)\n"
		"	li	4, 0\n"
		"	li	0, 33\n"
		"	sc\n"
		"	bns	2f\n"
		"	addi	3, 31, 0x088\n"	/* nanosleep(&ts, NULL) */
		"	li	4, 0\n"
		"	li	0, 162\n"
		"	sc\n"
		"	b	1b\n"
		"2:	std	14, 0x040(31)\n"
		"	std	15, 0x048(31)\n"
		"	std	16, 0x050(31)\n"
		"	std	17, 0x058(31)\n"
		"	std	18, 0x060(31)\n"
		"	std	19, 0x068(31)\n"
		"	std	20, 0x070(31)\n"
		"	std	21, 0x078(31)\n"
		STX8(0, 0x500) STX8(8, 0x500) STX8(16, 0x500) STX8(24, 0x500)
		STX8(32, 0x500) STX8(40, 0x500) STX8(48, 0x500) STX8(56, 0x500)
		"	mfcr	10\n"
		"	std	10, 0x0b8(31)\n"
		"	mfvrsave 10\n"
		"	std	10, 0x0c8(31)\n"
		"	mfvscr	0\n"
		"	li	10, 0x0f0\n"
		"	stvx	0, 31, 10\n"
		"	mffs	0\n"
		"	stfd	0, 0x0a8(31)\n"
		/* the defaults again, for the C code after */
		"	li	10, 0\n"
		"	std	10, -8(1)\n"
		"	lfd	0, -8(1)\n"
		"	mtfsf	0xff, 0\n"
		: : "r"(c)
		: "r0", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12",
		  "r14", "r15", "r16", "r17", "r18", "r19", "r20", "r21", "r31",
		  "cr0", "cr2", "cr3", "cr4", "ctr", "xer", "memory",
		  "vs0", "vs1", "vs2", "vs3", "vs4", "vs5", "vs6", "vs7",
		  "vs8", "vs9", "vs10", "vs11", "vs12", "vs13", "vs14", "vs15",
		  "vs16", "vs17", "vs18", "vs19", "vs20", "vs21", "vs22", "vs23",
		  "vs24", "vs25", "vs26", "vs27", "vs28", "vs29", "vs30", "vs31",
		  "vs32", "vs33", "vs34", "vs35", "vs36", "vs37", "vs38", "vs39",
		  "vs40", "vs41", "vs42", "vs43", "vs44", "vs45", "vs46", "vs47",
		  "vs48", "vs49", "vs50", "vs51", "vs52", "vs53", "vs54", "vs55",
		  "vs56", "vs57", "vs58", "vs59", "vs60", "vs61", "vs62", "vs63");
}

int main(int argc, char **argv)
{
	tp_init(argc, argv);
	for (int i = 0; i < 8; i++)
		ctx.gpr_in[i] = 0x5a5a000000000000ULL | (0x1111ULL * (i + 1)) << 8 | i;
	for (int i = 0; i < 64; i++)
		for (int k = 0; k < 16; k++)
			ctx.vsx_in[i][k] = (uint8_t)(0x11 + 7 * i + 13 * k);
	ctx.fpscr_in = 1;		/* RN: round toward zero */
	for (int k = 0; k < 16; k += 4)	/* NJ, in whichever word mtvscr takes */
		ctx.vscr_in[k + 2] = 1;
	ctx.gofile = tp_gofile;
	ctx.ts.tv_nsec = 20 * 1000 * 1000;
	tp_ready();
	regs_wait(&ctx);
	for (int i = 0; i < 8; i++)
		tp_check(ctx.gpr_out[i] == ctx.gpr_in[i], "r%d: %#llx, want %#llx", 14 + i,
			 (unsigned long long)ctx.gpr_out[i], (unsigned long long)ctx.gpr_in[i]);
	for (int i = 0; i < 64; i++)
		tp_check(!memcmp(ctx.vsx_out[i], ctx.vsx_in[i], 16), "vs%d differs", i);
	tp_check(ctx.fpscr_after == ctx.fpscr_before, "fpscr %#llx, want %#llx",
		 (unsigned long long)ctx.fpscr_after, (unsigned long long)ctx.fpscr_before);
	tp_check((ctx.fpscr_before & 3) == 1, "fpscr %#llx: the rounding mode did not take",
		 (unsigned long long)ctx.fpscr_before);
	tp_check(!memcmp(ctx.vscr_after, ctx.vscr_before, 16), "vscr differs");
	tp_check((ctx.cr_after & 0x00fff000) == (ctx.cr_before & 0x00fff000),
		 "cr %#llx, want %#llx in fields 2-4", (unsigned long long)ctx.cr_after,
		 (unsigned long long)ctx.cr_before);
	tp_check(ctx.vrsave_after == ctx.vrsave_before, "vrsave %#llx, want %#llx",
		 (unsigned long long)ctx.vrsave_after, (unsigned long long)ctx.vrsave_before);
	return tp_done();
}
