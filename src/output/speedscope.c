// SPDX-License-Identifier: GPL-2.0-only
/*
 * speedscope writer. Rows are bucketed by thread (a counting sort on the
 * thread's rank) so each per-thread profile is one pass over its own rows,
 * whatever the number of threads. Strings are escaped by util/json_writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/speedscope.h"
#include "util/json_writer.h"

/* Invalid UTF-8 becomes U+FFFD, so the output stays valid JSON whatever the names. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	json_escape(out, s, strlen(s));
	fputc('"', out);
}

struct thread_rank {
	uint32_t thread;
	uint64_t weight;
	size_t nrows;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct thread_rank *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static uint64_t row_weight(const struct profile_row *r, bool by_count)
{
	return by_count ? r->w.count : r->w.off_ns;
}

static int write_frames(FILE *out, const struct profile *p)
{
	size_t nr = profile__nr_frames(p);

	fputs("\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < nr; i++) {
		const struct profile_frame *f = profile__frame_at(p, (uint32_t)i);

		if (!f)
			return -EINVAL;
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		if (f->kind == FRAME_INLINE) {
			/* speedscope has no inline flag: the name says it. */
			fputc('"', out);
			json_escape(out, f->name, strlen(f->name));
			fputs(" (inlined)\"", out);
		} else {
			json_str(out, f->name);
		}
		if (f->kind == FRAME_KERNEL)
			fputs(",\"file\":\"[kernel.kallsyms]\"", out);
		fputc('}', out);
	}
	fputs("]},\n", out);
	return 0;
}

static int write_profile(FILE *out, const struct profile *p, const struct thread_rank *tr,
			 const size_t *rows, bool by_count)
{
	const struct profile_thread *t = profile__thread_at(p, tr->thread);
	char name[160];

	if (!t)
		return -EINVAL;
	if (t->pid || t->tid)
		snprintf(name, sizeof(name), "%s pid %d tid %d", t->comm, t->pid, t->tid);
	else
		snprintf(name, sizeof(name), "%s", t->comm);
	fputs("{\"type\":\"sampled\",\"name\":", out);
	json_str(out, name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
		by_count ? "none" : "nanoseconds", tr->weight);
	for (size_t i = 0; i < tr->nrows; i++) {
		const struct profile_row *r = profile__row_at(p, rows[i]);
		size_t n;
		const uint32_t *fr = profile__stack_at(p, r->stack, &n);

		if (!fr && n)
			return -EINVAL;
		fputs(i ? ",\n[" : "\n[", out);
		for (size_t j = 0; j < n; j++)
			fprintf(out, j ? ",%" PRIu32 : "%" PRIu32, fr[j]);
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (size_t i = 0; i < tr->nrows; i++)
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64,
			row_weight(profile__row_at(p, rows[i]), by_count));
	fputs("]}", out);
	return 0;
}

int speedscope__write(FILE *out, const struct profile *p, const struct speedscope_opts *opts)
{
	const struct profile_totals *tot = profile__totals(p);
	size_t nthreads = profile__nr_threads(p), nrows = profile__nr_rows(p);
	struct thread_rank *tr = NULL;
	size_t *rank_of = NULL, *start = NULL, *rows = NULL;
	bool by_count = !tot->all.off_ns && tot->all.count;
	int err = 0;

	tr = calloc(nthreads + 1, sizeof(*tr));
	rank_of = calloc(nthreads + 1, sizeof(*rank_of));
	start = calloc(nthreads + 2, sizeof(*start));
	rows = calloc(nrows + 1, sizeof(*rows));
	if (!tr || !rank_of || !start || !rows) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < nthreads; i++)
		tr[i].thread = (uint32_t)i;
	for (size_t i = 0; i < nrows; i++) {
		const struct profile_row *r = profile__row_at(p, i);

		if (r->thread >= nthreads) {
			err = -EINVAL;
			goto cleanup;
		}
		tr[r->thread].weight += row_weight(r, by_count);
		tr[r->thread].nrows++;
	}
	qsort(tr, nthreads, sizeof(*tr), cmp_rank);
	for (size_t i = 0; i < nthreads; i++) {
		rank_of[tr[i].thread] = i;
		start[i + 1] = start[i] + tr[i].nrows;
	}
	/* Rows keep insertion order within a thread: a stable counting sort. */
	for (size_t i = 0; i < nrows; i++)
		rows[start[rank_of[profile__row_at(p, i)->thread]]++] = i;
	for (size_t i = nthreads; i > 0; i--)
		start[i] = start[i - 1];
	start[0] = 0;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"name\":",
	      out);
	json_str(out, opts && opts->name ? opts->name : "offcpu");
	fputs(",\"exporter\":", out);
	json_str(out, opts && opts->exporter ? opts->exporter : "offcpu");
	fputs(",\"activeProfileIndex\":0,\n", out);
	err = write_frames(out, p);
	if (err)
		goto cleanup;
	fputs("\"profiles\":[", out);
	for (size_t i = 0, first = 1; i < nthreads; i++) {
		if (!tr[i].nrows)
			continue;
		fputs(first ? "\n" : ",\n", out);
		first = 0;
		err = write_profile(out, p, &tr[i], rows + start[i], by_count);
		if (err)
			goto cleanup;
	}
	fputs("]}\n", out);
	if (fflush(out) || ferror(out))
		err = -EIO;
cleanup:
	free(tr);
	free(rank_of);
	free(start);
	free(rows);
	return err;
}
