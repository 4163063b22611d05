/* dataruns.c - the bytes of a file (a memfd, a deleted file) or of a
 * SysV segment in the image: runs that skip holes, page-aligned in the
 * stream as PAGES are, so that restart can read them straight into
 * place.  One implementation for FILE_DATA and SYSV_DATA. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "dataruns.h"
#include "page.h"

#define MAX_RUNS	(CKPT_REC_MAX_META / sizeof(struct rec_data_run))

/* ---- checkpoint ---- */

static int data_runs_add(struct data_runs *rs, uint64_t off, uint64_t len)
{
	if (rs->n == MAX_RUNS)
		return -E2BIG;
	if (rs->n == rs->cap) {
		uint32_t cap = rs->cap ? rs->cap * 2 : 16;
		void *p = realloc(rs->r, cap * sizeof(*rs->r));

		if (!p)
			return -ENOMEM;
		rs->r = p;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct rec_data_run){ off, len };
	rs->bytes += len;
	return 0;
}

int data_runs_find(int fd, uint64_t size, struct data_runs *rs)
{
	off_t off = 0;
	int ret = 0;

	while ((uint64_t)off < size && !ret) {
		off_t d = lseek(fd, off, SEEK_DATA), h;

		if (d < 0)
			return errno == ENXIO ? 0 : -errno;
		if ((uint64_t)d >= size)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || (uint64_t)h > size)
			h = size;
		ret = data_runs_add(rs, d, h - d);
		off = h;
	}
	return ret;
}

void data_runs_free(struct data_runs *rs)
{
	free(rs->r);
	rs->r = NULL;
	rs->n = rs->cap = 0;
}

int data_runs_write(struct cpt_ctx *c, int fd, uint32_t type, uint32_t id,
		    const struct data_runs *rs)
{
	struct img_writer *w = &c->w;
	struct rec_file_data h = { .id = id, .bytes = rs->bytes, .nr_runs = rs->n };
	uint64_t head = sizeof(h) + rs->n * sizeof(*rs->r);
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	int ret;

	if (!buf)
		return -ENOMEM;
	h.pad_len = (PAGE - ((w->pos + sizeof(struct rec_hdr) + head) & (PAGE - 1))) &
		    (PAGE - 1);
	ret = iw_begin(w, type, head + h.pad_len + rs->bytes);
	if (!ret)
		ret = iw_write(w, &h, sizeof(h));
	if (!ret)
		ret = iw_write(w, rs->r, rs->n * sizeof(*rs->r));
	if (!ret)
		ret = iw_zero(w, h.pad_len);
	for (uint32_t i = 0; i < rs->n && !ret; i++) {
		for (uint64_t done = 0; done < rs->r[i].len && !ret;) {
			uint64_t n = rs->r[i].len - done;
			ssize_t k = pread(fd, buf, n < cap ? n : cap, rs->r[i].off + done);

			/* shorter than it was a moment ago: someone outside
			 * the tree truncated it */
			if (k <= 0)
				ret = k < 0 ? -errno : -ENODATA;
			else
				ret = iw_write(w, buf, k);
			done += k > 0 ? k : 0;
		}
	}
	free(buf);
	return ret ? ret : iw_end(w);
}

int data_runs_save(struct cpt_ctx *c, int fd, uint64_t size, uint32_t type,
		   uint32_t id)
{
	struct data_runs rs = { 0 };
	int ret = data_runs_find(fd, size, &rs);

	if (!ret && rs.n)
		ret = data_runs_write(c, fd, type, id, &rs);
	data_runs_free(&rs);
	return ret;
}

/* ---- restart ---- */

int data_runs_load(struct ckpt_log *log, struct rec *r, struct rst_data_runs *d,
		   uint64_t id, uint64_t size, const char *owner, const char *unit)
{
	const struct rec_file_data *h = r->data;
	const struct rec_data_run *run = (const void *)(h + 1);
	const char *what = rec_type_name(r->type);
	uint64_t head = sizeof(*h) + (uint64_t)h->nr_runs * sizeof(*run);
	uint64_t next = 0, total = 0;

	/* the reader has checked that the head and runs are in memory */
	if (!d || d->have || id != h->id)
		return log_err(log, EBADMSG, "%s record %llu does not follow its %s",
			       what, (unsigned long long)r->index, owner);
	if (h->nr_runs == 0 || h->pad_len >= PAGE)
		return log_err(log, EBADMSG, "%s %llu: bad header", what,
			       (unsigned long long)h->id);
	for (uint32_t i = 0; i < h->nr_runs; i++) {
		if (run[i].len == 0 || run[i].off < next ||
		    run[i].len > size || run[i].off > size - run[i].len)
			return log_err(log, EBADMSG,
				       "%s %llu: run %u outside the %s's %llu bytes",
				       what, (unsigned long long)h->id, i, unit,
				       (unsigned long long)size);
		next = run[i].off + run[i].len;
		total += run[i].len;
	}
	if (total != h->bytes || r->len != head + h->pad_len + total)
		return log_err(log, EBADMSG, "%s %llu: sizes do not add up", what,
			       (unsigned long long)h->id);
	d->runs = run;
	d->nr_runs = h->nr_runs;
	d->off = r->off + head + h->pad_len;
	d->have = true;
	d->rec = r->data;
	r->data = NULL;
	return 0;
}

void data_runs_show(struct info_out *o, const struct rec *r)
{
	const struct rec_file_data *d = r->data;

	info_u64(o, "id", d->id);
	info_u64(o, "bytes", d->bytes);
	info_u64(o, "runs", d->nr_runs);
}
