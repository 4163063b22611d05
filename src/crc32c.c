/* crc32c.c - CRC32C: carry-less multiplication folding, the SSE4.2
 * instruction, or a table.
 *
 * The crc32 instruction is one long dependency chain, and on some CPUs
 * (AMD's) independent lanes do not run it any faster: 3 GB/s.  So a
 * long buffer is folded with PCLMULQDQ, as the kernel does: four 16-byte
 * accumulators each multiplied forward by x^512 and added into the next
 * 64 bytes, then into one another; the instruction takes the last 16
 * bytes and the tail.  A value multiplied by x^k mod P is congruent to
 * the value k bits further on, which is all a CRC sees.
 *
 * Polynomials are kept reflected (bit 31 is x^0, the first bit of a
 * message the highest power), as the instruction and the table do. */
#ifdef __x86_64__
#include <cpuid.h>
#include <immintrin.h>
#endif
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "crc32c.h"

#define POLY		0x82f63b78u
#define FOLD_MIN	256	/* below, the instruction alone is as fast */

static struct {
	uint32_t table[256];
	uint32_t pow8[64];	/* x^(8 * 2^i) mod P */
	uint64_t k512[2];	/* x^575, x^511: fold 64 bytes on */
	uint64_t k128[2];	/* x^191, x^127: fold 16 bytes on */
	bool sse42, pclmul;
} K;

static pthread_once_t K_once = PTHREAD_ONCE_INIT;

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--)
		crc = K.table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* a * b mod P */
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

static uint32_t xpow(uint64_t e)	/* x^e mod P */
{
	uint32_t r = 0x80000000u, sq = 0x40000000u;	/* 1 and x */

	for (; e; e >>= 1) {
		if (e & 1)
			r = gf2_mul(r, sq);
		sq = gf2_mul(sq, sq);
	}
	return r;
}

/* x^(8n) mod P: what feeding n zero bytes multiplies a state by */
static uint32_t xpow8n(size_t n)
{
	uint32_t r = 0x80000000u;

	for (int i = 0; n; n >>= 1, i++)
		if (n & 1)
			r = gf2_mul(r, K.pow8[i]);
	return r;
}

/* As a 64-bit PCLMULQDQ operand, whose product comes out one bit short:
 * the caller asks for x^(k-1) to get x^k. */
static uint64_t k64(uint64_t e)
{
	return (uint64_t)xpow(e) << 32;
}

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t v = i;
		for (int k = 0; k < 8; k++)
			v = (v >> 1) ^ (POLY & -(v & 1));
		K.table[i] = v;
	}
	for (int i = 0; i < 64; i++)
		K.pow8[i] = i ? gf2_mul(K.pow8[i - 1], K.pow8[i - 1]) : xpow(8);
	K.k512[0] = k64(512 + 64 - 1);
	K.k512[1] = k64(512 - 1);
	K.k128[0] = k64(128 + 64 - 1);
	K.k128[1] = k64(128 - 1);
#ifdef __x86_64__
	unsigned int a, b, c, d;

	if (__get_cpuid(1, &a, &b, &c, &d)) {
		K.sse42 = c & bit_SSE4_2;
		K.pclmul = K.sse42 && (c & bit_PCLMUL);
	}
#endif
}

#ifdef __x86_64__
__attribute__((target("sse4.2")))
static uint32_t crc_insn(uint32_t crc, const unsigned char *p, size_t len)
{
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

__attribute__((target("sse4.2,pclmul")))
static inline __m128i fold(__m128i a, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00),
					   _mm_clmulepi64_si128(a, k, 0x11)), next);
}

/* len >= 64: the state goes into the first four bytes (a CRC of M from
 * state c is the CRC from 0 of M with c added to its first 32 bits). */
__attribute__((target("sse4.2,pclmul")))
static uint32_t crc_fold(uint32_t crc, const unsigned char *p, size_t len)
{
	const __m128i k512 = _mm_loadu_si128((const void *)K.k512);
	const __m128i k128 = _mm_loadu_si128((const void *)K.k128);
	__m128i a0 = _mm_loadu_si128((const void *)p);
	__m128i a1 = _mm_loadu_si128((const void *)(p + 16));
	__m128i a2 = _mm_loadu_si128((const void *)(p + 32));
	__m128i a3 = _mm_loadu_si128((const void *)(p + 48));
	unsigned char last[16];

	a0 = _mm_xor_si128(a0, _mm_cvtsi32_si128((int)crc));
	for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
		a0 = fold(a0, k512, _mm_loadu_si128((const void *)p));
		a1 = fold(a1, k512, _mm_loadu_si128((const void *)(p + 16)));
		a2 = fold(a2, k512, _mm_loadu_si128((const void *)(p + 32)));
		a3 = fold(a3, k512, _mm_loadu_si128((const void *)(p + 48)));
	}
	a1 = fold(a0, k128, a1);
	a2 = fold(a1, k128, a2);
	a3 = fold(a2, k128, a3);
	_mm_storeu_si128((void *)last, a3);
	crc = crc_insn(0, last, 16);
	return crc_insn(crc, p, len);
}

static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	if (K.pclmul && len >= FOLD_MIN)
		return crc_fold(crc, p, len);
	return K.sse42 ? crc_insn(crc, p, len) : crc_sw(crc, p, len);
}
#else	/* other CPUs: the table */
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	return crc_sw(crc, p, len);
}
#endif

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t len_b)
{
	pthread_once(&K_once, crc_init);
	return gf2_mul(crc_a, xpow8n(len_b)) ^ crc_b;
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&K_once, crc_init);
	return ~crc_hw(~crc, buf, len);
}
