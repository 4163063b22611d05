/* vec.c - growable arrays and id tables (vec.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "vec.h"

#define VEC_MIN		16

void *vec_grow(void *arr, size_t n, size_t *cap, size_t size)
{
	size_t want = *cap ? *cap : VEC_MIN;

	if (n < *cap)
		return arr;
	while (want <= n)
		want *= 2;
	if (want > SIZE_MAX / size)
		return NULL;
	arr = realloc(arr, want * size);
	if (arr)
		*cap = want;
	return arr;
}

struct id_slot {
	uint32_t id;
	uint32_t index1;	/* index + 1; 0: the slot is empty */
};

/* murmur3's finalizer: every bit of the id moves every bit of the hash */
static uint32_t id_hash(const struct id_table *t, uint32_t id)
{
	uint32_t h = id ^ t->seed;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static struct id_slot *id_slot_of(const struct id_table *t, uint32_t id)
{
	size_t mask = t->cap - 1, i = id_hash(t, id) & mask;

	while (t->slot[i].index1 && t->slot[i].id != id)
		i = (i + 1) & mask;
	return &t->slot[i];
}

static uint32_t id_seed(void)
{
	uint32_t s;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != sizeof(s))
		s = (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)&s;
	return s;
}

/* Twice the room, every entry placed again; kept at most half full so
 * that a probe ends soon. */
static int id_rehash(struct id_table *t)
{
	struct id_table n = { .cap = t->cap ? 2 * t->cap : VEC_MIN,
			      .n = t->n, .seed = t->seed };

	if (!t->cap)
		n.seed = id_seed();
	n.slot = calloc(n.cap, sizeof(*n.slot));
	if (!n.slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].index1)
			*id_slot_of(&n, t->slot[i].id) = t->slot[i];
	free(t->slot);
	*t = n;
	return 0;
}

int id_add(struct id_table *t, uint32_t id, size_t index)
{
	struct id_slot *s;

	if (index >= UINT32_MAX)
		return -ENOMEM;
	if (t->cap && id_slot_of(t, id)->index1)
		return -EEXIST;
	if (2 * (t->n + 1) > t->cap && id_rehash(t))
		return -ENOMEM;
	s = id_slot_of(t, id);
	s->id = id;
	s->index1 = index + 1;
	t->n++;
	return 0;
}

long id_find(const struct id_table *t, uint32_t id)
{
	const struct id_slot *s = t->cap ? id_slot_of(t, id) : NULL;

	return s && s->index1 ? (long)s->index1 - 1 : -1;
}

void id_table_free(struct id_table *t)
{
	free(t->slot);
	*t = (struct id_table){ 0 };
}
