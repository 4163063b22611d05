/* info.c - `ckpt info`: what an image holds, record by record. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../include/ckpt.h"
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

/* The image is validated whole, as restart would (but for the checks
 * against this machine), before anything of it is shown. */
static int validate(int img, struct ckpt_log *log)
{
	struct rst_ctx c = { .log = log, .img_fd = img };
	struct records rs = { 0 };
	int ret = image_read(&c, &rs, false);

	if (!ret)
		ret = image_model(&c, &rs, false);
	rst_ctx_free(&c);
	records_free(&rs);
	return ret;
}

int ckpt_info(int fd, unsigned long flags, FILE *out, int logfd)
{
	bool json = flags & CKPT_INFO_JSON;
	struct ckpt_log log = { .fd = logfd };
	struct info_out o = { .f = out, .json = json };
	struct img_reader r;
	struct rec rec;
	uint64_t n = 0;
	int img = img_seekable(fd, &log), ret;

	if (img < 0)
		return img;
	ret = validate(img, &log);
	if (!ret)
		ret = ir_init(&r, img, &log);
	if (ret) {
		if (img != fd)
			close(img);
		return ret;
	}
	if (json)
		fputs("{\"records\": [\n", out);
	while ((ret = ir_next(&r, &rec)) > 0) {
		show(&o, &rec);
		free(rec.data);
		n++;
	}
	if (json)
		fprintf(out, "\n], \"complete\": %s, \"records_total\": %" PRIu64 "}\n",
			ret == 0 ? "true" : "false", n);
	else if (!ret)
		fprintf(out, "%-12s %" PRIu64 " records, image complete and verified\n",
			"TAIL", n);
	ir_free(&r);
	if (img != fd)
		close(img);
	return ret;
}
