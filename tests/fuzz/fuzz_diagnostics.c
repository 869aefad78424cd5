// SPDX-License-Identifier: GPL-2.0-only
/*
 * A collector's stderr (parse/diagnostics.h). The counts must add up, the
 * kept first lines must be bounded C strings, and parsing a file must agree
 * with diagnostics__classify_line() on each of its lines.
 */
#include <ctype.h>

#include "fuzz.h"
#include "parse/diagnostics.h"

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct diagnostics d;
	size_t count[DIAG__COUNT] = { 0 }, total = 0, nr = 0;
	const char *s = (const char *)data, *end = s + size;
	FILE *f = fuzz_open(data, size);
	int err;

	err = diagnostics__parse(f, &d);
	fclose(f);
	FUZZ_CHECK(err == 0 || err == -EOVERFLOW);

	for (int k = 0; k < DIAG__COUNT; k++) {
		FUZZ_CHECK(diag_kind__name(k) != NULL);
		FUZZ_CHECK(memchr(d.first[k], '\0', DIAG_TEXT_MAX));
		FUZZ_CHECK(!d.count[k] == !d.first_line[k]);
		total += d.count[k];
	}
	FUZZ_CHECK(total == d.nr_lines);
	if (err)
		return 0;

	/* The same lines, split here: the line reader drops one CR before LF. */
	while (s < end) {
		const char *nl = memchr(s, '\n', end - s);
		size_t len = (nl ? nl : end) - s;

		nr++;
		if (!blank(s, len)) {
			enum diag_kind k = diagnostics__classify_line(s, len);

			FUZZ_CHECK((unsigned)k < DIAG__COUNT);
			if (count[k]++ == 0)
				FUZZ_CHECK(d.first_line[k] == nr);
		}
		s = nl ? nl + 1 : end;
	}
	for (int k = 0; k < DIAG__COUNT; k++)
		FUZZ_CHECK(count[k] == d.count[k]);
	return 0;
}
