/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A table with fixed-size keys and values, for the native collector's user-space
 * aggregation (rows, threads, stack parts): entries in one array, found through
 * the shared hash table (util/hmap.h).
 *
 * Values are zeroed when created. Entries live in chunks that never move, so
 * pointers returned stay valid until ntable_free(): a caller may hold one
 * entry while it creates another.
 */
#ifndef OFFCPU_COLLECT_NATIVE_TABLE_H
#define OFFCPU_COLLECT_NATIVE_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/hmap.h"

struct ntable {
	struct hmap idx;       /* hash of a key -> its entry's index */
	unsigned char **slots; /* chunks of entries (key, then value at voff); NULL while empty */
	size_t nr_chunks, chunks_cap;
	size_t n;      /* entries */
	size_t ksz;    /* key bytes */
	size_t vsz;    /* value bytes */
	size_t voff;   /* value offset in an entry (8-aligned) */
	size_t stride; /* bytes per entry, aligned to 8 */
};

/* 0 or -ENOMEM. */
int ntable_init(struct ntable *t, size_t ksz, size_t vsz);
void ntable_free(struct ntable *t);
/* The value of key, created (zeroed) when absent; NULL on -ENOMEM. */
void *ntable_get(struct ntable *t, const void *key, bool *created);
/* The value of key, or NULL. */
void *ntable_find(const struct ntable *t, const void *key);
/*
 * Iterate: start with *pos = 0; returns false at the end. Entries come in the
 * order they were created; do not create entries while iterating.
 */
bool ntable_next(const struct ntable *t, size_t *pos, const void **key, void **val);
/*
 * Keep the entries keep() says yes to (it may free what a dropped value
 * owns), compacted in place: there is no delete. Cannot fail; returns how
 * many were dropped. Chunks no longer needed are freed.
 */
int ntable_keep(struct ntable *t, bool (*keep)(const void *key, void *val, void *arg), void *arg);

#endif
