/* sha256.h - SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the
 * authentication of images (auth.c). */
#ifndef CKPT_SHA256_H
#define CKPT_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32
#define SHA256_BLOCK	64

struct sha256 {
	uint32_t h[8];
	uint64_t n;			/* bytes hashed */
	uint8_t buf[SHA256_BLOCK];	/* a partial block */
	bool ni;			/* with the CPU's SHA extensions */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *p, size_t n);
/* Hash with plain C code even where the CPU has SHA extensions (for
 * the unit test of both). */
void sha256_generic(struct sha256 *s);
/* The digest; @s is wiped. */
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);

struct hmac_sha256 {
	struct sha256 in;
	uint8_t okey[SHA256_BLOCK];	/* the key XOR opad */
};

void hmac_sha256_init(struct hmac_sha256 *m, const void *key, size_t len);
void hmac_sha256_update(struct hmac_sha256 *m, const void *p, size_t n);
/* The MAC; @m is wiped. */
void hmac_sha256_final(struct hmac_sha256 *m, uint8_t out[SHA256_LEN]);

/* Whether @a and @b are equal, in a time that does not depend on where
 * they differ. */
bool mac_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif
