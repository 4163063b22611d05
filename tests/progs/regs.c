/* regs - CPU register state survives checkpoint/restart.
 *
 * tp_regs_wait() below loads patterns into the general purpose registers
 * that system calls preserve, into all vector registers at the widest
 * size the CPU has (xmm, ymm, or zmm0-31 with k0-k7), onto the x87 stack,
 * and sets MXCSR, the x87 control word and the direction flag.  Then, with
 * all of that live, it waits for GOFILE with raw access/nanosleep system
 * calls, so the checkpoint meets the task inside the loop and only a
 * complete restore of the registers lets it see the patterns again.  The
 * fs and gs bases are checked too: gs is set to a custom value here.
 */
#include "tp.h"

#include <asm/prctl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

#define S_(x) #x
#define S(x) S_(x)

/* Vector register sets, in tp_regs_wait's terms (macros: the assembly
 * needs them as text). */
#define LV_SSE		0	/* xmm0-15 */
#define LV_AVX		1	/* ymm0-15 */
#define LV_AVX512F	2	/* zmm0-31, k0-k7 16 bits wide */
#define LV_AVX512BW	3	/* zmm0-31, k0-k7 64 bits wide */
static const char *const level_names[] = {
	"sse", "avx", "avx512f", "avx512f+bw",
};

#define NGPR 9
static const char *const gpr_names[NGPR] = {
	"rbx", "rbp", "r12", "r13", "r14", "r15", "rdx", "r8", "r10",
};

/* Shared with the assembly by the offsets below, checked at build time. */
struct regs_ctx {
	uint64_t gpr_in[NGPR];
	uint64_t gpr_out[NGPR];
	const char *gofile;
	struct timespec ts;
	uint64_t level;
	uint64_t rflags_out;
	uint32_t mxcsr_in;
	uint32_t mxcsr_out;
	uint32_t mxcsr_saved;
	uint16_t fcw_in;
	uint16_t fcw_out;
	uint16_t fcw_saved;
	uint16_t fsw_out;
	uint8_t x87_in[2][16];
	uint8_t x87_out[2][16];
	uint64_t k_in[8];
	uint64_t k_out[8];
	_Alignas(64) uint8_t vec_in[32][64];
	uint8_t vec_out[32][64];
};

#define O_GPR_IN	0x000
#define O_GPR_OUT	0x048
#define O_GOFILE	0x090
#define O_TS		0x098
#define O_LEVEL		0x0a8
#define O_RFLAGS	0x0b0
#define O_MXCSR_IN	0x0b8
#define O_MXCSR_OUT	0x0bc
#define O_MXCSR_SAVED	0x0c0
#define O_FCW_IN	0x0c4
#define O_FCW_OUT	0x0c6
#define O_FCW_SAVED	0x0c8
#define O_FSW_OUT	0x0ca
#define O_X87_IN	0x0cc
#define O_X87_OUT	0x0ec
#define O_K_IN		0x110
#define O_K_OUT		0x150
#define O_VEC_IN	0x1c0
#define O_VEC_OUT	0x9c0

#define CHECK_OFF(f, o) _Static_assert(offsetof(struct regs_ctx, f) == o, #f)
CHECK_OFF(gpr_in, O_GPR_IN);
CHECK_OFF(gpr_out, O_GPR_OUT);
CHECK_OFF(gofile, O_GOFILE);
CHECK_OFF(ts, O_TS);
CHECK_OFF(level, O_LEVEL);
CHECK_OFF(rflags_out, O_RFLAGS);
CHECK_OFF(mxcsr_in, O_MXCSR_IN);
CHECK_OFF(mxcsr_out, O_MXCSR_OUT);
CHECK_OFF(mxcsr_saved, O_MXCSR_SAVED);
CHECK_OFF(fcw_in, O_FCW_IN);
CHECK_OFF(fcw_out, O_FCW_OUT);
CHECK_OFF(fcw_saved, O_FCW_SAVED);
CHECK_OFF(fsw_out, O_FSW_OUT);
CHECK_OFF(x87_in, O_X87_IN);
CHECK_OFF(x87_out, O_X87_OUT);
CHECK_OFF(k_in, O_K_IN);
CHECK_OFF(k_out, O_K_OUT);
CHECK_OFF(vec_in, O_VEC_IN);
CHECK_OFF(vec_out, O_VEC_OUT);

#define X8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define X16(M) X8(M) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define X32(M) X16(M) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) \
	M(24) M(25) M(26) M(27) M(28) M(29) M(30) M(31)

