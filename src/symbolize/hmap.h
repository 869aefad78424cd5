/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small open-addressing index from a 64-bit hash to a 32-bit index into a
 * caller-owned array, private to the symbolizer. Several entries may share a
 * hash: hmap__next() walks every slot carrying it and the caller compares
 * the real keys. Entries are never removed one by one, only all at once.
 */
#ifndef OFFCPU_SYMBOLIZE_HMAP_H
#define OFFCPU_SYMBOLIZE_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *hash;
	uint32_t *idx; /* HMAP_EMPTY marks a free slot */
	size_t cap;    /* a power of two, or 0 before the first add */
	size_t len;
};

#define HMAP_EMPTY UINT32_MAX

/* Add (hash, idx); duplicates are allowed. Returns 0 or -ENOMEM. */
int hmap__add(struct hmap *m, uint64_t hash, uint32_t idx);

/*
 * Iterate the indexes stored under hash: set *pos = 0 before the first call;
 * returns false when there are no more.
 */
bool hmap__next(const struct hmap *m, uint64_t hash, size_t *pos, uint32_t *idx);

/* Forget every entry, keeping the memory. */
void hmap__clear(struct hmap *m);
void hmap__free(struct hmap *m);

static inline uint64_t hmap__hash_u64(uint64_t x)
{
	/* splitmix64's finaliser: addresses differ in few low bits */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t hmap__hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

#endif
