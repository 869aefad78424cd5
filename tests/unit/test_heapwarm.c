// SPDX-License-Identifier: GPL-2.0-only
/*
 * util/heapwarm.h, in a program of its own: malloc's state (its thresholds,
 * the heaps of threads gone) is the process's, and another test's blocks
 * would warm the control's.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "unit.h"
#include "util/heapwarm.h"

#define WARM_SIZE ((size_t)6 << 20)

/* What is warmed is glibc's malloc: under ASan, blocks come from its own allocator. */
#if defined(__SANITIZE_ADDRESS__)
#define MALLOC_IS_GLIBC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MALLOC_IS_GLIBC 0
#endif
#endif
#ifndef MALLOC_IS_GLIBC
#define MALLOC_IS_GLIBC 1
#endif

static long thread_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_minflt;
}

/* In a thread of its own (its own heap): the faults a malloc'd block costs when written. */
static void *write_block(void *warm)
{
	long before;
	volatile char *p; /* volatile: writes to a block freed unread are not dropped */

	if (warm)
		heap__warm(WARM_SIZE);
	before = thread_faults();
	p = malloc(WARM_SIZE);
	if (!p)
		return (void *)(intptr_t)-1;
	for (size_t i = 0; i < WARM_SIZE; i += 4096)
		p[i] = 1;
	before = thread_faults() - before;
	free((void *)p);
	return (void *)(intptr_t)before;
}

static long faults_of_block(bool warm)
{
	pthread_t t;
	void *ret;

	if (pthread_create(&t, NULL, write_block, warm ? (void *)1 : NULL) || pthread_join(t, &ret))
		return -1;
	return (long)(intptr_t)ret;
}

/*
 * A block as large as libbpf's copy of the kernel's BTF is written without
 * faults after heap__warm() (its pages are mapped already); without it, a
 * fault a page (the control, first: it must not find warm pages).
 */
TEST(heap_warm_leaves_the_next_big_block_mapped)
{
	long pages = (long)(WARM_SIZE / 4096), cold, warm;

	if (!MALLOC_IS_GLIBC)
		SKIP("malloc is the sanitizer's, not glibc's");
	cold = faults_of_block(false);
	warm = faults_of_block(true);
	CHECK(cold >= 0 && warm >= 0);
	if (cold < pages * 9 / 10)
		UNIT_FAIL("the control wrote %ld pages with %ld faults", pages, cold);
	else if (warm > pages / 10)
		UNIT_FAIL("%ld faults for %ld pages after heap__warm()", warm, pages);
}

int main(void)
{
	return unit_run();
}
