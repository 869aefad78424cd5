/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A minimal unit-test harness. Each test is a function registered with TEST();
 * the runner prints one line per test, "ok NAME", "FAIL NAME: where: what" or
 * "skip NAME: why", which tests/run.sh counts into "N passed, N failed".
 *
 *     TEST(folded_parses_two_rows) { ... CHECK(x == 2); CHECK_STR(a, "b"); }
 *     int main(void) { return unit_run(); }
 */
#ifndef OFFCPU_TESTS_UNIT_H
#define OFFCPU_TESTS_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failure's message is cut to unit_why's size on purpose: gcc need not say so. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/* Tests one program may hold; registering more is a failure of the program. */
#ifndef UNIT_MAX
#define UNIT_MAX 512
#endif
static struct unit_test unit_tests[UNIT_MAX];
static int unit_nr, unit_dropped, unit_failed_now, unit_skipped_now;
static char unit_why[512];

#define TEST(name)                                                                               \
	static void test_##name(void);                                                           \
	__attribute__((constructor)) static void register_##name(void)                            \
	{                                                                                        \
		if (unit_nr < UNIT_MAX)                                                          \
			unit_tests[unit_nr++] = (struct unit_test){ #name, test_##name };        \
		else                                                                             \
			unit_dropped++;                                                          \
	}                                                                                        \
	static void test_##name(void)

#define UNIT_FAIL(...)                                                                           \
	do {                                                                                     \
		if (!unit_failed_now) {                                                          \
			int unit_n_ = snprintf(unit_why, sizeof(unit_why), "%s:%d: ", __FILE__, __LINE__); \
			snprintf(unit_why + unit_n_, sizeof(unit_why) - unit_n_, __VA_ARGS__);       \
		}                                                                                \
		unit_failed_now = 1;                                                             \
	} while (0)

/* CHECK and friends record the first failure and return from the test. */
#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			UNIT_FAIL("CHECK(%s)", #cond);                                           \
			return;                                                                  \
		}                                                                                \
	} while (0)

#define CHECK_INT(a, b)                                                                          \
	do {                                                                                     \
		long long a_ = (long long)(a), b_ = (long long)(b);                              \
		if (a_ != b_) {                                                                  \
			UNIT_FAIL("%s == %lld, expected %s == %lld", #a, a_, #b, b_);           \
			return;                                                                  \
		}                                                                                \
	} while (0)

#define CHECK_U64(a, b)                                                                          \
	do {                                                                                     \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                 \
		if (a_ != b_) {                                                                  \
			UNIT_FAIL("%s == %" PRIu64 ", expected %" PRIu64, #a, a_, b_);          \
			return;                                                                  \
		}                                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                                          \
	do {                                                                                     \
		const char *a_ = (a), *b_ = (b);                                                 \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                              \
			UNIT_FAIL("%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)",       \
				  b_ ? b_ : "(null)");                                           \
			return;                                                                  \
		}                                                                                \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                                              \
	do {                                                                                     \
		const char *hay_ = (hay), *needle_ = (needle);                                   \
		if (!hay_ || !strstr(hay_, needle_)) {                                           \
			UNIT_FAIL("%s does not contain \"%s\"", #hay, needle_);                 \
			return;                                                                  \
		}                                                                                \
	} while (0)

#define SKIP(...)                                                                                \
	do {                                                                                     \
		snprintf(unit_why, sizeof(unit_why), __VA_ARGS__);                               \
		unit_skipped_now = 1;                                                            \
		return;                                                                          \
	} while (0)

/* Open a read-only FILE * on a string (fmemopen needs a non-zero size). */
static inline FILE *unit_memfile(const char *s)
{
	size_t n = strlen(s);

	return n ? fmemopen((void *)s, n, "r") : fopen("/dev/null", "r");
}

/* Read a whole file into a malloc'ed NUL-terminated string; NULL on error. */
static inline char *unit_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static inline int unit_run(void)
{
	/* UNIT_ONLY=substring runs the matching tests alone (to repeat a flaky one). */
	const char *only = getenv("UNIT_ONLY");
	int failed = 0;

	for (int i = 0; i < unit_nr; i++) {
		if (only && *only && !strstr(unit_tests[i].name, only))
			continue;
		unit_failed_now = unit_skipped_now = 0;
		unit_why[0] = '\0';
		unit_tests[i].fn();
		if (unit_failed_now) {
			printf("FAIL %s: %s\n", unit_tests[i].name, unit_why);
			failed++;
		} else if (unit_skipped_now) {
			printf("skip %s: %s\n", unit_tests[i].name, unit_why);
		} else {
			printf("ok %s\n", unit_tests[i].name);
		}
		fflush(stdout);
	}
	if (unit_dropped) {
		printf("FAIL unit_max: %d tests beyond UNIT_MAX (%d) did not run; raise UNIT_MAX "
		       "in tests/unit/unit.h\n",
		       unit_dropped, UNIT_MAX);
		fflush(stdout);
		failed++;
	}
	return failed ? 1 : 0;
}

#endif
