// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/native_table.h"
#include "util/hash.h"
#include "util/vec.h"

#define CHUNK 256 /* entries */

static unsigned char *entry(const struct ntable *t, size_t i)
{
	return t->slots[i / CHUNK] + (i % CHUNK) * t->stride;
}

/* Room for entry t->n; 0 or -ENOMEM. */
static int reserve(struct ntable *t)
{
	if (t->n < t->nr_chunks * CHUNK)
		return 0;
	if (vec_reserve(t->slots, t->chunks_cap, t->nr_chunks + 1))
		return -ENOMEM;
	t->slots[t->nr_chunks] = malloc(CHUNK * t->stride);
	if (!t->slots[t->nr_chunks])
		return -ENOMEM;
	t->nr_chunks++;
	return 0;
}

int ntable_init(struct ntable *t, size_t ksz, size_t vsz)
{
	memset(t, 0, sizeof(*t));
	t->ksz = ksz;
	t->vsz = vsz;
	t->voff = (ksz + 7) & ~(size_t)7;
	t->stride = (t->voff + vsz + 7) & ~(size_t)7;
	if (!t->stride)
		t->stride = 8;
	return 0;
}

void ntable_free(struct ntable *t)
{
	if (!t)
		return;
	hmap__free(&t->idx);
	for (size_t i = 0; i < t->nr_chunks; i++)
		free(t->slots[i]);
	free(t->slots);
	t->slots = NULL;
	t->nr_chunks = t->chunks_cap = t->n = 0;
}

/* The index of key's entry, or SIZE_MAX; *pos is where a new one goes in the index. */
static size_t lookup(const struct ntable *t, const void *key, uint64_t h, size_t *pos)
{
	void *v;

	*pos = hmap__first(&t->idx, h);
	while ((v = hmap__next(&t->idx, h, pos)))
		if (!memcmp(entry(t, hmap_idx_of(v)), key, t->ksz))
			return hmap_idx_of(v);
	return SIZE_MAX;
}

void *ntable_get(struct ntable *t, const void *key, bool *created)
{
	uint64_t h = hash_bytes(key, t->ksz, 0);
	size_t i, pos;

	if (created)
		*created = false;
	/* Room first, so that nothing fails once the entry is half made. */
	if (hmap__reserve(&t->idx) || reserve(t))
		return NULL;
	i = lookup(t, key, h, &pos);
	if (i == SIZE_MAX) {
		i = t->n++;
		memcpy(entry(t, i), key, t->ksz);
		memset(entry(t, i) + t->voff, 0, t->stride - t->voff);
		hmap__put(&t->idx, pos, h, hmap_idx(i));
		if (created)
			*created = true;
	}
	return entry(t, i) + t->voff;
}

void *ntable_find(const struct ntable *t, const void *key)
{
	size_t pos, i = lookup(t, key, hash_bytes(key, t->ksz, 0), &pos);

	return i == SIZE_MAX ? NULL : entry(t, i) + t->voff;
}

bool ntable_next(const struct ntable *t, size_t *pos, const void **key, void **val)
{
	if (*pos >= t->n)
		return false;
	*key = entry(t, *pos);
	*val = entry(t, *pos) + t->voff;
	(*pos)++;
	return true;
}

int ntable_keep(struct ntable *t, bool (*keep)(const void *key, void *val, void *arg), void *arg)
{
	size_t w = 0, dropped, need;

	/* In place: nothing to allocate, so nothing dropped is ever left referenced. */
	for (size_t i = 0; i < t->n; i++) {
		if (!keep(entry(t, i), entry(t, i) + t->voff, arg))
			continue;
		if (w != i)
			memcpy(entry(t, w), entry(t, i), t->stride);
		w++;
	}
	dropped = t->n - w;
	t->n = w;
	/* The index again, at its size: re-adding fewer keys never grows it. */
	hmap__clear(&t->idx);
	for (size_t i = 0; i < w; i++) {
		uint64_t h = hash_bytes(entry(t, i), t->ksz, 0);
		size_t pos;

		lookup(t, entry(t, i), h, &pos);
		hmap__put(&t->idx, pos, h, hmap_idx(i));
	}
	need = (w + CHUNK - 1) / CHUNK;
	while (t->nr_chunks > need)
		free(t->slots[--t->nr_chunks]);
	return (int)(dropped > INT32_MAX ? INT32_MAX : dropped);
}