#define VEC_IN(n)	S(O_VEC_IN) "+" #n "*64(%r9)"
#define VEC_OUT(n)	S(O_VEC_OUT) "+" #n "*64(%r9)"
#define K_IN(n)		S(O_K_IN) "+" #n "*8(%r9)"
#define K_OUT(n)	S(O_K_OUT) "+" #n "*8(%r9)"

#define LD_XMM(n)	"movdqu " VEC_IN(n) ", %xmm" #n "\n\t"
#define LD_YMM(n)	"vmovdqu " VEC_IN(n) ", %ymm" #n "\n\t"
#define LD_ZMM(n)	"vmovdqu64 " VEC_IN(n) ", %zmm" #n "\n\t"
#define LD_KW(n)	"kmovw " K_IN(n) ", %k" #n "\n\t"
#define LD_KQ(n)	"kmovq " K_IN(n) ", %k" #n "\n\t"
#define ST_XMM(n)	"movdqu %xmm" #n ", " VEC_OUT(n) "\n\t"
#define ST_YMM(n)	"vmovdqu %ymm" #n ", " VEC_OUT(n) "\n\t"
#define ST_ZMM(n)	"vmovdqu64 %zmm" #n ", " VEC_OUT(n) "\n\t"
#define ST_KW(n)	"kmovw %k" #n ", " K_OUT(n) "\n\t"
#define ST_KQ(n)	"kmovq %k" #n ", " K_OUT(n) "\n\t"

#define GPRS(M) M(0, rbx) M(1, rbp) M(2, r12) M(3, r13) M(4, r14) \
	M(5, r15) M(6, rdx) M(7, r8) M(8, r10)
#define LD_GPR(n, r)	"mov " S(O_GPR_IN) "+" #n "*8(%r9), %" #r "\n\t"
#define ST_GPR(n, r)	"mov %" #r ", " S(O_GPR_OUT) "+" #n "*8(%r9)\n\t"

void tp_regs_wait(struct regs_ctx *ctx);

/*
 * A function of its own rather than an asm statement, so that it can use
 * every register without the compiler's help: it saves the callee-saved
 * registers, MXCSR and the x87 control word, as the ABI wants, and clears
 * DF and the x87 stack before returning.  The context stays in r9, which
 * neither access(2) nor nanosleep(2) takes; the kernel preserves all
 * registers across syscall except rax, rcx and r11.
 */
__asm__(
	".text\n"
	".globl tp_regs_wait\n"
	".type tp_regs_wait, @function\n"
	"tp_regs_wait:\n\t"
	"endbr64\n\t"
	"push %rbx\n\t"
	"push %rbp\n\t"
	"push %r12\n\t"
	"push %r13\n\t"
	"push %r14\n\t"
	"push %r15\n\t"
	"mov %rdi, %r9\n\t"

	"stmxcsr " S(O_MXCSR_SAVED) "(%r9)\n\t"
	"fnstcw " S(O_FCW_SAVED) "(%r9)\n\t"
	"ldmxcsr " S(O_MXCSR_IN) "(%r9)\n\t"
	"fldcw " S(O_FCW_IN) "(%r9)\n\t"
	"fldt " S(O_X87_IN) "(%r9)\n\t"
	"fldt " S(O_X87_IN) "+16(%r9)\n\t"

	"cmpq $" S(LV_AVX) ", " S(O_LEVEL) "(%r9)\n\t"
	"jb .Lld_sse\n\t"
	"je .Lld_avx\n\t"
	X32(LD_ZMM)
	"cmpq $" S(LV_AVX512BW) ", " S(O_LEVEL) "(%r9)\n\t"
	"jb .Lld_kw\n\t"
	X8(LD_KQ)
	"jmp .Lld_done\n"
	".Lld_kw:\n\t"
	X8(LD_KW)
	"jmp .Lld_done\n"
	".Lld_avx:\n\t"
	X16(LD_YMM)
	"jmp .Lld_done\n"
	".Lld_sse:\n\t"
	X16(LD_XMM)
	".Lld_done:\n\t"

	GPRS(LD_GPR)
	"std\n"

	/* while (access(gofile, F_OK)) nanosleep(&ts, NULL); */
	".Lloop:\n\t"
	"mov $" S(SYS_access) ", %eax\n\t"
	"mov " S(O_GOFILE) "(%r9), %rdi\n\t"
	"xor %esi, %esi\n\t"
	"syscall\n\t"
	"test %rax, %rax\n\t"
	"jz .Lgo\n\t"
	"mov $" S(SYS_nanosleep) ", %eax\n\t"
	"lea " S(O_TS) "(%r9), %rdi\n\t"
	"xor %esi, %esi\n\t"
	"syscall\n\t"
	"jmp .Lloop\n"
	".Lgo:\n\t"

	"pushfq\n\t"
	"pop %rax\n\t"
	"cld\n\t"
	"mov %rax, " S(O_RFLAGS) "(%r9)\n\t"
	GPRS(ST_GPR)

	"cmpq $" S(LV_AVX) ", " S(O_LEVEL) "(%r9)\n\t"
	"jb .Lst_sse\n\t"
	"je .Lst_avx\n\t"
	X32(ST_ZMM)
	"cmpq $" S(LV_AVX512BW) ", " S(O_LEVEL) "(%r9)\n\t"
	"jb .Lst_kw\n\t"
	X8(ST_KQ)
	"jmp .Lst_vzu\n"
	".Lst_kw:\n\t"
	X8(ST_KW)
	"jmp .Lst_vzu\n"
	".Lst_avx:\n\t"
	X16(ST_YMM)
	".Lst_vzu:\n\t"
	"vzeroupper\n\t"
	"jmp .Lst_done\n"
	".Lst_sse:\n\t"
	X16(ST_XMM)
	".Lst_done:\n\t"

	"fnstsw " S(O_FSW_OUT) "(%r9)\n\t"
	"fstpt " S(O_X87_OUT) "(%r9)\n\t"
	"fstpt " S(O_X87_OUT) "+16(%r9)\n\t"
	"stmxcsr " S(O_MXCSR_OUT) "(%r9)\n\t"
	"fnstcw " S(O_FCW_OUT) "(%r9)\n\t"
	"ldmxcsr " S(O_MXCSR_SAVED) "(%r9)\n\t"
	"fldcw " S(O_FCW_SAVED) "(%r9)\n\t"

	"pop %r15\n\t"
	"pop %r14\n\t"
	"pop %r13\n\t"
	"pop %r12\n\t"
	"pop %rbp\n\t"
	"pop %rbx\n\t"
	"ret\n"
	".size tp_regs_wait, .-tp_regs_wait\n"
);

