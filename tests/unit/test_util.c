// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>

#include "unit.h"
#include "util/hmap.h"
#include "util/vec.h"

/* Values that share a hash are all found, and a grown table keeps every one. */
TEST(hmap_keeps_every_value_through_growth_and_collisions)
{
	struct hmap m = {0};
	static int vals[1000];
	size_t pos, found;
	int *v;

	for (int i = 0; i < 1000; i++) {
		vals[i] = i;
		/* every 10 values share one hash: the caller tells them apart */
		CHECK_INT(hmap__add(&m, (uint64_t)(i / 10) * 0x9e3779b97f4a7c15ULL, &vals[i]), 0);
	}
	CHECK_INT(m.len, 1000);
	CHECK(m.len * 2 <= m.mask + 1); /* at most half full */
	for (int k = 0; k < 100; k++) {
		uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ULL;
		unsigned seen = 0;

		found = 0;
		for (pos = hmap__first(&m, h); (v = hmap__next(&m, h, &pos));) {
			CHECK_INT(*v / 10, k);
			seen |= 1u << (*v % 10);
			found++;
		}
		CHECK_INT(found, 10);
		CHECK_INT(seen, 0x3ff);
	}
	/* a miss ends on a free slot, where a put goes */
	pos = hmap__first(&m, 12345);
	CHECK(!hmap__next(&m, 12345, &pos));
	CHECK_INT(hmap__reserve(&m), 0);
	hmap__put(&m, pos, 12345, hmap_idx(7));
	pos = hmap__first(&m, 12345);
	CHECK_INT(hmap_idx_of(hmap__next(&m, 12345, &pos)), 7);
	hmap__clear(&m);
	CHECK_INT(m.len, 0);
	pos = hmap__first(&m, 0);
	CHECK(!hmap__next(&m, 0, &pos));
	hmap__free(&m);
	hmap__free(NULL);
	/* an empty table finds nothing without allocating */
	pos = hmap__first(&m, 3);
	CHECK(!hmap__next(&m, 3, &pos));
	CHECK(!m.slots);
}

TEST(vec_grows_by_doubling_and_refuses_overflow)
{
	uint64_t *a = NULL;
	size_t cap = 0, n;

	for (n = 0; n < 100; n++) {
		CHECK_INT(vec_reserve(a, cap, n + 1), 0);
		a[n] = n;
	}
	CHECK_INT(cap, 128); /* 16, 32, 64, 128 */
	for (n = 0; n < 100; n++)
		CHECK_U64(a[n], n);
	CHECK_INT(vec_reserve(a, cap, 50), 0); /* enough room: nothing changes */
	CHECK_INT(cap, 128);
	CHECK_INT(vec_reserve(a, cap, SIZE_MAX / 4), -ENOMEM);
	CHECK_INT(vec_reserve(a, cap, SIZE_MAX), -ENOMEM);
	CHECK_INT(cap, 128); /* unchanged on failure */
	CHECK_U64(a[99], 99);
	free(a);
}

int main(void)
{
	return unit_run();
}
