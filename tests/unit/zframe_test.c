/* zframe_test.c - unit tests of compressed records (image_zframe.c,
 * image_expand.c): what is written comes back byte for byte once
 * expanded, whatever went out in pieces and whatever went plain; a
 * record abandoned half-way (a checkpoint that failed while writing
 * pages) still makes a readable image; only what pays is compressed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "image.h"

#include "check.h"

#define MiB (1u << 20)

static void fill_text(char *p, size_t n)
{
	size_t off = 0;
	unsigned line = 0;

	while (off < n) {
		char l[96];
		int k = snprintf(l, sizeof(l), "%08u: a line of text that compresses, %u\n",
				 line, line % 13);

		memcpy(p + off, l, (size_t)k < n - off ? (size_t)k : n - off);
		off += k;
		line++;
	}
}

static void fill_random(char *p, size_t n)
{
	uint64_t x = 88172645463325252ULL;

	for (size_t i = 0; i + 8 <= n; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

/* A record of @type of @n bytes at @p, written as pagecopy does: a
 * small head, then 4 MiB chunks.  Its first bytes a PAGES head of no
 * runs, which the reader takes (no kind looks further here). */
static int put(struct img_writer *w, uint32_t type, char *p, size_t n)
{
	int ret = iw_begin(w, type, n);

	memset(p, 0, sizeof(struct rec_pages));

	for (size_t off = 0; !ret && off < n; ) {
		size_t k = off ? (n - off < 4 * MiB ? n - off : 4 * MiB) : 40;

		k = k < n - off ? k : n - off;
		ret = iw_write(w, p + off, k);
		off += k;
	}
	return ret ? ret : iw_end(w);
}

/* The records of the image @fd, after expansion: each PAGES payload
 * checked against @want[i] (@len[i] bytes). */
static void check_back(int fd, char **want, size_t *len, int n, struct zstats *st)
{
	struct ckpt_log log = { .fd = 2 };
	struct img_reader r;
	struct rec rec;
	int e = img_expand(fd, &log, st), k = 0, ret;
	char *got;

	CHECK(e >= 0, "expanded: %s", log.msg);
	if (e < 0)
		return;
	CHECK(ir_init(&r, e, &log) == 0, "reader");
	while ((ret = ir_next(&r, &rec)) == 1) {
		if (rec.type == REC_PAGES && k < n) {
			got = malloc(rec.len);
			CHECK(rec.len == len[k], "record %d: %llu bytes, want %zu", k,
			      (unsigned long long)rec.len, len[k]);
			CHECK(pread(e, got, rec.len, rec.off) == (ssize_t)rec.len &&
			      !memcmp(got, want[k], len[k]), "record %d comes back", k);
			free(got);
			k++;
		}
		free(rec.data);
	}
	CHECK(ret == 0, "image read to its tail: %s", log.msg);
	CHECK(k == n, "%d records of pages, want %d", k, n);
	ir_free(&r);
	if (e != fd)
		close(e);
}

static void test_roundtrip(void)
{
	struct ckpt_log log = { .fd = 2 };
	struct rec_head h = { .magic = CKPT_MAGIC, .major = CKPT_FMT_MAJOR,
			      .flags = CKPT_COMPRESS };
	size_t len[4] = { 9 * MiB + 123, 3 * MiB, 40000, 5 * MiB };
	char *buf[4];
	struct img_writer w;
	struct zstats st = { 0 };
	int fd = memfd_create("img", 0);

	for (int i = 0; i < 4; i++)
		buf[i] = malloc(len[i]);
	fill_text(buf[0], len[0]);	/* pieces, zstd */
	fill_random(buf[1], len[1]);	/* plain: it does not compress */
	fill_text(buf[2], len[2]);	/* plain: too small to be worth it */
	fill_text(buf[3], 2 * MiB);	/* pieces, its random tail stored raw */
	fill_random(buf[3] + 2 * MiB, 3 * MiB);
	CHECK(iw_init(&w, fd, &log) == 0, "iw_init");
	CHECK(iw_compress(&w, 1) == 0, "iw_compress: %s", log.msg);
	CHECK(iw_record(&w, REC_HEAD, &h, sizeof(h)) == 0, "head");
	for (int i = 0; i < 4; i++)
		CHECK(put(&w, REC_PAGES, buf[i], len[i]) == 0, "record %d", i);
	/* a record abandoned half-way, then the failure's record */
	CHECK(iw_begin(&w, REC_PAGES, 6 * MiB) == 0 && iw_write(&w, buf[0], 3 * MiB) == 0 &&
	      iw_abandon(&w) == 0, "abandoned");
	CHECK(iw_record(&w, REC_ERROR, "failed", 7) == 0, "error record");
	CHECK(iw_tail(&w) == 0, "tail");
	iw_free(&w);
	CHECK(w.pos < len[0] / 4 + len[1] + len[2] + len[3], "%llu bytes stored",
	      (unsigned long long)w.pos);
	check_back(fd, buf, len, 4, &st);
	CHECK(st.on && st.records == 3, "%llu records in pieces, want 3 (text, mixed, abandoned)",
	      (unsigned long long)st.records);
	CHECK(st.zpieces > 0 && st.zpieces < st.pieces, "%llu of %llu pieces compressed",
	      (unsigned long long)st.zpieces, (unsigned long long)st.pieces);
	for (int i = 0; i < 4; i++)
		free(buf[i]);
	close(fd);
}

/* Random memory only: no record in pieces, and the image is read where
 * it lies (img_expand() gives the same fd back). */
static void test_random_plain(void)
{
	struct ckpt_log log = { .fd = 2 };
	struct rec_head h = { .magic = CKPT_MAGIC, .major = CKPT_FMT_MAJOR,
			      .flags = CKPT_COMPRESS };
	size_t len = 8 * MiB;
	char *buf = malloc(len);
	struct img_writer w;
	struct zstats st = { 0 };
	int fd = memfd_create("img", 0), e;

	fill_random(buf, len);
	CHECK(iw_init(&w, fd, &log) == 0 && iw_compress(&w, 1) == 0, "writer");
	CHECK(iw_record(&w, REC_HEAD, &h, sizeof(h)) == 0, "head");
	CHECK(put(&w, REC_PAGES, buf, len) == 0, "pages");
	CHECK(iw_tail(&w) == 0, "tail");
	CHECK(w.pos < len + 4096, "%llu bytes for %zu", (unsigned long long)w.pos, len);
	iw_free(&w);
	e = img_expand(fd, &log, &st);
	CHECK(e == fd, "read where it lies");
	CHECK(st.on && st.records == 0, "nothing in pieces");
	check_back(fd, &buf, &len, 1, NULL);
	free(buf);
	close(fd);
}

int main(void)
{
	test_roundtrip();
	test_random_plain();
	printf("zframe_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
