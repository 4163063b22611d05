/* image.c - the record stream: buffered writer, verifying reader. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "auth.h"
#include "crc32c.h"
#include "fileio.h"
#include "image.h"
#include "sha256.h"
#include "image_zframe.h"

#define WBUF_SIZE	(1u << 20)
#define WDIRECT_MIN	(64u << 10)	/* written from where it is */
#define RBUF_SIZE	(256u << 10)
#define IR_WIN_SIZE	(32u << 10)

static size_t pad8(uint64_t n)
{
	return (8 - (n & 7)) & 7;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		c += k;
		n -= k;
	}
	return 0;
}

/* A regular file opened without O_APPEND, where pwrite() puts bytes
 * where it is told (with O_APPEND Linux appends them). */
static bool file_takes_pwrite(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && !(fl & O_APPEND) && !fstat(fd, &st) && S_ISREG(st.st_mode);
}

int iw_init(struct img_writer *w, int fd, struct ckpt_log *log)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->log = log;
	w->cap = WBUF_SIZE;
	w->buf = malloc(w->cap);
	if (!w->buf)
		return log_err(log, ENOMEM, "image buffer:");
	w->inplace = file_takes_pwrite(fd);
	return 0;
}

void iw_on_bulk(struct img_writer *w, void (*fn)(void *arg), void *arg)
{
	w->on_bulk = fn;
	w->bulk_arg = arg;
}

/* The bulk of the stream begins (@n bytes at once): its hook, once. */
static void bulk(struct img_writer *w, size_t n)
{
	void (*fn)(void *arg) = w->on_bulk;

	if (!fn || n < WDIRECT_MIN)
		return;
	w->on_bulk = NULL;
	fn(w->bulk_arg);
}

void iw_free(struct img_writer *w)
{
	zw_free(w);
	free(w->buf);
	w->buf = NULL;
	if (w->mac)
		explicit_bzero(w->mac, sizeof(*w->mac));
	free(w->mac);
	w->mac = NULL;
}

int iw_authenticate(struct img_writer *w, const void *key, size_t len)
{
	int ret = auth_key_check(len, w->log);

	if (ret)
		return ret;
	if (w->pos)
		return log_err(w->log, EINVAL, "the image's key comes before its first record");
	w->mac = malloc(sizeof(*w->mac));
	if (!w->mac)
		return log_err(w->log, ENOMEM, "image MAC:");
	hmac_sha256_init(w->mac, key, len);
	return 0;
}

int iw_flush(struct img_writer *w)
{
	int ret;

	if (!w->len)
		return 0;
	bulk(w, w->len);
	ret = write_all(w->fd, w->buf, w->len);
	if (ret)
		return log_err(w->log, -ret, "writing image fd %d:", w->fd);
	w->len = 0;
	return 0;
}

/* The buffered bytes, then @n of @p, in as few writes as it takes. */
static int write_both(struct img_writer *w, const void *p, size_t n)
{
	struct iovec v[2] = { { w->buf, w->len }, { (void *)p, n } };
	struct iovec *iv = w->len ? v : v + 1;
	int cnt = w->len ? 2 : 1;

	while (cnt) {
		ssize_t k = writev(w->fd, iv, cnt);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return log_err(w->log, k < 0 ? errno : EIO,
				       "writing image fd %d:", w->fd);
		for (; cnt && (size_t)k >= iv->iov_len; iv++, cnt--)
			k -= iv->iov_len;
		if (cnt) {
			iv->iov_base = (char *)iv->iov_base + k;
			iv->iov_len -= k;
		}
	}
	w->len = 0;
	return 0;
}

/* Raw bytes into the stream, outside any record accounting.  Big ones
 * (page data) go out with what is buffered in one writev, not copied
 * into the buffer first: that copy was a JVM's 58 MB once more. */
static int iw_raw(struct img_writer *w, const void *p, size_t n)
{
	int ret;

	if (w->mac) {
		hmac_sha256_update(w->mac, p, n);
		w->mac_len += n;
	}
	if (n >= WDIRECT_MIN) {
		bulk(w, n);
		ret = write_both(w, p, n);
		if (!ret)
			w->pos += n;
		return ret;
	}
	if (w->len + n > w->cap && (ret = iw_flush(w)))
		return ret;
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	w->pos += n;
	return 0;
}

