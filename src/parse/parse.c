// SPDX-License-Identifier: GPL-2.0-only
/* What the parsers share: counting malformed input, growing buffers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse/parse.h"

void parse__malformed(struct parse_stats *st, size_t line, const char *why)
{
	if (!st->malformed++) {
		st->first_malformed_line = line;
		snprintf(st->first_malformed_reason, sizeof(st->first_malformed_reason), "%s", why);
	}
}

int parse__grow(void **buf, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *nb;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(*buf, ncap * elem);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}
