/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every libFuzzer harness shares: input as a FILE *, and the invariants
 * a profile and a parser's stats must keep whatever the input was. A broken
 * invariant aborts, so libFuzzer saves the input like any crash.
 *
 * A harness is one file, tests/fuzz/fuzz_NAME.c, defining
 * LLVMFuzzerTestOneInput(); mk/fuzz.mk builds it with
 * -fsanitize=fuzzer,address,undefined against the project's sources.
 */
#ifndef OFFCPU_TESTS_FUZZ_H
#define OFFCPU_TESTS_FUZZ_H

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "parse/parse.h"

#define FUZZ_CHECK(cond)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
				__LINE__);                                                 \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* The input as a read-only stream; fmemopen() refuses a zero-sized buffer. */
static inline FILE *fuzz_open(const uint8_t *data, size_t size)
{
	FILE *f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");

	FUZZ_CHECK(f);
	return f;
}

/* A growing in-memory output stream (open_memstream); free *buf after fclose. */
struct fuzz_out {
	FILE *f;
	char *buf;
	size_t len;
};

static inline void fuzz_out_open(struct fuzz_out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	FUZZ_CHECK(o->f);
}

/* Close the stream; o->buf then holds o->len bytes (NUL-terminated). */
static inline void fuzz_out_close(struct fuzz_out *o)
{
	FUZZ_CHECK(fclose(o->f) == 0);
	o->f = NULL;
}

static inline bool weight_eq(const struct profile_weight *a, const struct profile_weight *b)
{
	return a->count == b->count && a->off_ns == b->off_ns && a->runq_ns == b->runq_ns;
}

/* Sums that may wrap here only if the profile let a total wrap, which it must not. */
static inline void weight_sum(struct profile_weight *a, const struct profile_weight *b)
{
	FUZZ_CHECK(a->count + b->count >= a->count);
	FUZZ_CHECK(a->off_ns + b->off_ns >= a->off_ns);
	FUZZ_CHECK(a->runq_ns + b->runq_ns >= a->runq_ns);
	a->count += b->count;
	a->off_ns += b->off_ns;
	a->runq_ns += b->runq_ns;
}

/*
 * What profile.h promises whatever was added: every id a row or stack names
 * exists, runq_ns <= off_ns, the totals are the sums of the rows (overall and
 * per state), names are non-empty C strings, and the writers' aggregations
 * add up to the same totals.
 */
static inline void fuzz_check_profile(const struct profile *p)
{
	size_t nf = profile__nr_frames(p), ns = profile__nr_stacks(p);
	size_t nt = profile__nr_threads(p), nr = profile__nr_rows(p);
	const struct profile_totals *tot = profile__totals(p);
	struct profile_totals sum = {0};
	struct profile_stack_sum *ss;
	struct profile_thread_sum *ts;
	struct profile_weight w;
	size_t n;

	for (uint32_t i = 0; i < nf; i++) {
		const struct profile_frame *f = profile__frame_at(p, i);

		FUZZ_CHECK(f && f->name && f->name[0]);
		FUZZ_CHECK((unsigned)f->kind < FRAME__COUNT);
	}
	FUZZ_CHECK(!profile__frame_at(p, (uint32_t)nf));
	for (uint32_t i = 0; i < ns; i++) {
		const uint32_t *fr = profile__stack_at(p, i, &n);

		FUZZ_CHECK(fr || !n);
		for (size_t j = 0; j < n; j++)
			FUZZ_CHECK(fr[j] < nf);
	}
	for (uint32_t i = 0; i < nt; i++) {
		const struct profile_thread *t = profile__thread_at(p, i);

		FUZZ_CHECK(t && t->comm);
	}
	for (size_t i = 0; i < nr; i++) {
		const struct profile_row *r = profile__row_at(p, i);

		FUZZ_CHECK(r);
		FUZZ_CHECK(r->thread < nt && r->stack < ns);
		FUZZ_CHECK((unsigned)r->state < OFFCPU_STATE__COUNT);
		FUZZ_CHECK(r->w.runq_ns <= r->w.off_ns);
		weight_sum(&sum.all, &r->w);
		weight_sum(&sum.by_state[r->state], &r->w);
	}
	FUZZ_CHECK(!profile__row_at(p, nr));
	FUZZ_CHECK(weight_eq(&sum.all, &tot->all));
	for (int s = 0; s < OFFCPU_STATE__COUNT; s++)
		FUZZ_CHECK(weight_eq(&sum.by_state[s], &tot->by_state[s]));

	FUZZ_CHECK(profile__sum_by_stack(p, &ss, &n) == 0);
	w = (struct profile_weight){0};
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(ss[i].stack < ns && ss[i].thread < nt);
		FUZZ_CHECK(!i || ss[i - 1].w.off_ns >= ss[i].w.off_ns);
		weight_sum(&w, &ss[i].w);
	}
	FUZZ_CHECK(weight_eq(&w, &tot->all));
	/* The threads of each stack: its top thread first, their weights within its own. */
	{
		struct profile_stack_threads *st = NULL;
		uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));

		FUZZ_CHECK(ids);
		for (size_t i = 0; i < n; i++)
			ids[i] = ss[i].stack;
		FUZZ_CHECK(profile__stack_threads(p, ids, n, 3, &st) == 0);
		for (size_t i = 0; i < n; i++) {
			uint64_t off = 0;

			FUZZ_CHECK(st[i].stack == ss[i].stack);
			FUZZ_CHECK(st[i].nr_procs >= 1 && st[i].nr_procs <= st[i].nr_threads);
			FUZZ_CHECK(st[i].nr_top >= 1 && st[i].nr_top <= 3 &&
				   st[i].nr_top <= st[i].nr_threads);
			FUZZ_CHECK(st[i].top[0].thread == ss[i].thread);
			for (size_t k = 0; k < st[i].nr_top; k++) {
				FUZZ_CHECK(st[i].top[k].thread < nt);
				FUZZ_CHECK(!k || st[i].top[k - 1].w.off_ns >= st[i].top[k].w.off_ns);
				off += st[i].top[k].w.off_ns;
			}
			FUZZ_CHECK(off <= ss[i].w.off_ns);
			FUZZ_CHECK(st[i].nr_top < st[i].nr_threads || off == ss[i].w.off_ns);
		}
		free(st);
		free(ids);
	}
	free(ss);

	FUZZ_CHECK(profile__sum_by_thread(p, &ts, &n) == 0);
	w = (struct profile_weight){0};
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(ts[i].thread < nt);
		FUZZ_CHECK(!i || ts[i - 1].w.off_ns >= ts[i].w.off_ns);
		weight_sum(&w, &ts[i].w);
	}
	FUZZ_CHECK(weight_eq(&w, &tot->all));
	free(ts);
}