int iw_begin(struct img_writer *w, uint32_t type, uint64_t len)
{
	struct rec_hdr h = { .type = type, .len = len };

	w->open = true;
	w->type = type;
	w->rec_len = len;
	w->rec_done = 0;
	w->rec_crc = 0;
	w->zrec = zw_wants(w, type, len);
	if (w->zrec)	/* its pieces have headers of their own */
		return 0;
	h.hcrc = crc32c(0, &h, 16);
	w->chain = crc32c(w->chain, &h.hcrc, 4);
	return iw_raw(w, &h, sizeof(h));
}

int iw_unpiece(struct img_writer *w)
{
	struct rec_hdr h = { .type = w->type, .len = w->rec_len };

	h.hcrc = crc32c(0, &h, 16);
	w->chain = crc32c(w->chain, &h.hcrc, 4);
	w->zrec = false;
	return iw_raw(w, &h, sizeof(h));
}

int iw_plain(struct img_writer *w, const void *data, size_t n, uint32_t crc)
{
	w->rec_crc = crc32c_combine(w->rec_crc, crc, n);
	return iw_raw(w, data, n);
}

int iw_piece(struct img_writer *w, uint32_t flags, const void *fh, size_t fhn,
	     const void *data, size_t n, uint32_t crc)
{
	static const char zero[8];
	struct rec_hdr h = { .type = w->type, .flags = flags, .len = fhn + n };
	struct rec_trailer t;
	int ret;

	h.hcrc = crc32c(0, &h, 16);
	t = (struct rec_trailer){ .crc = crc32c_combine(crc32c(0, fh, fhn), crc, n) };
	w->chain = crc32c(w->chain, &h.hcrc, 4);
	ret = iw_raw(w, &h, sizeof(h));
	if (!ret)
		ret = iw_raw(w, fh, fhn);
	if (!ret)
		ret = iw_raw(w, data, n);
	if (!ret)
		ret = iw_raw(w, zero, pad8(h.len));
	if (!ret)
		ret = iw_raw(w, &t, sizeof(t));
	w->chain = crc32c(w->chain, &t.crc, 4);
	w->nr_records++;
	return ret;
}

int iw_write_crc(struct img_writer *w, const void *data, size_t n, uint32_t crc)
{
	if (w->rec_done + n > w->rec_len)
		return log_err(w->log, EOVERFLOW,
			       "record %s overruns its length %llu",
			       rec_type_name(w->type),
			       (unsigned long long)w->rec_len);
	w->rec_done += n;
	if (w->zrec)
		return zw_write(w, data, n, crc);
	w->rec_crc = crc32c_combine(w->rec_crc, crc, n);
	return iw_raw(w, data, n);
}

int iw_write(struct img_writer *w, const void *data, size_t n)
{
	return iw_write_crc(w, data, n, crc32c(0, data, n));
}

bool iw_inplace_ok(const struct img_writer *w)
{
	return w->inplace && !w->mac && !w->z;
}

int iw_inplace_begin(struct img_writer *w, uint64_t n, uint64_t *at)
{
	off_t o;
	int ret;

	if (!w->inplace || w->mac || w->zrec || !w->open || w->rec_done + n > w->rec_len)
		return -EOPNOTSUPP;
	ret = iw_flush(w);
	if (ret)
		return ret;
	bulk(w, n);
	o = lseek(w->fd, 0, SEEK_CUR);
	if (o < 0) {
		w->inplace = false;
		return -EOPNOTSUPP;
	}
	*at = (uint64_t)o;
	return 0;
}

int iw_inplace_end(struct img_writer *w, uint64_t at, uint64_t n, uint32_t crc)
{
	if (lseek(w->fd, (off_t)(at + n), SEEK_SET) < 0)
		return log_err(w->log, errno, "image fd %d: seeking past page data:", w->fd);
	w->rec_done += n;
	w->rec_crc = crc32c_combine(w->rec_crc, crc, n);
	w->pos += n;
	return 0;
}

int iw_zero(struct img_writer *w, size_t n)
{
	static const char zero[4096];
	int ret = 0;

	while (n && !ret) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);

		ret = iw_write(w, zero, k);
		n -= k;
	}
	return ret;
}

