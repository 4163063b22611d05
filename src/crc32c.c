/* crc32c.c - CRC32C with the SSE4.2 instruction, table fallback.
 * Three independent lanes hide the instruction's 3-cycle latency; they
 * are merged by shifting two of them through zeros (crc_shift()). */
#ifdef __x86_64__
#include <cpuid.h>
#endif
#include <stdbool.h>
#include <string.h>

#include "crc32c.h"

#define POLY 0x82f63b78u

static uint32_t table[256];
static bool have_sse42;

static void crc_init(void)
{
	static bool done;
	if (done)
		return;
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t v = i;
		for (int k = 0; k < 8; k++)
			v = (v >> 1) ^ (POLY & -(v & 1));
		table[i] = v;
	}
#ifdef __x86_64__
	unsigned int a, b, c, d;

	if (__get_cpuid(1, &a, &b, &c, &d))
		have_sse42 = c & bit_SSE4_2;
#endif
	done = true;
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* Multiply a crc state by x^(8*len) mod P: what feeding len zero bytes
 * does, done by squaring so it costs O(log len). */
static uint32_t gf2_mul(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (int i = 0; i < 32; i++) {
		if (b & 0x80000000u)
			r ^= a;
		b <<= 1;
		a = (a >> 1) ^ (POLY & -(a & 1));
	}
	return r;
}

static uint32_t xpow8n(size_t n)	/* x^(8n) mod P, reflected */
{
	uint32_t r = 0x80000000u, sq = 0x00800000u;	/* 1 and x^8 */

	for (; n; n >>= 1) {
		if (n & 1)
			r = gf2_mul(r, sq);
		sq = gf2_mul(sq, sq);
	}
	return r;
}

#ifdef __x86_64__
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	const size_t lane = 4096;

	while (len >= 3 * lane) {
		uint64_t c0 = crc, c1 = 0, c2 = 0, v0, v1, v2;

		for (size_t i = 0; i < lane; i += 8) {
			memcpy(&v0, p + i, 8);
			memcpy(&v1, p + lane + i, 8);
			memcpy(&v2, p + 2 * lane + i, 8);
			c0 = __builtin_ia32_crc32di(c0, v0);
			c1 = __builtin_ia32_crc32di(c1, v1);
			c2 = __builtin_ia32_crc32di(c2, v2);
		}
		crc = gf2_mul((uint32_t)c0, xpow8n(lane)) ^ (uint32_t)c1;
		crc = gf2_mul(crc, xpow8n(lane)) ^ (uint32_t)c2;
		p += 3 * lane;
		len -= 3 * lane;
	}
	uint64_t c = crc, v;
	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	crc = (uint32_t)c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#else	/* other CPUs: the table */
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	return crc_sw(crc, p, len);
}
#endif

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t len_b)
{
	return gf2_mul(crc_a, xpow8n(len_b)) ^ crc_b;
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	crc_init();
	crc = ~crc;
	crc = have_sse42 ? crc_hw(crc, buf, len) : crc_sw(crc, buf, len);
	return ~crc;
}
