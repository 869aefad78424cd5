// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every writer of a profile, fed any profile a capture can hold: the input is
 * a lossless profile text (the one format that reaches every field: any
 * bytes in names and comms, pids, states, weights, run-queue time, thread
 * times). Then:
 *   report (text)         no control byte, no line wider than asked;
 *   report, speedscope    valid JSON, UTF-8 included;
 *   flame graph           drawn + pruned frames = all frames, its total is
 *                         the profile's, valid UTF-8 without control bytes;
 *                         against itself as base, nothing only in the base;
 *   pprof                 encodes whatever fits int64;
 *   folded, stacks dump   read back by our own readers without a malformed
 *                         line, one line (entry) per (thread, stack) (row),
 *                         the stacks dump with the same nanoseconds;
 *   diff                  a profile against itself changes nothing, and its
 *                         text and JSON keep the rules above.
 * fuzz-needs: src/parse/profile_text.c src/output/report.c src/output/flamegraph.c
 * fuzz-needs: src/output/stacks_dump.c src/analyze/diff.c src/output/diff_report.c
 */
#include "analyze/diff.h"
#include "fuzz.h"
#include "output/diff_report.h"
#include "output/flamegraph.h"
#include "output/folded.h"
#include "output/pprof.h"
#include "output/report.h"
#include "output/speedscope.h"
#include "output/stacks_dump.h"
#include "parse/bpftrace.h"
#include "parse/folded.h"
#include "parse/profile_text.h"

#define WIDTH 60

static void check_report(const struct profile *p, bool json, bool color)
{
	struct report_opts o = {.json = json, .color = color, .width = WIDTH};
	struct fuzz_out out;

	fuzz_out_open(&out);
	FUZZ_CHECK(report__write(out.f, p, NULL, &o) == 0);
	fuzz_out_close(&out);
	if (json)
		FUZZ_CHECK(fuzz_json_valid(out.buf, out.len));
	else
		fuzz_check_terminal_text(out.buf, out.len, WIDTH, color);
	free(out.buf);
}

/*
 * The SVG is XML: valid UTF-8 (RFC 3629: no overlong forms, surrogates or
 * code points past U+10FFFF) and no control byte but tab and line ends.
 */
static void check_xml_text(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		unsigned char c = u[i];
		size_t n = c < 0x80		? 1
			   : (c & 0xe0) == 0xc0 ? 2
			   : (c & 0xf0) == 0xe0 ? 3
			   : (c & 0xf8) == 0xf0 ? 4
						: 0;
		uint32_t cp;

		FUZZ_CHECK(n && i + n <= len);
		if (n == 1) {
			FUZZ_CHECK(c >= 0x20 || c == '\t' || c == '\n' || c == '\r');
			i++;
			continue;
		}
		cp = c & (0x7f >> n);
		for (size_t j = 1; j < n; j++) {
			FUZZ_CHECK((u[i + j] & 0xc0) == 0x80);
			cp = cp << 6 | (u[i + j] & 0x3f);
		}
		FUZZ_CHECK(cp >= (n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u));
		FUZZ_CHECK(cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff));
		i += n;
	}
}

static void check_flamegraph(const struct profile *p, const struct profile *base)
{
	const struct profile_totals *tot = profile__totals(p);
	struct flamegraph_stats fst;
	struct flamegraph_opts o = {.stats = &fst, .base = base};
	struct fuzz_out out;

	fuzz_out_open(&out);
	FUZZ_CHECK(flamegraph__write(out.f, p, &o) == 0);
	fuzz_out_close(&out);
	FUZZ_CHECK(fst.drawn + fst.pruned == fst.nodes);
	FUZZ_CHECK(fst.total == (fst.weight_is_count ? tot->all.count : tot->all.off_ns));
	/* Against itself, nothing is only in the base and the totals agree. */
	if (base)
		FUZZ_CHECK(fst.base_total == fst.total && fst.vanished == 0);
	FUZZ_CHECK(out.len > 6 && !memcmp(out.buf + out.len - 7, "</svg>\n", 7));
	check_xml_text(out.buf, out.len);
	free(out.buf);
}

static void check_pprof_speedscope(const struct profile *p)
{
	struct fuzz_out out;
	uint8_t *pb = NULL;
	size_t pb_len;
	int err;

	err = pprof__encode(p, NULL, &pb, &pb_len);
	FUZZ_CHECK(err == 0 || err == -EOVERFLOW);
	free(pb);

	fuzz_out_open(&out);
	FUZZ_CHECK(speedscope__write(out.f, p, NULL) == 0);
	fuzz_out_close(&out);
	FUZZ_CHECK(fuzz_json_valid(out.buf, out.len));
	free(out.buf);
}

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

