/* crc32c_test.c - CRC32C against its check value and against a
 * bit-at-a-time reference of the polynomial, at every length and
 * alignment that picks another path (table, instruction, folding), from
 * any state; and crc32c_combine().  Each way this CPU has is run in
 * turn (xmm and ymm folding): an image's checksums must not depend on
 * the CPU that wrote it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

#include "check.h"

static uint32_t ref(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return ~crc;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_known(void)
{
	static const unsigned char zeros[32], ones[32] = {
		[0 ... 31] = 0xff };

	CHECK(crc32c(0, "123456789", 9) == 0xe3069283, "check value");
	CHECK(crc32c(0, "", 0) == 0, "empty");
	/* RFC 3720 B.4 */
	CHECK(crc32c(0, zeros, 32) == 0x8a9136aa, "32 zeros");
	CHECK(crc32c(0, ones, 32) == 0x62a8ab43, "32 ones");
}

static void test_lengths(void)
{
	enum { MAX = 70000 };
	unsigned char *b = malloc(MAX + 64);
	uint64_t s = 88172645463325252ull;

	CHECK(b != NULL, "buffer");
	if (!b)
		return;
	for (size_t i = 0; i < MAX + 64; i++)
		b[i] = (unsigned char)rnd(&s);
	for (size_t n = 0; n < 1400; n++) {
		size_t off = n % 61;
		uint32_t init = (uint32_t)rnd(&s);

		CHECK(crc32c(init, b + off, n) == ref(init, b + off, n),
		      "%zu bytes at +%zu", n, off);
	}
	for (int i = 0; i < 300; i++) {
		size_t n = rnd(&s) % MAX, off = rnd(&s) % 64;
		uint32_t init = (uint32_t)rnd(&s);

		CHECK(crc32c(init, b + off, n) == ref(init, b + off, n),
		      "%zu bytes at +%zu", n, off);
	}
	free(b);
}

static void test_combine(void)
{
	enum { N = 20000 };
	unsigned char *b = malloc(N);
	uint64_t s = 2463534242ull;

	CHECK(b != NULL, "buffer");
	if (!b)
		return;
	for (size_t i = 0; i < N; i++)
		b[i] = (unsigned char)rnd(&s);
	for (int i = 0; i < 200; i++) {
		size_t n = rnd(&s) % N, cut = n ? rnd(&s) % n : 0;
		uint32_t a = crc32c(0, b, cut), c = crc32c(0, b + cut, n - cut);

		CHECK(crc32c_combine(a, c, n - cut) == crc32c(0, b, n),
		      "%zu bytes cut at %zu", n, cut);
		CHECK(crc32c(a, b + cut, n - cut) == crc32c(0, b, n),
		      "%zu bytes fed at %zu", n, cut);
	}
	free(b);
}

int main(void)
{
	static const char *name[] = { "table", "instruction", "xmm folding",
				      "ymm folding" };
	enum crc32c_path best = crc32c_use(CRC32C_YMM);

	for (int p = CRC32C_TABLE; p <= CRC32C_YMM; p++) {
		if (p > (int)best) {
			printf("crc32c_test: %s: not on this CPU, skipped\n", name[p]);
			continue;
		}
		crc32c_use(p);
		test_known();
		test_lengths();
		test_combine();
	}
	printf("crc32c_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
