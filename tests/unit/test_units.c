// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "util/units.h"
#include "unit.h"

#define S 1000000000ULL

struct dcase {
	const char *in;
	int err;
	uint64_t ns;
};

TEST(duration_units_and_bare_seconds)
{
	static const struct dcase cases[] = {
		{"10", 0, 10 * S},
		{"0", 0, 0},
		{"2.5s", 0, 2500000000ULL},
		{"2.5", 0, 2500000000ULL},
		{".5", 0, 500000000ULL},
		{"5.", 0, 5 * S},
		{"500ms", 0, 500000000ULL},
		{"250us", 0, 250000},
		{"7ns", 0, 7},
		{"1m", 0, 60 * S},
		{"15m", 0, 900 * S},
		{"1.5m", 0, 90 * S},
		{"24h", 0, 86400 * S},
		{"7d", 0, 7 * 86400 * S},
		{"0.000000001", 0, 1},
		/* Below a nanosecond is dropped, not rounded up. */
		{"0.0000000019", 0, 1},
		{"1.0000000000000000000000001s", 0, S},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ns = 12345;
		int err = units__parse_duration(cases[i].in, &ns);

		if (err != cases[i].err || ns != cases[i].ns)
			UNIT_FAIL("'%s': err %d ns %" PRIu64 ", expected err %d ns %" PRIu64,
				  cases[i].in, err, ns, cases[i].err, cases[i].ns);
	}
}

TEST(duration_rejects_junk_signs_and_float_spellings)
{
	static const char *const bad[] = {
		"",    " 1",  "1 ",  "-1",   "+1",   "1x",    "1sec",  "1S",  "1ms5", ".",    "s",
		"1e3", "nan", "inf", "0x10", "1..2", "1.2.3", "1h30m", "1,5", "10 s", "1.s2",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t ns = 77;
		int err = units__parse_duration(bad[i], &ns);

		if (err != -EINVAL || ns != 77)
			UNIT_FAIL("'%s': err %d ns %" PRIu64 ", expected -EINVAL and untouched",
				  bad[i], err, ns);
	}
	CHECK_INT(units__parse_duration(NULL, &(uint64_t){0}), -EINVAL);
}

TEST(duration_overflow_is_erange)
{
	uint64_t ns = 0;

	/* 2^64 ns is about 584 years: 213504d fits, 213504.1d... does not. */
	CHECK_INT(units__parse_duration("213503d", &ns), 0);
	CHECK_U64(ns, 213503ULL * 86400 * S);
	CHECK_INT(units__parse_duration("213504d", &ns), -ERANGE);
	CHECK_INT(units__parse_duration("18446744073709551615ns", &ns), 0);
	CHECK_U64(ns, UINT64_MAX);
	CHECK_INT(units__parse_duration("18446744073709551616ns", &ns), -ERANGE);
	CHECK_INT(units__parse_duration("99999999999999999999999999", &ns), -ERANGE);
	/* Junk still wins over a number too large: the input is not a duration at all. */
	CHECK_INT(units__parse_duration("99999999999999999999999999x", &ns), -EINVAL);
}

/* Every input record's own parser took (cmd_record.c) still parses, to the same value. */
TEST(duration_accepts_what_record_accepted)
{
	static const struct dcase cases[] = {
		{"0", 0, 0},	     {"0.1", 0, 100000000ULL},
		{"3us", 0, 3000},    {"31536000", 0, 31536000 * S},
		{"2h", 0, 7200 * S}, {"0.5ms", 0, 500000},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ns = 0;

		CHECK_INT(units__parse_duration(cases[i].in, &ns), 0);
		CHECK_U64(ns, cases[i].ns);
	}
}

TEST(size_binary_multiples)
{
	static const struct {
		const char *in;
		uint64_t bytes;
	} cases[] = {
		{"0", 0},
		{"100", 100},
		{"100B", 100},
		{"500K", 500ULL << 10},
		{"500k", 500ULL << 10},
		{"500KiB", 500ULL << 10},
		{"500M", 500ULL << 20},
		{"2G", 2ULL << 30},
		{"10GB", 10ULL << 30},
		{"10GiB", 10ULL << 30},
		{"1T", 1ULL << 40},
		{"1.5K", 1536},
		{"0.5G", 1ULL << 29},
		{"16777215T", 16777215ULL << 40},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t b = 1;
		int err = units__parse_size(cases[i].in, &b);

		if (err || b != cases[i].bytes)
			UNIT_FAIL("'%s': err %d bytes %" PRIu64 ", expected %" PRIu64, cases[i].in,
				  err, b, cases[i].bytes);
	}
}

TEST(size_rejects_junk_and_overflow)
{
	static const char *const bad[] = {"",	"-1",  "1 G",	"1g ", "1Gi", "1GIB",  "G",
					  "1Q", "1e9", "0x100", "1kb", "1mb", "1.2.3M"};
	uint64_t b = 9;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (units__parse_size(bad[i], &b) != -EINVAL)
			UNIT_FAIL("'%s' was accepted or not -EINVAL", bad[i]);
	CHECK_U64(b, 9);
	CHECK_INT(units__parse_size("16777216T", &b), -ERANGE);
	CHECK_INT(units__parse_size("18446744073709551616", &b), -ERANGE);
}

TEST(format_duration_reads_back)
{
	static const struct {
		uint64_t ns;
		const char *text;
	} cases[] = {
		{0, "0s"},
		{7, "7ns"},
		{1500, "1.5us"},
		{500000000ULL, "500ms"},
		{2500000000ULL, "2.5s"},
		{60 * S, "1m"},
		{90 * S, "1.5m"},
		{61 * S, "61s"},
		{86400 * S, "1d"},
		{7 * 86400 * S, "7d"},
		{25 * 3600 * S, "25h"},
		{1234567, "1234.567us"},
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t back = 0;

		CHECK_STR(units__format_duration(cases[i].ns, buf, sizeof(buf)), cases[i].text);
		CHECK_INT(units__parse_duration(buf, &back), 0);
		CHECK_U64(back, cases[i].ns);
	}
	/* Any value reads back exactly, up to the largest. */
	for (uint64_t v = 1; v < UINT64_MAX / 3; v = v * 3 + 1) {
		uint64_t back = 0;

		units__format_duration(v, buf, sizeof(buf));
		CHECK_INT(units__parse_duration(buf, &back), 0);
		CHECK_U64(back, v);
	}
}

TEST(format_size_reads_back)
{
	char buf[32];
	uint64_t back = 0;

	CHECK_STR(units__format_size(2ULL << 30, buf, sizeof(buf)), "2G");
	CHECK_STR(units__format_size(1536, buf, sizeof(buf)), "1.5K");
	CHECK_STR(units__format_size(100, buf, sizeof(buf)), "100B");
	CHECK_STR(units__format_size(0, buf, sizeof(buf)), "0B");
	CHECK_STR(units__format_size(1025, buf, sizeof(buf)), "1025B");
	for (uint64_t v = 1; v < UINT64_MAX / 5; v = v * 5 + 3) {
		units__format_size(v, buf, sizeof(buf));
		CHECK_INT(units__parse_size(buf, &back), 0);
		CHECK_U64(back, v);
	}
}

int main(void)
{
	return unit_run();
}
