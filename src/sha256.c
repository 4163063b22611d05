/* sha256.c - SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104).
 *
 * Our own, small and checked against the FIPS 180 and RFC 4231 vectors
 * (tests/unit/sha256_test.c), rather than libcrypto: the library and its
 * static archive then need nothing beyond libc, as before.  A CPU with
 * the SHA extensions hashes with them (several times faster: the MAC of
 * an image is computed over all of it, twice), any other in plain C.
 */
#ifdef __x86_64__
#include <cpuid.h>
#include <immintrin.h>
#endif
#include <string.h>

#include "sha256.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void blocks_c(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;

	for (; nblocks--; p += SHA256_BLOCK) {
		for (int i = 0; i < 16; i++)
			w[i] = be32(p + 4 * i);
		for (int i = 16; i < 64; i++) {
			uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
			uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

			w[i] = w[i - 16] + s0 + w[i - 7] + s1;
		}
		a = h[0], b = h[1], c = h[2], d = h[3];
		e = h[4], f = h[5], g = h[6], k = h[7];
		for (int i = 0; i < 64; i++) {
			t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
			     ((e & f) ^ (~e & g)) + K[i] + w[i];
			t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
			     ((a & b) ^ (a & c) ^ (b & c));
			k = g, g = f, f = e, e = d + t1;
			d = c, c = b, b = a, a = t1 + t2;
		}
		h[0] += a, h[1] += b, h[2] += c, h[3] += d;
		h[4] += e, h[5] += f, h[6] += g, h[7] += k;
	}
}

#ifdef __x86_64__
/* The SHA extensions' rounds: the state as ABEF and CDGH halves, four
 * rounds a step, the message schedule four words ahead (Intel's "SHA
 * extensions" paper's arrangement). */
__attribute__((target("sha,ssse3,sse4.1")))
static void blocks_ni(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i st0, st1, t, m, w[4], save0, save1;

	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xb1);
	st1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1b);
	st0 = _mm_alignr_epi8(t, st1, 8);
	st1 = _mm_blend_epi16(st1, t, 0xf0);
	for (; nblocks--; p += SHA256_BLOCK) {
		save0 = st0;
		save1 = st1;
#pragma GCC unroll 16
		for (int g = 0; g < 16; g++) {
			if (g < 4)
				w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)),
							swap);
			m = _mm_add_epi32(w[g % 4], _mm_loadu_si128((const __m128i *)&K[4 * g]));
			st1 = _mm_sha256rnds2_epu32(st1, st0, m);
			if (g >= 3 && g <= 14)
				w[(g + 1) % 4] = _mm_sha256msg2_epu32(
					_mm_add_epi32(w[(g + 1) % 4],
						      _mm_alignr_epi8(w[g % 4], w[(g + 3) % 4], 4)),
					w[g % 4]);
			st0 = _mm_sha256rnds2_epu32(st0, st1, _mm_shuffle_epi32(m, 0x0e));
			if (g >= 1 && g <= 12)
				w[(g + 3) % 4] = _mm_sha256msg1_epu32(w[(g + 3) % 4], w[g % 4]);
		}
		st0 = _mm_add_epi32(st0, save0);
		st1 = _mm_add_epi32(st1, save1);
	}
	t = _mm_shuffle_epi32(st0, 0x1b);
	st1 = _mm_shuffle_epi32(st1, 0xb1);
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, st1, 0xf0));
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(st1, t, 8));
}

static bool cpu_has_sha(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return false;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
}
#else	/* other CPUs: plain C */
static void blocks_ni(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
	blocks_c(h, p, nblocks);
}

static bool cpu_has_sha(void)
{
	return false;
}
#endif

static void blocks(struct sha256 *s, const uint8_t *p, size_t nblocks)
{
	if (s->ni)
		blocks_ni(s->h, p, nblocks);
	else
		blocks_c(s->h, p, nblocks);
}

void sha256_generic(struct sha256 *s)
{
	s->ni = false;
}

void sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->n = 0;
	s->ni = cpu_has_sha();
}

void sha256_update(struct sha256 *s, const void *data, size_t n)
{
	const uint8_t *p = data;
	size_t have = s->n % SHA256_BLOCK;

	s->n += n;
	if (have) {
		size_t k = SHA256_BLOCK - have < n ? SHA256_BLOCK - have : n;

		memcpy(s->buf + have, p, k);
		p += k;
		n -= k;
		if (have + k < SHA256_BLOCK)
			return;
		blocks(s, s->buf, 1);
	}
	blocks(s, p, n / SHA256_BLOCK);
	memcpy(s->buf, p + n / SHA256_BLOCK * SHA256_BLOCK, n % SHA256_BLOCK);
}

void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN])
{
	uint64_t bits = s->n * 8;
	size_t have = s->n % SHA256_BLOCK;
	uint8_t pad[SHA256_BLOCK * 2] = { 0x80 };
	size_t padn = (have < 56 ? 56 : 120) - have;

	for (int i = 0; i < 8; i++)
		pad[padn + i] = bits >> (56 - 8 * i);
	sha256_update(s, pad, padn + 8);
	for (int i = 0; i < 8; i++)
		put_be32(out + 4 * i, s->h[i]);
	explicit_bzero(s, sizeof(*s));
}

void hmac_sha256_init(struct hmac_sha256 *m, const void *key, size_t len)
{
	uint8_t k[SHA256_BLOCK] = { 0 }, ikey[SHA256_BLOCK];

	if (len > SHA256_BLOCK) {	/* a long key is its hash (RFC 2104) */
		sha256_init(&m->in);
		sha256_update(&m->in, key, len);
		sha256_final(&m->in, k);
	} else {
		memcpy(k, key, len);
	}
	for (int i = 0; i < SHA256_BLOCK; i++) {
		ikey[i] = k[i] ^ 0x36;
		m->okey[i] = k[i] ^ 0x5c;
	}
	sha256_init(&m->in);
	sha256_update(&m->in, ikey, sizeof(ikey));
	explicit_bzero(k, sizeof(k));
	explicit_bzero(ikey, sizeof(ikey));
}

void hmac_sha256_update(struct hmac_sha256 *m, const void *p, size_t n)
{
	sha256_update(&m->in, p, n);
}

void hmac_sha256_final(struct hmac_sha256 *m, uint8_t out[SHA256_LEN])
{
	uint8_t inner[SHA256_LEN];

	sha256_final(&m->in, inner);
	sha256_init(&m->in);
	sha256_update(&m->in, m->okey, sizeof(m->okey));
	sha256_update(&m->in, inner, sizeof(inner));
	sha256_final(&m->in, out);
	explicit_bzero(m, sizeof(*m));
	explicit_bzero(inner, sizeof(inner));
}

bool mac_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	volatile uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}