int iw_end(struct img_writer *w)
{
	static const char zero[8];
	struct rec_trailer t = { 0 };
	int ret;

	if (w->rec_done != w->rec_len)
		return log_err(w->log, EPROTO, "record %s short: %llu of %llu",
			       rec_type_name(w->type),
			       (unsigned long long)w->rec_done,
			       (unsigned long long)w->rec_len);
	w->open = false;
	if (w->zrec) {
		w->zrec = false;
		ret = zw_end(w);
		if (ret <= 0)
			return ret;
	}
	t.crc = w->rec_crc;
	ret = iw_raw(w, zero, pad8(w->rec_len));
	if (!ret)
		ret = iw_raw(w, &t, sizeof(t));
	w->chain = crc32c(w->chain, &t.crc, 4);
	w->nr_records++;
	return ret;
}

int iw_record(struct img_writer *w, uint32_t type, const void *p, size_t n)
{
	int ret = iw_begin(w, type, n);

	if (!ret)
		ret = iw_write(w, p, n);
	return ret ? ret : iw_end(w);
}

int iw_record_str(struct img_writer *w, uint32_t type, const void *p,
		  size_t n, const char *str)
{
	size_t sl = strlen(str) + 1;
	int ret = iw_begin(w, type, n + sl);

	if (!ret)
		ret = iw_write(w, p, n);
	if (!ret)
		ret = iw_write(w, str, sl);
	return ret ? ret : iw_end(w);
}

int iw_abandon(struct img_writer *w)
{
	int ret;

	if (!w->open)
		return 0;
	ret = iw_zero(w, w->rec_len - w->rec_done);
	return ret ? ret : iw_end(w);
}

/* The MAC of every byte before it, which the AUTH record is not. */
static int iw_auth(struct img_writer *w)
{
	struct rec_auth a = {
		.magic = CKPT_AUTH_MAGIC,
		.alg = AUTH_HMAC_SHA256,
		.covered = w->pos,
	};

	_Static_assert(sizeof(a.mac) == SHA256_LEN, "rec_auth.mac is a SHA-256");
	if (w->mac_len != w->pos)
		return log_err(w->log, EPROTO,
			       "image MAC: %llu of the %llu bytes written went through it",
			       (unsigned long long)w->mac_len,
			       (unsigned long long)w->pos);
	hmac_sha256_final(w->mac, a.mac);
	free(w->mac);
	w->mac = NULL;
	return iw_record(w, REC_AUTH, &a, sizeof(a));
}

int iw_tail(struct img_writer *w)
{
	struct rec_tail t = { .magic = CKPT_TAIL_MAGIC };
	int ret = w->mac ? iw_auth(w) : 0;

	t.nr_records = w->nr_records;
	t.offset = w->pos;
	t.chain = w->chain;
	if (!ret)
		ret = iw_record(w, REC_TAIL, &t, sizeof(t));
	return ret ? ret : iw_flush(w);
}

/* ---- reading ---- */

/* fd's bytes from where it is, into a memfd only we can write. */
static int img_spool(int fd, struct ckpt_log *log)
{
	char *buf;
	int mfd, ret = 0;

	mfd = memfd_create("ckpt-image", 0);
	if (mfd < 0)
		return log_err(log, errno, "memfd for image from fd %d:", fd);
	if (fchmod(mfd, 0600)) {
		close(mfd);
		return log_err(log, errno, "memfd for image from fd %d:", fd);
	}
	buf = malloc(RBUF_SIZE);
	if (!buf) {
		close(mfd);
		return log_err(log, ENOMEM, "image spool buffer:");
	}
	for (;;) {
		ssize_t n = read(fd, buf, RBUF_SIZE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = log_err(log, errno, "reading image fd %d:", fd);
			break;
		}
		if (n == 0)
			break;
		ret = write_all(mfd, buf, n);
		if (ret) {
			ret = log_err(log, -ret, "spooling image to memory:");
			break;
		}
	}
	free(buf);
	if (ret) {
		close(mfd);
		return ret;
	}
	return mfd;
}

int img_seekable(int fd, struct ckpt_log *log)
{
	struct stat st;

	if (fstat(fd, &st))
		return log_err(log, errno, "image fd %d:", fd);
	return S_ISREG(st.st_mode) ? fd : img_spool(fd, log);
}

