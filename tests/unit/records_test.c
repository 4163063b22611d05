/* records_test.c - unit tests of the record descriptions the kinds give
 * (kind_ops.recs): each type owned once, named once, found again. */
#include <stdio.h>
#include <string.h>

#include "kinds.h"

#include "check.h"

#define MAX_TYPE	10000	/* above REC_ERROR */

/* A type in two kinds' tables would go to the first one only. */
static void test_owners(void)
{
	for (int i = 0; i < ckpt_nr_kinds; i++) {
		const struct kind_ops *k = ckpt_kinds[i];

		for (const struct rec_desc *d = k->recs; d && d->type; d++) {
			CHECK(kind_for_type(d->type) == k, "type %u of %s owned by another",
			      d->type, k->name);
			CHECK(rec_desc_of(d->type) == d, "type %u found again", d->type);
			CHECK(d->name && d->name[0], "type %u of %s has a name",
			      d->type, k->name);
		}
	}
	CHECK(!kind_for_type(REC_HEAD) && !kind_for_type(REC_TASK) &&
	      !kind_for_type(REC_TAIL) && !kind_for_type(REC_ERROR),
	      "the frame and TASK are no kind's");
}

static void test_names(void)
{
	static const char *names[MAX_TYPE];
	int n = 0;

	for (uint32_t t = 0; t < MAX_TYPE; t++) {
		const struct rec_desc *d = rec_desc_of(t);

		if (!d) {
			/* (AUTH is the record stream's own: image.c) */
			CHECK(!strcmp(rec_type_name(t), t == REC_AUTH ? "AUTH" : "?"),
			      "type %u unnamed", t);
			continue;
		}
		CHECK(d->type == t, "type %u described as %u", t, d->type);
		for (int j = 0; j < n; j++)
			CHECK(strcmp(names[j], d->name), "name %s twice", d->name);
		names[n++] = d->name;
	}
	CHECK(!strcmp(rec_type_name(REC_HEAD), "HEAD") &&
	      !strcmp(rec_type_name(REC_PAGES), "PAGES") &&
	      !strcmp(rec_type_name(REC_TAIL), "TAIL"), "names as before");
	CHECK(n >= 36, "%d types described", n);
}

int main(void)
{
	test_owners();
	test_names();
	printf("unit records_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
