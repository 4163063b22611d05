/* crc32c.c - CRC32C: carry-less multiplication folding, the SSE4.2
 * instruction, or a table.
 *
 * The crc32 instruction is one long dependency chain, and on some CPUs
 * (AMD's) independent lanes do not run it any faster: 3 GB/s.  So a
 * long buffer is folded with PCLMULQDQ, as the kernel does: four 16-byte
 * accumulators each multiplied forward by x^512 and added into the next
 * 64 bytes, then into one another; the instruction takes the last 16
 * bytes and the tail.  A value multiplied by x^k mod P is congruent to
 * the value k bits further on, which is all a CRC sees.  Where the CPU
 * has VPCLMULQDQ the accumulators are ymm registers, 128 bytes a step
 * (restart checks every page it places): on an EPYC of this project's
 * VMs, 1 MiB pieces from memory at 26 GB/s instead of 13.7.  Its zmm
 * form, 33 GB/s, was not kept: a restart was no faster with it, and it
 * would make the AVX-512 state live in every thread that checks.
 *
 * Polynomials are kept reflected (bit 31 is x^0, the first bit of a
 * message the highest power), as the instruction and the table do. */
#ifdef __x86_64__
#include <cpuid.h>
#include <stdbool.h>
#include <immintrin.h>

#include "arch/x86/cpu.h"	/* XCR0 */
#endif
#include <pthread.h>
#include <string.h>

#include "crc32c.h"

#define POLY		0x82f63b78u
#define FOLD_MIN	256	/* below, the instruction alone is as fast */
#define WIDE_MIN	1024	/* below, the wide loops barely start */

static struct {
	uint32_t table[256];
	uint32_t pow8[64];	/* x^(8 * 2^i) mod P */
	uint64_t k512[2];	/* x^575, x^511: fold 64 bytes on */
	uint64_t k128[2];	/* x^191, x^127: fold 16 bytes on */
	uint64_t k1024[2];	/* fold 128 bytes on (4 ymm lanes) */
	enum crc32c_path path, best;
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

#ifdef __x86_64__
/* VPCLMULQDQ and AVX2 (leaf 1's ecx given: @ecx1), with the OS saving
 * the ymm registers (XCR0's SSE and AVX state).  Asked here, not with
 * __builtin_cpu_supports(): that pulls in libgcc's constructor, a dozen
 * CPUIDs at every start of ckpt, each a VM exit (5.6 us on this
 * project's KVM machines). */
static bool ymm_clmul(unsigned int ecx1)
{
	unsigned int a, b, c, d;

	if (!(ecx1 & bit_AVX) || (cpu_xfeatures() & 6) != 6 ||
	    !__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return (b & bit_AVX2) && (c & bit_VPCLMULQDQ);
}
#endif

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
	K.k1024[0] = k64(1024 + 64 - 1);
	K.k1024[1] = k64(1024 - 1);
#ifdef __x86_64__
	unsigned int a, b, c, d;

	K.best = CRC32C_TABLE;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2)) {
		K.best = CRC32C_INSN;
		if (c & bit_PCLMUL)
			K.best = CRC32C_FOLD;
	}
	if (K.best == CRC32C_FOLD && ymm_clmul(c))
		K.best = CRC32C_YMM;
#endif
	K.path = K.best;
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

/* The same folding, 4 x 32 bytes a step with VPCLMULQDQ on ymm, from
 * the state in acc[0]; ends with the four 16-byte accumulators of
 * crc_fold()'s loop in acc, and says how many bytes it took. */
__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq")))
static inline __m256i fold256(__m256i a, __m256i k, __m256i next)
{
	return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(a, k, 0x00),
						 _mm256_clmulepi64_epi128(a, k, 0x11)), next);
}

__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq")))
static size_t fold_ymm(__m128i acc[4], const unsigned char *p, size_t len)
{
	const __m256i k1024 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const void *)K.k1024));
	const __m256i k512 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const void *)K.k512));
	__m256i a0 = _mm256_loadu_si256((const void *)p);
	__m256i a1 = _mm256_loadu_si256((const void *)(p + 32));
	__m256i a2 = _mm256_loadu_si256((const void *)(p + 64));
	__m256i a3 = _mm256_loadu_si256((const void *)(p + 96));
	size_t done = 128;

	a0 = _mm256_xor_si256(a0, _mm256_zextsi128_si256(acc[0]));
	for (; len - done >= 128; done += 128) {
		a0 = fold256(a0, k1024, _mm256_loadu_si256((const void *)(p + done)));
		a1 = fold256(a1, k1024, _mm256_loadu_si256((const void *)(p + done + 32)));
		a2 = fold256(a2, k1024, _mm256_loadu_si256((const void *)(p + done + 64)));
		a3 = fold256(a3, k1024, _mm256_loadu_si256((const void *)(p + done + 96)));
	}
	a2 = fold256(a0, k512, a2);	/* 128 bytes in two 64-byte halves */
	a3 = fold256(a1, k512, a3);
	acc[0] = _mm256_castsi256_si128(a2);
	acc[1] = _mm256_extracti128_si256(a2, 1);
	acc[2] = _mm256_castsi256_si128(a3);
	acc[3] = _mm256_extracti128_si256(a3, 1);
	return done;
}

/* len >= 64: the state goes into the first four bytes (a CRC of M from
 * state c is the CRC from 0 of M with c added to its first 32 bits). */
__attribute__((target("sse4.2,pclmul")))
static uint32_t crc_fold(uint32_t crc, const unsigned char *p, size_t len)
{
	const __m128i k512 = _mm_loadu_si128((const void *)K.k512);
	const __m128i k128 = _mm_loadu_si128((const void *)K.k128);
	__m128i a[4] = { _mm_cvtsi32_si128((int)crc) }, a0, a1, a2, a3;
	unsigned char last[16];
	size_t done = 0;

	if (K.path == CRC32C_YMM && len >= WIDE_MIN)
		done = fold_ymm(a, p, len);
	if (done) {
		a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
	} else {
		a0 = _mm_xor_si128(_mm_loadu_si128((const void *)p), a[0]);
		a1 = _mm_loadu_si128((const void *)(p + 16));
		a2 = _mm_loadu_si128((const void *)(p + 32));
		a3 = _mm_loadu_si128((const void *)(p + 48));
		done = 64;
	}
	for (p += done, len -= done; len >= 64; p += 64, len -= 64) {
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
	if (K.path >= CRC32C_FOLD && len >= FOLD_MIN)
		return crc_fold(crc, p, len);
	return K.path >= CRC32C_INSN ? crc_insn(crc, p, len) : crc_sw(crc, p, len);
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

enum crc32c_path crc32c_use(enum crc32c_path most)
{
	pthread_once(&K_once, crc_init);
	K.path = most < K.best ? most : K.best;
	return K.path;
}
