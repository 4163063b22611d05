/* records.c - what each record type of an image is: the kinds describe
 * their own (kind_ops.recs), this file the image's frame and TASK.
 *
 * The record stream (image.c) asks here for the names and the known
 * types, below every kind: the kinds' tables are read as data, never
 * called, so that the stream needs nothing of the kinds' code.
 */
#include <pthread.h>

#include "kinds.h"

/* kinds.def's kinds, for their records (kinds.c has the same table for
 * their hooks) */
static const struct kind_ops *const owners[] = {
#define KIND(x) &kind_##x,
#include "kinds.def"
#undef KIND
};
#define NR_OWNERS (int)(sizeof(owners) / sizeof(owners[0]))

/* The records no kind owns: the image's frame, and the processes
 * (the restart model's own). */
static const struct rec_desc core_recs[] = {
	{ REC_HEAD, "HEAD", sizeof(struct rec_head) },
	{ REC_TASK, "TASK", sizeof(struct rec_task) },
	{ REC_TAIL, "TAIL", 0 },
	{ REC_ERROR, "ERROR", 0 },
	{ 0 }
};

static const struct rec_desc *desc_in(const struct rec_desc *d, uint32_t type)
{
	for (; d && d->type; d++)
		if (d->type == type)
			return d;
	return NULL;
}

static const struct kind_ops *owner_scan(uint32_t type)
{
	for (int i = 0; i < NR_OWNERS; i++)
		if (desc_in(owners[i]->recs, type))
			return owners[i];
	return NULL;
}

/* Every record read asks for its owner: types below OWNER_INDEX are
 * looked up in an index made once (written before the once ends, read
 * only after), the rest by a scan of the kinds' tables. */
#define OWNER_INDEX	1024
static const struct kind_ops *owner_index[OWNER_INDEX];
static pthread_once_t owner_once = PTHREAD_ONCE_INIT;

static void owner_index_make(void)
{
	/* the first owner of a type wins, as in owner_scan() */
	for (int i = 0; i < NR_OWNERS; i++)
		for (const struct rec_desc *d = owners[i]->recs; d && d->type; d++)
			if (d->type < OWNER_INDEX && !owner_index[d->type])
				owner_index[d->type] = owners[i];
}

const struct kind_ops *kind_for_type(uint32_t type)
{
	if (type >= OWNER_INDEX)
		return owner_scan(type);
	pthread_once(&owner_once, owner_index_make);
	return owner_index[type];
}

bool rec_reread(uint32_t type)
{
	const struct kind_ops *k = kind_for_type(type);

	return k && k->reread == type;
}

const struct rec_desc *rec_desc_of(uint32_t type)
{
	const struct kind_ops *k = kind_for_type(type);

	return k ? desc_in(k->recs, type) : desc_in(core_recs, type);
}
