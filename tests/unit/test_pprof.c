// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pprof writer, checked three ways: a small decoder of the fields it
 * writes (and nothing else: an unknown field fails), a golden text dump of
 * that decoding, and the real consumer, `go tool pprof`, when installed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <zlib.h>

#include "analyze/budget.h"
#include "analyze/reasons.h"
#include "unit.h"

#include "exports_fixture.h"
#include "output/pprof.h"

#define MAXN 256

struct dlabel {
	uint64_t key, str, num, unit;
	bool has_num;
};
struct dsample {
	uint64_t loc[64];
	size_t nloc;
	int64_t val[4];
	size_t nval;
	struct dlabel label[8];
	size_t nlabel;
};
struct dloc {
	uint64_t id, mapping, func;
	uint64_t funcs[8]; /* every line's function, in order */
	size_t nline;
};
struct dfunc {
	uint64_t id, name, system_name;
};
struct dmap {
	uint64_t id, file, has_functions;
};
struct dvt {
	uint64_t type, unit;
};
struct dprof {
	struct dvt sample_type[4], period_type;
	size_t nsample_type;
	struct dsample sample[MAXN];
	size_t nsample;
	struct dmap mapping[4];
	size_t nmapping;
	struct dloc loc[MAXN];
	size_t nloc;
	struct dfunc func[MAXN];
	size_t nfunc;
	char *str[MAXN];
	size_t nstr;
	int64_t time_nanos, duration_nanos, period;
	uint64_t comment[4];
	size_t ncomment;
	uint64_t default_sample_type;
	char err[128];
};

struct rd {
	const uint8_t *p, *end;
};

static bool rd_varint(struct rd *r, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return false;
		*v |= (uint64_t)(*r->p & 0x7f) << shift;
		if (!(*r->p++ & 0x80))
			return true;
	}
	return false;
}

/* Next field: a varint value in *v, or a length-delimited body in *sub. */
static bool rd_field(struct rd *r, int *field, int *wire, uint64_t *v, struct rd *sub)
{
	uint64_t key;

	if (!rd_varint(r, &key))
		return false;
	*field = (int)(key >> 3);
	*wire = (int)(key & 7);
	if (*wire == 0)
		return rd_varint(r, v);
	if (*wire != 2 || !rd_varint(r, v) || *v > (uint64_t)(r->end - r->p))
		return false;
	sub->p = r->p;
	sub->end = r->p + *v;
	r->p += *v;
	return true;
}

#define BAD(d, ...)                                                \
	do {                                                       \
		snprintf((d)->err, sizeof((d)->err), __VA_ARGS__); \
		return false;                                      \
	} while (0)

/* Repeated varints, packed (wire 2) or not (wire 0). */
static bool rd_repeated(struct dprof *d, int wire, uint64_t v, struct rd *sub, uint64_t *out,
			size_t *n, size_t max)
{
	if (wire == 0) {
		if (*n >= max)
			BAD(d, "too many repeated values");
		out[(*n)++] = v;
		return true;
	}
	while (sub->p < sub->end) {
		if (*n >= max || !rd_varint(sub, &out[*n]))
			BAD(d, "bad packed values");
		(*n)++;
	}
	return true;
}

static bool dec_vt(struct dprof *d, struct rd r, struct dvt *vt)
{
	int f, w;
	uint64_t v;
	struct rd sub;

	while (r.p < r.end) {
		if (!rd_field(&r, &f, &w, &v, &sub) || w)
			BAD(d, "bad ValueType");
		if (f == 1)
			vt->type = v;
		else if (f == 2)
			vt->unit = v;
		else
			BAD(d, "unknown ValueType field %d", f);
	}
	return true;
}