static void check_read_back(const struct profile *p)
{
	struct profile *back = profile__new();
	struct parse_stats st;
	struct fuzz_out out;
	FILE *f;
	int err;

	FUZZ_CHECK(back);
	fuzz_out_open(&out);
	FUZZ_CHECK(folded__write(out.f, p) == 0);
	fuzz_out_close(&out);
	f = fuzz_open((const uint8_t *)out.buf, out.len);
	err = folded__parse(f, back, NULL, &st);
	fclose(f);
	free(out.buf);
	/* Microseconds times 1000 can pass 64 bits at the very top. */
	FUZZ_CHECK(err == 0 || err == -EOVERFLOW);
	if (!err) {
		FUZZ_CHECK(st.malformed == 0 && st.skipped == 0);
		FUZZ_CHECK(st.records == nr_thread_stacks(p));
	}
	profile__free(back);

	back = profile__new();
	FUZZ_CHECK(back);
	fuzz_out_open(&out);
	FUZZ_CHECK(stacks_dump__write(out.f, p) == 0);
	fuzz_out_close(&out);
	f = fuzz_open((const uint8_t *)out.buf, out.len);
	err = bpftrace__parse(f, back, &st);
	fclose(f);
	free(out.buf);
	FUZZ_CHECK(err == 0);
	FUZZ_CHECK(st.malformed == 0);
	FUZZ_CHECK(st.records == profile__nr_rows(p));
	FUZZ_CHECK(profile__totals(back)->all.off_ns == profile__totals(p)->all.off_ns);
	profile__free(back);
}

static void check_diff_with_itself(const struct profile *p)
{
	struct diff_side *a = diff_side__from_profile(p), *b = diff_side__from_profile(p);
	struct diff_report_opts o = {.width = WIDTH};
	struct diff_gate g;
	struct diff_gate_result res;
	struct fuzz_out out;
	struct diff *d;
	char why[128];

	FUZZ_CHECK(a && b);
	FUZZ_CHECK(diff__new(a, b, DIFF_NORM_TOTAL, &d) == 0);
	FUZZ_CHECK(d->off.base == d->off.new && d->blocked.base == d->blocked.new);
	FUZZ_CHECK(d->runq.base == d->runq.new && d->count.base == d->count.new);
	FUZZ_CHECK(d->off.base == profile__totals(p)->all.off_ns);
	for (size_t i = 0; i < d->nr_stacks; i++)
		FUZZ_CHECK(d->stacks[i].off.base == d->stacks[i].off.new);
	for (size_t i = 0; i < d->nr_threads; i++)
		FUZZ_CHECK(d->threads[i].off.base == d->threads[i].off.new);
	FUZZ_CHECK(diff_gate__parse("off>+0%", &g, why, sizeof(why)) == 0);
	diff_gate__eval(&g, d, &res);
	FUZZ_CHECK(!res.crossed);

	fuzz_out_open(&out);
	FUZZ_CHECK(diff_report__write(out.f, d, &g, &res, 1, &o) == 0);
	fuzz_out_close(&out);
	fuzz_check_terminal_text(out.buf, out.len, WIDTH, false);
	free(out.buf);
	o.json = true;
	fuzz_out_open(&out);
	FUZZ_CHECK(diff_report__write(out.f, d, &g, &res, 1, &o) == 0);
	fuzz_out_close(&out);
	FUZZ_CHECK(fuzz_json_valid(out.buf, out.len));
	free(out.buf);

	diff_gate__free(&g);
	diff__free(d);
	diff_side__free(a);
	diff_side__free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new();
	struct parse_stats st;
	FILE *f;
	int err;

	FUZZ_CHECK(p);
	f = fuzz_open(data, size);
	err = profile_text__parse(f, p, &st);
	fclose(f);
	/* A cut file (-EBADMSG) still leaves a valid profile of what was read: draw it too. */
	if (err == 0 || err == -EOVERFLOW || err == -EBADMSG) {
		fuzz_check_profile(p);
		check_report(p, false, false);
		check_report(p, false, true);
		check_report(p, true, false);
		check_flamegraph(p, NULL);
		check_flamegraph(p, p);
		check_pprof_speedscope(p);
		check_read_back(p);
		check_diff_with_itself(p);
	}
	profile__free(p);
	return 0;
}
