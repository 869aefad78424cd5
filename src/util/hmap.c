// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/hmap.h"

#define HMAP_MIN 64

int hmap__grow(struct hmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : HMAP_MIN;
	struct hmap_slot *ns;

	if (cap > SIZE_MAX / sizeof(*ns))
		return -ENOMEM;
	ns = bigmem__alloc(cap * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	/* The stored hash places each value again without calling back to the caller. */
	for (size_t i = 0; m->slots && i <= m->mask; i++) {
		size_t j;

		if (!m->slots[i].val)
			continue;
		for (j = m->slots[i].hash & (cap - 1); ns[j].val; j = (j + 1) & (cap - 1))
			;
		ns[j] = m->slots[i];
	}
	if (m->slots)
		bigmem__free(m->slots, (m->mask + 1) * sizeof(*ns));
	m->slots = ns;
	m->mask = cap - 1;
	return 0;
}

int hmap__add(struct hmap *m, uint64_t hash, void *val)
{
	size_t pos;
	int err = hmap__reserve(m);

	if (err)
		return err;
	pos = hmap__first(m, hash);
	while (hmap__next(m, hash, &pos))
		;
	hmap__put(m, pos, hash, val);
	return 0;
}

void hmap__clear(struct hmap *m)
{
	if (m->slots)
		memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->len = 0;
}

void hmap__free(struct hmap *m)
{
	if (!m)
		return;
	if (m->slots)
		bigmem__free(m->slots, (m->mask + 1) * sizeof(*m->slots));
	memset(m, 0, sizeof(*m));
}