static bool dec_sample(struct dprof *d, struct rd r, struct dsample *s)
{
	int f, w;
	uint64_t v, vals[4];
	struct rd sub;

	while (r.p < r.end) {
		if (!rd_field(&r, &f, &w, &v, &sub))
			BAD(d, "bad Sample");
		if (f == 1) {
			if (!rd_repeated(d, w, v, &sub, s->loc, &s->nloc, 64))
				return false;
		} else if (f == 2) {
			size_t n = s->nval;

			if (!rd_repeated(d, w, v, &sub, vals, &n, 4))
				return false;
			for (; s->nval < n; s->nval++)
				s->val[s->nval] = (int64_t)vals[s->nval];
		} else if (f == 3 && w == 2) {
			struct dlabel *l = &s->label[s->nlabel];
			struct rd lr = sub;

			if (s->nlabel >= 8)
				BAD(d, "too many labels");
			s->nlabel++;
			while (lr.p < lr.end) {
				struct rd unused;

				if (!rd_field(&lr, &f, &w, &v, &unused) || w)
					BAD(d, "bad Label");
				if (f == 1)
					l->key = v;
				else if (f == 2)
					l->str = v;
				else if (f == 3)
					l->num = v, l->has_num = true;
				else if (f == 4)
					l->unit = v;
				else
					BAD(d, "unknown Label field %d", f);
			}
		} else {
			BAD(d, "unknown Sample field %d", f);
		}
	}
	return true;
}

static bool dec_simple(struct dprof *d, struct rd r, uint64_t *fields, int nfields,
		       const char *what)
{
	int f, w;
	uint64_t v;
	struct rd sub;

	while (r.p < r.end) {
		if (!rd_field(&r, &f, &w, &v, &sub) || w)
			BAD(d, "bad %s", what);
		if (f < 1 || f > nfields)
			BAD(d, "unknown %s field %d", what, f);
		fields[f - 1] = v;
	}
	return true;
}

static bool dec_loc(struct dprof *d, struct rd r, struct dloc *l)
{
	int f, w;
	uint64_t v, line[1];
	struct rd sub;

	while (r.p < r.end) {
		if (!rd_field(&r, &f, &w, &v, &sub))
			BAD(d, "bad Location");
		if (f == 1 && !w)
			l->id = v;
		else if (f == 2 && !w)
			l->mapping = v;
		else if (f == 4 && w == 2) {
			line[0] = 0;
			if (!dec_simple(d, sub, line, 1, "Line"))
				return false;
			l->func = line[0];
			if (l->nline < 8)
				l->funcs[l->nline] = line[0];
			l->nline++;
		} else
			BAD(d, "unknown Location field %d", f);
	}
	return true;
}

static bool decode(const uint8_t *buf, size_t len, struct dprof *d)
{
	struct rd r = {buf, buf + len}, sub;
	int f, w;
	uint64_t v;

	memset(d, 0, sizeof(*d));
	while (r.p < r.end) {
		if (!rd_field(&r, &f, &w, &v, &sub))
			BAD(d, "bad Profile field");
		switch (f) {
		case 1:
			if (d->nsample_type >= 4 ||
			    !dec_vt(d, sub, &d->sample_type[d->nsample_type++]))
				return false;
			break;
		case 2:
			if (d->nsample >= MAXN || !dec_sample(d, sub, &d->sample[d->nsample++]))
				return false;
			break;
		case 3: {
			uint64_t m[10] = {0};

			if (d->nmapping >= 4 || !dec_simple(d, sub, m, 10, "Mapping"))
				return false;
			if (m[1] || m[2] || m[3] || m[5] || m[7] || m[8] || m[9])
				BAD(d, "mapping field the writer does not set");
			d->mapping[d->nmapping++] = (struct dmap){m[0], m[4], m[6]};
			break;
		}
		case 4:
			if (d->nloc >= MAXN || !dec_loc(d, sub, &d->loc[d->nloc++]))
				return false;
			break;
		case 5: {
			uint64_t fn[3] = {0};

			if (d->nfunc >= MAXN || !dec_simple(d, sub, fn, 3, "Function"))
				return false;
			d->func[d->nfunc++] = (struct dfunc){fn[0], fn[1], fn[2]};
			break;
		}
		case 6:
			if (w != 2 || d->nstr >= MAXN)
				BAD(d, "bad string");
			d->str[d->nstr] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
			d->nstr++;
			break;
		case 9:
			d->time_nanos = (int64_t)v;
			break;
		case 10:
			d->duration_nanos = (int64_t)v;
			break;
		case 11:
			if (!dec_vt(d, sub, &d->period_type))
				return false;
			break;
		case 12:
			d->period = (int64_t)v;
			break;
		case 13:
			if (!rd_repeated(d, w, v, &sub, d->comment, &d->ncomment, 4))
				return false;
			break;
		case 14:
			d->default_sample_type = v;
			break;
		default:
			BAD(d, "unknown Profile field %d", f);
		}
	}
	return true;
}

