/* image.h - writing and reading the record stream. */
#ifndef CKPT_IMAGE_H
#define CKPT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image_format.h"
#include "log.h"

struct hmac_sha256;
struct zwriter;

struct img_writer {
	int fd;
	uint64_t pos;		/* bytes handed to the stream so far */
	uint64_t nr_records;
	uint32_t chain;		/* CRC32C over the crcs of all records */
	char *buf;		/* small writes are gathered here */
	size_t len, cap;
	/* the open record */
	bool open;
	uint32_t type;
	uint64_t rec_len, rec_done;
	uint32_t rec_crc;
	struct ckpt_log *log;
	/* iw_authenticate(): the MAC of every byte out so far, and how
	 * many it has had (a write around iw_raw() would miss it) */
	struct hmac_sha256 *mac;
	uint64_t mac_len;
	/* iw_compress(): large records go out in pieces (image_zframe.c); zrec:
	 * the open record is one of them */
	struct zwriter *z;
	bool zrec;
	bool inplace;		/* the file takes pwrite() (iw_inplace_begin()) */
	/* iw_on_bulk(): called once, before the first write of 64 KiB or
	 * more (page data, a file's bytes) */
	void (*on_bulk)(void *arg);
	void *bulk_arg;
};

int iw_init(struct img_writer *w, int fd, struct ckpt_log *log);
/* @fn(@arg) once, just before the stream's first big write (and before
 * any write in place); NULL: none. */
void iw_on_bulk(struct img_writer *w, void (*fn)(void *arg), void *arg);
void iw_free(struct img_writer *w);
/* A record is iw_begin(), iw_write()s adding up to len, iw_end(). */
int iw_begin(struct img_writer *w, uint32_t type, uint64_t len);
int iw_write(struct img_writer *w, const void *data, size_t n);
int iw_zero(struct img_writer *w, size_t n);
/* iw_write() of data whose CRC32C the caller has computed already. */
int iw_write_crc(struct img_writer *w, const void *data, size_t n, uint32_t crc);
int iw_end(struct img_writer *w);
/* The next @n bytes of the open record written by the caller, with
 * pwrite() from *@at on (several threads at once, pagecopy.c), then
 * iw_inplace_end() with their CRC32C.  0, -EOPNOTSUPP (not said) where
 * the stream cannot take that (not a file, O_APPEND, an authenticated
 * or compressed image), or an error said. */
bool iw_inplace_ok(const struct img_writer *w);
int iw_inplace_begin(struct img_writer *w, uint64_t n, uint64_t *at);
int iw_inplace_end(struct img_writer *w, uint64_t at, uint64_t n, uint32_t crc);
int iw_record(struct img_writer *w, uint32_t type, const void *p, size_t n);
/* A record of a struct followed by a NUL-terminated string. */
int iw_record_str(struct img_writer *w, uint32_t type, const void *p,
		  size_t n, const char *str);
int iw_flush(struct img_writer *w);
/* The image authenticated with @key (@len bytes): iw_tail() writes an
 * AUTH record, the MAC of every byte before it.  Before any record. */
int iw_authenticate(struct img_writer *w, const void *key, size_t len);
int iw_tail(struct img_writer *w);
/* Close a record left half-written by a failure (zero-filled), so that
 * an ERROR record can follow it. */
int iw_abandon(struct img_writer *w);
/* image_zframe.c: records from now on of at least ZFRAME_MIN bytes are
 * compressed at zstd @level (0: the default); -EOPNOTSUPP (said) in a
 * build without zstd.  Before any record. */
int iw_compress(struct img_writer *w, int level);
/* One whole record of the open record's type with @flags: @fh (@fhn
 * bytes) then @data (@n bytes, CRC32C @crc); for image_zframe.c. */
int iw_piece(struct img_writer *w, uint32_t flags, const void *fh, size_t fhn,
	     const void *data, size_t n, uint32_t crc);
/* The open record, meant for pieces, goes out plain after all: its
 * header now, then iw_plain()s of its bytes; for image_zframe.c. */
int iw_unpiece(struct img_writer *w);
int iw_plain(struct img_writer *w, const void *data, size_t n, uint32_t crc);

/* One record as the reader found it.  For a PAGES record only the part
 * before the page data is in memory; the data stays in the file. */
struct rec {
	uint32_t type;
	uint64_t len;		/* payload bytes */
	uint64_t off;		/* file offset of the payload */
	void *data;		/* payload (or its head, for PAGES) */
	size_t data_len;	/* bytes in data */
	uint64_t index;		/* record number, from 0 */
	uint32_t flags;		/* rec_hdr.flags (img_reader.zraw only) */
	uint32_t crc;		/* of the payload, as its trailer says (0
				 * for PAGES left to pageverify.c) */
};

