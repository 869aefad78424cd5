// SPDX-License-Identifier: GPL-2.0-only
/*
 * Chrome Trace Event writer. Intervals are visited in (tid, start) order from
 * timeline__sorted(), which makes the per-thread overlap check a comparison
 * with the previous event only. Strings are escaped by util/json_writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/chrome_trace.h"
#include "analyze/reasons.h"
#include "util/json_writer.h"

/*
 * THE one place an event takes its name from a reason. "other" says nothing a
 * frame would not say better, so those events fall back to their leaf frame.
 */
static const char *interval_reason(struct reasons *rs, const struct timeline_interval *iv)
{
	enum reason r = reasons__get(rs, iv->stack, iv->state);

	return r == REASON_OTHER ? NULL : reason__name(r);
}

/* Invalid UTF-8 becomes U+FFFD, so the output stays valid JSON whatever the names. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	json_escape(out, s, strlen(s));
	fputc('"', out);
}

static bool has_prefix(const char *s, const char *pre)
{
	return !strncmp(s, pre, strlen(pre));
}

/* Frames that say how a thread left the CPU, not why. */
static bool is_plumbing(const struct profile_frame *f)
{
	static const char *const prefixes[] = {
		"schedule",	      "__schedule",   "io_schedule", "preempt_schedule",
		"finish_task_switch", "__traceiter_", "bpf_",	     "__bpf_",
	};

	if (f->kind != FRAME_KERNEL)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (has_prefix(f->name, prefixes[i]))
			return true;
	return false;
}

/* The leaf-most frame that is not plumbing, else the leaf; NULL for an empty stack. */
static const char *stack_name(const struct profile *p, uint32_t stack)
{
	size_t n;
	const uint32_t *fr = profile__stack_at(p, stack, &n);

	for (size_t i = n; i-- > 0;) {
		const struct profile_frame *f = profile__frame_at(p, fr[i]);

		if (!is_plumbing(f))
			return f->name;
	}
	return n ? profile__frame_at(p, fr[n - 1])->name : NULL;
}