static void dprof_free(struct dprof *d)
{
	for (size_t i = 0; i < d->nstr; i++)
		free(d->str[i]);
}

static const char *S(const struct dprof *d, uint64_t i)
{
	return i < d->nstr ? d->str[i] : "<bad string index>";
}

static const struct dloc *find_loc(const struct dprof *d, uint64_t id)
{
	for (size_t i = 0; i < d->nloc; i++)
		if (d->loc[i].id == id)
			return &d->loc[i];
	return NULL;
}

static const struct dfunc *find_func(const struct dprof *d, uint64_t id)
{
	for (size_t i = 0; i < d->nfunc; i++)
		if (d->func[i].id == id)
			return &d->func[i];
	return NULL;
}

static const char *loc_name(const struct dprof *d, uint64_t loc)
{
	const struct dloc *l = find_loc(d, loc);
	const struct dfunc *f = l ? find_func(d, l->func) : NULL;

	return f ? S(d, f->name) : "<dangling>";
}

/* Same as above, as text: what the golden file holds. */
static void dump(FILE *out, const struct dprof *d)
{
	for (size_t i = 0; i < d->nsample_type; i++)
		fprintf(out, "sample_type %s/%s\n", S(d, d->sample_type[i].type),
			S(d, d->sample_type[i].unit));
	fprintf(out, "default_sample_type %s\n", S(d, d->default_sample_type));
	fprintf(out, "period_type %s/%s period %" PRId64 "\n", S(d, d->period_type.type),
		S(d, d->period_type.unit), d->period);
	fprintf(out, "time_nanos %" PRId64 " duration_nanos %" PRId64 "\n", d->time_nanos,
		d->duration_nanos);
	for (size_t i = 0; i < d->ncomment; i++)
		fprintf(out, "comment %s\n", S(d, d->comment[i]));
	for (size_t i = 0; i < d->nmapping; i++)
		fprintf(out, "mapping %" PRIu64 " %s has_functions=%" PRIu64 "\n", d->mapping[i].id,
			S(d, d->mapping[i].file), d->mapping[i].has_functions);
	for (size_t i = 0; i < d->nfunc; i++)
		fprintf(out, "function %" PRIu64 " %s system_name=%s\n", d->func[i].id,
			S(d, d->func[i].name), S(d, d->func[i].system_name));
	for (size_t i = 0; i < d->nloc; i++)
		fprintf(out,
			"location %" PRIu64 " mapping %" PRIu64 " function %" PRIu64 " lines %zu\n",
			d->loc[i].id, d->loc[i].mapping, d->loc[i].func, d->loc[i].nline);
	for (size_t i = 0; i < d->nsample; i++) {
		const struct dsample *s = &d->sample[i];

		fprintf(out, "sample");
		for (size_t j = 0; j < s->nval; j++)
			fprintf(out, " %" PRId64, s->val[j]);
		fprintf(out, " |");
		for (size_t j = 0; j < s->nlabel; j++) {
			const struct dlabel *l = &s->label[j];

			if (l->has_num)
				fprintf(out, " %s=%" PRId64 "%s%s", S(d, l->key), (int64_t)l->num,
					l->unit ? " " : "", l->unit ? S(d, l->unit) : "");
			else
				fprintf(out, " %s=%s", S(d, l->key), S(d, l->str));
		}
		fprintf(out, " |");
		for (size_t j = 0; j < s->nloc; j++)
			fprintf(out, " %s", loc_name(d, s->loc[j]));
		fprintf(out, "\n");
	}
	fprintf(out, "strings %zu first \"%s\"\n", d->nstr, d->nstr ? d->str[0] : "(none)");
}

static int encode_fixture(struct profile *p, const struct pprof_opts *o, struct dprof *d)
{
	uint8_t *buf;
	size_t len;
	int err = pprof__encode(p, o, &buf, &len);

	if (err)
		return err;
	err = decode(buf, len, d) ? 0 : -EBADMSG;
	free(buf);
	return err;
}

static const struct dlabel *label(const struct dprof *d, const struct dsample *s, const char *key)
{
	for (size_t i = 0; i < s->nlabel; i++)
		if (!strcmp(S(d, s->label[i].key), key))
			return &s->label[i];
	return NULL;
}

