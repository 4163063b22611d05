/* image_expand.c - an image with compressed records made whole again, into a
 * memfd that the reader and the kinds then use as any image: pieces
 * checked as stored (the reader), then each decompressed into a bounded
 * buffer, its size and checksum checked against its head, and written
 * out as part of its record.  A compressed image from a pipe takes one
 * memfd, not two: the expanded copy is the only one kept. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#ifdef CKPT_ZSTD
#include <zstd.h>
#endif

#include "../include/ckpt.h"
#include "crc32c.h"
#include "image.h"
#include "progress.h"

struct zexp {
	struct img_reader r;
	struct img_writer w;
	struct ckpt_log *log;
	struct zstats *st;
	void *dctx;
	char *raw;		/* one piece's bytes, grown to at most ZFRAME_MAX_RAW */
	size_t raw_cap;
	bool open;		/* a record in pieces is being put together */
	uint32_t type;
	uint64_t total, done, at;	/* at: its first piece's offset */
	uint64_t budget;	/* bytes the records may still expand to */
};

/* Room for @n (<= ZFRAME_MAX_RAW) bytes in x->raw: grown as pieces
 * need, since a small image's expansion (and every fuzz input's) should
 * not pay for mapping 8 MiB. */
static int raw_room(struct zexp *x, size_t n)
{
	char *p;

	if (n <= x->raw_cap)
		return 0;
	n = n < 65536 ? 65536 : n;
	p = realloc(x->raw, n);
	if (!p)
		return log_err(x->log, ENOMEM, "decompression buffer of %zu bytes:", n);
	x->raw = p;
	x->raw_cap = n;
	return 0;
}

/* Whether the image's HEAD says it has compressed records. */
static int compressed(int fd, struct ckpt_log *log)
{
	struct img_reader r;
	struct rec rec;
	int ret = ir_init(&r, fd, log);

	if (!ret)
		ret = ir_next(&r, &rec);
	if (ret == 1) {
		const struct rec_head *h = rec.data;

		ret = rec.len >= sizeof(*h) && (h->flags & CKPT_COMPRESS);
		free(rec.data);
	}
	ir_free(&r);
	return ret;
}

/* Whether any record of the image is in pieces: their headers only
 * (what is not sound is left to the reader to say). */
static bool has_pieces(int fd)
{
	struct stat st;
	struct rec_hdr h;
	uint64_t pos = 0;

	if (fstat(fd, &st))
		return true;
	while ((uint64_t)st.st_size - pos >= sizeof(h) &&
	       pread(fd, &h, sizeof(h), pos) == (ssize_t)sizeof(h)) {
		if (h.hcrc != crc32c(0, &h, 16) || h.flags)
			return true;
		if (h.type == REC_TAIL || h.len > (uint64_t)st.st_size - pos)
			return false;
		pos += sizeof(h) + h.len + ((8 - (h.len & 7)) & 7) + sizeof(struct rec_trailer);
	}
	return false;
}

/* A record stored whole: copied as it is (its payload from the file
 * where the reader left it there). */
static int copy_rec(struct zexp *x, const struct rec *rec)
{
	uint64_t left = rec->len, off = rec->off;
	int ret;

	if (rec->type == REC_HEAD) {	/* what is written out is whole */
		struct rec_head h;

		if (rec->len != sizeof(h))
			return log_err(x->log, EBADMSG, "HEAD record of %llu bytes",
				       (unsigned long long)rec->len);
		memcpy(&h, rec->data, sizeof(h));
		h.flags &= ~(uint64_t)CKPT_COMPRESS;
		return iw_record(&x->w, REC_HEAD, &h, sizeof(h));
	}
	if (rec->data_len == rec->len)
		return iw_record(&x->w, rec->type, rec->data, rec->len);
	ret = iw_begin(&x->w, rec->type, rec->len);
	while (left && !ret) {
		size_t k = left < ZFRAME_MAX_RAW ? left : ZFRAME_MAX_RAW;

		ret = raw_room(x, k);
		if (ret)
			return ret;
		if (pread(x->r.fd, x->raw, k, off) != (ssize_t)k)
			return log_err(x->log, errno ? errno : EIO, "reading image at %llu:",
				       (unsigned long long)off);
		ret = iw_write(&x->w, x->raw, k);
		off += k;
		left -= k;
	}
	return ret ? ret : iw_end(&x->w);
}

