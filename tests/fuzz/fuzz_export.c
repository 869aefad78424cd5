// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exports (output/pprof.h, speedscope.h, chrome_trace.h, folded.h) fed
 * with whatever a capture can hold. The input is a timeline text (the richest
 * of our inputs: any bytes in names through %XX, any pid, tid, state and
 * times); each interval also becomes a profile row, as the native collector
 * makes them, with the thread named after the stack's leaf frame so comms
 * hold any bytes too. Then: the JSON exports are valid JSON (UTF-8
 * included), the Chrome trace accounts for every interval, pprof encodes
 * whatever fits int64, and the folded export reads back line for line.
 */
#include "fuzz.h"
#include "parse/timeline.h"
#include "output/chrome_trace.h"
#include "output/folded.h"
#include "output/pprof.h"
#include "output/speedscope.h"
#include "parse/folded.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* How many (thread, stack) pairs have rows: the folded export's line count. */
static size_t nr_thread_stacks(const struct profile *p)
{
	size_t nr = profile__nr_rows(p), n = 0;
	uint64_t *k = malloc((nr ? nr : 1) * sizeof(*k));

	FUZZ_CHECK(k);
	for (size_t i = 0; i < nr; i++) {
		const struct profile_row *r = profile__row_at(p, i);

		k[i] = (uint64_t)r->thread << 32 | r->stack;
	}
	qsort(k, nr, sizeof(*k), cmp_u64);
	for (size_t i = 0; i < nr; i++)
		n += !i || k[i] != k[i - 1];
	free(k);
	return n;
}

/* Give the profile the timeline's intervals as rows. */
static void add_rows(struct profile *p, const struct timeline *t)
{
	for (size_t i = 0; i < timeline__nr(t); i++) {
		const struct timeline_interval *iv = timeline__at(t, i);
		struct profile_weight w = {1, iv->dur_ns, iv->runq_ns};
		const struct profile_frame *leaf = NULL;
		const uint32_t *fr;
		size_t n;
		int th, err;

		fr = profile__stack_at(p, iv->stack, &n);
		if (n)
			leaf = profile__frame_at(p, fr[n - 1]);
		th = profile__thread(p, iv->pid, iv->tid, leaf ? leaf->name : NULL);
		FUZZ_CHECK(th >= 0);
		err = profile__add(p, th, iv->stack, iv->state, &w);
		/* The model refuses sums that wrap, and changes nothing then. */
		FUZZ_CHECK(err == 0 || err == -EOVERFLOW);
	}
	profile__set_runq_known(p, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new(), *back = profile__new();
	struct timeline *t = timeline__new();
	struct chrome_trace_stats cst;
	struct parse_stats st;
	struct fuzz_out out;
	uint8_t *pb = NULL;
	size_t pb_len = 0;
	FILE *f;
	int err;

	FUZZ_CHECK(p && back && t);
	f = fuzz_open(data, size);
	err = timeline__parse(f, p, t, &st);
	fclose(f);
	if (err)
		goto cleanup;
	add_rows(p, t);
	fuzz_check_profile(p);

	err = pprof__encode(p, NULL, &pb, &pb_len);
	FUZZ_CHECK(err == 0 || err == -EOVERFLOW);
	FUZZ_CHECK(!err == !!pb);
	free(pb);

	fuzz_out_open(&out);
	FUZZ_CHECK(speedscope__write(out.f, p, NULL) == 0);
	fuzz_out_close(&out);
	FUZZ_CHECK(fuzz_json_valid(out.buf, out.len));
	free(out.buf);

	fuzz_out_open(&out);
	FUZZ_CHECK(chrome_trace__write_stats(out.f, p, t, &cst) == 0);
	fuzz_out_close(&out);
	FUZZ_CHECK(fuzz_json_valid(out.buf, out.len));
	FUZZ_CHECK(cst.events + cst.dropped == timeline__nr(t));
	FUZZ_CHECK(cst.clipped <= cst.events);
	free(out.buf);

	fuzz_out_open(&out);
	FUZZ_CHECK(folded__write(out.f, p) == 0);
	fuzz_out_close(&out);
	f = fuzz_open((const uint8_t *)out.buf, out.len);
	err = folded__parse(f, back, NULL, &st);
	fclose(f);
	free(out.buf);
	/* Microseconds can still overflow once multiplied back to ns, at the very top. */
	FUZZ_CHECK(err == 0 || err == -EOVERFLOW);
	if (!err) {
		FUZZ_CHECK(st.malformed == 0 && st.skipped == 0);
		FUZZ_CHECK(st.records == nr_thread_stacks(p));
	}
cleanup:
	profile__free(p);
	profile__free(back);
	timeline__free(t);
	return 0;
}
