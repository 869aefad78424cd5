// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu.summary.json read back (parse/summary_json.h): `summarize` reads the
 * summary a previous run left, which a user may have edited or truncated.
 * Whatever it holds, the reader returns a documented error or metadata whose
 * strings are bounded and whose argv is a NULL-terminated list.
 */
#include "fuzz.h"
#include "parse/summary_json.h"

#define BOUNDED(arr) FUZZ_CHECK(memchr((arr), '\0', sizeof(arr)))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct summary_meta m;
	char why[256] = "";
	FILE *f = fuzz_open(data, size);
	int err;

	err = summary_json__read(f, &m, why, sizeof(why));
	fclose(f);
	/* -ENOSPC and -EOVERFLOW: more losses than a summary can hold, or their sum wraps. */
	FUZZ_CHECK(err == 0 || err == -EINVAL || err == -ENOSPC || err == -EOVERFLOW);
	if (err == -EINVAL)
		FUZZ_CHECK(why[0]);
	if (err) {
		FUZZ_CHECK(!m.argv);
		summary_meta__free(&m);
		return 0;
	}
	BOUNDED(m.tool);
	BOUNDED(m.mode);
	BOUNDED(m.collector);
	BOUNDED(m.state);
	BOUNDED(m.target);
	BOUNDED(m.integrity.message);
	FUZZ_CHECK((unsigned)m.integrity.status <= INTEGRITY_UNKNOWN);
	FUZZ_CHECK(m.integrity.nr_losses <= INTEGRITY_MAX_LOSSES);
	for (size_t i = 0; i < m.integrity.nr_losses; i++)
		BOUNDED(m.integrity.losses[i].name);
	FUZZ_CHECK(!m.argv || m.has_workload);
	for (size_t i = 0; m.argv && m.argv[i]; i++)
		FUZZ_CHECK(strlen(m.argv[i]) < size + 1);
	summary_meta__free(&m);
	FUZZ_CHECK(!m.argv);
	summary_meta__free(&m);
	return 0;
}
