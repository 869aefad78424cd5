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

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);

#endif