static struct regs_ctx ctx;

/* What gs will point at: reading %gs:0 must give this. */
static volatile uint64_t gs_target[2] = {
	0x6573ba5e6573ba5eULL, 0x0123456789abcdefULL,
};

/* Two x87 extended-precision values: 64-bit mantissa with the explicit
 * integer bit, then sign and exponent.  Loads and stores of this format
 * never round, so the bytes must come back exactly. */
static const uint8_t x87_vals[2][10] = {
	{ 0x34, 0xc2, 0x68, 0x21, 0xa2, 0xda, 0x0f, 0xc9, 0x00, 0x40 },
	{ 0x23, 0x01, 0xef, 0xbe, 0xad, 0xde, 0x00, 0x80, 0xf0, 0xbf },
};

/* A valid MXCSR: round toward zero, flush-to-zero, denormals-are-zero if
 * the CPU has it, all exceptions masked, and the sticky invalid flag. */
static uint32_t pick_mxcsr(void)
{
	_Alignas(16) uint8_t fx[512];
	uint32_t mask;

	memset(fx, 0, sizeof(fx));
	__asm__ volatile("fxsave %0" : "=m"(fx));
	memcpy(&mask, fx + 28, 4);
	if (!mask)
		mask = 0xffbf;
	return (0x8000 | 0x6000 | 0x1f80 | 0x0040 | 0x0001) & mask;
}

static uint64_t gs_base_now(void)
{
	uint64_t v = 0;

	syscall(SYS_arch_prctl, ARCH_GET_GS, &v);
	return v;
}

