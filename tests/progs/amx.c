/* amx.c - AMX tile registers (dynamically enabled xstate, XFD-guarded):
 * the permission (ARCH_REQ_XCOMP_PERM) and the tile data must both come
 * back.  On a CPU without AMX it only checks that nothing breaks. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "tp.h"

#define ARCH_GET_XCOMP_PERM	0x1022
#define ARCH_REQ_XCOMP_PERM	0x1023
#define XFEATURE_XTILEDATA	18

struct tilecfg {
	uint8_t palette, start_row, rsvd[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

static uint8_t in[1024], out[1024];

static int have_amx(void)
{
	uint32_t a, b, c, d;

	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
	return (d >> 24) & 1;	/* AMX-TILE */
}

int main(int argc, char **argv)
{
	struct tilecfg cfg = { .palette = 1 };
	uint64_t perm = 0;

	tp_init(argc, argv);
	if (!have_amx() || syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM,
				   XFEATURE_XTILEDATA)) {
		tp_ready();
		tp_wait_go();
		printf("note: no AMX here, nothing to check\n");
		return tp_done();
	}
	for (int i = 0; i < 8; i++) {	/* palette 1 has 8 tiles */
		cfg.colsb[i] = 64;
		cfg.rows[i] = 16;
	}
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 3);
	/* tile 2 holds 16 rows of 64 bytes while we wait */
	__asm__ volatile("ldtilecfg %0" :: "m"(cfg));
	__asm__ volatile("tileloadd (%0,%1,1), %%tmm2" :: "r"(in), "r"(64L) : "memory");
	tp_ready();
	tp_wait_go();
	__asm__ volatile("tilestored %%tmm2, (%0,%1,1)" :: "r"(out), "r"(64L) : "memory");
	__asm__ volatile("tilerelease");
	syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &perm);
	tp_check(perm & (1ULL << XFEATURE_XTILEDATA), "AMX permission lost (0x%llx)",
		 (unsigned long long)perm);
	tp_check(!memcmp(in, out, sizeof(in)), "tile register 2 lost its data");
	return tp_done();
}