int img_private(int fd, struct ckpt_log *log)
{
	struct stat st;

	if (fstat(fd, &st))
		return log_err(log, errno, "image fd %d:", fd);
	if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022))
		return fd;
	if (S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_SET) < 0)
		return log_err(log, errno, "image fd %d:", fd);
	log_info(log, "the image is copied into memory: others may write its file");
	return img_spool(fd, log);
}

int ir_init(struct img_reader *r, int fd, struct ckpt_log *log)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->log = log;
	if (fstat(fd, &st))
		return log_err(log, errno, "image fd %d:", fd);
	r->size = st.st_size;
	log->pos = &r->pos;
	return 0;
}

void ir_free(struct img_reader *r)
{
	if (r->log && r->log->pos == &r->pos)
		r->log->pos = NULL;
	free(r->buf);
	r->buf = NULL;
	free(r->win);
	r->win = NULL;
	r->win_len = 0;
	free(r->spans);
	r->spans = NULL;
	r->nr_spans = 0;
}

static int pread_direct(struct img_reader *r, void *p, size_t n, uint64_t off)
{
	size_t got;
	int err = pread_full(r->fd, p, n, off, &got);

	if (err == ENODATA)
		return log_err(r->log, ENODATA, "truncated image: ends at byte %llu",
			       (unsigned long long)(off + got));
	if (err)
		return log_err(r->log, err, "reading image at %llu:",
			       (unsigned long long)(off + got));
	return 0;
}

static bool in_window(const struct img_reader *r, size_t n, uint64_t off)
{
	return r->win_len && off >= r->win_off &&
	       n <= r->win_len && off - r->win_off <= r->win_len - n;
}

/* The window made to start at @off.  A short read (the image's end) is
 * kept as it is: what it lacks is read directly, and reported there. */
static void window_fill(struct img_reader *r, uint64_t off)
{
	ssize_t k;

	if (!r->win && !(r->win = malloc(IR_WIN_SIZE)))
		return;		/* no window: every read goes direct */
	do
		k = pread(r->fd, r->win, IR_WIN_SIZE, off);
	while (k < 0 && errno == EINTR);
	r->win_off = off;
	r->win_len = k > 0 ? (size_t)k : 0;
}

/* Small reads from the window: an image's metadata is thousands of
 * records of tens of bytes, each read as four pieces; one system call
 * a piece was 4 ms of a JVM's restart.  Pages are not read here. */
static int pread_all(struct img_reader *r, void *p, size_t n, uint64_t off)
{
	if (n > IR_WIN_SIZE / 4)
		return pread_direct(r, p, n, off);
	if (!in_window(r, n, off))
		window_fill(r, off);
	if (!in_window(r, n, off))
		return pread_direct(r, p, n, off);
	memcpy(p, r->win + (off - r->win_off), n);
	return 0;
}

/* CRC of [off, off+n) of the image, and check it is readable.  Read
 * (a copy) rather than mapped: an image cut short under us (a file
 * truncated while restart reads it) must give an error, not SIGBUS.
 * Through a small buffer made at first need and kept: a fresh 4 MiB
 * one cost a fault a page at first touch (5-11 us each on a VM whose
 * host backs memory lazily: 5 ms of a python's restart). */
static int crc_range(struct img_reader *r, uint32_t *crc, uint64_t off,
		     uint64_t n)
{
	if (n && !r->buf) {
		r->buf_len = r->size < RBUF_SIZE ? (size_t)r->size : RBUF_SIZE;
		r->buf_len = r->buf_len < 4096 ? 4096 : r->buf_len;
		r->buf = malloc(r->buf_len);
		if (!r->buf)
			return log_err(r->log, ENOMEM, "image read buffer:");
	}
	while (n) {
		size_t k = n < r->buf_len ? n : r->buf_len;
		int ret = pread_all(r, r->buf, k, off);

		if (ret)
			return ret;
		*crc = crc32c(*crc, r->buf, k);
		off += k;
		n -= k;
	}
	return 0;
}

/* PAGES, FILE_DATA and SYSV_DATA: the head (and its runs) in memory, the data not. */
_Static_assert(sizeof(struct rec_file_data) == sizeof(struct rec_pages) &&
	       sizeof(struct rec_data_run) == sizeof(struct rec_pages_run),
	       "FILE_DATA is read as PAGES is");
