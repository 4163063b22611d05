/* show.c - `ckpt info` output: one field of a record at a time, as
 * "key=value" for people or a JSON member for scripts.  Below the kinds
 * (their show() prints with it), so that they need nothing of info.c. */
#include <inttypes.h>
#include <stdio.h>

#include "show.h"

static void key(struct info_out *o, const char *k)
{
	if (o->json)
		fprintf(o->f, "%s\"%s\": ", o->fields ? ", " : "", k);
	else
		fprintf(o->f, " %s=", k);
	o->fields++;
}

void info_u64(struct info_out *o, const char *k, uint64_t v)
{
	key(o, k);
	fprintf(o->f, "%" PRIu64, v);
}

void info_i64(struct info_out *o, const char *k, int64_t v)
{
	key(o, k);
	fprintf(o->f, "%" PRId64, v);
}

void info_hex(struct info_out *o, const char *k, uint64_t v)
{
	key(o, k);
	fprintf(o->f, o->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, v);
}

void info_str(struct info_out *o, const char *k, const char *s)
{
	key(o, k);
	if (!o->json) {
		fprintf(o->f, "%s", s);
		return;
	}
	fputc('"', o->f);
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(o->f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(o->f, "\\u%04x", ch);
		else
			fputc(ch, o->f);
	}
	fputc('"', o->f);
}
