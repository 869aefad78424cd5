// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/native_table.h"

#define KEY_OFF 8

static uint64_t hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

static unsigned char *slot(const struct ntable *t, size_t i)
{
	return t->slots + i * t->stride;
}

int ntable_init(struct ntable *t, size_t ksz, size_t vsz)
{
	memset(t, 0, sizeof(*t));
	t->ksz = ksz;
	t->vsz = vsz;
	t->voff = KEY_OFF + ((ksz + 7) & ~(size_t)7);
	t->stride = (t->voff + vsz + 7) & ~(size_t)7;
	t->cap = 64;
	t->slots = calloc(t->cap, t->stride);
	return t->slots ? 0 : -ENOMEM;
}

void ntable_free(struct ntable *t)
{
	if (!t)
		return;
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}

static size_t probe(const struct ntable *t, const void *key)
{
	size_t i = hash(key, t->ksz) & (t->cap - 1);

	while (slot(t, i)[0] && memcmp(slot(t, i) + KEY_OFF, key, t->ksz))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int grow(struct ntable *t)
{
	struct ntable bigger = *t;

	bigger.cap = t->cap * 2;
	bigger.slots = calloc(bigger.cap, t->stride);
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (!slot(t, i)[0])
			continue;
		memcpy(slot(&bigger, probe(&bigger, slot(t, i) + KEY_OFF)), slot(t, i), t->stride);
	}
	free(t->slots);
	*t = bigger;
	return 0;
}

void *ntable_get(struct ntable *t, const void *key, bool *created)
{
	size_t i;

	if (created)
		*created = false;
	if ((t->n + 1) * 2 > t->cap && grow(t))
		return NULL;
	i = probe(t, key);
	if (!slot(t, i)[0]) {
		slot(t, i)[0] = 1;
		memcpy(slot(t, i) + KEY_OFF, key, t->ksz);
		memset(slot(t, i) + t->voff, 0, t->vsz);
		t->n++;
		if (created)
			*created = true;
	}
	return slot(t, i) + t->voff;
}

void *ntable_find(const struct ntable *t, const void *key)
{
	size_t i;

	if (!t->cap)
		return NULL;
	i = probe(t, key);
	return slot(t, i)[0] ? slot(t, i) + t->voff : NULL;
}

bool ntable_next(const struct ntable *t, size_t *pos, const void **key, void **val)
{
	for (; *pos < t->cap; (*pos)++) {
		unsigned char *s = slot(t, *pos);

		if (!s[0])
			continue;
		*key = s + KEY_OFF;
		*val = s + t->voff;
		(*pos)++;
		return true;
	}
	return false;
}