/* s as a quoted JSON string in a malloc'ed buffer; NULL on ENOMEM. */
static char *json_dup(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	json_str(m, s);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The folded form of a stack as a quoted JSON string (malloc'ed); NULL on ENOMEM. */
static char *stack_json(const struct profile *p, uint32_t stack)
{
	size_t n, len = 0;
	const uint32_t *fr = profile__stack_at(p, stack, &n);
	bool seen_kernel = false;
	char *text = NULL, *json;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *f = profile__frame_at(p, fr[i]);

		if (f->kind == FRAME_KERNEL && !seen_kernel && i)
			fputs("-;", m);
		seen_kernel |= f->kind == FRAME_KERNEL;
		fprintf(m, "%s%s%s", f->name, f->kind == FRAME_INLINE ? "_[i]" : "",
			i + 1 < n ? ";" : "");
	}
	if (fclose(m)) {
		free(text);
		return NULL;
	}
	json = json_dup(text);
	free(text);
	return json;
}

/*
 * Many intervals share a stack: its folded text and name are escaped once,
 * on first use, and kept by stack id.
 */
struct stack_cache {
	char **stack; /* quoted JSON of the folded stack */
	char **name;  /* quoted JSON of stack_name(), when there is one */
};

/* Thread ids of the profile sorted by tid, to find a tid's comm. */
struct tid_ix {
	int tid;
	uint32_t thread;
};

static int cmp_tid_ix(const void *a, const void *b)
{
	const struct tid_ix *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static const struct profile_thread *find_tid(const struct profile *p, const struct tid_ix *ix,
					     size_t n, int tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ix[lo].tid == tid ? profile__thread_at(p, ix[lo].thread) : NULL;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static void print_us(FILE *out, const char *key, uint64_t ns)
{
	fprintf(out, ",\"%s\":%" PRIu64 ".%03" PRIu64, key, ns / 1000, ns % 1000);
}

static int write_meta(FILE *out, const struct profile *p, const struct timeline *t,
		      const size_t *order, bool *first)
{
	size_t nthreads = profile__nr_threads(p), nr = timeline__nr(t), npids = 0;
	struct tid_ix *ix = calloc(nthreads + 1, sizeof(*ix));
	int *pids = calloc(nr + 1, sizeof(*pids));
	char fallback[32];
	int err = 0;

	if (!ix || !pids) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < nthreads; i++)
		ix[i] = (struct tid_ix){profile__thread_at(p, (uint32_t)i)->tid, (uint32_t)i};
	qsort(ix, nthreads, sizeof(*ix), cmp_tid_ix);
	for (size_t i = 0; i < nr; i++)
		pids[i] = timeline__at(t, i)->pid;
	qsort(pids, nr, sizeof(*pids), cmp_int);
	for (size_t i = 0; i < nr; i++)
		if (!i || pids[i] != pids[i - 1])
			pids[npids++] = pids[i];

	for (size_t i = 0; i < npids; i++) {
		const struct profile_thread *th = find_tid(p, ix, nthreads, pids[i]);
		const char *name = NULL;

		if (th && th->pid == pids[i] && *th->comm)
			name = th->comm;
		for (size_t j = 0; !name && j < nthreads; j++) {
			th = profile__thread_at(p, (uint32_t)j);
			if (th->pid == pids[i] && *th->comm)
				name = th->comm;
		}
		if (!name) {
			snprintf(fallback, sizeof(fallback), "pid %d", pids[i]);
			name = fallback;
		}
		fprintf(out,
			"%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,"
			"\"args\":{\"name\":",
			*first ? "\n" : ",\n", pids[i], pids[i]);
		*first = false;
		json_str(out, name);
		fputs("}}", out);
	}
	for (size_t i = 0; i < nr; i++) {
		const struct timeline_interval *iv = timeline__at(t, order[i]);
		const struct profile_thread *th;
		const char *name;

		if (i && timeline__at(t, order[i - 1])->tid == iv->tid)
			continue;
		th = find_tid(p, ix, nthreads, iv->tid);
		name = th && *th->comm ? th->comm : NULL;
		if (!name) {
			snprintf(fallback, sizeof(fallback), "tid %d", iv->tid);
			name = fallback;
		}
		fprintf(out,
			"%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
			"\"args\":{\"name\":",
			*first ? "\n" : ",\n", iv->pid, iv->tid);
		*first = false;
		json_str(out, name);
		fputs("}}", out);
	}
cleanup:
	free(ix);
	free(pids);
	return err;
}

int chrome_trace__write_stats(FILE *out, const struct profile *p, const struct timeline *t,
			      struct chrome_trace_stats *st)
{
	struct chrome_trace_stats dummy;
	size_t nr = timeline__nr(t), nstacks = profile__nr_stacks(p), *order = NULL;
	uint64_t base = UINT64_MAX, prev_end = 0;
	struct stack_cache cache = {0};
	struct reasons *rs = NULL;
	bool first = true;
	int err = 0, prev_tid = 0;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < nr; i++) {
		const struct timeline_interval *iv = timeline__at(t, i);

		if (iv->stack >= nstacks)
			return -EINVAL;
		if (iv->start_ns < base)
			base = iv->start_ns;
	}
	if (!nr)
		base = 0;
	err = timeline__sorted(t, &order);
	if (err)
		return err;
	cache.stack = calloc(nstacks + 1, sizeof(*cache.stack));
	cache.name = calloc(nstacks + 1, sizeof(*cache.name));
	rs = reasons__new(p);
	if (!cache.stack || !cache.name || !rs) {
		err = -ENOMEM;
		goto cleanup;
	}

	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	err = write_meta(out, p, t, order, &first);
	for (size_t i = 0; i < nr && !err; i++) {
		const struct timeline_interval *iv = timeline__at(t, order[i]);
		uint64_t start = iv->start_ns, end = iv->start_ns + iv->dur_ns;
		const char *reason = interval_reason(rs, iv), *name;
		bool by_reason = reason && *reason;

		if (i && iv->tid == prev_tid && start < prev_end) {
			if (end <= prev_end) {
				st->dropped++;
				continue;
			}
			st->clipped++;
			start = prev_end;
		}
		prev_tid = iv->tid;
		prev_end = end;

		if (!cache.stack[iv->stack] &&
		    !(cache.stack[iv->stack] = stack_json(p, iv->stack))) {
			err = -ENOMEM;
			break;
		}
		if (!by_reason && !cache.name[iv->stack]) {
			name = stack_name(p, iv->stack);
			if (name && !(cache.name[iv->stack] = json_dup(name))) {
				err = -ENOMEM;
				break;
			}
		}
		fprintf(out, "%s{\"ph\":\"X\",\"cat\":\"offcpu\",\"name\":", first ? "\n" : ",\n");
		first = false;
		if (by_reason)
			json_str(out, reason);
		else if (cache.name[iv->stack])
			fputs(cache.name[iv->stack], out);
		else
			json_str(out, offcpu_state__name(iv->state));
		fprintf(out, ",\"pid\":%d,\"tid\":%d", iv->pid, iv->tid);
		print_us(out, "ts", start - base);
		print_us(out, "dur", end - start);
		fprintf(out,
			",\"args\":{\"state\":\"%s\",\"off_ns\":%" PRIu64 ",\"runq_ns\":%" PRIu64
			",\"waker_tid\":%d,\"stack\":%s}}",
			offcpu_state__name(iv->state), iv->dur_ns, iv->runq_ns, iv->waker_tid,
			cache.stack[iv->stack]);
		st->events++;
	}
	if (err)
		goto cleanup;
	fprintf(out,
		"\n],\"otherData\":{\"generator\":\"offcpu\",\"monotonic_base_ns\":%" PRIu64
		",\"intervals\":%zu,\"overlaps_clipped\":%zu,\"overlaps_dropped\":%zu}}\n",
		base, nr, st->clipped, st->dropped);
	if (fflush(out) || ferror(out))
		err = -EIO;
cleanup:
	for (size_t i = 0; i < nstacks && cache.stack; i++) {
		free(cache.stack[i]);
		free(cache.name ? cache.name[i] : NULL);
	}
	free(cache.stack);
	free(cache.name);
	free(order);
	reasons__free(rs);
	return err;
}

int chrome_trace__write(FILE *out, const struct profile *p, const struct timeline *t)
{
	return chrome_trace__write_stats(out, p, t, NULL);
}
