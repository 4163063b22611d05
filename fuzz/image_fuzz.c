/* image_fuzz.c - libFuzzer target: the image reader, every kind's load()
 * and pre-flight checks (those that need no process: image_model() as
 * `ckpt info` runs it), and `ckpt info`'s display, over one image.
 *
 * Raw byte mutations never get past the checksums, so the custom mutator
 * takes the image apart into records, changes one (its payload, a field
 * set to a boundary value, a record dropped, copied, moved or retyped),
 * and puts it back together with every checksum, the tail's count,
 * offset and chain, and the page alignment of PAGES data recomputed:
 * the input then reaches the kinds' own checks, and, for the pieces of a
 * compressed image (a record's flags kept), the decompressor's.  One time in sixteen it
 * mutates raw bytes, which the checksums must stop.
 *
 * Built by `make fuzz` (clang, -fsanitize=fuzzer,address,undefined);
 * fuzz/run.sh runs it on the seeds of fuzz/seeds.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "crc32c.h"
#include "image_format.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);

#define HDR	sizeof(struct rec_hdr)
#define TRL	sizeof(struct rec_trailer)
#define PAGE_SZ	4096u
#define MAX_RECS 4096

static int memfd = -1, nullfd = -1;
static FILE *nullf;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (memfd < 0) {
		memfd = memfd_create("image", 0);
		nullfd = open("/dev/null", O_WRONLY);
		nullf = fopen("/dev/null", "w");
		if (memfd < 0 || nullfd < 0 || !nullf)
			abort();
	}
	if (ftruncate(memfd, 0) || (size && pwrite(memfd, data, size, 0) != (ssize_t)size))
		abort();
	ckpt_info(memfd, 0, nullf, nullfd);
	ckpt_info(memfd, CKPT_INFO_JSON, nullf, nullfd);
	return 0;
}

/* ---- the mutator ------------------------------------------------------ */

struct frec {
	uint32_t type;
	uint32_t flags;		/* REC_F_ZFRAME: a piece of a compressed
				 * record, its payload a rec_zframe and
				 * zstd data, which reach the decompressor */
	uint8_t *p;		/* payload, malloc()ed */
	size_t len;
};

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return n ? (uint32_t)(rnd_state >> 33) % n : 0;
}

static size_t pad8(size_t n)
{
	return (8 - (n & 7)) & 7;
}

static bool paged(uint32_t type)
{
	return type == REC_PAGES || type == REC_FILE_DATA || type == REC_SYSV_DATA;
}

/* The records before the TAIL, or -1 if @d is not a whole image. */
static int parse(const uint8_t *d, size_t n, struct frec *r)
{
	size_t off = 0;
	int k = 0;

	while (off + HDR <= n && k < MAX_RECS) {
		struct rec_hdr h;

		memcpy(&h, d + off, HDR);
		if (h.len > n - off - HDR || pad8(h.len) + TRL > n - off - HDR - h.len)
			break;
		if (h.type == REC_TAIL)
			return k;
		r[k].type = h.type;
		r[k].flags = h.flags;
		r[k].len = h.len;
		r[k].p = malloc(h.len ? h.len : 1);
		if (!r[k].p)
			break;
		memcpy(r[k].p, d + off + HDR, h.len);
		k++;
		off += HDR + h.len + pad8(h.len) + TRL;
	}
	while (k > 0)
		free(r[--k].p);
	return -1;
}

struct out {
	uint8_t *d;
	size_t n, cap;
	uint32_t chain;
	bool full;
};

static void put(struct out *o, const void *p, size_t len)
{
	if (o->full || len > o->cap - o->n) {
		o->full = true;
		return;
	}
	if (p)
		memcpy(o->d + o->n, p, len);
	else
		memset(o->d + o->n, 0, len);
	o->n += len;
}

static void put_rec(struct out *o, uint32_t type, uint32_t flags, const uint8_t *p,
		    size_t len, bool chained)
{
	struct rec_hdr h = { .type = type, .flags = flags, .len = len };
	struct rec_trailer t = { 0 };

	h.hcrc = crc32c(0, &h, 16);
	t.crc = crc32c(0, p, len);
	put(o, &h, HDR);
	put(o, p, len);
	put(o, NULL, pad8(len));
	put(o, &t, TRL);
	if (chained) {
		o->chain = crc32c(o->chain, &h.hcrc, 4);
		o->chain = crc32c(o->chain, &t.crc, 4);
	}
}

/* A PAGES-like record whose data starts page-aligned where it now lands
 * (its pad_len recomputed), as the writer makes them. */
static void put_paged(struct out *o, const struct frec *r)
{
	uint32_t nr_runs, pad;
	size_t head, npad, len;
	uint8_t *p;

	if (r->len < 24) {
		put_rec(o, r->type, 0, r->p, r->len, true);
		return;
	}
	memcpy(&nr_runs, r->p + 16, 4);
	memcpy(&pad, r->p + 20, 4);
	head = 24 + (size_t)nr_runs * 16;
	if (nr_runs > r->len / 16 || head + pad > r->len) {
		put_rec(o, r->type, 0, r->p, r->len, true);
		return;
	}
	npad = (PAGE_SZ - ((o->n + HDR + head) & (PAGE_SZ - 1))) & (PAGE_SZ - 1);
	len = head + npad + (r->len - head - pad);
	p = calloc(1, len ? len : 1);
	if (!p) {
		o->full = true;
		return;
	}
	memcpy(p, r->p, head);
	memcpy(p + 20, &(uint32_t){ npad }, 4);
	memcpy(p + head + npad, r->p + head + pad, r->len - head - pad);
	put_rec(o, r->type, 0, p, len, true);
	free(p);
}

