/* show.h - `ckpt info` output, as text for people or JSON for scripts:
 * what each kind's show() prints a record's fields with. */
#ifndef CKPT_SHOW_H
#define CKPT_SHOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct info_out {
	FILE *f;
	bool json;
	int fields;		/* fields printed in the current record */
};

void info_u64(struct info_out *o, const char *key, uint64_t v);
void info_i64(struct info_out *o, const char *key, int64_t v);
void info_hex(struct info_out *o, const char *key, uint64_t v);
void info_str(struct info_out *o, const char *key, const char *s);

#endif
