// SPDX-License-Identifier: GPL-2.0-only
/* Durations and sizes, parsed and formatted exactly (see units.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/units.h"

typedef unsigned __int128 u128;

struct unit {
	const char *suffix;
	uint64_t mult;
};

#define NS_S 1000000000ULL

/* Longest suffixes that share a first letter come first: "ms" before "m". */
static const struct unit duration_units[] = {
	{"ns", 1},	  {"us", 1000},	      {"ms", 1000000},	   {"s", NS_S},
	{"m", 60 * NS_S}, {"h", 3600 * NS_S}, {"d", 86400 * NS_S}, {"", NS_S},
};

static const struct unit size_units[] = {
	{"KiB", 1ULL << 10},
	{"KB", 1ULL << 10},
	{"K", 1ULL << 10},
	{"k", 1ULL << 10},
	{"MiB", 1ULL << 20},
	{"MB", 1ULL << 20},
	{"M", 1ULL << 20},
	{"GiB", 1ULL << 30},
	{"GB", 1ULL << 30},
	{"G", 1ULL << 30},
	{"TiB", 1ULL << 40},
	{"TB", 1ULL << 40},
	{"T", 1ULL << 40},
	{"B", 1},
	{"", 1},
};

/*
 * A plain decimal times the unit its suffix names. The fraction keeps 18
 * digits (more cannot change a 64-bit result by more than the truncation).
 */
static int parse_scaled(const char *s, const struct unit *units, size_t nr, uint64_t *out)
{
	uint64_t ip = 0, fnum = 0, fden = 1;
	bool overflow = false;
	size_t digits = 0, frac = 0;
	u128 v;

	if (!s)
		return -EINVAL;
	for (; s[digits] >= '0' && s[digits] <= '9'; digits++) {
		uint64_t d = (uint64_t)(s[digits] - '0');

		if (ip > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			ip = ip * 10 + d;
	}
	s += digits;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, frac++) {
			if (frac < 18) {
				fnum = fnum * 10 + (uint64_t)(*s - '0');
				fden *= 10;
			}
		}
	}
	if (!digits && !frac)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++) {
		if (strcmp(s, units[i].suffix))
			continue;
		if (overflow)
			return -ERANGE;
		v = (u128)ip * units[i].mult + (u128)fnum * units[i].mult / fden;
		if (v > UINT64_MAX)
			return -ERANGE;
		*out = (uint64_t)v;
		return 0;
	}
	return -EINVAL;
}

int units__parse_duration(const char *s, uint64_t *ns)
{
	return parse_scaled(s, duration_units, sizeof(duration_units) / sizeof(duration_units[0]),
			    ns);
}

int units__parse_size(const char *s, uint64_t *bytes)
{
	return parse_scaled(s, size_units, sizeof(size_units) / sizeof(size_units[0]), bytes);
}

/*
 * v in the largest of units (largest first) that is at most v and writes it
 * exactly with up to three decimals; the smallest unit must divide anything.
 */
static char *format_scaled(uint64_t v, const struct unit *units, size_t nr, char *buf, size_t len)
{
	const struct unit *u = &units[nr - 1];
	uint64_t whole, milli;

	for (size_t i = 0; i < nr; i++) {
		if (v >= units[i].mult && (u128)v * 1000 % units[i].mult == 0) {
			u = &units[i];
			break;
		}
	}
	whole = v / u->mult;
	milli = (uint64_t)((u128)(v % u->mult) * 1000 / u->mult);
	if (!milli)
		snprintf(buf, len, "%llu%s", (unsigned long long)whole, u->suffix);
	else if (milli % 100 == 0)
		snprintf(buf, len, "%llu.%llu%s", (unsigned long long)whole,
			 (unsigned long long)(milli / 100), u->suffix);
	else if (milli % 10 == 0)
		snprintf(buf, len, "%llu.%02llu%s", (unsigned long long)whole,
			 (unsigned long long)(milli / 10), u->suffix);
	else
		snprintf(buf, len, "%llu.%03llu%s", (unsigned long long)whole,
			 (unsigned long long)milli, u->suffix);
	return buf;
}

char *units__format_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct unit units[] = {
		{"d", 86400 * NS_S}, {"h", 3600 * NS_S}, {"m", 60 * NS_S}, {"s", NS_S},
		{"ms", 1000000},     {"us", 1000},	 {"ns", 1},
	};

	if (!ns) {
		snprintf(buf, len, "0s");
		return buf;
	}
	return format_scaled(ns, units, sizeof(units) / sizeof(units[0]), buf, len);
}

char *units__format_size(uint64_t bytes, char *buf, size_t len)
{
	static const struct unit units[] = {
		{"T", 1ULL << 40}, {"G", 1ULL << 30}, {"M", 1ULL << 20},
		{"K", 1ULL << 10}, {"B", 1},
	};

	return format_scaled(bytes, units, sizeof(units) / sizeof(units[0]), buf, len);
}
