// SPDX-License-Identifier: GPL-2.0-only
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "util/arena.h"

/* The fuzz build makes blocks small so that a small input crosses their boundaries. */
#ifndef ARENA_BLOCK
#define ARENA_BLOCK ((size_t)256 << 10)
#endif
#ifndef ARENA_BLOCK_MAX
#define ARENA_BLOCK_MAX ((size_t)4 << 20)
#endif

static size_t huge_round(size_t size)
{
	return (size + BIGMEM_HUGE - 1) & ~(BIGMEM_HUGE - 1);
}

void *bigmem__alloc(size_t size)
{
	size_t len, lead;
	char *m;

	if (size < BIGMEM_HUGE)
		return calloc(1, size ? size : 1);
	if (size > SIZE_MAX - 2 * BIGMEM_HUGE)
		return NULL;
	len = huge_round(size);
	/* One huge page more than needed, so that an aligned start is inside. */
	m = mmap(NULL, len + BIGMEM_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	if (m == MAP_FAILED)
		return NULL;
	lead = (BIGMEM_HUGE - ((uintptr_t)m & (BIGMEM_HUGE - 1))) & (BIGMEM_HUGE - 1);
	if (lead)
		munmap(m, lead);
	munmap(m + lead + len, BIGMEM_HUGE - lead);
	m += lead;
	/* Only advice: without transparent huge pages the memory is the same, in small pages. */
	madvise(m, len, MADV_HUGEPAGE);
	return m;
}

void bigmem__free(void *p, size_t size)
{
	if (!p)
		return;
	if (size < BIGMEM_HUGE)
		free(p);
	else
		munmap(p, huge_round(size));
}

struct arena_block {
	struct arena_block *next;
	char *cur, *end; /* the free part */
	size_t size;	 /* of the whole block, header included */
	max_align_t data[];
};

void *arena__alloc(struct arena *a, size_t size, size_t align)
{
	struct arena_block *b = a->head;
	size_t std = a->next_size ? a->next_size : ARENA_BLOCK, over = sizeof(*b) + align - 1;
	size_t bsize = std;
	char *p;

	if (b) {
		p = (char *)(((uintptr_t)b->cur + align - 1) & ~(uintptr_t)(align - 1));
		if (p <= b->end && size <= (size_t)(b->end - p)) {
			b->cur = p + size;
			return p;
		}
	}
	if (size > SIZE_MAX - over)
		return NULL;
	/* A piece bigger than a block gets a block of its own, sized to it. */
	if (size + over > std)
		bsize = size + over;
	b = bigmem__alloc(bsize);
	if (!b)
		return NULL;
	b->size = bsize;
	b->end = (char *)b + bsize;
	p = (char *)(((uintptr_t)b->data + align - 1) & ~(uintptr_t)(align - 1));
	b->cur = p + size;
	a->mapped += bsize;
	if (bsize != std && a->head) {
		/* Keep filling the current block after a one-off big piece. */
		b->next = a->head->next;
		a->head->next = b;
		return p;
	}
	b->next = a->head;
	a->head = b;
	/* Doubling keeps the blocks few (log of the size), the cap keeps the unused tail small. */
	if (bsize == std && std < ARENA_BLOCK_MAX)
		a->next_size = std * 2 < ARENA_BLOCK_MAX ? std * 2 : ARENA_BLOCK_MAX;
	return p;
}

void arena__free(struct arena *a)
{
	if (!a)
		return;
	for (struct arena_block *b = a->head, *next; b; b = next) {
		next = b->next;
		bigmem__free(b, b->size);
	}
	a->head = NULL;
	a->next_size = 0;
	a->mapped = 0;
}
