// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "output/folded.h"

static void put_name(FILE *out, const char *s)
{
	for (; *s; s++) {
		char c = *s;

		fputc(c == ';' || c == '\n' || c == '\r' ? '_' : c, out);
	}
}

static void write_stack(FILE *out, const struct profile *p, const char *comm, uint32_t stack)
{
	size_t n = 0;
	const uint32_t *frames = profile__stack_at(p, stack, &n);
	bool has_user = false, has_kernel = false, delimited = false;

	for (size_t i = 0; i < n; i++) {
		enum frame_kind k = profile__frame_at(p, frames[i])->kind;

		has_kernel |= k == FRAME_KERNEL;
		has_user |= k != FRAME_KERNEL;
	}
	/* comm may hold spaces: readers take the value after the last space. */
	if (!comm[0])
		comm = "?";
	/* parse/folded.h takes a line starting '#' for a comment: the time would vanish. */
	if (comm[0] == '#') {
		fputc('_', out);
		comm++;
	}
	put_name(out, comm);
	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *f = profile__frame_at(p, frames[i]);

		if (f->kind == FRAME_KERNEL && has_user && !delimited) {
			fputs(";-", out);
			delimited = true;
		}
		fputc(';', out);
		put_name(out, f->name);
		/* FlameGraph's mark of an inlined function; parse/folded.c reads it back. */
		if (f->kind == FRAME_INLINE)
			fputs("_[i]", out);
	}
}

/* Order rows by (thread, stack), then by position, so states of one pair are adjacent. */
static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct profile_row *ra = profile__row_at(p, ia), *rb = profile__row_at(p, ib);

	if (ra->thread != rb->thread)
		return ra->thread < rb->thread ? -1 : 1;
	if (ra->stack != rb->stack)
		return ra->stack < rb->stack ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

int folded__write(FILE *out, const struct profile *p)
{
	size_t nr = profile__nr_rows(p);
	size_t *idx = malloc((nr ? nr : 1) * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++)
		idx[i] = i;
	qsort_r(idx, nr, sizeof(*idx), row_cmp, (void *)p);
	for (size_t i = 0; i < nr;) {
		const struct profile_row *r = profile__row_at(p, idx[i]);
		uint64_t ns = 0;
		size_t j;

		for (j = i; j < nr; j++) {
			const struct profile_row *o = profile__row_at(p, idx[j]);

			if (o->thread != r->thread || o->stack != r->stack)
				break;
			ns += o->w.off_ns;
		}
		write_stack(out, p, profile__thread_at(p, r->thread)->comm, r->stack);
		/*
		 * Microseconds, to the nearest, except past the largest value a
		 * reader can scale back to nanoseconds (UINT64_MAX / 1000): a
		 * total within 500 ns of 2^64 rounds down, not out of range.
		 */
		fprintf(out, " %" PRIu64 "\n",
			ns / 1000 + (ns % 1000 >= 500 && ns / 1000 < UINT64_MAX / 1000));
		i = j;
	}
	free(idx);
	return ferror(out) ? -EIO : 0;
}
