// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpftrace map dumps (parse/bpftrace.h). Besides the parser contract, what we
 * make of a dump must survive our folded export (output/folded.h): every
 * (thread, stack) becomes one line that our folded reader takes back.
 */
#include "fuzz.h"
#include "output/folded.h"
#include "parse/bpftrace.h"
#include "parse/folded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new(), *back = profile__new();
	const struct profile_totals *tot;
	struct parse_stats st, st_back;
	struct fuzz_out out;
	FILE *f;
	int err;

	FUZZ_CHECK(p && back);
	f = fuzz_open(data, size);
	err = bpftrace__parse(f, p, &st);
	fclose(f);
	FUZZ_CHECK(err == 0 || err == -EOVERFLOW);
	fuzz_check_stats(&st, err);
	fuzz_check_profile(p);

	tot = profile__totals(p);
	FUZZ_CHECK(weight_eq(&tot->all, &tot->by_state[OFFCPU_STATE_UNKNOWN]));
	FUZZ_CHECK(tot->all.runq_ns == 0 && !profile__runq_known(p));
	FUZZ_CHECK(profile__nr_rows(p) <= st.records);

	fuzz_out_open(&out);
	FUZZ_CHECK(folded__write(out.f, p) == 0);
	fuzz_out_close(&out);
	f = fuzz_open((const uint8_t *)out.buf, out.len);
	err = folded__parse(f, back, NULL, &st_back);
	fclose(f);
	FUZZ_CHECK(err == 0);
	FUZZ_CHECK(st_back.malformed == 0 && st_back.skipped == 0);
	FUZZ_CHECK(st_back.records == profile__nr_rows(p));
	free(out.buf);

	profile__free(p);
	profile__free(back);
	return 0;
}