static int cut_short(struct zexp *x)
{
	return log_err(x->log, EBADMSG,
		       "compressed record %s at offset %llu cut short: %llu of its %llu bytes",
		       rec_type_name(x->type), (unsigned long long)x->at,
		       (unsigned long long)x->done, (unsigned long long)x->total);
}

/* The piece's head against the record it belongs to (bounds first). */
static int check_piece(struct zexp *x, const struct rec *rec, const struct rec_zframe *f)
{
	uint64_t pos = rec->off - sizeof(struct rec_hdr);

	if (f->reserved || f->method > ZFRAME_ZSTD || !f->raw_len ||
	    f->raw_len > ZFRAME_MAX_RAW ||
	    (f->method == ZFRAME_RAW && rec->len - sizeof(*f) != f->raw_len))
		return log_err(x->log, EBADMSG,
			       "compressed record %s at offset %llu: bad piece head",
			       rec_type_name(rec->type), (unsigned long long)pos);
	if (!x->open && f->offset)
		return log_err(x->log, EBADMSG,
			       "compressed record %s at offset %llu: a piece at %llu with no start",
			       rec_type_name(rec->type), (unsigned long long)pos,
			       (unsigned long long)f->offset);
	if (x->open && (rec->type != x->type || f->offset != x->done ||
			f->total != x->total))
		return cut_short(x);
	if (f->raw_len > f->total - f->offset || f->offset > f->total)
		return log_err(x->log, EBADMSG,
			       "compressed record %s at offset %llu: its piece of %u bytes at %llu overruns its %llu",
			       rec_type_name(rec->type), (unsigned long long)pos, f->raw_len,
			       (unsigned long long)f->offset, (unsigned long long)f->total);
	if (!x->open && f->total > x->budget)
		return log_err(x->log, EFBIG,
			       "compressed record %s at offset %llu expands to %llu bytes, more than this machine's memory holds",
			       rec_type_name(rec->type), (unsigned long long)pos,
			       (unsigned long long)f->total);
	return 0;
}

#ifdef CKPT_ZSTD
static void *dctx_new(void)
{
	return ZSTD_createDCtx();
}

static void dctx_free(void *d)
{
	ZSTD_freeDCtx(d);
}

/* Into a buffer of the size the head says: a frame that gives more
 * fails there, whatever it claims. */
static size_t zstd_unpack(struct zexp *x, const struct rec_zframe *f,
			  const void *src, size_t n, const char **why)
{
	size_t got = ZSTD_decompressDCtx(x->dctx, x->raw, f->raw_len, src, n);

	*why = ZSTD_isError(got) ? ZSTD_getErrorName(got) : NULL;
	return got;
}
#else
static void *dctx_new(void)
{
	return (void *)1;
}

static void dctx_free(void *d)
{
}

static size_t zstd_unpack(struct zexp *x, const struct rec_zframe *f,
			  const void *src, size_t n, const char **why)
{
	*why = "no zstd in this build";
	return 0;
}
#endif

static int unpack(struct zexp *x, const struct rec *rec, const struct rec_zframe *f)
{
	uint64_t pos = rec->off - sizeof(struct rec_hdr);
	const char *src = (const char *)(f + 1), *why;
	size_t n = rec->len - sizeof(*f), got;

	if (f->method == ZFRAME_RAW) {
		memcpy(x->raw, src, n);
		return 0;
	}
	got = zstd_unpack(x, f, src, n, &why);
	if (why)
		return log_err(x->log, EBADMSG,
			       "compressed record %s at offset %llu: bad zstd frame (%s)",
			       rec_type_name(rec->type), (unsigned long long)pos, why);
	if (got != f->raw_len)
		return log_err(x->log, EBADMSG,
			       "compressed record %s at offset %llu: gives %zu bytes, its head says %u",
			       rec_type_name(rec->type), (unsigned long long)pos,
			       got, f->raw_len);
	return 0;
}