/* A PAGES payload whose checksum is checked later (img_reader.defer). */
struct ir_span {
	uint64_t off, len;	/* the payload */
	uint64_t rec_pos;	/* the record, for the message */
	uint32_t crc;		/* its trailer's */
};

struct img_reader {
	int fd;			/* seekable */
	uint64_t size;		/* file size */
	uint64_t pos;		/* offset of the next record */
	uint64_t nr_records;
	uint32_t chain;
	bool tail_seen;
	bool auth_seen;		/* an AUTH record: the tail comes next */
	struct ckpt_log *log;
	char *buf;		/* scratch for checksumming page data */
	size_t buf_len;
	char *win;		/* the bytes [win_off, win_off + win_len),
				 * read ahead: a record's head, payload,
				 * padding and trailer, and the small
				 * records after it, in one read */
	uint64_t win_off;
	size_t win_len;
	bool defer;		/* PAGES payloads: into spans, not checked */
	bool lean;		/* a payload its kind reads again itself
				 * (kind_ops.reread) checked, not kept */
	struct ir_span *spans;	/* ir_free frees them unless taken */
	size_t nr_spans, cap_spans;
	uint64_t span_bytes;
	bool zraw;		/* REC_F_ZFRAME pieces are read whole, as
				 * they are stored (image_zframe.c); without it
				 * they are refused */
};

/* Make fd seekable: a regular file is used as is, anything else (a pipe,
 * a socket) is first copied into a memfd.  Returns the fd to use (the
 * same or a new one the caller closes) or -errno. */
int img_seekable(int fd, struct ckpt_log *log);
/* img_seekable() for an image whose MAC is checked: it must not change
 * between the check and its use, so a file that anyone but us (and
 * root) could write is copied into a memfd too. */
int img_private(int fd, struct ckpt_log *log);
int ir_init(struct img_reader *r, int fd, struct ckpt_log *log);
/* image_expand.c: an image with compressed records (its HEAD says
 * CKPT_COMPRESS, and it has pieces) made whole into a memfd, checked as
 * it is read (its stored bytes, then each piece's); returns the fd to
 * read (@fd itself if no record is in pieces, else one the caller
 * closes) or -errno.
 * @st (may be NULL) gets what was compressed. */
struct zstats {
	bool on;				/* the HEAD says compressed */
	uint64_t records, pieces, zpieces;	/* zpieces: compressed */
	uint64_t raw, stored;			/* bytes */
};
int img_expand(int fd, struct ckpt_log *log, struct zstats *st);
void ir_free(struct img_reader *r);
/* Read and verify the next record: 1 and *rec filled (free rec->data),
 * 0 at a verified tail, -errno on a bad or truncated image. */
int ir_next(struct img_reader *r, struct rec *rec);
/* Check a deferred span's checksum: 0, -EBADMSG (said) or -errno. */
int ir_check_span(struct img_reader *r, const struct ir_span *s);
/* Record @type's payload of @len bytes at @off of @fd, read again into
 * @buf: 0, or -errno said (-EBADMSG: not the bytes of checksum @crc, the
 * image changed since it was read). */
int rec_read_again(int fd, uint32_t type, uint64_t off, size_t len, uint32_t crc,
		   void *buf, struct ckpt_log *log);
/* Validate the HEAD record against this machine (strict) or only its
 * magic/version (for `ckpt info`). */
int head_check(struct ckpt_log *log, const struct rec *rec, bool strict);
/* Bounds-checked views into a record's payload. */
int rec_want(struct ckpt_log *log, const struct rec *rec, size_t min,
	     const char *what);
const char *rec_str(const struct rec *rec, size_t off, uint32_t len);
/* Whether the fixed-size string field @s has its NUL within its @n
 * bytes. */
bool field_str_ok(const char *s, size_t n);

/* A record type as the kind that owns it describes it (kind_ops.recs;
 * the image's frame and TASK are records.c's).  Its number and payload
 * are the format's (image_format.h). */
struct rec_desc {
	uint32_t type;
	const char *name;	/* in messages and `ckpt info` */
	size_t min_len;		/* the least payload `ckpt info` shows the
				 * fields of (0: its show checks) */
};

/* records.c: the description of @type, NULL if the format has no such
 * record. */
const struct rec_desc *rec_desc_of(uint32_t type);
/* Whether @type's kind reads its payload again itself (kind_ops.reread). */
bool rec_reread(uint32_t type);
/* Its name, "?" if none. */
const char *rec_type_name(uint32_t type);

#endif
