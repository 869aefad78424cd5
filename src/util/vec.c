// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define VEC_MIN 16

int vec__grow(void *bufp, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : VEC_MIN;
	void *old, *nb;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	/* bufp points at a T *, which may not be read as a void * lvalue: copy it. */
	memcpy(&old, bufp, sizeof(old));
	nb = realloc(old, ncap * elem + !elem);
	if (!nb)
		return -ENOMEM;
	memcpy(bufp, &nb, sizeof(nb));
	*cap = ncap;
	return 0;
}
