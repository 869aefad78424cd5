// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inputs the fuzzers (tests/fuzz/) found to break a parser, read from
 * tests/fuzz/regressions/HARNESS/ through fmemopen as the parsers' users do,
 * with the behaviour the fix gives them. Some were undefined behaviour that
 * only the sanitizers see: `make check-asan` runs these under ASan and UBSan.
 */
#include <errno.h>

#include "analyze/diff.h"
#include "parse/timeline.h"
#include "output/diff_report.h"
#include "output/folded.h"
#include "output/pprof.h"
#include "output/report.h"
#include "parse/folded.h"
#include "parse/profile_text.h"
#include "parse/summary_json.h"
#include "parse/bpftrace.h"
#include "symbolize/dwlazy.h"
#include "unit.h"

#define REG "tests/fuzz/regressions/"

/* The saved input as a stream; *buf holds it until the caller frees it. */
static FILE *open_regression(const char *path, char **buf)
{
	*buf = unit_slurp(path);
	return *buf ? unit_memfile(*buf) : NULL;
}

/*
 * "@x[" then a line starting ", ": the key's first element is a stack that
 * printed as nothing. split_key() computed its length as -1 (a pointer
 * overflow in add_stack(), UBSan) instead of 0.
 */
TEST(regression_bpftrace_stack_key_without_frames)
{
	struct profile *p = profile__new();
	struct parse_stats st;
	const struct profile_row *r;
	char *buf;
	FILE *f = open_regression(REG "bpftrace/stack_key_without_frames.txt", &buf);
	size_t n = 1;

	CHECK(p && f);
	CHECK_INT(bpftrace__parse(f, p, &st), 0);
	fclose(f);
	free(buf);
	CHECK_INT(st.records, 1);
	CHECK_INT(st.malformed, 0);
	r = profile__row_at(p, 0);
	CHECK(r);
	CHECK_STR(profile__thread_at(p, r->thread)->comm, "a");
	profile__stack_at(p, r->stack, &n);
	CHECK_INT(n, 0);
	CHECK_U64(r->w.count, 5);
	CHECK_U64(r->w.off_ns, 0);
	profile__free(p);
}

/*
 * A frame name escaped as "%00": names are C strings, so it became an empty
 * name (and a second frame "" of that kind) that writers print as nothing.
 * It is a bad escape now; the interval naming that stack is malformed too.
 */
TEST(regression_timeline_frame_name_nul_escape)
{
	struct profile *p = profile__new();
	struct timeline *t = timeline__new();
	struct parse_stats st;
	char *buf;
	FILE *f = open_regression(REG "timeline/frame_name_nul_escape.txt", &buf);

	CHECK(p && t && f);
	CHECK_INT(timeline__parse(f, p, t, &st), 0);
	fclose(f);
	free(buf);
	CHECK_INT(st.malformed, 2);
	CHECK_INT(st.first_malformed_line, 2);
	CHECK_STR(st.first_malformed_reason, "bad frame name escape");
	CHECK_INT(profile__nr_frames(p), 0);
	CHECK_INT(timeline__nr(t), 0);
	profile__free(p);
	timeline__free(t);
}

/*
 * An interval line whose waker name was interned before the interval was
 * refused (runq above its duration): the next name got id 2 where a timeline
 * written from what was kept gives it 1, so write then read changed the ids.
 */
TEST(regression_timeline_waker_name_of_a_refused_interval)
{
	struct profile *p = profile__new();
	struct timeline *t = timeline__new();
	struct parse_stats st;
	char *buf;
	FILE *f = open_regression(REG "timeline/waker_name_of_a_refused_interval.txt", &buf);

	CHECK(p && t && f);
	CHECK_INT(timeline__parse(f, p, t, &st), 0);
	fclose(f);
	free(buf);
	CHECK_INT(st.malformed, 1);
	CHECK_INT(timeline__nr(t), 1);
	CHECK_INT(timeline__nr_irqs(t), 1);
	CHECK_INT(timeline__at(t, 0)->waker_irq, 1);
	CHECK_STR(timeline__irq_name(t, 1), "softirq:NET_RX");
	profile__free(p);
	timeline__free(t);
}

/*
 * A first row whose stack is empty (a folded line "comm 5", a bpftrace key
 * whose stacks printed as nothing): the pprof encoder copied its empty
 * location list from a NULL buffer, memcpy(dst, NULL, 0), which is undefined
 * (UBSan; found by fuzz_export).
 */
