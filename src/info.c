/* info.c - `ckpt info`: what an image holds, record by record. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../include/ckpt.h"
#include "auth.h"
#include "model.h"

static void show_head(struct info_out *o, const struct rec *r)
{
	const struct rec_head *h = r->data;

	info_u64(o, "version", h->major * 1000 + h->minor);
	info_u64(o, "arch", h->arch);
	info_u64(o, "page_size", h->page_size);
	info_u64(o, "xstate_size", h->xstate_size);
	info_hex(o, "xfeatures", h->xfeatures);
	info_u64(o, "time", h->time_ns / 1000000000ULL);
	info_hex(o, "flags", h->flags);
	info_u64(o, "root_pid", h->root_pid);
	info_str(o, "kernel", h->kernel);
	info_str(o, "host", h->host);
	info_str(o, "tool", h->tool);
}

static void show_task(struct info_out *o, const struct rec *r)
{
	const struct rec_task *t = r->data;

	info_u64(o, "pid", t->pid);
	info_u64(o, "ppid", t->ppid);
	info_u64(o, "pgid", t->pgid);
	info_u64(o, "sid", t->sid);
	info_u64(o, "threads", t->nr_threads);
	info_hex(o, "personality", t->personality);
	info_u64(o, "stopped", t->flags & TASK_STOPPED);
	info_str(o, "comm", t->comm);
}

/* The least a record of each type holds, so that printing it never
 * reads past its end (the record was validated, but the file could have
 * changed since). */
static size_t min_len(uint32_t type)
{
	const struct rec_desc *d = rec_desc_of(type);

	return d ? d->min_len : 0;
}

static void show(struct info_out *o, const struct rec *r)
{
	const struct kind_ops *k = kind_for_type(r->type);

	fprintf(o->f, o->json ? "%s{\"type\": \"%s\", \"offset\": %" PRIu64
			       ", \"length\": %" PRIu64 ", \"fields\": {"
			      : "%s%-12s offset=%-10" PRIu64 " length=%-8" PRIu64,
		o->json ? (r->index ? ",\n  " : "  ") : "", rec_type_name(r->type),
		r->off - sizeof(struct rec_hdr), r->len);
	o->fields = 0;
	if (r->data_len < min_len(r->type))
		;
	else if (r->type == REC_HEAD)
		show_head(o, r);
	else if (r->type == REC_TASK)
		show_task(o, r);
	else if (k && k->show)
		k->show(o, r);
	fputs(o->json ? "}}" : "\n", o->f);
}

/* A copy of every record of @from (each payload its own). */
static int records_copy(struct records *to, const struct records *from,
			struct ckpt_log *log)
{
	to->r = calloc(from->n ? from->n : 1, sizeof(*to->r));
	if (!to->r)
		return log_err(log, ENOMEM, "records:");
	for (size_t i = 0; i < from->n; i++) {
		const struct rec *r = &from->r[i];

		to->r[i] = *r;
		to->r[i].data = NULL;
		to->n = i + 1;
		/* +1: a NUL after it, as image.c gives every payload */
		if (r->data && !(to->r[i].data = calloc(1, r->data_len + 1)))
			return log_err(log, ENOMEM, "records:");
		if (r->data)
			memcpy(to->r[i].data, r->data, r->data_len);
	}
	return 0;
}

/* Whether the image is authenticated (@auth: auth_find()'s), and
 * whether the MAC was checked (with a @key it was, and matched). */
/* A compressed image made whole (image_expand.c): *@img becomes the copy. */
static int expand(int fd, int *img, struct ckpt_log *log, struct zstats *zs)
{
	int e = img_expand(*img, log, zs);

	if (e < 0)
		return e;
	if (e != *img && *img != fd)
		close(*img);
	*img = e;
	return 0;
}

/* How the records were stored: the JSON's last member, or a line. */
static void show_compressed(FILE *out, bool json, const struct zstats *z)
{
	double pct = z->raw ? 100.0 * z->stored / z->raw : 100.0;

	if (json) {
		fprintf(out, "\"compressed\": {\"records\": %llu, \"pieces\": %llu, "
			"\"zstd_pieces\": %llu, \"bytes\": %llu, \"stored\": %llu}}\n",
			(unsigned long long)z->records, (unsigned long long)z->pieces,
			(unsigned long long)z->zpieces, (unsigned long long)z->raw,
			(unsigned long long)z->stored);
		return;
	}
	if (z->on && !z->records)
		fprintf(out, "%-12s zstd: no record compressed (none paid)\n", "COMPRESSED");
	else if (z->records)
		fprintf(out, "%-12s zstd: %llu records in %llu pieces (%llu compressed), %llu bytes stored for %llu (%.1f%%)\n",
			"COMPRESSED", (unsigned long long)z->records,
			(unsigned long long)z->pieces, (unsigned long long)z->zpieces,
			(unsigned long long)z->stored, (unsigned long long)z->raw, pct);
}

static const char *auth_state(const void *key, int auth)
{
	return auth != 1 ? "no" : key ? "verified" : "unchecked";
}

static const char *auth_line(const void *key, int auth)
{
	return auth != 1 ? "none: the image is not authenticated" :
	       key ? "HMAC-SHA256, verified with the key" :
		     "HMAC-SHA256, not checked (no key given)";
}

/* The image is validated whole, as restart would (but for the checks
 * against this machine), and what is shown is the records validated:
 * reading the file again to show it would trust a file that may have
 * changed since. */
int ckpt_info_key(int fd, unsigned long flags, FILE *out, int logfd,
		  const void *key, size_t key_len)
{
	bool json = flags & CKPT_INFO_JSON;
	struct ckpt_log log = { .fd = logfd };
	struct info_out o = { .f = out, .json = json };
	struct records rs = { 0 }, shown = { 0 };
	int img = key ? img_private(fd, &log) : img_seekable(fd, &log), ret, auth = 0;
	struct rst_ctx c = { .log = &log, .img_fd = img };
	struct rec_auth a;
	struct zstats zs = { 0 };

	if (img < 0)
		return img;
	ret = key ? auth_verify(img, key, key_len, &log) : 0;
	/* (what the reader then validates: -EBADMSG is its to say) */
	if (!ret)
		auth = auth_find(img, &a, &log);
	ret = auth < 0 && auth != -EBADMSG ? auth : ret;
	if (!ret)
		ret = expand(fd, &img, &log, &zs);
	c.img_fd = img;
	if (!ret)
		ret = image_read(&c, &rs, false);
	/* the kinds take the payloads they keep: what is shown is a copy */
	if (!ret)
		ret = records_copy(&shown, &rs, &log);
	if (!ret)
		ret = image_model(&c, &rs, false);
	if (!ret) {
		if (json)
			fputs("{\"records\": [\n", out);
		for (size_t i = 0; i < shown.n; i++)
			show(&o, &shown.r[i]);
		if (json)
			fprintf(out, "\n], \"complete\": true, \"records_total\": %zu, "
				"\"authenticated\": \"%s\", ", rs.n, auth_state(key, auth));
		show_compressed(out, json, &zs);
		if (!json)
			fprintf(out, "%-12s %s\n%-12s %zu records, image complete and verified\n",
				"AUTH", auth_line(key, auth), "TAIL", rs.n);
	}
	rst_ctx_free(&c);
	records_free(&rs);
	records_free(&shown);
	if (img != fd)
		close(img);
	return ret;
}

int ckpt_info(int fd, unsigned long flags, FILE *out, int logfd)
{
	return ckpt_info_key(fd, flags, out, logfd, NULL, 0);
}