static size_t serialize(uint8_t *d, size_t cap, const struct frec *r, int k)
{
	struct out o = { .d = d, .cap = cap };
	struct rec_tail t = { .magic = CKPT_TAIL_MAGIC, .nr_records = k };

	for (int i = 0; i < k; i++) {
		if (paged(r[i].type) && !r[i].flags)
			put_paged(&o, &r[i]);
		else
			put_rec(&o, r[i].type, r[i].flags, r[i].p, r[i].len, true);
	}
	t.offset = o.n;
	t.chain = o.chain;
	put_rec(&o, REC_TAIL, 0, (const uint8_t *)&t, sizeof(t), false);
	return o.full ? 0 : o.n;
}

static const uint64_t edge[] = {
	0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255, 256, 4095,
	4096, 4097, 65535, 65536, 1u << 22, (1u << 22) + 1, 0x7fffffff,
	0x80000000, 0xffffffff, 0x100000000ULL, 0x7ffffffff000ULL,
	0x800000000000ULL, 0xffff800000000000ULL, ~0ULL, ~0ULL - 1,
};

/* A 1, 2, 4 or 8-byte field of @r set to a boundary value, or moved by
 * a little. */
static void set_field(struct frec *r)
{
	size_t w = 1u << rnd(4), at;
	uint64_t v;

	if (r->len < w)
		return;
	at = rnd(r->len - w + 1) & ~(w - 1);
	if (rnd(3)) {
		v = edge[rnd(sizeof(edge) / sizeof(edge[0]))];
	} else {
		v = 0;
		memcpy(&v, r->p + at, w);
		v += rnd(2) ? 1 : -1;
	}
	memcpy(r->p + at, &v, w);
}

/* Its payload through libFuzzer's own mutations (a PAGES-like record's
 * head and runs only: its data stays a whole number of pages). */
static void mutate_payload(struct frec *r)
{
	size_t part = r->len, room = r->len + 64;
	uint8_t *p;

	if (paged(r->type) && !r->flags && r->len >= 24) {
		uint32_t nr_runs;

		memcpy(&nr_runs, r->p + 16, 4);
		part = nr_runs <= r->len / 16 ? 24 + (size_t)nr_runs * 16 : 24;
		part = part < r->len ? part : r->len;
		room = part;
	}
	p = malloc(room ? room : 1);
	if (!p)
		return;
	memcpy(p, r->p, part);
	room = LLVMFuzzerMutate(p, part, room);
	if (part == r->len) {
		free(r->p);
		r->p = p;
		r->len = room;
	} else {
		memcpy(r->p, p, part < room ? part : room);
		free(p);
	}
}

static const uint32_t types[] = {
	REC_HEAD, REC_TASK, REC_THREAD, REC_REGS, REC_XSTATE, REC_SIGPENDING,
	REC_MM, REC_VMA, REC_PAGES, REC_PAGES_REF, REC_SIGHAND, REC_ITIMERS,
	REC_POSIX_TIMER, REC_RLIMITS, REC_FS, REC_CREDS, REC_PROCATTR,
	REC_THREAD_ATTR, REC_FILE, REC_FD, REC_PIPE, REC_FILE_OBJ,
	REC_FILE_DATA, REC_FIFO, REC_LOCK, REC_FOWN, REC_TTY, REC_TTY_DATA,
	REC_UNIX_SK, REC_IA32, REC_IA32_THREAD, REC_SYSV_SHM, REC_SYSV_DATA,
	REC_SECCOMP_FILTER, REC_SECCOMP, REC_CUDA, REC_ERROR,
};

static int mutate_records(struct frec *r, int k)
{
	int i = rnd(k), j = rnd(k);
	struct frec tmp;

	switch (rnd(8)) {
	case 0: case 1:
		mutate_payload(&r[i]);
		break;
	case 2: case 3: case 4:
		set_field(&r[i]);
		break;
	case 5:		/* dropped */
		if (k < 2)
			break;
		free(r[i].p);
		memmove(&r[i], &r[i + 1], (k - i - 1) * sizeof(*r));
		return k - 1;
	case 6:		/* copied, after a random one */
		if (k >= MAX_RECS || !(tmp.p = malloc(r[i].len ? r[i].len : 1)))
			break;
		memcpy(tmp.p, r[i].p, r[i].len);
		tmp.len = r[i].len;
		tmp.type = r[i].type;
		tmp.flags = r[i].flags;
		memmove(&r[j + 1], &r[j], (k - j) * sizeof(*r));
		r[j] = tmp;
		return k + 1;
	default:	/* swapped with another, or retyped */
		if (rnd(2)) {
			tmp = r[i];
			r[i] = r[j];
			r[j] = tmp;
		} else if (rnd(8)) {
			r[i].type = types[rnd(sizeof(types) / sizeof(types[0]))];
		} else {	/* a piece, or no more one */
			r[i].flags ^= REC_F_ZFRAME;
		}
		break;
	}
	return k;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	static struct frec r[MAX_RECS + 1];
	size_t n = 0;
	int k;

	rnd_state = seed;
	if (rnd(16) == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	k = parse(data, size, r);
	if (k <= 0)
		return LLVMFuzzerMutate(data, size, max_size);
	for (int m = 1 + rnd(3); m > 0 && k > 0; m--)
		k = mutate_records(r, k);
	n = serialize(data, max_size, r, k);
	for (int i = 0; i < k; i++)
		free(r[i].p);
	return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