TEST(regression_export_pprof_empty_stack_first_row)
{
	struct profile *p = profile__new();
	struct timeline *t = timeline__new();
	struct profile_weight w = {1, 0, 0};
	struct parse_stats st;
	const struct timeline_interval *iv;
	uint8_t *pb = NULL;
	size_t len = 0;
	char *buf;
	FILE *f = open_regression(REG "export/empty_stack_first_row.txt", &buf);
	int th;

	CHECK(p && t && f);
	CHECK_INT(timeline__parse(f, p, t, &st), 0);
	fclose(f);
	free(buf);
	CHECK_INT(timeline__nr(t), 1);
	iv = timeline__at(t, 0);
	w.off_ns = iv->dur_ns;
	th = profile__thread(p, iv->pid, iv->tid, "x");
	CHECK(th >= 0);
	CHECK_INT(profile__add(p, th, iv->stack, iv->state, &w), 0);
	CHECK_INT(pprof__encode(p, NULL, &pb, &len), 0);
	CHECK(pb && len > 0);
	free(pb);
	profile__free(p);
	timeline__free(t);
}

/*
 * The bpftrace input at path parsed into p (its counts in in), written as
 * folded text into *text (the caller frees it), and that text read back
 * into back (its counts in out): the export's round trip. A failed check
 * here returns to the test with unit_failed_now set.
 */
static void bpftrace_folded_round_trip(const char *path, struct profile *p, struct profile *back,
				       struct parse_stats *in, struct parse_stats *out, char **text)
{
	char *buf;
	size_t len = 0;
	FILE *f = open_regression(path, &buf), *w;

	*text = NULL;
	CHECK(p && back && f);
	CHECK_INT(bpftrace__parse(f, p, in), 0);
	fclose(f);
	free(buf);
	w = open_memstream(text, &len);
	CHECK(w);
	CHECK_INT(folded__write(w, p), 0);
	fclose(w);
	f = unit_memfile(*text);
	CHECK(f);
	CHECK_INT(folded__parse(f, back, NULL, out), 0);
	fclose(f);
}

/*
 * A comm starting with '#' (any process may name itself so; here from a
 * bpftrace dump): the folded export began its line with it, and folded
 * readers, ours first, skipped the line as a comment, time and all (found by
 * fuzz_bpftrace and fuzz_export). The '#' is written as '_' now.
 */
TEST(regression_folded_write_comm_starting_with_hash)
{
	struct profile *p = profile__new(), *back = profile__new();
	struct parse_stats in, out;
	char *text;

	bpftrace_folded_round_trip(REG "bpftrace/comm_starting_with_hash.txt", p, back, &in, &out,
				   &text);
	if (unit_failed_now) {
		free(text);
		return;
	}
	CHECK_INT(in.records, 1);
	CHECK_STR(profile__thread_at(p, 0)->comm, "#sleep");
	CHECK_STR(text, "_sleep;schedule 30\n");
	CHECK_INT(out.records, 1);
	CHECK_INT(out.skipped, 0);
	CHECK_U64(profile__totals(back)->all.off_ns, 30000);
	free(text);
	profile__free(p);
	profile__free(back);
}

/*
 * A (thread, stack) whose time is within 500 ns of 2^64 (a bpftrace value
 * can be anything): the folded export rounded it to the nearest
 * microsecond, 18446744073709552, which no reader can scale back to
 * nanoseconds, and our folded reader refused the file with -EOVERFLOW
 * (found by fuzz_bpftrace). The export rounds down there now.
 */
TEST(regression_folded_write_total_near_2_64)
{
	struct profile *p = profile__new(), *back = profile__new();
	struct parse_stats in, out;
	char *text;

	bpftrace_folded_round_trip(REG "bpftrace/total_near_2_64.txt", p, back, &in, &out, &text);
	if (unit_failed_now) {
		free(text);
		return;
	}
	CHECK_U64(profile__totals(p)->all.off_ns, 18446744073709551515ULL);
	CHECK_STR(text, "sleep;schedule 18446744073709551\n");
	CHECK_INT(out.records, 1);
	CHECK_U64(profile__totals(back)->all.off_ns, 18446744073709551000ULL);
	free(text);
	profile__free(p);
	profile__free(back);
}

/*
 * A frame name holding ';' (JIT names such as Java's "Ljava/lang/String;"
 * do): `diff` joins a stack's names with ';', and its text report split them
 * back into more pieces than the stack has frames, then read the frame
 * kinds past their end (ASan: heap-buffer-overflow; found by fuzz_writers).
 */
TEST(regression_diff_report_frame_name_with_semicolons)
{
	struct profile *p = profile__new();
	struct diff_side *a = NULL, *b = NULL;
	struct diff_report_opts o = {.width = 80};
	struct diff *d = NULL;
	struct parse_stats st;
	char *buf, *text = NULL;
	size_t len = 0;
	FILE *f = open_regression(REG "writers/frame_name_with_semicolons.txt", &buf), *out;

	CHECK(p && f);
	CHECK_INT(profile_text__parse(f, p, &st), 0);
	fclose(f);
	free(buf);
	CHECK_INT(st.malformed, 0);
	CHECK_STR(profile__frame_at(p, 0)->name, "a;b;c");
	a = diff_side__from_profile(p);
	b = diff_side__from_profile(p);
	CHECK(a && b);
	CHECK_INT(diff__new(a, b, DIFF_NORM_NONE, &d), 0);
	CHECK_INT(d->nr_stacks, 1);
	out = open_memstream(&text, &len);
	CHECK(out);
	CHECK_INT(diff_report__write(out, d, NULL, NULL, 0, &o), 0);
	fclose(out);
	CHECK_CONTAINS(text, "kernel:");
	free(text);
	diff__free(d);
	diff_side__free(a);
	diff_side__free(b);
	profile__free(p);
}

