// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded stacks (parse/folded.h), as BCC and FlameGraph write them. The input
 * is parsed twice, with microsecond values and as counts, and what we write
 * from it (output/folded.h) is parsed again: our own output must read back
 * without a malformed line and with the same time.
 */
#include "fuzz.h"
#include "output/folded.h"
#include "parse/folded.h"

static int parse(const uint8_t *data, size_t size, struct profile *p, const struct folded_opts *o,
		 struct parse_stats *st)
{
	FILE *f = fuzz_open(data, size);
	int err = folded__parse(f, p, o, st);

	fclose(f);
	/* A memory stream cannot fail to read, and the input is small: only overflow remains. */
	FUZZ_CHECK(err == 0 || err == -EOVERFLOW);
	fuzz_check_stats(st, err);
	fuzz_check_profile(p);
	return err;
}

static void check_folded_profile(const struct profile *p, const struct parse_stats *st)
{
	const struct profile_totals *tot = profile__totals(p);

	/* Folded input has no pid, tid, state or run-queue split. */
	for (uint32_t i = 0; i < profile__nr_threads(p); i++) {
		const struct profile_thread *t = profile__thread_at(p, i);

		FUZZ_CHECK(t->pid == 0 && t->tid == 0 && t->comm[0]);
	}
	FUZZ_CHECK(weight_eq(&tot->all, &tot->by_state[OFFCPU_STATE_UNKNOWN]));
	FUZZ_CHECK(tot->all.runq_ns == 0);
	FUZZ_CHECK(!profile__runq_known(p));
	FUZZ_CHECK(profile__nr_rows(p) <= st->records);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded_opts counts = { .count_only = true };
	struct parse_stats st, st_counts, st_back;
	struct profile *p = profile__new(), *pc = profile__new(), *back = profile__new();
	struct fuzz_out out;
	int err, err_counts;

	FUZZ_CHECK(p && pc && back);
	err = parse(data, size, p, NULL, &st);
	check_folded_profile(p, &st);
	/* One line is one interval of VALUE microseconds. */
	FUZZ_CHECK(profile__totals(p)->all.count == st.records);
	FUZZ_CHECK(profile__totals(p)->all.off_ns % 1000 == 0);

	err_counts = parse(data, size, pc, &counts, &st_counts);
	check_folded_profile(pc, &st_counts);
	FUZZ_CHECK(profile__totals(pc)->all.off_ns == 0);
	if (!err && !err_counts) {
		/* The mode changes what a value means, never which lines are read. */
		FUZZ_CHECK(st.lines == st_counts.lines && st.records == st_counts.records);
		FUZZ_CHECK(st.malformed == st_counts.malformed && st.skipped == st_counts.skipped);
		FUZZ_CHECK(profile__nr_rows(p) == profile__nr_rows(pc));
		FUZZ_CHECK(profile__nr_stacks(p) == profile__nr_stacks(pc));
		FUZZ_CHECK(profile__nr_frames(p) == profile__nr_frames(pc));
	}

	fuzz_out_open(&out);
	FUZZ_CHECK(folded__write(out.f, p) == 0);
	fuzz_out_close(&out);
	err = parse((const uint8_t *)out.buf, out.len, back, NULL, &st_back);
	FUZZ_CHECK(err == 0);
	FUZZ_CHECK(st_back.malformed == 0 && st_back.skipped == 0);
	/* One line per (thread, stack); every row's time is whole microseconds. */
	FUZZ_CHECK(st_back.records == profile__nr_rows(p));
	FUZZ_CHECK(profile__totals(back)->all.off_ns == profile__totals(p)->all.off_ns);
	/* Fewer only when the writer's '_' for CR made two comms one. */
	FUZZ_CHECK(profile__nr_threads(back) <= profile__nr_threads(p));
	free(out.buf);

	profile__free(p);
	profile__free(pc);
	profile__free(back);
	return 0;
}
