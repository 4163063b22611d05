#ifndef CKPT_CRC32C_H
#define CKPT_CRC32C_H
#include <stddef.h>
#include <stdint.h>
/* CRC32C (Castagnoli); start with crc = 0, feed pieces in order. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);
#endif
