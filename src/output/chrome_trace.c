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
#include "util/vec.h"

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

/* The profile's threads by tid (n + 1 entries, caller-freed); NULL on ENOMEM. */
static struct tid_ix *tid_index(const struct profile *p)
{
	size_t nthreads = profile__nr_threads(p);
	struct tid_ix *ix = calloc(nthreads + 1, sizeof(*ix));

	if (!ix)
		return NULL;
	for (size_t i = 0; i < nthreads; i++)
		ix[i] = (struct tid_ix){profile__thread_at(p, (uint32_t)i)->tid, (uint32_t)i};
	qsort(ix, nthreads, sizeof(*ix), cmp_tid_ix);
	return ix;
}

static int write_meta(FILE *out, const struct profile *p, const struct timeline *t,
		      const struct tid_ix *ix, const size_t *order, bool *first)
{
	size_t nthreads = profile__nr_threads(p), nr = timeline__nr(t), npids = 0;
	int *pids = calloc(nr + 1, sizeof(*pids));
	char fallback[32];
	int err = 0;

	if (!pids)
		return -ENOMEM;
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
	free(pids);
	return err;
}

/*
 * Wakeups drawn as flows: each interval a known waker ended gets an arrow
 * from a short slice on the waker's track, at the wakeup (the interval's end
 * less its run-queue part), to the interval. Perfetto binds a flow's "s" to
 * the slice open on its track at its time, and an "f" with "bp":"e" to the
 * slice enclosing it, so both ends sit strictly inside their slices.
 * Interrupt wakers get tracks of their own, the threads of a pseudo-process
 * "interrupts"; a waker thread the profile does not know is put under the
 * pseudo-process "other wakers".
 */
#define TRACE_IRQ_PID (1 << 30) /* above any real pid (PID_MAX_LIMIT is 1 << 22) */
#define TRACE_OTHER_PID (TRACE_IRQ_PID + 1)
/* The waker's slice: shorter when the next slice of its track starts sooner. */
#define WAKE_SLICE_NS 1000

struct wake {
	int wpid, wtid; /* the waker's track */
	uint64_t at;	/* the wakeup */
	int pid, tid;	/* the woken interval's track ... */
	uint64_t in;	/* ... and the flow's end there, inside the interval */
	uint32_t irq;	/* the waker's timeline__irq() id; 0: a thread */
};

/* An interval as drawn, in (tid, start) order. */
struct slice {
	int pid, tid;
	uint64_t start, end;
};

struct flows {
	struct wake *w;
	size_t nr, cap;
	struct slice *sl;
	size_t nsl, capsl;
};

