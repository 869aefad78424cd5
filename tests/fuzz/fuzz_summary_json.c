// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu.summary.json read back, by both of its readers: parse/summary_json.h
 * (`summarize` keeps what a previous run left, which a user may have edited
 * or truncated) and analyze/diff.h (`offcpu diff base.json new.json`).
 * Whatever it holds, each returns a documented error or data that keeps its
 * promises: bounded strings, a NULL-terminated argv; a diff of a summary with
 * itself changes nothing, and `diff` prints it as valid JSON and as text
 * without control bytes; `report` prints the summary's integrity (loss
 * names, the collector's message) under the same rules.
 */
#include "analyze/diff.h"
#include "fuzz.h"
#include "output/diff_report.h"
#include "output/report.h"
#include "parse/summary_json.h"

#define WIDTH 60

static void diff_report(const struct diff *d, bool json)
{
	struct diff_report_opts o = {.json = json, .width = WIDTH};
	struct fuzz_out out;

	fuzz_out_open(&out);
	FUZZ_CHECK(diff_report__write(out.f, d, NULL, NULL, 0, &o) == 0);
	fuzz_out_close(&out);
	if (json)
		FUZZ_CHECK(fuzz_json_valid(out.buf, out.len));
	else
		fuzz_check_terminal_text(out.buf, out.len, WIDTH, false);
	free(out.buf);
}

/* `offcpu report` shows the integrity a summary holds above the profile's numbers. */
static void check_report(const struct integrity *in, bool json)
{
	struct report_opts o = {.json = json, .width = WIDTH};
	struct profile *p = profile__new();
	struct fuzz_out out;

	FUZZ_CHECK(p);
	fuzz_out_open(&out);
	FUZZ_CHECK(report__write(out.f, p, in, &o) == 0);
	fuzz_out_close(&out);
	if (json)
		FUZZ_CHECK(fuzz_json_valid(out.buf, out.len));
	else
		fuzz_check_terminal_text(out.buf, out.len, WIDTH, false);
	free(out.buf);
	profile__free(p);
}

static void check_diff(const uint8_t *data, size_t size)
{
	struct diff_side *s = NULL;
	char why[256] = "";
	FILE *f = fuzz_open(data, size);
	int err = diff_side__read_summary(f, &s, why, sizeof(why));

	fclose(f);
	FUZZ_CHECK(err == 0 || err == -EINVAL);
	FUZZ_CHECK(!err == !!s);
	if (err) {
		FUZZ_CHECK(why[0]);
		return;
	}
	for (int norm = DIFF_NORM_NONE; norm <= DIFF_NORM_WALL; norm++) {
		struct diff *d = NULL;

		err = diff__new(s, s, norm, &d);
		/* Normalizing by wall time needs it. */
		if (norm == DIFF_NORM_WALL && !diff_side__wall_ns(s)) {
			FUZZ_CHECK(err == -EINVAL && !d);
			continue;
		}
		FUZZ_CHECK(err == 0 && d);
		FUZZ_CHECK(d->off.base == d->off.new && d->count.base == d->count.new);
		for (size_t i = 0; i < d->nr_stacks; i++)
			FUZZ_CHECK(d->stacks[i].off.base == d->stacks[i].off.new);
		for (size_t i = 0; i < d->nr_threads; i++)
			FUZZ_CHECK(d->threads[i].off.base == d->threads[i].off.new);
		diff_report(d, false);
		diff_report(d, true);
		diff__free(d);
	}
	diff_side__free(s);
}

#define BOUNDED(arr) FUZZ_CHECK(memchr((arr), '\0', sizeof(arr)))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct summary_meta m;
	char why[256] = "";
	FILE *f = fuzz_open(data, size);
	int err;

	err = summary_json__read(f, &m, why, sizeof(why));
	fclose(f);
	check_diff(data, size);
	/* -ENOSPC and -EOVERFLOW: more losses than a summary can hold, or their sum wraps. */
	FUZZ_CHECK(err == 0 || err == -EINVAL || err == -EPROTO || err == -ENOSPC ||
		   err == -EOVERFLOW);
	if (err == -EINVAL || err == -EPROTO)
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
	check_report(&m.integrity, false);
	check_report(&m.integrity, true);
	summary_meta__free(&m);
	FUZZ_CHECK(!m.argv);
	summary_meta__free(&m);
	return 0;
}
