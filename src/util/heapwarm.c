// SPDX-License-Identifier: GPL-2.0-only
/* Warm malloc's heap for one large allocation: see heapwarm.h. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "util/heapwarm.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define HUGE_PAGE ((uintptr_t)2 << 20)

void heap__warm(size_t size)
{
	/* volatile: the compiler may not drop an allocation nobody reads. */
	void *volatile above = malloc(size + HUGE_PAGE);
	char *volatile heap;
	uintptr_t lo, hi, page = 4096;

	/* Freed, a block this big raises the mmap threshold above size. */
	free(above);
	heap = malloc(size);
	if (!heap)
		return;
	lo = ((uintptr_t)heap + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	hi = ((uintptr_t)heap + size) & ~(HUGE_PAGE - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	lo = (uintptr_t)heap & ~(page - 1);
	madvise((void *)lo, (uintptr_t)heap + size - lo, MADV_POPULATE_WRITE);
	free(heap);
}
