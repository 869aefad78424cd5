// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timeline text (parse/timeline.h), DIR/offcpu.timeline.txt, which
 * `export` reads. Besides the parser contract, the format is ours both ways:
 * what timeline__write() makes of a parsed file must read back as the same
 * intervals on the same frames, and writing that again gives the same bytes.
 */
#include "fuzz.h"
#include "model/timeline.h"
#include "output/timeline.h"
#include "parse/timeline.h"

struct parsed {
	struct profile *p;
	struct timeline *t;
	struct parse_stats st;
	int err;
};

static void parse(struct parsed *r, const char *buf, size_t len)
{
	FILE *f = fuzz_open((const uint8_t *)buf, len);

	r->p = profile__new();
	r->t = timeline__new();
	FUZZ_CHECK(r->p && r->t);
	r->err = timeline__parse(f, r->p, r->t, &r->st);
	fclose(f);
	FUZZ_CHECK(r->err == 0 || r->err == -EPROTO);
	fuzz_check_stats(&r->st, r->err);
	fuzz_check_profile(r->p);
	/* The reader interns frames and stacks only: time lives in the intervals. */
	FUZZ_CHECK(profile__nr_rows(r->p) == 0);
	if (r->err) {
		FUZZ_CHECK(timeline__nr(r->t) == 0);
		return;
	}
	FUZZ_CHECK(r->st.records == timeline__nr(r->t));
	for (size_t i = 0; i < timeline__nr(r->t); i++) {
		const struct timeline_interval *iv = timeline__at(r->t, i);

		FUZZ_CHECK(iv->runq_ns <= iv->dur_ns);
		FUZZ_CHECK(iv->start_ns + iv->dur_ns >= iv->start_ns);
		FUZZ_CHECK((unsigned)iv->state < OFFCPU_STATE__COUNT);
		FUZZ_CHECK(iv->stack < profile__nr_stacks(r->p));
	}
	FUZZ_CHECK(!timeline__at(r->t, timeline__nr(r->t)));
}

static void done(struct parsed *r)
{
	profile__free(r->p);
	timeline__free(r->t);
}

static void write(const struct parsed *r, struct fuzz_out *o)
{
	fuzz_out_open(o);
	FUZZ_CHECK(timeline__write(o->f, r->t, r->p) == 0);
	fuzz_out_close(o);
}

/* Whether stack a of pa and stack b of pb are the same frames. */
static bool same_stack(const struct profile *pa, uint32_t a, const struct profile *pb, uint32_t b)
{
	size_t na, nb;
	const uint32_t *fa = profile__stack_at(pa, a, &na), *fb = profile__stack_at(pb, b, &nb);

	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		const struct profile_frame *x = profile__frame_at(pa, fa[i]);
		const struct profile_frame *y = profile__frame_at(pb, fb[i]);

		if (x->kind != y->kind || strcmp(x->name, y->name))
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct parsed a, b, c;
	struct fuzz_out wa, wb, wc;
	size_t *idx;

	parse(&a, (const char *)data, size);
	if (a.err) {
		done(&a);
		return 0;
	}
	FUZZ_CHECK(timeline__sorted(a.t, &idx) == 0);
	for (size_t i = 1; i < timeline__nr(a.t); i++) {
		const struct timeline_interval *x = timeline__at(a.t, idx[i - 1]);
		const struct timeline_interval *y = timeline__at(a.t, idx[i]);

		FUZZ_CHECK(x->tid < y->tid || (x->tid == y->tid && x->start_ns <= y->start_ns));
	}
	free(idx);

	write(&a, &wa);
	parse(&b, wa.buf, wa.len);
	FUZZ_CHECK(b.err == 0 && b.st.malformed == 0);
	FUZZ_CHECK(timeline__nr(b.t) == timeline__nr(a.t));
	for (size_t i = 0; i < timeline__nr(a.t); i++) {
		struct timeline_interval x = *timeline__at(a.t, i), y = *timeline__at(b.t, i);

		FUZZ_CHECK(same_stack(a.p, x.stack, b.p, y.stack));
		x.stack = y.stack = 0;
		FUZZ_CHECK(!memcmp(&x, &y, sizeof(x)));
	}
	/* b's stack ids are dense in order of first use, so its text is a fixed point. */
	write(&b, &wb);
	parse(&c, wb.buf, wb.len);
	write(&c, &wc);
	FUZZ_CHECK(wb.len == wc.len && !memcmp(wb.buf, wc.buf, wb.len));
	free(wc.buf);
	free(wa.buf);
	free(wb.buf);
	done(&a);
	done(&b);
	done(&c);
	return 0;
}
