/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hex digits at the start of a string, as /proc/kallsyms and /proc/PID/maps
 * write addresses: no prefix, no sign, any case; stops at the first other
 * byte (*end), without overflow checks (a longer run keeps its low 64 bits).
 */
#ifndef OFFCPU_UTIL_HEX_H
#define OFFCPU_UTIL_HEX_H

#include <stdint.h>

static inline uint64_t hex__parse(const char *p, const char **end)
{
	uint64_t v = 0;

	for (;; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (*p | 0x20) - 'a' + 10;
		else
			break;
		v = v << 4 | d;
	}
	*end = p;
	return v;
}

#endif
