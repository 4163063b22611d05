#ifndef CKPT_CRC32C_H
#define CKPT_CRC32C_H
#include <stddef.h>
#include <stdint.h>
/* CRC32C (Castagnoli); start with crc = 0, feed pieces in order. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);
/* The CRC of A then B, from crc(A), crc(B) and the length of B. */
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t len_b);
#endif
