// SPDX-License-Identifier: GPL-2.0-only
#include "util/hash.h"

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	uint64_t w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8); /* unaligned-safe; compiles to one load */
		h = hash_add64(h, w);
	}
	if (len) {
		/* The tail is zero-padded; the length folded in above tells "a" from "a\0". */
		w = 0;
		memcpy(&w, p, len);
		h = hash_add64(h, w);
	}
	return hash_mix64(h);
}
