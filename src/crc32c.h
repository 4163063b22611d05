#ifndef CKPT_CRC32C_H
#define CKPT_CRC32C_H
#include <stddef.h>
#include <stdint.h>
/* CRC32C (Castagnoli); start with crc = 0, feed pieces in order. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);
/* The CRC of A then B, from crc(A), crc(B) and the length of B. */
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t len_b);
/* The ways to compute it, slowest first.  The best the CPU has is taken;
 * crc32c_use() lowers it (for tests: every way must give the same
 * values) and says which is in use. */
enum crc32c_path { CRC32C_TABLE, CRC32C_INSN, CRC32C_FOLD, CRC32C_YMM };
enum crc32c_path crc32c_use(enum crc32c_path most);
#endif
