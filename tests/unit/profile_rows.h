/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Building a profile row by row in the flame graph tests: frames are written
 * "u:name" (user), "k:name" (kernel), "m:name" (missing) or "i:name" (an
 * inlined function), root first.
 * Aborts on a model error: a fixture that cannot be built is no test.
 */
#ifndef OFFCPU_TESTS_PROFILE_ROWS_H
#define OFFCPU_TESTS_PROFILE_ROWS_H

#include <stdlib.h>
#include <string.h>

#include "model/profile.h"

/* One row of thread comm/tid (pid 100; tid 0: pid 0) in state, with its weight. */
static void add(struct profile *p, const char *comm, int tid, enum offcpu_state state,
		uint64_t off_ns, uint64_t count, const char *const *frames)
{
	uint32_t ids[64];
	size_t n = 0;
	int th = profile__thread(p, tid ? 100 : 0, tid, comm), st;
	struct profile_weight w = {.count = count, .off_ns = off_ns};

	for (; frames[n]; n++) {
		enum frame_kind kind;
		int id;

		if (frame_kind__from_letter(frames[n][0], &kind))
			abort();
		id = profile__frame(p, kind, frames[n] + 2, strlen(frames[n] + 2));
		if (id < 0)
			abort();
		ids[n] = id;
	}
	st = profile__stack(p, ids, n);
	if (th < 0 || st < 0 || profile__add(p, th, st, state, &w))
		abort();
}

#endif
