/* vec.h - growable arrays, and tables from ids to their elements.
 *
 * A growable array stays a plain pointer and a count, as the code that
 * reads it expects, with a capacity beside them: VEC_PUSH() doubles the
 * room when it runs out, so that n appends cost O(n) in all where
 * growing by one each time cost O(n^2) in copies.
 *
 * An id table finds an element of such an array by its id (an objref:
 * a FILE, a PIPE, a UNIX_SK...) in O(1), where a linear search made
 * loading an image quadratic in its records (a forged image, or a
 * process with 100k fds).  It keeps indexes, not pointers, which the
 * array's growth would leave dangling.
 */
#ifndef CKPT_VEC_H
#define CKPT_VEC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The array @arr of @n elements of @size bytes, in room for *@cap, with
 * room for one more: @arr, moved or not (*@cap updated), or NULL (out of
 * memory: @arr is as it was). */
void *vec_grow(void *arr, size_t n, size_t *cap, size_t size);

/* Room for one more element at the end of @arr (@n of them, an integer
 * lvalue of any type; @cap a size_t lvalue): 0, or -ENOMEM (nothing
 * changed).  @arr is evaluated more than once. */
#define VEC_ROOM(arr, n, cap) __extension__ ({				\
	void *vec_p_ = vec_grow((arr), (n), &(cap), sizeof(*(arr)));	\
									\
	if (vec_p_)							\
		(arr) = vec_p_;						\
	vec_p_ ? 0 : -ENOMEM;						\
})

/* A new zeroed element at the end of @arr, counted in @n: its address,
 * or NULL (out of memory: nothing changed).  @arr and @n are evaluated
 * more than once. */
#define VEC_PUSH(arr, n, cap) __extension__ ({				\
	__typeof__(&(arr)[0]) vec_e_ = NULL;				\
									\
	if (!VEC_ROOM(arr, n, cap))					\
		vec_e_ = memset(&(arr)[(n)++], 0, sizeof(*(arr)));	\
	vec_e_;								\
})

struct id_slot;

/* Ids to indexes, by open addressing; zeroed is empty. */
struct id_table {
	struct id_slot *slot;	/* cap of them, a power of two */
	size_t cap, n;
	uint32_t seed;		/* mixed into the hash: a forged image
				 * cannot choose ids that collide */
};

/* @id maps to @index from now on: 0, -EEXIST (it has an index already,
 * kept) or -ENOMEM. */
int id_add(struct id_table *t, uint32_t id, size_t index);
/* The index @id maps to, or -1. */
long id_find(const struct id_table *t, uint32_t id);
void id_table_free(struct id_table *t);

#endif