TEST(pprof_decodes_to_golden)
{
	struct profile *p = fixture_profile();
	struct pprof_opts o = {.time_nanos = 1700000000000000000,
			       .duration_nanos = 2000000000,
			       .comment = "offcpu test"};
	struct dprof *d = calloc(1, sizeof(*d));
	char *text = NULL;
	size_t len;
	const char *why;
	FILE *f;

	CHECK(p && d);
	CHECK_INT(encode_fixture(p, &o, d), 0);
	f = open_memstream(&text, &len);
	dump(f, d);
	fclose(f);
	why = fixture_golden("pprof_small.txt", text);
	if (why)
		UNIT_FAIL("%s", why);
	free(text);
	dprof_free(d);
	free(d);
	profile__free(p);
}

TEST(pprof_header_fields_follow_the_contract)
{
	struct profile *p = fixture_profile();
	struct dprof *d = calloc(1, sizeof(*d));

	CHECK(p && d);
	CHECK_INT(encode_fixture(p, NULL, d), 0);
	if (d->err[0])
		UNIT_FAIL("%s", d->err);
	CHECK(d->nstr > 0);
	CHECK_STR(d->str[0], "");
	CHECK_INT(d->nsample_type, 2);
	CHECK_STR(S(d, d->sample_type[0].type), "events");
	CHECK_STR(S(d, d->sample_type[0].unit), "count");
	CHECK_STR(S(d, d->sample_type[1].type), "off_cpu");
	CHECK_STR(S(d, d->sample_type[1].unit), "nanoseconds");
	CHECK_STR(S(d, d->default_sample_type), "off_cpu");
	CHECK_STR(S(d, d->period_type.type), "off_cpu");
	CHECK_STR(S(d, d->period_type.unit), "nanoseconds");
	CHECK_INT(d->period, 1);
	/* Left out when not given. */
	CHECK_INT(d->time_nanos, 0);
	CHECK_INT(d->ncomment, 0);
	CHECK_INT(d->nmapping, 2);
	CHECK_STR(S(d, d->mapping[0].file), "[user]");
	CHECK_STR(S(d, d->mapping[1].file), "[kernel.kallsyms]");
	CHECK_INT(d->mapping[0].has_functions, 1);
	CHECK_INT(d->mapping[1].has_functions, 1);
	/* No string twice: the table is interned. */
	for (size_t i = 0; i < d->nstr; i++)
		for (size_t j = i + 1; j < d->nstr; j++)
			if (!strcmp(d->str[i], d->str[j]))
				UNIT_FAIL("string \"%s\" at %zu and %zu", d->str[i], i, j);
	dprof_free(d);
	free(d);
	profile__free(p);
}

TEST(pprof_samples_carry_rows_leaf_first_with_labels)
{
	struct profile *p = fixture_profile();
	struct dprof *d = calloc(1, sizeof(*d));
	uint64_t count = 0, off = 0, by_reason[REASON__COUNT] = {0};
	struct budget *b;
	size_t k = 0;

	CHECK(p && d);
	CHECK_INT(encode_fixture(p, NULL, d), 0);
	for (size_t i = 0; i < profile__nr_rows(p); i++) {
		const struct profile_row *r = profile__row_at(p, i);
		const struct profile_thread *t = profile__thread_at(p, r->thread);
		enum reason why = reasons__classify(p, r->stack, r->state);
		/* A blocked row's run-queue part is a sample of its own, reason runqueue. */
		bool split = why != REASON_RUNQUEUE && r->w.runq_ns;
		size_t n;
		const uint32_t *fr = profile__stack_at(p, r->stack, &n);

		for (int part = 0; part <= (int)split; part++, k++) {
			const struct dsample *s = &d->sample[k];
			uint64_t want = !split ? r->w.off_ns
					: part ? r->w.runq_ns
					       : r->w.off_ns - r->w.runq_ns;
			enum reason lr;

			CHECK(k < d->nsample);
			CHECK_INT(s->nval, 2);
			CHECK_U64(s->val[0], part ? 0 : r->w.count);
			CHECK_U64(s->val[1], want);
			count += (uint64_t)s->val[0];
			off += (uint64_t)s->val[1];
			CHECK_INT(s->nloc, n);
			for (size_t j = 0; j < n; j++) {
				const struct dloc *l = find_loc(d, s->loc[j]);
				const struct profile_frame *pf =
					profile__frame_at(p, fr[n - 1 - j]);

				CHECK(l);
				CHECK_STR(loc_name(d, s->loc[j]), pf->name);
				CHECK_INT(l->mapping, pf->kind == FRAME_KERNEL ? 2 : 1);
			}
			CHECK_STR(S(d, label(d, s, "comm")->str), t->comm);
			CHECK_STR(S(d, label(d, s, "state")->str), offcpu_state__name(r->state));
			CHECK_INT(label(d, s, "pid")->num, t->pid);
			CHECK_INT(label(d, s, "tid")->num, t->tid);
			CHECK_U64(label(d, s, "runq_ns")->num, r->w.runq_ns);
			CHECK_STR(S(d, label(d, s, "runq_ns")->unit), "nanoseconds");
			CHECK_INT(reason__parse(S(d, label(d, s, "reason")->str), &lr), 0);
			CHECK_INT(lr, part ? REASON_RUNQUEUE : why);
			by_reason[lr] += (uint64_t)s->val[1];
		}
	}
	CHECK_INT(k, d->nsample);
	CHECK_U64(count, FIXTURE_TOTAL_COUNT);
	CHECK_U64(off, FIXTURE_TOTAL_NS);
	/* The reason labels sum as the report's reasons do. */
	b = budget__new(p);
	CHECK(b);
	for (int r = 0; r < REASON__COUNT; r++)
		CHECK_U64(by_reason[r],
			  r == REASON_RUNQUEUE ? b->total.rows_runq_ns : b->total.blocked_ns[r]);
	budget__free(b);
	/* One location per frame, one function per distinct name. */
	CHECK_INT(d->nloc, profile__nr_frames(p));
	CHECK_INT(d->nfunc, profile__nr_frames(p));
	dprof_free(d);
	free(d);
	profile__free(p);
}