int main(int argc, char **argv)
{
	/* x87: round toward zero, double precision, exceptions masked. */
	const uint16_t fcw = 0x0e7f;
	const uint32_t mxcsr = pick_mxcsr();
	unsigned int nvec, vlen, r, b, bad;
	uint64_t fs_before, fs_after, v;
	int level;

	tp_init(argc, argv);

	if (__builtin_cpu_supports("avx512f"))
		level = __builtin_cpu_supports("avx512bw") ? LV_AVX512BW :
							     LV_AVX512F;
	else if (__builtin_cpu_supports("avx"))
		level = LV_AVX;
	else
		level = LV_SSE;
	nvec = level >= LV_AVX512F ? 32 : 16;
	vlen = level >= LV_AVX512F ? 64 : level == LV_AVX ? 32 : 16;

	ctx.level = level;
	ctx.gofile = tp_gofile;
	ctx.ts.tv_nsec = 2 * 1000 * 1000;
	for (r = 0; r < NGPR; r++)
		ctx.gpr_in[r] = 0x5a00000000000000ULL ^
				((r + 1) * 0x0123456789abcdefULL);
	for (r = 0; r < 32; r++)
		for (b = 0; b < 64; b++)
			ctx.vec_in[r][b] = (uint8_t)((r * 64 + b) * 151 + 7);
	for (r = 0; r < 8; r++)
		ctx.k_in[r] = 0xfedcba9876543210ULL ^
			      ((r + 1) * 0x1111111111111111ULL);
	ctx.mxcsr_in = mxcsr;
	ctx.fcw_in = fcw;
	memcpy(ctx.x87_in[0], x87_vals[0], 10);
	memcpy(ctx.x87_in[1], x87_vals[1], 10);

	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs_before) ||
	    syscall(SYS_arch_prctl, ARCH_SET_GS, gs_target))
		return 2;

	tp_ready();
	tp_regs_wait(&ctx);

	for (r = 0; r < NGPR; r++)
		tp_check(ctx.gpr_out[r] == ctx.gpr_in[r],
			 "%s is %#lx, not %#lx", gpr_names[r],
			 (unsigned long)ctx.gpr_out[r],
			 (unsigned long)ctx.gpr_in[r]);

	for (r = 0; r < nvec; r++) {
		for (bad = 0, b = 0; b < vlen; b++)
			bad += ctx.vec_out[r][b] != ctx.vec_in[r][b];
		tp_check(!bad, "%s: vector register %u: %u of %u bytes differ",
			 level_names[level], r, bad, vlen);
	}
	if (level >= LV_AVX512F) {
		uint64_t mask = level == LV_AVX512BW ? ~0ULL : 0xffff;

		for (r = 0; r < 8; r++)
			tp_check(ctx.k_out[r] == (ctx.k_in[r] & mask),
				 "k%u is %#lx, not %#lx", r,
				 (unsigned long)ctx.k_out[r],
				 (unsigned long)(ctx.k_in[r] & mask));
	}

	tp_check(ctx.mxcsr_out == mxcsr, "MXCSR is %#x, not %#x",
		 ctx.mxcsr_out, mxcsr);
	tp_check(ctx.fcw_out == fcw, "x87 control word is %#x, not %#x",
		 ctx.fcw_out, fcw);
	tp_check(((ctx.fsw_out >> 11) & 7) == 6,
		 "x87 stack top is %u, not 6 (status word %#x)",
		 (ctx.fsw_out >> 11) & 7, ctx.fsw_out);
	/* Popped in reverse order of the pushes. */
	tp_check(!memcmp(ctx.x87_out[0], x87_vals[1], 10) &&
		 !memcmp(ctx.x87_out[1], x87_vals[0], 10),
		 "x87 stack registers differ");

	tp_check(ctx.rflags_out & 0x400, "direction flag lost (rflags %#lx)",
		 (unsigned long)ctx.rflags_out);

	/* fs: glibc's thread pointer, whose first word points to itself. */
	tp_check(syscall(SYS_arch_prctl, ARCH_GET_FS, &fs_after) == 0 &&
		 fs_after == fs_before, "fs base is %#lx, not %#lx",
		 (unsigned long)fs_after, (unsigned long)fs_before);
	__asm__ volatile("mov %%fs:0, %0" : "=r"(v));
	tp_check(v == fs_before, "%%fs:0 is %#lx", (unsigned long)v);

	/* gs: the base itself, and where a gs-relative load goes. */
	v = gs_base_now();
	tp_check(v == (uintptr_t)gs_target, "gs base is %#lx, not %p",
		 (unsigned long)v, (void *)gs_target);
	if (v == (uintptr_t)gs_target) {
		__asm__ volatile("mov %%gs:0, %0" : "=r"(v));
		tp_check(v == gs_target[0], "%%gs:0 is %#lx",
			 (unsigned long)v);
		__asm__ volatile("mov %%gs:8, %0" : "=r"(v));
		tp_check(v == gs_target[1], "%%gs:8 is %#lx",
			 (unsigned long)v);
	}
	/* With FSGSBASE, the register itself, as the CPU holds it. */
	if (getauxval(AT_HWCAP2) & 2) {
		__asm__ volatile("rdgsbase %0" : "=r"(v));
		tp_check(v == (uintptr_t)gs_target, "rdgsbase is %#lx",
			 (unsigned long)v);
	}

	return tp_done();
}