static int read_pages_head(struct img_reader *r, struct rec *rec)
{
	struct rec_pages ph;
	size_t n;
	int ret;

	if (rec->len < sizeof(ph))
		return log_err(r->log, EBADMSG, "%s record too short",
			       rec_type_name(rec->type));
	ret = pread_all(r, &ph, sizeof(ph), rec->off);
	if (ret)
		return ret;
	if (ph.nr_runs > (rec->len - sizeof(ph)) / sizeof(struct rec_pages_run)
	    || ph.nr_runs > CKPT_REC_MAX_META / sizeof(struct rec_pages_run))
		return log_err(r->log, EBADMSG,
			       "%s record: %u runs do not fit",
			       rec_type_name(rec->type), ph.nr_runs);
	n = sizeof(ph) + ph.nr_runs * sizeof(struct rec_pages_run);
	rec->data = malloc(n);
	if (!rec->data)
		return log_err(r->log, ENOMEM, "%s record head:",
			       rec_type_name(rec->type));
	rec->data_len = n;
	return pread_all(r, rec->data, n, rec->off);
}

/* PAGES data to check later: where it is (its checksum comes with its
 * trailer). */
static int defer_span(struct img_reader *r, const struct rec *rec)
{
	if (r->nr_spans == r->cap_spans) {
		size_t cap = r->cap_spans ? 2 * r->cap_spans : 256;
		struct ir_span *n = realloc(r->spans, cap * sizeof(*n));

		if (!n)
			return log_err(r->log, ENOMEM, "deferred page checks:");
		r->spans = n;
		r->cap_spans = cap;
	}
	r->spans[r->nr_spans++] = (struct ir_span){ rec->off, rec->len, r->pos, 0 };
	r->span_bytes += rec->len;
	return 0;
}

static int ir_payload(struct img_reader *r, struct rec *rec, uint32_t *crc,
		      bool *deferred)
{
	int ret;

	*crc = 0;
	*deferred = false;
	if (rec->flags)		/* a piece: whole, image_zframe.c reads it */
		goto whole;
	if (rec->type == REC_PAGES || rec->type == REC_FILE_DATA ||
	    rec->type == REC_SYSV_DATA) {
		ret = read_pages_head(r, rec);
		if (!ret && r->defer && rec->type == REC_PAGES) {
			*deferred = true;
			return defer_span(r, rec);
		}
		return ret ? ret : crc_range(r, crc, rec->off, rec->len);
	}
whole:
	if (rec->len > CKPT_REC_MAX_META)
		return log_err(r->log, EBADMSG,
			       "record %s of %llu bytes exceeds the %u limit",
			       rec_type_name(rec->type),
			       (unsigned long long)rec->len, CKPT_REC_MAX_META);
	/* +1: a NUL after the payload makes stray string reads safe */
	rec->data = calloc(1, rec->len + 1);
	if (!rec->data)
		return log_err(r->log, ENOMEM, "record payload:");
	rec->data_len = rec->len;
	ret = pread_all(r, rec->data, rec->len, rec->off);
	if (!ret)
		*crc = crc32c(0, rec->data, rec->len);
	return ret;
}

static int check_trailer(struct img_reader *r, struct rec *rec, uint32_t crc,
			 bool deferred)
{
	struct rec_trailer t;
	uint64_t pad = pad8(rec->len), zero = 0;
	char padb[8];
	int ret;

	ret = pread_all(r, padb, pad, rec->off + rec->len);
	if (!ret)
		ret = pread_all(r, &t, sizeof(t), rec->off + rec->len + pad);
	if (ret)
		return ret;
	if (memcmp(padb, &zero, pad) || t.reserved)
		return log_err(r->log, EBADMSG,
			       "record %s at %llu: bad padding",
			       rec_type_name(rec->type),
			       (unsigned long long)r->pos);
	if (deferred)
		r->spans[r->nr_spans - 1].crc = t.crc;
	else if (t.crc != crc)
		return log_err(r->log, EBADMSG,
			       "record %s at offset %llu: checksum mismatch (corrupt image)",
			       rec_type_name(rec->type),
			       (unsigned long long)r->pos);
	r->chain = crc32c(r->chain, &t.crc, 4);
	return 0;
}

