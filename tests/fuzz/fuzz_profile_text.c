// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lossless profile text (parse/profile_text.h, output/profile_text.h).
 * fuzz-needs: src/parse/profile_text.c
 *
 * Besides the parser contract (a file cut before its end line is -EBADMSG,
 * never a shorter profile read as whole): whatever a file held, what we write from it
 * reads back into an equal profile (written again, the same bytes), and
 * reading it once more into the same profile merges: every row's weight
 * doubles and no row is added.
 */
#include "fuzz.h"
#include "output/profile_text.h"
#include "parse/profile_text.h"

static int parse(const char *buf, size_t len, struct profile *p, struct parse_stats *st)
{
	FILE *f = fuzz_open((const uint8_t *)buf, len);
	int err = profile_text__parse(f, p, st);

	fclose(f);
	FUZZ_CHECK(err == 0 || err == -EINVAL || err == -EOVERFLOW || err == -EBADMSG);
	/* A missing first line is a malformed record on no line of its own. */
	fuzz_check_stats_unread(st, err, 1);
	fuzz_check_profile(p);
	return err;
}

static void write(const struct profile *p, struct fuzz_out *o)
{
	fuzz_out_open(o);
	FUZZ_CHECK(profile_text__write(o->f, p) == 0);
	fuzz_out_close(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new(), *q = profile__new();
	struct profile_totals before;
	struct parse_stats st;
	struct fuzz_out w1, w2;
	size_t rows;
	int err;

	FUZZ_CHECK(p && q);
	err = parse((const char *)data, size, p, &st);
	if (err == -EINVAL) {
		/* Not a profile text: nothing is added. */
		FUZZ_CHECK(!profile__nr_frames(p) && !profile__nr_stacks(p));
		FUZZ_CHECK(!profile__nr_threads(p) && !profile__nr_rows(p));
		goto cleanup;
	}
	FUZZ_CHECK(profile__nr_rows(p) <= st.records);

	write(p, &w1);
	err = parse(w1.buf, w1.len, q, &st);
	FUZZ_CHECK(err == 0 && st.malformed == 0);
	FUZZ_CHECK(st.records == profile__nr_rows(p));
	write(q, &w2);
	FUZZ_CHECK(w1.len == w2.len && !memcmp(w1.buf, w2.buf, w1.len));
	free(w2.buf);

	before = *profile__totals(p);
	rows = profile__nr_rows(p);
	err = parse(w1.buf, w1.len, p, &st);
	FUZZ_CHECK(err == 0 || err == -EOVERFLOW);
	if (!err) {
		const struct profile_totals *after = profile__totals(p);

		FUZZ_CHECK(st.malformed == 0);
		FUZZ_CHECK(profile__nr_rows(p) == rows);
		FUZZ_CHECK(after->all.count == 2 * before.all.count);
		FUZZ_CHECK(after->all.off_ns == 2 * before.all.off_ns);
		FUZZ_CHECK(after->all.runq_ns == 2 * before.all.runq_ns);
	}
	free(w1.buf);
cleanup:
	profile__free(p);
	profile__free(q);
	return 0;
}
