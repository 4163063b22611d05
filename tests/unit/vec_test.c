/* vec_test.c - unit tests of the growable arrays and id tables (vec.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "vec.h"

#include "check.h"

struct item {
	uint32_t id;
	char pad[13];
};

static void test_push(void)
{
	struct item *v = NULL, *e;
	uint32_t n = 0;
	size_t cap = 0, grew = 0, last = 0;
	bool zeroed = true, kept = true;

	for (uint32_t i = 0; i < 100000; i++) {
		e = VEC_PUSH(v, n, cap);
		if (!e)
			break;
		for (size_t k = 0; k < sizeof(e->pad); k++)
			zeroed &= !e->pad[k];
		e->id = i;
		grew += cap != last;
		last = cap;
	}
	CHECK(n == 100000 && cap >= n, "%u pushed, cap %zu", n, cap);
	CHECK(zeroed, "new elements are zeroed");
	for (uint32_t i = 0; i < n; i++)
		kept &= v[i].id == i;
	CHECK(kept, "elements kept through the moves");
	CHECK(grew <= 14, "room doubled: %zu reallocations", grew);
	CHECK(VEC_ROOM(v, n, cap) == 0 && n == 100000, "room without a push");
	free(v);
}

static void test_ids(void)
{
	struct id_table t = { 0 };
	bool found = true;

	CHECK(id_find(&t, 7) == -1, "empty table finds nothing");
	for (uint32_t i = 0; i < 50000; i++)
		found &= id_add(&t, i * 4096 + 1, i) == 0;
	CHECK(found, "50000 ids added");
	for (uint32_t i = 0; i < 50000; i++)
		found &= id_find(&t, i * 4096 + 1) == (long)i;
	CHECK(found, "each id finds its index");
	CHECK(id_find(&t, 2) == -1 && id_find(&t, 0) == -1, "absent ids");
	CHECK(id_add(&t, 4097, 9) == -EEXIST && id_find(&t, 4097) == 1,
	      "an id twice is refused, the first kept");
	CHECK(id_add(&t, 0, 50000) == 0 && id_find(&t, 0) == 50000, "id 0");
	id_table_free(&t);
	CHECK(id_find(&t, 1) == -1 && !t.slot, "freed");
}

int main(void)
{
	test_push();
	test_ids();
	printf("unit vec_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