static int cmp_wake(const void *a, const void *b)
{
	const struct wake *x = a, *y = b;

	if (x->wpid != y->wpid)
		return x->wpid < y->wpid ? -1 : 1;
	if (x->wtid != y->wtid)
		return x->wtid < y->wtid ? -1 : 1;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The waker's name in an interval's args: the interrupt's, else "COMM TID" or "tid TID". */
static void waker_name(const struct profile *p, const struct timeline *t, const struct tid_ix *ix,
		       const struct timeline_interval *iv, char *buf, size_t len)
{
	const struct profile_thread *th;

	if (iv->waker_irq) {
		snprintf(buf, len, "%s", timeline__irq_name(t, iv->waker_irq));
		return;
	}
	th = find_tid(p, ix, profile__nr_threads(p), iv->waker_tid);
	if (th && *th->comm)
		snprintf(buf, len, "%s %d", th->comm, iv->waker_tid);
	else
		snprintf(buf, len, "tid %d", iv->waker_tid);
}

/* Note the drawn interval [start, end) of iv, and its wakeup when its waker is known. */
static int flows_add(struct flows *f, const struct profile *p, const struct tid_ix *ix,
		     const struct timeline_interval *iv, uint64_t start, uint64_t end)
{
	const struct profile_thread *th;
	struct wake w = {.pid = iv->pid, .tid = iv->tid, .irq = iv->waker_irq};

	if (vec_reserve(f->sl, f->capsl, f->nsl + 1))
		return -ENOMEM;
	f->sl[f->nsl++] = (struct slice){iv->pid, iv->tid, start, end};
	if ((!iv->waker_irq && iv->waker_tid <= 0) || end - start < 2)
		return 0;
	w.at = iv->start_ns + iv->dur_ns - iv->runq_ns;
	w.in = w.at <= start ? start + 1 : w.at >= end ? end - 1 : w.at;
	if (iv->waker_irq) {
		w.wpid = TRACE_IRQ_PID;
		w.wtid = TRACE_IRQ_PID + (int)iv->waker_irq;
	} else {
		th = find_tid(p, ix, profile__nr_threads(p), iv->waker_tid);
		w.wpid = th ? th->pid : TRACE_OTHER_PID;
		w.wtid = iv->waker_tid;
	}
	if (vec_reserve(f->w, f->cap, f->nr + 1))
		return -ENOMEM;
	f->w[f->nr++] = w;
	return 0;
}

/* The first drawn interval of tid (f->sl is in (tid, start) order); f->nsl if none. */
static size_t first_slice(const struct flows *f, int tid)
{
	size_t lo = 0, hi = f->nsl;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->sl[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * How long the waker's slice at w->at can be without crossing a slice of its
 * track: an interval of the waker thread (the wakeup may sit inside one when
 * the run-queue estimate is off: the slice then nests in it) or the next
 * wakeup of the track (next, UINT64_MAX when none).
 */
static uint64_t wake_len(const struct flows *f, const struct wake *w, uint64_t next)
{
	uint64_t lim = next - w->at < WAKE_SLICE_NS ? next - w->at : WAKE_SLICE_NS;

	if (w->irq)
		return lim;
	for (size_t i = first_slice(f, w->wtid); i < f->nsl && f->sl[i].tid == w->wtid; i++) {
		const struct slice *sl = &f->sl[i];
		uint64_t edge = sl->start > w->at ? sl->start : sl->end;

		if (sl->end <= w->at)
			continue;
		if (edge - w->at < lim)
			lim = edge - w->at;
		break;
	}
	return lim;
}

static void write_meta_event(FILE *out, const char *what, int pid, int tid, const char *name)
{
	fprintf(out,
		",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", what,
		pid, tid);
	json_str(out, name);
	fputs("}}", out);
}

/* Names of the waker tracks the intervals did not make: interrupts, threads not traced. */
static void write_waker_meta(FILE *out, const struct profile *p, const struct timeline *t,
			     const struct tid_ix *ix, const struct flows *f)
{
	bool irq_pid = false, other_pid = false;
	char name[64];

	for (size_t i = 0; i < f->nr; i++) {
		const struct wake *w = &f->w[i];
		const struct profile_thread *th;
		size_t k;
		bool pid_drawn = false;

		if (i && w->wpid == w[-1].wpid && w->wtid == w[-1].wtid)
			continue;
		irq_pid |= w->wpid == TRACE_IRQ_PID;
		other_pid |= w->wpid == TRACE_OTHER_PID;
		if (w->irq) {
			write_meta_event(out, "thread_name", w->wpid, w->wtid,
					 timeline__irq_name(t, w->irq));
			continue;
		}
		k = first_slice(f, w->wtid);
		if (k < f->nsl && f->sl[k].tid == w->wtid)
			continue; /* its own intervals named the track */
		th = find_tid(p, ix, profile__nr_threads(p), w->wtid);
		if (th && *th->comm)
			snprintf(name, sizeof(name), "%s", th->comm);
		else
			snprintf(name, sizeof(name), "tid %d", w->wtid);
		write_meta_event(out, "thread_name", w->wpid, w->wtid, name);
		for (size_t j = 0; j < f->nsl && !pid_drawn; j++)
			pid_drawn = f->sl[j].pid == w->wpid;
		if (!pid_drawn && w->wpid != TRACE_OTHER_PID) {
			snprintf(name, sizeof(name), "pid %d", w->wpid);
			write_meta_event(out, "process_name", w->wpid, w->wpid,
					 th && th->pid == th->tid && *th->comm ? th->comm : name);
		}
	}
	if (irq_pid)
		write_meta_event(out, "process_name", TRACE_IRQ_PID, TRACE_IRQ_PID, "interrupts");
	if (other_pid)
		write_meta_event(out, "process_name", TRACE_OTHER_PID, TRACE_OTHER_PID,
				 "other wakers");
}

/* The waker slices and the flows from them; returns the flows written. */
static size_t write_flows(FILE *out, const struct timeline *t, struct flows *f, uint64_t base)
{
	size_t flows = 0;

	if (!f->nr)
		return 0;
	qsort(f->w, f->nr, sizeof(*f->w), cmp_wake);
	for (size_t i = 0, j; i < f->nr; i = j) {
		const struct wake *w = &f->w[i];
		uint64_t next = UINT64_MAX, len;

		/* The wakeups of one track at one time share a slice. */
		for (j = i + 1; j < f->nr && f->w[j].wpid == w->wpid && f->w[j].wtid == w->wtid &&
				f->w[j].at == w->at;
		     j++)
			;
		if (j < f->nr && f->w[j].wpid == w->wpid && f->w[j].wtid == w->wtid)
			next = f->w[j].at;
		len = wake_len(f, w, next);
		if (len < 2)
			continue; /* no room for a slice: drawn without an arrow */
		fprintf(out, ",\n{\"ph\":\"X\",\"cat\":\"wakeup\",\"name\":");
		json_str(out, w->irq ? timeline__irq_name(t, w->irq) : "wakeup");
		fprintf(out, ",\"pid\":%d,\"tid\":%d", w->wpid, w->wtid);
		print_us(out, "ts", w->at - base);
		print_us(out, "dur", len);
		fputs("}", out);
		for (size_t k = i; k < j; k++) {
			const struct wake *x = &f->w[k];

			flows++;
			fprintf(out,
				",\n{\"ph\":\"s\",\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":%"
				"zu,"
				"\"pid\":%d,\"tid\":%d",
				flows, x->wpid, x->wtid);
			print_us(out, "ts", x->at + len / 2 - base);
			fprintf(out,
				"},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wakeup\",\"name\":"
				"\"wakeup\","
				"\"id\":%zu,\"pid\":%d,\"tid\":%d",
				flows, x->pid, x->tid);
			print_us(out, "ts", x->in - base);
			fputs("}", out);
		}
	}
	return flows;
}

int chrome_trace__write_stats(FILE *out, const struct profile *p, const struct timeline *t,
			      struct chrome_trace_stats *st)
{
	struct chrome_trace_stats dummy;
	size_t nr = timeline__nr(t), nstacks = profile__nr_stacks(p), *order = NULL;
	uint64_t base = UINT64_MAX, prev_end = 0;
	struct stack_cache cache = {0};
	struct reasons *rs = NULL;
	struct flows fl = {0};
	struct tid_ix *ix = NULL;
	char waker[96];
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
	ix = tid_index(p);
	if (!cache.stack || !cache.name || !rs || !ix) {
		err = -ENOMEM;
		goto cleanup;
	}

	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	err = write_meta(out, p, t, ix, order, &first);
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
			",\"waker_tid\":%d,",
			offcpu_state__name(iv->state), iv->dur_ns, iv->runq_ns, iv->waker_tid);
		if (iv->waker_irq || iv->waker_tid > 0) {
			waker_name(p, t, ix, iv, waker, sizeof(waker));
			fputs("\"waker\":", out);
			json_str(out, waker);
			fputc(',', out);
		}
		fprintf(out, "\"stack\":%s}}", cache.stack[iv->stack]);
		st->events++;
		err = flows_add(&fl, p, ix, iv, start, end);
	}
	if (err)
		goto cleanup;
	if (!first) {
		st->flows = write_flows(out, t, &fl, base);
		write_waker_meta(out, p, t, ix, &fl);
	}
	fprintf(out,
		"\n],\"otherData\":{\"generator\":\"offcpu\",\"monotonic_base_ns\":%" PRIu64
		",\"intervals\":%zu,\"overlaps_clipped\":%zu,\"overlaps_dropped\":%zu"
		",\"flows\":%zu}}\n",
		base, nr, st->clipped, st->dropped, st->flows);
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
	free(ix);
	free(fl.w);
	free(fl.sl);
	reasons__free(rs);
	return err;
}

int chrome_trace__write(FILE *out, const struct profile *p, const struct timeline *t)
{
	return chrome_trace__write_stats(out, p, t, NULL);
}
