/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Memory for the big interning structures (the profile's records, names and
 * stacks, the hash tables, the folded parser's caches).
 *
 * A profile of 100k stacks touches tens of megabytes at random, once per input
 * line: with 4 KiB pages nearly every access misses the TLB (a costly walk
 * in a virtual machine) and every fresh page is a fault. So a big block is
 * mapped aligned to 2 MiB and advised for transparent huge pages: a fault and
 * a TLB entry per 2 MiB. Smaller blocks come from calloc(), so a small
 * profile keeps a small footprint.
 *
 * bigmem__alloc() returns zeroed memory, or NULL; bigmem__free() must be given
 * the same size (it may be NULL).
 *
 * An arena hands out zeroed pieces of big blocks and frees them all at once
 * (arena__free()): no per-piece allocation or header. Blocks double from
 * ARENA_BLOCK up to ARENA_BLOCK_MAX, so a big arena ends in huge-page blocks
 * and a small one wastes little; a piece bigger than a block gets a block of
 * its own. A zeroed struct arena is an empty arena.
 */
#ifndef OFFCPU_UTIL_ARENA_H
#define OFFCPU_UTIL_ARENA_H

#include <stddef.h>

/* From this size on, a block is huge-page aligned and advised. */
#define BIGMEM_HUGE ((size_t)2 << 20)

void *bigmem__alloc(size_t size);
void bigmem__free(void *p, size_t size);

struct arena_block;

struct arena {
	struct arena_block *head; /* the block being filled, then older ones */
	size_t next_size;	  /* the size of the next block; 0: ARENA_BLOCK */
	size_t mapped;		  /* bytes of blocks, for tests and statistics */
};

/* size bytes aligned to align (a power of two, at most 4096), zeroed; NULL when out of memory. */
void *arena__alloc(struct arena *a, size_t size, size_t align);
void arena__free(struct arena *a);

#endif