int rec_read_again(int fd, uint32_t type, uint64_t off, size_t len, uint32_t crc,
		   void *buf, struct ckpt_log *log)
{
	int ret = pread_full(fd, buf, len, off, NULL);

	if (ret)
		return log_err(log, ret, "record %s at image offset %llu: reading it again:",
			       rec_type_name(type), (unsigned long long)off);
	if (crc32c(0, buf, len) != crc)
		return log_err(log, EBADMSG,
			       "record %s at image offset %llu: changed since the image was checked (the image was modified while it was used)",
			       rec_type_name(type), (unsigned long long)off);
	return 0;
}

int ir_check_span(struct img_reader *r, const struct ir_span *s)
{
	uint32_t crc = 0;
	int ret = crc_range(r, &crc, s->off, s->len);

	if (!ret && crc != s->crc)
		ret = log_err(r->log, EBADMSG,
			      "record PAGES at offset %llu: checksum mismatch (corrupt image)",
			      (unsigned long long)s->rec_pos);
	return ret;
}

static int check_tail(struct img_reader *r, const struct rec *rec)
{
	const struct rec_tail *t = rec->data;

	if (rec->len != sizeof(*t) || t->magic != CKPT_TAIL_MAGIC ||
	    t->reserved)
		return log_err(r->log, EBADMSG, "malformed tail record");
	if (t->nr_records != r->nr_records || t->offset != r->pos)
		return log_err(r->log, EBADMSG,
			       "tail says %llu records before offset %llu, found %llu before %llu",
			       (unsigned long long)t->nr_records,
			       (unsigned long long)t->offset,
			       (unsigned long long)r->nr_records,
			       (unsigned long long)r->pos);
	if (t->chain != r->chain)
		return log_err(r->log, EBADMSG, "tail checksum chain mismatch");
	return 0;
}

/* Its fields only: the MAC is checked with the key, if one is given,
 * before the image is read (auth.c). */
static int check_auth(struct img_reader *r, const struct rec *rec)
{
	const struct rec_auth *a = rec->data;

	if (rec->len != sizeof(*a) || a->magic != CKPT_AUTH_MAGIC || a->reserved)
		return log_err(r->log, EBADMSG, "malformed AUTH record at offset %llu",
			       (unsigned long long)r->pos);
	if (a->alg != AUTH_HMAC_SHA256)
		return log_err(r->log, EBADMSG, "AUTH record: unknown algorithm %u",
			       a->alg);
	if (a->covered != r->pos)
		return log_err(r->log, EBADMSG,
			       "AUTH record at offset %llu says it covers %llu bytes",
			       (unsigned long long)r->pos,
			       (unsigned long long)a->covered);
	r->auth_seen = true;
	return 0;
}

/* A piece of a compressed record: only where image_zframe.c reads them, of
 * a record that can be one. */
static int check_flags(struct img_reader *r, const struct rec_hdr *h)
{
	if (!h->flags)
		return 0;
	if (h->flags != REC_F_ZFRAME)
		return log_err(r->log, EBADMSG,
			       "record header at offset %llu: unknown flags 0x%x",
			       (unsigned long long)r->pos, h->flags);
	if (!r->zraw)
		return log_err(r->log, EBADMSG,
			       "compressed record at offset %llu in an image whose HEAD does not say it is compressed",
			       (unsigned long long)r->pos);
	if (h->type == REC_HEAD || h->type == REC_TAIL || h->type == REC_AUTH)
		return log_err(r->log, EBADMSG,
			       "record %s at offset %llu cannot be compressed",
			       rec_type_name(h->type), (unsigned long long)r->pos);
	return 0;
}