/*
 * A frame name in square brackets longer than a report line (an unwind
 * marker naming a long library): the report keeps such names whole, and
 * printed it past the width (found by fuzz_writers). It now wraps.
 */
TEST(regression_report_long_bracketed_frame_name)
{
	struct profile *p = profile__new();
	struct report_opts o = {.width = 60};
	struct parse_stats st;
	char *buf, *text = NULL;
	size_t len = 0;
	int col = 0, widest = 0;
	FILE *f = open_regression(REG "writers/long_bracketed_frame_name.txt", &buf), *out;

	CHECK(p && f);
	CHECK_INT(profile_text__parse(f, p, &st), 0);
	fclose(f);
	free(buf);
	CHECK_INT(st.malformed, 0);
	CHECK(strlen(profile__frame_at(p, 0)->name) > 60);
	out = open_memstream(&text, &len);
	CHECK(out);
	CHECK_INT(report__write(out, p, NULL, &o), 0);
	fclose(out);
	for (const char *s = text; *s; s++) {
		col = *s == '\n' ? 0 : col + ((*s & 0xc0) != 0x80);
		widest = col > widest ? col : widest;
	}
	CHECK(widest <= 60);
	CHECK_CONTAINS(text, "user:   [unwind: no CFI in libsomething-with-a-name-lo\n"
			     "              nger-than-a-line.so.1]\n");
	free(text);
	profile__free(p);
}

/* The same through `offcpu diff a.json b.json`: a summary's top stack with a ';' in a name. */
TEST(regression_diff_summary_frame_name_with_semicolons)
{
	struct diff_side *a = NULL, *b = NULL;
	struct diff_report_opts o = {.width = 80};
	struct diff *d = NULL;
	char *buf, *text = NULL, why[128] = "";
	size_t len = 0;
	FILE *f, *out;

	f = open_regression(REG "summary_json/frame_name_with_semicolons.json", &buf);
	CHECK(f);
	CHECK_INT(diff_side__read_summary(f, &a, why, sizeof(why)), 0);
	rewind(f);
	CHECK_INT(diff_side__read_summary(f, &b, why, sizeof(why)), 0);
	fclose(f);
	free(buf);
	CHECK_INT(diff__new(a, b, DIFF_NORM_NONE, &d), 0);
	CHECK_INT(d->nr_stacks, 1);
	CHECK_STR(d->stacks[0].name, "a;b;c");
	out = open_memstream(&text, &len);
	CHECK(out);
	CHECK_INT(diff_report__write(out, d, NULL, NULL, 0, &o), 0);
	fclose(out);
	CHECK_CONTAINS(text, "kernel:");
	free(text);
	diff__free(d);
	diff_side__free(a);
	diff_side__free(b);
}

/*
 * A loss name longer than a loss keeps (found by fuzz_summary_json): it is
 * kept cut, and found again by its cut form, not looked up as missing.
 */
TEST(regression_summary_loss_name_longer_than_kept)
{
	struct summary_meta *m = calloc(1, sizeof(*m));
	char *buf, why[256] = "";
	FILE *f;

	CHECK(m);
	f = open_regression(REG "summary_json/long_loss_name.json", &buf);
	CHECK(f);
	summary_json__read(f, m, why, sizeof(why));
	fclose(f);
	free(buf);
	summary_meta__free(m);
	free(m);
}

/*
 * A compressed debug file whose second kept section starts past SIZE_MAX / 2
 * once aligned (fuzz_dwlazy): the size check wrapped, the image's layout
 * wrapped with it, and the section names were copied before the image
 * (UBSan: pointer overflow). It is refused.
 */
TEST(regression_dwlazy_section_offset_wraps)
{
	CHECK(!dwlazy__open(REG "dwlazy/section-offset-wraps", 0));
}

int main(void)
{
	return unit_run();
}

/*
 * A compressed debug file whose .debug_aranges is empty (fuzz_dwlazy): the
 * lazy DWARF reader sorted no ranges with qsort(NULL, 0, ...) (UBSan). It
 * opens, and no address has a CU.
 */
TEST(regression_dwlazy_aranges_without_ranges)
{
	struct dwlazy *d = dwlazy__open(REG "dwlazy/aranges-without-ranges", 0);
	Dwarf_Die cu;

	CHECK(d);
	CHECK(!dwlazy__addrdie(d, 0x1140, &cu));
	dwlazy__free(d);
}