TEST(pprof_leaves_out_unknown_ids_and_runq)
{
	struct profile *p = profile__new();
	struct dprof *d = calloc(1, sizeof(*d));

	CHECK(p && d);
	/* folded input: no pid/tid, no run-queue split; two kinds, one name */
	CHECK(fixture_row(p, 0, 0, "app", "read;-;read", OFFCPU_STATE_UNKNOWN, 1, 7000, 0) >= 0);
	CHECK_INT(encode_fixture(p, NULL, d), 0);
	CHECK_INT(d->nsample, 1);
	CHECK(label(d, &d->sample[0], "pid") == NULL);
	CHECK(label(d, &d->sample[0], "tid") == NULL);
	CHECK(label(d, &d->sample[0], "runq_ns") == NULL);
	CHECK_STR(S(d, label(d, &d->sample[0], "state")->str), "unknown");
	/* user read and kernel read: two locations, one function */
	CHECK_INT(d->nloc, 2);
	CHECK_INT(d->nfunc, 1);
	CHECK_INT(find_loc(d, d->sample[0].loc[0])->mapping, 2);
	CHECK_INT(find_loc(d, d->sample[0].loc[1])->mapping, 1);
	dprof_free(d);
	free(d);
	profile__free(p);
}

TEST(pprof_counts_only_profile_defaults_to_events)
{
	struct profile *p = profile__new();
	struct dprof *d = calloc(1, sizeof(*d));

	CHECK(p && d);
	CHECK(fixture_row(p, 0, 0, "app", "main;-;schedule", OFFCPU_STATE_UNKNOWN, 42, 0, 0) >= 0);
	CHECK_INT(encode_fixture(p, NULL, d), 0);
	CHECK_STR(S(d, d->default_sample_type), "events");
	CHECK_INT(d->sample[0].val[0], 42);
	dprof_free(d);
	free(d);
	profile__free(p);
}

TEST(pprof_refuses_values_beyond_int64)
{
	struct profile *p = profile__new();
	uint8_t *buf = (uint8_t *)1;
	size_t len = 1;

	CHECK(p);
	CHECK(fixture_row(p, 1, 1, "big", "main", OFFCPU_STATE_SLEEP, 1, (uint64_t)INT64_MAX + 1,
			  0) >= 0);
	CHECK_INT(pprof__encode(p, NULL, &buf, &len), -EOVERFLOW);
	CHECK(buf == NULL);
	CHECK_INT(len, 0);
	profile__free(p);
}

static int write_pprof(FILE *out, const void *arg)
{
	return pprof__write(out, arg, NULL);
}

