// SPDX-License-Identifier: GPL-2.0-only
/* What the parsers share: counting malformed input, reading numbers. */
#include <errno.h>
#include <stdio.h>

#include "parse/parse.h"

void parse__malformed(struct parse_stats *st, size_t line, const char *why)
{
	if (!st->malformed++) {
		st->first_malformed_line = line;
		snprintf(st->first_malformed_reason, sizeof(st->first_malformed_reason), "%s", why);
	}
}

int parse__u64(const char *s, size_t len, uint64_t *v)
{
	*v = 0;
	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (*v > (UINT64_MAX - d) / 10)
			return -EOVERFLOW;
		*v = *v * 10 + d;
	}
	return 0;
}
