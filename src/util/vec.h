/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one growable array: a caller's (pointer, capacity) pair grown by doubling,
 * so that n appends cost O(n) copies in all.
 *
 *	if (vec_reserve(v->items, v->cap, v->n + 1))
 *		return -ENOMEM;
 *	v->items[v->n++] = item;
 */
#ifndef OFFCPU_UTIL_VEC_H
#define OFFCPU_UTIL_VEC_H

#include <stddef.h>

/*
 * Grow the array *bufp (a T **, of *cap elements of elem bytes) to hold at least
 * need elements: the capacity doubles from 16 until it does. 0, or -ENOMEM when
 * out of memory or when the size would overflow (then nothing changed).
 */
int vec__grow(void *bufp, size_t *cap, size_t need, size_t elem);

/* vec__grow() for an array lvalue arr and its size_t capacity lvalue cap. */
#define vec_reserve(arr, cap, need) vec__grow(&(arr), &(cap), (need), sizeof(*(arr)))

#endif