int ir_next(struct img_reader *r, struct rec *rec)
{
	struct rec_hdr h;
	uint64_t room;
	uint32_t chain_before, crc;
	bool deferred;
	int ret;

	memset(rec, 0, sizeof(*rec));
	if (r->tail_seen)
		return 0;
	if (r->pos == r->size)
		return log_err(r->log, ENODATA,
			       "truncated image: no tail record after %llu records (%llu bytes)",
			       (unsigned long long)r->nr_records,
			       (unsigned long long)r->size);
	if (r->size - r->pos < sizeof(h) + sizeof(struct rec_trailer))
		return log_err(r->log, ENODATA,
			       "truncated image: %llu stray bytes at the end",
			       (unsigned long long)(r->size - r->pos));
	ret = pread_all(r, &h, sizeof(h), r->pos);
	if (ret)
		return ret;
	if (h.hcrc != crc32c(0, &h, 16) || h.reserved)
		return log_err(r->log, EBADMSG,
			       "corrupt record header at offset %llu",
			       (unsigned long long)r->pos);
	ret = check_flags(r, &h);
	if (ret)
		return ret;
	if (!rec_desc_of(h.type) && h.type != REC_AUTH)
		return log_err(r->log, EBADMSG,
			       "unknown record type %u at offset %llu", h.type,
			       (unsigned long long)r->pos);
	if (r->auth_seen && h.type != REC_TAIL)
		return log_err(r->log, EBADMSG,
			       "record %s at offset %llu after the AUTH record, which must be the last before the tail",
			       rec_type_name(h.type), (unsigned long long)r->pos);
	if (r->nr_records == 0 && h.type != REC_HEAD)
		return log_err(r->log, EBADMSG, "image does not start with a HEAD record");
	room = r->size - r->pos - sizeof(h) - sizeof(struct rec_trailer);
	if (h.len > room || pad8(h.len) > room - h.len)
		return log_err(r->log, ENODATA,
			       "truncated image: record %s at offset %llu needs %llu bytes, %llu remain",
			       rec_type_name(h.type),
			       (unsigned long long)r->pos,
			       (unsigned long long)h.len,
			       (unsigned long long)room);
	rec->type = h.type;
	rec->flags = h.flags;
	rec->len = h.len;
	rec->off = r->pos + sizeof(h);
	rec->index = r->nr_records;
	chain_before = r->chain;
	r->chain = crc32c(r->chain, &h.hcrc, 4);
	ret = ir_payload(r, rec, &crc, &deferred);
	if (!ret)
		ret = check_trailer(r, rec, crc, deferred);
	if (ret)
		goto fail;
	rec->crc = crc;
	if (r->lean && !deferred && !rec->flags && rec_reread(rec->type)) {
		free(rec->data);
		rec->data = NULL;
		rec->data_len = 0;
	}
	if (rec->type == REC_TAIL) {
		r->chain = chain_before;
		ret = check_tail(r, rec);
		if (ret)
			goto fail;
		r->tail_seen = true;
		r->pos = rec->off + rec->len + pad8(rec->len) +
			 sizeof(struct rec_trailer);
		free(rec->data);
		rec->data = NULL;
		if (r->pos != r->size)
			return log_err(r->log, EBADMSG,
				       "%llu bytes of garbage after the tail",
				       (unsigned long long)(r->size - r->pos));
		return 0;
	}
	if (rec->type == REC_AUTH) {
		ret = check_auth(r, rec);
		if (ret)
			goto fail;
	}
	r->pos = rec->off + rec->len + pad8(rec->len) +
		 sizeof(struct rec_trailer);
	r->nr_records++;
	if (rec->type == REC_AUTH) {	/* the stream's, no caller's */
		free(rec->data);
		return ir_next(r, rec);
	}
	return 1;
fail:
	free(rec->data);
	rec->data = NULL;
	return ret;
}

int rec_want(struct ckpt_log *log, const struct rec *rec, size_t min,
	     const char *what)
{
	if (rec->data_len < min)
		return log_err(log, EBADMSG,
			       "%s record %llu: %zu bytes, need at least %zu",
			       what, (unsigned long long)rec->index,
			       rec->data_len, min);
	return 0;
}

/* A NUL-terminated string of exactly len bytes (with the NUL) at off. */
const char *rec_str(const struct rec *rec, size_t off, uint32_t len)
{
	const char *s = (const char *)rec->data + off;

	if (len == 0 || len > CKPT_PATH_MAX || off > rec->data_len ||
	    len > rec->data_len - off || s[len - 1] != '\0' ||
	    strlen(s) != len - 1)
		return NULL;
	return s;
}

bool field_str_ok(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

const char *rec_type_name(uint32_t t)
{
	const struct rec_desc *d = rec_desc_of(t);

	if (t == REC_AUTH)	/* the stream's own, no kind's */
		return "AUTH";
	return d ? d->name : "?";
}
