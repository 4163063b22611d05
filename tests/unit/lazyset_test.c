/* lazyset_test.c - unit tests of the loader's sets of page runs
 * (lazy.h): random adds, cuts and moves against a model of one entry a
 * page (its image offset, or none), each set checked whole after every
 * step: sorted, apart, no empty run, and every page where the model
 * has it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazy.h"

#include "check.h"

#define PG	4096ULL
#define NPG	512	/* pages of the address space modelled */
#define NONE	UINT64_MAX

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

/* Whether @s is well formed and holds what @model does. */
static bool same(const struct lazy_set *s, const uint64_t *model)
{
	uint64_t seen[NPG];

	for (size_t p = 0; p < NPG; p++)
		seen[p] = NONE;
	for (size_t i = 0; i < s->n; i++) {
		const struct lazy_run *r = &s->r[i];

		if (!r->npages || r->addr % PG || r->addr / PG + r->npages > NPG ||
		    (i && s->r[i - 1].addr + s->r[i - 1].npages * PG > r->addr))
			return false;
		for (uint64_t k = 0; k < r->npages; k++)
			seen[r->addr / PG + k] = r->off + k * PG;
	}
	return !memcmp(seen, model, sizeof(seen));
}

/* Free pages [p, p + n) of @model added to both, at image offset @off. */
static void add(struct lazy_set *s, uint64_t *model, uint64_t p, uint64_t n, uint64_t off)
{
	for (uint64_t k = 0; k < n; k++)
		if (model[p + k] != NONE)
			return;
	CHECK(!lazy_set_add(s, p * PG, n, off), "add");
	for (uint64_t k = 0; k < n; k++)
		model[p + k] = off + k * PG;
}

static void test_random(void)
{
	struct lazy_set s = { 0 }, c = { 0 };
	uint64_t model[NPG], off = 0;
	int bad = 0;

	for (size_t p = 0; p < NPG; p++)
		model[p] = NONE;
	for (int step = 0; step < 20000 && bad < 3; step++) {
		uint64_t p = rnd(NPG), n = 1 + rnd(NPG - p < 40 ? NPG - p : 40);

		if (rnd(3)) {
			add(&s, model, p, n, off);
			off += n * PG;
		} else {
			CHECK(!lazy_set_cut(&s, p * PG, (p + n) * PG), "cut");
			for (uint64_t k = 0; k < n; k++)
				model[p + k] = NONE;
		}
		if (!same(&s, model)) {
			bad++;
			CHECK(false, "step %d: the set differs from its model", step);
		}
		for (int q = 0; q < 4; q++) {
			uint64_t a = rnd(NPG);
			const struct lazy_run *r = lazy_set_find(&s, a * PG);

			CHECK(r ? model[a] == r->off + (a * PG - r->addr) : model[a] == NONE,
			      "find page %llu", (unsigned long long)a);
		}
	}
	CHECK(!lazy_set_copy(&c, &s) && same(&c, model), "a copy holds the same");
	CHECK(!lazy_set_cut(&s, 0, NPG * PG) && s.n == 0, "all cut");
	lazy_set_free(&s);
	lazy_set_free(&c);
}

/* Many runs, cut from the front in one call each and in one whole. */
static void test_cut_many(void)
{
	struct lazy_set s = { 0 };
	uint64_t model[NPG];

	for (size_t p = 0; p < NPG; p++)
		model[p] = NONE;
	for (uint64_t p = 0; p + 16 <= NPG; p += 16)
		add(&s, model, p, 15, p * PG);
	CHECK(s.n == NPG / 16, "%zu runs", s.n);
	/* from the middle of one run to the middle of another */
	CHECK(!lazy_set_cut(&s, 5 * PG, 100 * PG), "cut across runs");
	for (uint64_t p = 5; p < 100; p++)
		model[p] = NONE;
	CHECK(same(&s, model), "cut across runs: what is left");
	/* inside one run: split */
	CHECK(!lazy_set_cut(&s, 130 * PG, 132 * PG), "cut inside a run");
	model[130] = model[131] = NONE;
	CHECK(same(&s, model), "cut inside a run: what is left");
	/* over nothing */
	CHECK(!lazy_set_cut(&s, 15 * PG, 16 * PG) && same(&s, model), "cut over a hole");
	lazy_set_free(&s);
}

int main(void)
{
	test_random();
	test_cut_many();
	printf("lazyset_test: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
