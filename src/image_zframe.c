/* image_zframe.c - compressed records, written: a record of page data
 * of ZFRAME_MIN bytes or more goes out as pieces of at most PIECE bytes, each a record of its
 * own (REC_F_ZFRAME) holding a struct rec_zframe and the piece, zstd
 * compressed or, where that does not pay, as it is.  Memory stays
 * bounded whatever the record's size: one piece gathered, one
 * compressed.  Data that does not compress (random bytes, compressed
 * files) costs a trial on a sample, not a compression; a record whose
 * first 2 MiB (or all, if less) do not compress goes out as a plain
 * record, as without --compress.  Only page and data records of 64 KiB
 * or more are compressed: an image with none compressed (random memory)
 * is restarted where it lies, at no cost. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef CKPT_ZSTD
#include <zstd.h>
#endif

#include "crc32c.h"
#include "image_zframe.h"

#define PIECE		(4u << 20)
#define SAMPLE		(32u << 10)

_Static_assert(PIECE <= ZFRAME_MAX_RAW, "a piece the reader takes");

struct zwriter {
	void *cctx;
	int level;
	char *buf;		/* the piece being gathered */
	size_t len;
	uint32_t crc;		/* of buf[0, len) */
	char *out;		/* a piece compressed */
	size_t out_cap;
	uint64_t emitted;	/* bytes of the open record gone out */
	bool decided;		/* the open record goes in pieces */
	uint64_t raw, stored;	/* for the log */
};

/* Only the records of bulk data (pages, a file's or segment's bytes)
 * are worth it. */
bool zw_wants(const struct img_writer *w, uint32_t type, uint64_t len)
{
	return w->z && len >= ZFRAME_MIN &&
	       (type == REC_PAGES || type == REC_FILE_DATA || type == REC_SYSV_DATA ||
		type == REC_MNT_DATA);
}

#ifdef CKPT_ZSTD
int iw_compress(struct img_writer *w, int level)
{
	struct zwriter *z;

	if (w->pos)
		return log_err(w->log, EINVAL, "compression is chosen before the image's first record");
	if (level < 0 || level > ZSTD_maxCLevel())
		return log_err(w->log, EINVAL, "compression level %d: zstd's are 1 to %d",
			       level, ZSTD_maxCLevel());
	z = calloc(1, sizeof(*z));
	if (!z)
		return log_err(w->log, ENOMEM, "compression state:");
	w->z = z;
	z->level = level ? level : 1;
	z->out_cap = ZSTD_compressBound(PIECE);
	z->cctx = ZSTD_createCCtx();
	z->buf = malloc(PIECE);
	z->out = malloc(z->out_cap);
	if (!z->cctx || !z->buf || !z->out)
		return log_err(w->log, ENOMEM, "compression buffers:");
	return 0;
}

/* Whether a sample of @n bytes at @data compresses. */
static bool compressible(struct img_writer *w, const char *data, size_t n)
{
	struct zwriter *z = w->z;
	size_t k;

	n = n < SAMPLE ? n : SAMPLE;
	k = ZSTD_compressCCtx(z->cctx, z->out, z->out_cap, data, n, z->level);
	return !ZSTD_isError(k) && k <= n - n / 32;
}

/* The stored size of @n bytes at @data compressed into z->out, or 0 if
 * they are better stored as they are. */
static size_t squeeze(struct img_writer *w, const char *data, size_t n)
{
	struct zwriter *z = w->z;
	size_t k;

	if (n < 256)
		return 0;
	/* a sample first: incompressible data costs only that */
	if (n >= 4 * SAMPLE) {
		k = ZSTD_compressCCtx(z->cctx, z->out, z->out_cap, data, SAMPLE, z->level);
		if (ZSTD_isError(k) || k > SAMPLE - SAMPLE / 32)
			return 0;
	}
	k = ZSTD_compressCCtx(z->cctx, z->out, z->out_cap, data, n, z->level);
	return ZSTD_isError(k) || k > n - n / 64 ? 0 : k;
}

void zw_free(struct img_writer *w)
{
	struct zwriter *z = w->z;

	if (!z)
		return;
	if (z->raw)
		log_info(w->log, "compressed: %llu bytes stored for %llu",
			 (unsigned long long)z->stored, (unsigned long long)z->raw);
	ZSTD_freeCCtx(z->cctx);
	free(z->buf);
	free(z->out);
	free(z);
	w->z = NULL;
}
#else
int iw_compress(struct img_writer *w, int level)
{
	return log_err(w->log, EOPNOTSUPP,
		       "--compress: this ckpt was built without zstd (libzstd-dev)");
}

