/* sha256_test.c - SHA-256 against the FIPS 180 examples, HMAC-SHA256
 * against RFC 4231's test cases, data fed in pieces as the image writer
 * does, and the constant-time comparison. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

#include "check.h"

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/* Both ways: with the CPU's SHA extensions where it has them, and in C. */
static void check_sha(const void *p, size_t n, const char *want)
{
	struct sha256 s;
	uint8_t d[SHA256_LEN];
	char got[2 * SHA256_LEN + 1];

	for (int generic = 0; generic < 2; generic++) {
		sha256_init(&s);
		if (generic)
			sha256_generic(&s);
		sha256_update(&s, p, n);
		sha256_final(&s, d);
		hex(got, d, sizeof(d));
		CHECK(!strcmp(got, want), "sha256%s of %zu bytes: %s, want %s",
		      generic ? " (C)" : "", n, got, want);
	}
}

static void test_fips(void)
{
	char *a = malloc(1000000);
	struct sha256 s;

	sha256_init(&s);
	printf("sha256_test: %s\n", s.ni ? "the CPU's SHA extensions, and C" : "C only");

	check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(a, 'a', 1000000);
	check_sha(a, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void check_hmac(const void *key, size_t klen, const void *data, size_t n,
		       const char *want)
{
	struct hmac_sha256 m;
	uint8_t d[SHA256_LEN];
	char got[2 * SHA256_LEN + 1];

	hmac_sha256_init(&m, key, klen);
	hmac_sha256_update(&m, data, n);
	hmac_sha256_final(&m, d);
	hex(got, d, sizeof(d));
	/* (case 5 is of a MAC truncated to 128 bits) */
	CHECK(!strncmp(got, want, strlen(want)), "hmac (key %zu, data %zu bytes): %s, want %s",
	      klen, n, got, want);
}

static void test_rfc4231(void)
{
	uint8_t k[131], d[50], k4[25];

	memset(k, 0x0b, 20);
	check_hmac(k, 20, "Hi There", 8,
		   "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	check_hmac("Jefe", 4, "what do ya want for nothing?", 28,
		   "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(k, 0xaa, 20);
	memset(d, 0xdd, 50);
	check_hmac(k, 20, d, 50,
		   "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
	for (int i = 0; i < 25; i++)
		k4[i] = i + 1;
	memset(d, 0xcd, 50);
	check_hmac(k4, 25, d, 50,
		   "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
	memset(k, 0x0c, 20);
	check_hmac(k, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b");
	memset(k, 0xaa, 131);
	check_hmac(k, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
		   "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	check_hmac(k, 131, "This is a test using a larger than block-size key and a larger "
		   "than block-size data. The key needs to be hashed before being used"
		   " by the HMAC algorithm.", 152,
		   "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

/* The writer feeds the MAC in pieces of every size: the same digest. */
static void test_pieces(void)
{
	size_t n = 70000;
	uint8_t *buf = malloc(n), one[SHA256_LEN], more[SHA256_LEN];
	uint64_t x = 88172645463325252ULL;
	struct sha256 s;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = x;
	}
	sha256_init(&s);
	sha256_update(&s, buf, n);
	sha256_final(&s, one);
	for (size_t step = 1; step < 200; step += 7) {
		sha256_init(&s);
		if (step % 2)
			sha256_generic(&s);
		for (size_t off = 0, k = step; off < n; off += k, k = k * 3 % 1000 + 1)
			sha256_update(&s, buf + off, off + k > n ? n - off : k);
		sha256_final(&s, more);
		CHECK(!memcmp(one, more, sizeof(one)), "pieces from %zu bytes", step);
	}
	free(buf);
}

static void test_equal(void)
{
	uint8_t a[32] = { 1, 2, 3 }, b[32] = { 1, 2, 3 };

	CHECK(mac_equal(a, b, 32), "equal");
	b[31] ^= 0x80;
	CHECK(!mac_equal(a, b, 32), "last bit differs");
	b[31] ^= 0x80;
	b[0] ^= 1;
	CHECK(!mac_equal(a, b, 32), "first bit differs");
}

int main(void)
{
	test_fips();
	test_rfc4231();
	test_pieces();
	test_equal();
	printf("sha256_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
