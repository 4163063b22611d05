/* image_test.c - unit tests of the record stream: CRC32C, writer, reader,
 * truncation and corruption detection, spooling of a pipe. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"

#include "check.h"

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & -(c & 1));
	}
	return ~c;
}

static void test_crc(void)
{
	size_t n = 100000;
	uint8_t *buf = malloc(n);
	uint64_t x = 88172645463325252ULL;

	CHECK(crc32c(0, "123456789", 9) == 0xe3069283, "known vector");
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = x;
	}
	/* sizes around the 3x4096 lane split, and pieces fed in order */
	size_t sizes[] = { 0, 1, 7, 8, 4095, 12287, 12288, 12289, 40000, n };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t want = crc_bitwise(buf, sizes[i]);
		size_t cut = sizes[i] / 3;

		CHECK(crc32c(0, buf, sizes[i]) == want, "crc of %zu bytes", sizes[i]);
		CHECK(crc32c(crc32c(0, buf, cut), buf + cut, sizes[i] - cut) == want,
		      "crc of %zu bytes in two pieces", sizes[i]);
		CHECK(crc32c_combine(crc32c(0, buf, cut), crc32c(0, buf + cut, sizes[i] - cut),
				     sizes[i] - cut) == want,
		      "crc of %zu bytes combined from two", sizes[i]);
	}
	free(buf);
}

/* A small image: HEAD, a string record, a PAGES record with two pages,
 * a big record, TAIL. */
static size_t make_image(int fd)
{
	struct ckpt_log log = { .fd = -1 };
	struct img_writer w;
	struct rec_head h = { .magic = CKPT_MAGIC, .major = CKPT_FMT_MAJOR };
	struct rec_pages ph = { .vma_start = 0x10000, .npages = 2, .nr_runs = 1 };
	struct rec_pages_run run = { 0x10000, 2 };
	char page[4096], *big = calloc(1, 300000);
	uint64_t head, data_at;

	memset(page, 0xab, sizeof(page));
	CHECK(iw_init(&w, fd, &log) == 0, "iw_init");
	CHECK(iw_record(&w, REC_HEAD, &h, sizeof(h)) == 0, "head");
	CHECK(iw_record_str(&w, REC_FS, &h, 8, "/some/path") == 0, "string record");
	head = sizeof(ph) + sizeof(run);
	data_at = w.pos + sizeof(struct rec_hdr) + head;
	ph.pad_len = (4096 - data_at % 4096) % 4096;
	CHECK(iw_begin(&w, REC_PAGES, head + ph.pad_len + 2 * 4096) == 0, "pages");
	iw_write(&w, &ph, sizeof(ph));
	iw_write(&w, &run, sizeof(run));
	iw_zero(&w, ph.pad_len);
	CHECK(w.pos % 4096 == 0, "page data aligned in the stream");
	iw_write(&w, page, sizeof(page));
	iw_write(&w, page, sizeof(page));
	CHECK(iw_end(&w) == 0, "pages end");
	CHECK(iw_begin(&w, REC_FS, 10) == 0 && iw_write(&w, big, 11) < 0,
	      "overrunning a record is refused");
	CHECK(iw_abandon(&w) == 0, "abandon");
	CHECK(iw_record(&w, REC_MM, big, 300000) == 0, "big record");
	CHECK(iw_tail(&w) == 0, "tail");
	free(big);
	iw_free(&w);
	return w.pos;
}

/* Read the image in fd: the number of records, or -errno. */
static long read_all(int fd, uint64_t *pages_off)
{
	struct ckpt_log log = { .fd = -1 };
	struct img_reader r;
	struct rec rec;
	long n = 0;
	int ret = ir_init(&r, fd, &log);

	while (!ret && (ret = ir_next(&r, &rec)) > 0) {
		ret = 0;
		if (rec.type == REC_PAGES && pages_off)
			*pages_off = rec.off;
		free(rec.data);
		n++;
	}
	ir_free(&r);
	return ret < 0 ? ret : n;
}

static void test_roundtrip(void)
{
	int fd = memfd_create("t", 0), fd2 = memfd_create("t2", 0);
	size_t len = make_image(fd);
	uint64_t pages_off = 0;
	char *img = malloc(len);

	CHECK(read_all(fd, &pages_off) == 5, "five records before the tail");
	CHECK(pread(fd, img, len, 0) == (ssize_t)len, "read back");
	/* every truncation is detected, never mistaken for a whole image */
	for (size_t cut = 0; cut < len; cut += (cut < 9000 ? 1 : 997)) {
		ftruncate(fd2, 0);
		pwrite(fd2, img, cut, 0);
		CHECK(read_all(fd2, NULL) < 0, "truncated at %zu accepted", cut);
	}
	/* every flipped byte of the metadata and some of the data */
	for (size_t at = 0; at < len; at += (at < 9000 ? 1 : 4999)) {
		img[at] ^= 0x40;
		ftruncate(fd2, 0);
		pwrite(fd2, img, len, 0);
		CHECK(read_all(fd2, NULL) < 0, "flipped byte at %zu accepted", at);
		img[at] ^= 0x40;
	}
	/* trailing garbage after the tail */
	ftruncate(fd2, 0);
	pwrite(fd2, img, len, 0);
	pwrite(fd2, "x", 1, len);
	CHECK(read_all(fd2, NULL) < 0, "garbage after the tail accepted");
	free(img);
	close(fd);
	close(fd2);
}

static void test_spool(void)
{
	struct ckpt_log log = { .fd = -1 };
	int p[2], mfd;
	pid_t pid;

	CHECK(pipe(p) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		make_image(p[1]);
		_exit(0);
	}
	close(p[1]);
	mfd = img_seekable(p[0], &log);
	CHECK(mfd >= 0 && mfd != p[0], "pipe spooled to memory");
	CHECK(read_all(mfd, NULL) == 5, "spooled image reads whole");
	waitpid(pid, NULL, 0);
	close(mfd);
	close(p[0]);
}

int main(void)
{
	test_crc();
	test_roundtrip();
	test_spool();
	printf("unit image_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
