/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one hash table: open addressing over (64-bit hash, value pointer) slots,
 * kept at most half full. The caller owns the records and their equality; the
 * table stores each record's hash, so most mismatches cost no access to the
 * record and growing needs no rehashing. Several values may share a hash (a
 * multimap): a lookup walks every one and the caller compares the real keys.
 *
 * The lookup is inline because interning runs it once per frame of every input
 * line; the caller's equality test then inlines into the probe loop:
 *
 *	hmap__reserve(m);			// before the lookup: a put cannot fail
 *	pos = hmap__first(m, h);
 *	while ((v = hmap__next(m, h, &pos)))
 *		if (equal(v, key))
 *			return v;
 *	hmap__put(m, pos, h, new);		// pos is the free slot the probe ended on
 *
 * Values are never removed one by one, only all at once (hmap__clear()).
 * A zeroed struct hmap is an empty table.
 */
#ifndef OFFCPU_UTIL_HMAP_H
#define OFFCPU_UTIL_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t hash;
	void *val; /* NULL marks a free slot */
};

struct hmap {
	struct hmap_slot *slots; /* NULL before the first reserve */
	size_t mask;		 /* capacity - 1; capacity is a power of two */
	size_t len;
};

/* Grow the table (capacity doubles); 0 or -ENOMEM (the table is unchanged then). */
int hmap__grow(struct hmap *m);

/* Make room for one more value: after it, hmap__put() cannot fail. 0 or -ENOMEM. */
static inline int hmap__reserve(struct hmap *m)
{
	if (!m->slots || (m->len + 1) * 2 > m->mask + 1)
		return hmap__grow(m);
	return 0;
}

/* Make room for n more values: after it, n puts or adds cannot fail. 0 or -ENOMEM. */
static inline int hmap__reserve_n(struct hmap *m, size_t n)
{
	while (!m->slots || (m->len + n) * 2 > m->mask + 1) {
		int err = hmap__grow(m);

		if (err)
			return err;
	}
	return 0;
}

/* Where a probe for hash starts. */
static inline size_t hmap__first(const struct hmap *m, uint64_t hash)
{
	return hash & m->mask;
}

/*
 * The next value stored under hash, probing from *pos; NULL when there is none
 * left, and *pos is then the free slot where hmap__put() may store a new one.
 */
static inline void *hmap__next(const struct hmap *m, uint64_t hash, size_t *pos)
{
	size_t i = *pos;
	void *v;

	if (!m->slots)
		return NULL;
	for (; (v = m->slots[i].val); i = (i + 1) & m->mask) {
		if (m->slots[i].hash == hash) {
			*pos = (i + 1) & m->mask;
			return v;
		}
	}
	*pos = i;
	return NULL;
}

/* Store val (not NULL) in the free slot pos that hmap__next() ended on after hmap__reserve(). */
static inline void hmap__put(struct hmap *m, size_t pos, uint64_t hash, void *val)
{
	m->slots[pos].hash = hash;
	m->slots[pos].val = val;
	m->len++;
}

/* A value that is an index into the caller's array: i is stored as i + 1, never NULL. */
static inline void *hmap_idx(size_t i)
{
	return (void *)(uintptr_t)(i + 1);
}

static inline size_t hmap_idx_of(const void *val)
{
	return (uintptr_t)val - 1;
}

/* Add val (not NULL) under hash, beside any already there. 0 or -ENOMEM. */
int hmap__add(struct hmap *m, uint64_t hash, void *val);

/* Forget every value, keeping the memory. */
void hmap__clear(struct hmap *m);
void hmap__free(struct hmap *m);

#endif