static size_t squeeze(struct img_writer *w, const char *data, size_t n)
{
	return 0;
}

static bool compressible(struct img_writer *w, const char *data, size_t n)
{
	return false;
}

void zw_free(struct img_writer *w)
{
}
#endif

/* One piece out: @n bytes at @data whose CRC32C is @crc, @k of them
 * once compressed into z->out (0: stored raw). */
static int piece_k(struct img_writer *w, const char *data, size_t n, uint32_t crc,
		   size_t k)
{
	struct zwriter *z = w->z;
	struct rec_zframe f = {
		.total = w->rec_len, .offset = z->emitted, .raw_len = n,
		.raw_crc = crc, .method = ZFRAME_RAW,
	};

	z->emitted += n;
	z->raw += n;
	if (!k) {
		z->stored += n;
		return iw_piece(w, REC_F_ZFRAME, &f, sizeof(f), data, n, crc);
	}
	f.method = ZFRAME_ZSTD;
	z->stored += k;
	return iw_piece(w, REC_F_ZFRAME, &f, sizeof(f), z->out, k,
			crc32c(0, z->out, k));
}

static int piece(struct img_writer *w, const char *data, size_t n, uint32_t crc)
{
	return piece_k(w, data, n, crc, squeeze(w, data, n));
}

/* The open record as a plain one after all: what was gathered, then
 * @n bytes at @data (CRC32C @crc). */
static int go_plain(struct img_writer *w, const void *data, size_t n, uint32_t crc)
{
	struct zwriter *z = w->z;
	int ret = iw_unpiece(w);

	if (!ret && z->len)
		ret = iw_plain(w, z->buf, z->len, z->crc);
	if (!ret && n)
		ret = iw_plain(w, data, n, crc);
	z->raw += z->len + n;
	z->stored += z->len + n;
	z->len = 0;
	z->crc = 0;
	z->decided = false;
	return ret;
}

static int flush_buf(struct img_writer *w)
{
	struct zwriter *z = w->z;
	int ret;

	if (!z->len)
		return 0;
	ret = piece(w, z->buf, z->len, z->crc);
	z->len = 0;
	z->crc = 0;
	return ret;
}

/* Large writes (page chunks) go straight out as pieces, without a copy;
 * small ones are gathered. */
int zw_write(struct img_writer *w, const void *data, size_t n, uint32_t crc)
{
	struct zwriter *z = w->z;
	const char *p = data;
	int ret = 0;

	/* pieces or not: the first large write, or 4 MiB gathered, decides;
	 * of those gathered their end, not the record's head and padding
	 * (zeros, which compress whatever the pages do) */
	if (!z->decided && (n >= PIECE / 2 || z->len + n > PIECE)) {
		bool big = n >= PIECE / 2;
		size_t tail = z->len < SAMPLE ? z->len : SAMPLE;

		if (!compressible(w, big ? data : z->buf + z->len - tail, big ? n : tail))
			return go_plain(w, data, n, crc);
		z->decided = true;
	}
	if (z->len && n >= PIECE / 2)
		ret = flush_buf(w);
	while (n && !ret) {
		size_t k;

		if (!z->len && n >= PIECE / 2) {
			k = n < PIECE ? n : PIECE;
			ret = piece(w, p, k, k == n && p == data ? crc : crc32c(0, p, k));
		} else {
			k = PIECE - z->len < n ? PIECE - z->len : n;
			memcpy(z->buf + z->len, p, k);
			z->crc = crc32c_combine(z->crc, k == n && p == data ?
						crc : crc32c(0, p, k), k);
			z->len += k;
			if (z->len == PIECE)
				ret = flush_buf(w);
		}
		p += k;
		n -= k;
	}
	return ret;
}

/* 1: the record went out plain, its trailer is the caller's to write */
int zw_end(struct img_writer *w)
{
	struct zwriter *z = w->z;
	int ret;

	if (!z->decided) {	/* all of it gathered: one piece, or plain */
		size_t k = squeeze(w, z->buf, z->len);

		if (!k)
			return go_plain(w, NULL, 0, 0) ?: 1;
		ret = piece_k(w, z->buf, z->len, z->crc, k);
		z->len = 0;
		z->crc = 0;
	} else {
		ret = flush_buf(w);
	}
	z->emitted = 0;
	z->decided = false;
	return ret;
}
