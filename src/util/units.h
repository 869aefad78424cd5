/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Durations and sizes as users write them on the command line and in the
 * config file, parsed exactly (integer arithmetic, no strtod: "nan", "inf",
 * "1e3" and hex are not numbers here) and strictly (the whole string or
 * -EINVAL).
 *
 * Durations: a plain decimal (digits, an optional '.' and digits) and an
 * optional unit: ns, us, ms, s, m, h, d. A bare number is seconds. 10, 2.5s,
 * .5, 500ms, 1m, 15m, 24h, 7d. Fractions below a nanosecond are dropped.
 *
 * Sizes: a plain decimal and an optional binary multiple: K (or k), M, G, T,
 * each optionally followed by "iB" or "B" (10G = 10GiB = 10GB = 10 * 2^30);
 * a bare number, or one followed by B, is bytes. Fractions of a byte are
 * dropped (1.5K = 1536).
 *
 * Errors: -EINVAL for anything else (empty, a sign, spaces, trailing junk),
 * -ERANGE when the value does not fit in 64 bits.
 */
#ifndef OFFCPU_UTIL_UNITS_H
#define OFFCPU_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

int units__parse_duration(const char *s, uint64_t *ns);
int units__parse_size(const char *s, uint64_t *bytes);

/*
 * For messages: the largest unit that writes ns exactly with at most three
 * decimals ("7d", "24h", "90s", "2.5s", "500ms", "1.5us", "7ns", "0s"), so
 * that units__parse_duration reads the text back as ns. Returns buf.
 */
char *units__format_duration(uint64_t ns, char *buf, size_t len);
/* "2G", "1.5M", "512K", "100B": exact with at most three decimals, like above. */
char *units__format_size(uint64_t bytes, char *buf, size_t len);

#endif