/*
 * parse/parse.h: every line is read once and is at most one of a record, a
 * skipped line or a malformed one (multi-line records take several lines);
 * the first malformed line is named when there is one; a fatal error names
 * a line that was read. unread: malformed records a parser may count beyond
 * the lines (profile text: a missing first or end line is one).
 */
static inline void fuzz_check_stats_unread(const struct parse_stats *st, int err, size_t unread)
{
	FUZZ_CHECK(st->records + st->malformed + st->skipped <= st->lines + unread);
	FUZZ_CHECK(!st->malformed == !st->first_malformed_line);
	FUZZ_CHECK(st->first_malformed_line <= st->lines + unread);
	FUZZ_CHECK(memchr(st->first_malformed_reason, '\0', sizeof(st->first_malformed_reason)));
	FUZZ_CHECK(!st->malformed || st->first_malformed_reason[0]);
	FUZZ_CHECK(st->error_line <= st->lines);
	FUZZ_CHECK(memchr(st->error_reason, '\0', sizeof(st->error_reason)));
	if (err == -EOVERFLOW)
		FUZZ_CHECK(st->error_line > 0);
	/* A cut file is an error at a line, with a reason. */
	if (err == -EBADMSG)
		FUZZ_CHECK(st->error_line > 0 && st->error_reason[0]);
	if (!err)
		FUZZ_CHECK(st->error_line == 0 && !st->error_reason[0]);
}

static inline void fuzz_check_stats(const struct parse_stats *st, int err)
{
	fuzz_check_stats_unread(st, err, 0);
}

/*
 * Whether text is one JSON document that a strict reader accepts, UTF-8
 * included (the writers promise valid JSON whatever bytes the names hold).
 */
static inline bool fuzz_json_valid(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;
	bool ok;

	FUZZ_CHECK(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, text, (int)len);
	ok = o && json_tokener_get_error(tok) == json_tokener_success;
	if (ok) {
		/* Only blanks may follow the document. */
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			ok &= text[i] == ' ' || text[i] == '\n' || text[i] == '\t' ||
			      text[i] == '\r';
	}
	if (!ok)
		fprintf(stderr, "not valid JSON: %s\n",
			json_tokener_error_desc(json_tokener_get_error(tok)));
	json_object_put(o);
	json_tokener_free(tok);
	return ok;
}

/*
 * term.h: no byte below 0x20 but the line ends, no DEL, and no line wider
 * than width display columns (UTF-8 continuation bytes take none). With
 * colour, SGR escapes "\e[...m" are allowed and take no columns.
 */
static inline void fuzz_check_terminal_text(const char *s, size_t len, int width, bool color)
{
	int col = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '\n') {
			col = 0;
			continue;
		}
		if (color && c == 0x1b) {
			FUZZ_CHECK(i + 1 < len && s[i + 1] == '[');
			for (i += 2; i < len && s[i] != 'm'; i++)
				FUZZ_CHECK((s[i] >= '0' && s[i] <= '9') || s[i] == ';');
			FUZZ_CHECK(i < len);
			continue;
		}
		FUZZ_CHECK(c >= 0x20 && c != 0x7f);
		if ((c & 0xc0) != 0x80)
			col++;
		FUZZ_CHECK(col <= width);
	}
}

#endif