TEST(pprof_write_is_gzip_of_encode_and_reproducible)
{
	struct profile *p = fixture_profile();
	uint8_t *raw, *gz, *gz2, plain[1 << 16];
	size_t rawlen, gzlen, gzlen2;
	z_stream z = {0};
	int err;

	CHECK(p);
	CHECK_INT(pprof__encode(p, NULL, &raw, &rawlen), 0);
	gz = (uint8_t *)fixture_capture(write_pprof, p, &err, &gzlen);
	CHECK_INT(err, 0);
	gz2 = (uint8_t *)fixture_capture(write_pprof, p, &err, &gzlen2);
	CHECK_INT(err, 0);
	CHECK(gzlen == gzlen2 && !memcmp(gz, gz2, gzlen));
	/* gzip magic, deflate, no name, mtime 0 */
	CHECK(gzlen > 18 && gz[0] == 0x1f && gz[1] == 0x8b && gz[2] == 8);
	CHECK(!gz[4] && !gz[5] && !gz[6] && !gz[7]);
	CHECK_INT(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = plain;
	z.avail_out = sizeof(plain);
	CHECK_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
	CHECK_INT(z.total_out, rawlen);
	CHECK(!memcmp(plain, raw, rawlen));
	inflateEnd(&z);
	free(raw);
	free(gz);
	free(gz2);
	profile__free(p);
}

/* main -> parse (inlined) -> parse_header (inlined) -> read -> schedule */
static struct profile *inline_profile(void)
{
	struct profile *p = profile__new();
	const char *names[] = {"main", "parse", "parse_header", "read", "schedule"};
	const enum frame_kind kinds[] = {FRAME_USER, FRAME_INLINE, FRAME_INLINE, FRAME_USER,
					 FRAME_KERNEL};
	uint32_t fr[5];
	int th, sk, sk2;

	if (!p)
		return NULL;
	for (int i = 0; i < 5; i++)
		fr[i] = profile__frame(p, kinds[i], names[i], strlen(names[i]));
	sk = profile__stack(p, fr, 5);
	/* The same chain in another stack is the same location. */
	sk2 = profile__stack(p, fr, 3);
	th = profile__thread(p, 1, 1, "app");
	profile__add(p, th, sk, OFFCPU_STATE_SLEEP, &(struct profile_weight){1, 3000000, 0});
	profile__add(p, th, sk2, OFFCPU_STATE_SLEEP, &(struct profile_weight){1, 1000000, 0});
	return p;
}

TEST(pprof_inlined_functions_are_lines_of_their_callers_location)
{
	struct profile *p = inline_profile();
	struct dprof *d = calloc(1, sizeof(*d));
	const struct dloc *chain;

	CHECK(p && d);
	CHECK_INT(encode_fixture(p, NULL, d), 0);
	CHECK_INT(d->nsample, 2);
	/* leaf first: schedule, read, then one location for main with its inlines */
	CHECK_INT(d->sample[0].nloc, 3);
	CHECK_STR(loc_name(d, d->sample[0].loc[0]), "schedule");
	CHECK_STR(loc_name(d, d->sample[0].loc[1]), "read");
	CHECK_INT(d->sample[1].nloc, 1);
	CHECK_U64(d->sample[1].loc[0], d->sample[0].loc[2]);
	chain = find_loc(d, d->sample[0].loc[2]);
	CHECK(chain);
	CHECK_INT(chain->nline, 3);
	CHECK_STR(S(d, find_func(d, chain->funcs[0])->name), "parse_header");
	CHECK_STR(S(d, find_func(d, chain->funcs[1])->name), "parse");
	CHECK_STR(S(d, find_func(d, chain->funcs[2])->name), "main");
	CHECK_INT(chain->mapping, 1);
	dprof_free(d);
	free(d);
	profile__free(p);
}

/* Run a shell command, return its stdout (malloc'ed) or NULL. */
static char *run(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	char buf[4096];
	size_t n;

	if (!f || !m)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	fclose(m);
	if (pclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* A line of `-top` output whose last field is name: its flat and cum columns. */
static bool top_row(const char *top, const char *name, char *flat, char *cum)
{
	const char *line = top;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		char l[512], f5[64] = "", f1[32], f2[32], f3[32], f4[32], n[256];
		size_t len = end ? (size_t)(end - line) : strlen(line);

		snprintf(l, sizeof(l), "%.*s", (int)len, line);
		if (sscanf(l, "%31s %31s %31s %31s %63s %255s", f1, f2, f3, f4, f5, n) == 6 &&
		    !strcmp(n, name)) {
			strcpy(flat, f1);
			strcpy(cum, f4);
			return true;
		}
		line = end ? end + 1 : NULL;
	}
	return false;
}

TEST(pprof_go_tool_pprof_reads_totals_and_top_functions)
{
	struct profile *p = fixture_profile();
	char path[512], cmd[1024], flat[32], cum[32], *top, *tags;
	const char *tmp = getenv("TMPDIR");
	FILE *f;

	CHECK(p);
	if (system("command -v go >/dev/null 2>&1"))
		SKIP("go is not installed (Debian: golang-go)");
	snprintf(path, sizeof(path), "%s/offcpu-test-%d.pb.gz", tmp ? tmp : "/tmp", (int)getpid());
	f = fopen(path, "w");
	CHECK(f);
	CHECK_INT(pprof__write(f, p, NULL), 0);
	CHECK_INT(fclose(f), 0);

	snprintf(cmd, sizeof(cmd), "go tool pprof -top -unit=ms -nodecount=100 %s 2>&1", path);
	top = run(cmd);
	CHECK(top);
	/* 20.3 ms in all, all of it ending in __schedule (the leaf), main above 20 ms of it. */
	CHECK_CONTAINS(top, "File: [user]");
	CHECK_CONTAINS(top, "Type: off_cpu");
	CHECK_CONTAINS(top, "100% of 20.30ms total");
	CHECK(top_row(top, "__schedule", flat, cum));
	CHECK_STR(flat, "20.30ms");
	CHECK(top_row(top, "main", flat, cum));
	CHECK_STR(flat, "0");
	CHECK_STR(cum, "20ms");
	CHECK(top_row(top, "futex_wait_queue", flat, cum));
	CHECK_STR(cum, "12ms");
	CHECK(top_row(top, "pipe_read", flat, cum));
	CHECK_STR(cum, "6ms");
	free(top);

	snprintf(cmd, sizeof(cmd), "go tool pprof -top -sample_index=events %s 2>&1", path);
	top = run(cmd);
	CHECK(top);
	CHECK_CONTAINS(top, "100% of 20 total");
	free(top);

	snprintf(cmd, sizeof(cmd), "go tool pprof -top -unit=ms -tagfocus=state=disk %s 2>&1",
		 path);
	top = run(cmd);
	CHECK(top);
	CHECK_CONTAINS(top, "1ms, 4.93% of 20.30ms total");
	CHECK(top_row(top, "pipe_read", flat, cum));
	CHECK_STR(cum, "1ms");
	free(top);

	snprintf(cmd, sizeof(cmd), "go tool pprof -tags %s 2>&1", path);
	tags = run(cmd);
	CHECK(tags);
	CHECK_CONTAINS(tags, "12.3ms (60.59%): worker");
	CHECK_CONTAINS(tags, "300.0us ( 1.48%): preempt");
	CHECK_CONTAINS(tags, "12.3ms (60.59%): 101");
	free(tags);
	unlink(path);
	profile__free(p);
}

TEST(pprof_go_tool_pprof_shows_inlined_functions)
{
	struct profile *p = inline_profile();
	char path[512], cmd[1024], *traces;
	const char *tmp = getenv("TMPDIR");
	FILE *f;

	CHECK(p);
	if (system("command -v go >/dev/null 2>&1"))
		SKIP("go is not installed (Debian: golang-go)");
	snprintf(path, sizeof(path), "%s/offcpu-inline-%d.pb.gz", tmp ? tmp : "/tmp",
		 (int)getpid());
	f = fopen(path, "w");
	CHECK(f);
	CHECK_INT(pprof__write(f, p, NULL), 0);
	CHECK_INT(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "go tool pprof -traces %s 2>&1", path);
	traces = run(cmd);
	unlink(path);
	CHECK(traces);
	CHECK_CONTAINS(traces, "3ms   schedule\n"
			       "             read\n"
			       "             parse_header (inline)\n"
			       "             parse (inline)\n"
			       "             main\n");
	CHECK_CONTAINS(traces, "1ms   parse_header (inline)\n"
			       "             parse (inline)\n"
			       "             main\n");
	free(traces);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