static int add_piece(struct zexp *x, const struct rec *rec)
{
	const struct rec_zframe *f = rec->data;
	uint32_t crc;
	int ret;

	if (rec->len < sizeof(*f))
		return log_err(x->log, EBADMSG, "compressed record %s at offset %llu: too short",
			       rec_type_name(rec->type),
			       (unsigned long long)(rec->off - sizeof(struct rec_hdr)));
	ret = check_piece(x, rec, f);
	if (!ret)
		ret = raw_room(x, f->raw_len);
	if (!ret)
		ret = unpack(x, rec, f);
	if (ret)
		return ret;
	crc = crc32c(0, x->raw, f->raw_len);
	if (crc != f->raw_crc)
		return log_err(x->log, EBADMSG,
			       "compressed record %s at offset %llu: checksum mismatch once expanded",
			       rec_type_name(rec->type),
			       (unsigned long long)(rec->off - sizeof(struct rec_hdr)));
	if (!x->open) {
		x->open = true;
		x->type = rec->type;
		x->total = f->total;
		x->done = 0;
		x->at = rec->off - sizeof(struct rec_hdr);
		x->budget -= f->total;
		if (x->st)
			x->st->records++;
		ret = iw_begin(&x->w, rec->type, f->total);
	}
	if (x->st) {
		x->st->pieces++;
		x->st->zpieces += f->method == ZFRAME_ZSTD;
		x->st->raw += f->raw_len;
		x->st->stored += rec->len;
	}
	if (!ret)
		ret = iw_write_crc(&x->w, x->raw, f->raw_len, crc);
	x->done += f->raw_len;
	if (!ret && x->done == x->total) {
		x->open = false;
		ret = iw_end(&x->w);
	}
	return ret;
}

static int expand(struct zexp *x)
{
	struct rec rec;
	int ret;

	while ((ret = ir_next(&x->r, &rec)) == 1) {
		progress_add(x->log, rec.len);
		if (rec.flags)
			ret = add_piece(x, &rec);
		else
			ret = x->open ? cut_short(x) : copy_rec(x, &rec);
		free(rec.data);
		if (ret)
			return ret;
	}
	if (!ret && x->open)
		ret = cut_short(x);
	return ret ? ret : iw_tail(&x->w);
}

static uint64_t mem_budget(void)
{
	struct sysinfo si;

	if (sysinfo(&si))
		return UINT64_MAX;
	return ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
}

int img_expand(int fd, struct ckpt_log *log, struct zstats *st)
{
	struct zexp x = { .log = log, .st = st, .budget = mem_budget() };
	int ret = compressed(fd, log), mfd;

	if (ret <= 0)
		return ret < 0 ? ret : fd;
	if (st)
		st->on = true;
	/* plain records are read where they lie: an image without pieces
	 * (nothing compressed paid) is not copied */
	if (!has_pieces(fd))
		return fd;
#ifndef CKPT_ZSTD
	return log_err(log, EOPNOTSUPP,
		       "the image is compressed: this ckpt was built without zstd (libzstd-dev)");
#endif
	mfd = memfd_create("ckpt-image", 0);
	if (mfd < 0)
		return log_err(log, errno, "memfd for the expanded image:");
	if (fchmod(mfd, 0600)) {
		ret = log_err(log, errno, "memfd for the expanded image:");
		close(mfd);
		return ret;
	}
	x.dctx = dctx_new();
	ret = x.dctx ? 0 : log_err(log, ENOMEM, "decompression context:");
	if (!ret)
		ret = iw_init(&x.w, mfd, log);
	if (!ret)
		ret = ir_init(&x.r, fd, log);
	x.r.zraw = true;
	if (!ret)
		ret = expand(&x);
	ir_free(&x.r);
	iw_free(&x.w);
	dctx_free(x.dctx);
	free(x.raw);
	if (ret) {
		close(mfd);
		return ret;
	}
	return mfd;
}
