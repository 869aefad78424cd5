/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fast non-cryptographic hashing for the interning tables.
 *
 * hash_bytes() reads eight bytes at a time, so hashing a frame name costs about
 * a cycle per word instead of a cycle per byte (FNV-1a): interning is the hot
 * path of every parser. Results are stable for a given input and seed within one
 * build; they are never written anywhere, so they may change between versions.
 */
#ifndef OFFCPU_UTIL_HASH_H
#define OFFCPU_UTIL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Final avalanche (from MurmurHash3's fmix64): every input bit affects every output bit. */
static inline uint64_t hash_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* Fold one 64-bit value into a running hash. */
static inline uint64_t hash_add64(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return (h << 29) | (h >> 35);
}

/* Inline: it runs once per frame of every input line. */
static inline uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data, *end = p + len;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	uint64_t w;
	uint32_t lo, hi;

	if (len >= 8) {
		for (; end - p >= 8; p += 8) {
			memcpy(&w, p, 8); /* unaligned-safe; one load */
			h = hash_add64(h, w);
		}
		if (p < end) {
			/* The tail: the last 8 bytes, minus those already hashed. */
			memcpy(&w, end - 8, 8);
			h = hash_add64(h, w >> (8 - (end - p)) * 8);
		}
	} else if (len >= 4) {
		/* Two loads that overlap cover 4..7 bytes without a byte loop. */
		memcpy(&lo, p, 4);
		memcpy(&hi, end - 4, 4);
		h = hash_add64(h, (uint64_t)hi << 32 | lo);
	} else if (len) {
		h = hash_add64(h, p[0] | (uint64_t)p[len / 2] << 8 | (uint64_t)end[-1] << 16);
	}
	return hash_mix64(h);
}

/*
 * hash_bytes() for long inputs (a whole folded line, hundreds of bytes): four
 * lanes of eight bytes, so that four multiplies are in flight at once instead
 * of each waiting for the one before. Inputs shorter than 32 bytes go to
 * hash_bytes(); the values of the two differ for the same input.
 */
static inline uint64_t hash_bytes_wide(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data, *end = p + len;
	uint64_t a, b, c, d, w0, w1, w2, w3;

	if (len < 32)
		return hash_bytes(data, len, seed);
	a = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	b = a ^ 0x243f6a8885a308d3ULL;
	c = a ^ 0x13198a2e03707344ULL;
	d = a ^ 0xa4093822299f31d0ULL;
	for (;;) {
		/* Four loads into registers: a copy to an array went through the stack. */
		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 8);
		memcpy(&w3, p + 24, 8);
		a = hash_add64(a, w0);
		b = hash_add64(b, w1);
		c = hash_add64(c, w2);
		d = hash_add64(d, w3);
		p += 32;
		if (p == end)
			break;
		/* The tail: the last 32 bytes again, overlapping; len is in the seed. */
		if (end - p < 32)
			p = end - 32;
	}
	return hash_mix64(hash_add64(hash_add64(hash_add64(a, b), c), d));
}

/*
 * Whether a[0..n) == b[0..n): the key comparison that goes with a hash, inline
 * because keys are short and it runs once per frame of every input line.
 */
static inline bool mem_eq(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	uint32_t u, v;

	if (n >= 8) {
		for (size_t i = 0; i + 8 <= n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (x != y)
				return false;
		}
		memcpy(&x, a + n - 8, 8); /* the tail, overlapping what was compared */
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	if (n >= 4) {
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		if (u != v)
			return false;
		memcpy(&u, a + n - 4, 4);
		memcpy(&v, b + n - 4, 4);
		return u == v;
	}
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

#endif
