// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profile model. Built for inputs of tens of millions of rows:
 *
 * - Every record lives in a segmented array (fixed-size chunks that never move),
 *   so accessor pointers stay valid while the profile grows and no row costs a
 *   malloc of its own. The chunks are carved from an arena (util/arena.h), so
 *   that a big profile's records sit in huge pages, as its tables do.
 * - Names and stack frame lists are copied into arenas (big blocks, freed at once):
 *   names in one, frame lists in another, so that the few thousand frame names a
 *   parser compares on every line sit together in cache instead of one to a
 *   cache line among megabytes of stacks.
 * - Each kind of thing has a hash table (util/hmap.h) of (hash, pointer) slots.
 *   The pointer goes straight to the record, so a hit on a table bigger than the
 *   caches costs two cache misses (slot, record), not three (slot, id -> record, record's data).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "util/arena.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/vec.h"

/* The fuzz build makes these small so that a small input crosses their boundaries. */
#ifndef SEG_SHIFT
#define SEG_SHIFT 12
#endif
#define SEG_SIZE (1u << SEG_SHIFT)
#define SEG_MASK (SEG_SIZE - 1)

/* Ids are returned as int, so there can be at most INT_MAX of each kind. */
#define MAX_IDS ((size_t)INT_MAX)

struct segarr {
	char **chunks;
	size_t nr_chunks, chunks_cap;
	size_t n;
	size_t elem;
	struct arena *mem; /* where the chunks come from (zeroed) */
};

static inline void *seg_at(const struct segarr *s, size_t i)
{
	return s->chunks[i >> SEG_SHIFT] + (i & SEG_MASK) * s->elem;
}

/* A zeroed slot at the end; NULL when out of memory (nothing changed then). */
static void *seg_push(struct segarr *s)
{
	if ((s->n & SEG_MASK) == 0 && (s->n >> SEG_SHIFT) == s->nr_chunks) {
		if (vec_reserve(s->chunks, s->chunks_cap, s->nr_chunks + 1))
			return NULL;
		s->chunks[s->nr_chunks] = arena__alloc(s->mem, SEG_SIZE * s->elem, 16);
		if (!s->chunks[s->nr_chunks])
			return NULL;
		s->nr_chunks++;
	}
	return seg_at(s, s->n++);
}

static void seg_free(struct segarr *s)
{
	free(s->chunks);
}

struct frame_rec {
	struct profile_frame pub; /* first: profile__frame_at() returns its address */
};

/* A frame's name with what its lookup compares, in one arena allocation. */
struct frame_key {
	uint32_t len;
	uint32_t kind;
	uint32_t id;
	char name[];
};

struct stack_rec {
	const uint32_t *frames;
	/*
	 * The row last added on this stack: most stacks have one row, so a hit
	 * skips the row table (a cache miss on a big profile). Here and not in
	 * the key so that a caller who knows the stack id without interning it
	 * (the folded parser's line cache) gets the hint too.
	 */
	struct profile_row *row_hint;
	uint32_t n;
	/*
	 * Whether the stack has more than one row. Until it has, its one row is
	 * row_hint and is not in the row table: a profile whose stacks each have
	 * one thread (most of them) builds no row table at all.
	 */
	bool many_rows;
};

/* A stack's frames with their count, in one arena allocation. */
struct stack_key {
	uint32_t n;
	uint32_t id;
	uint32_t frames[];
};

struct thread_rec {
	struct profile_thread pub; /* first */
	struct profile_thread_time time;
	bool has_time;
	uint32_t id;
};

struct profile {
	/* Names, stacks' frame lists, and the segmented arrays' chunks. */
	struct arena names, stack_arena, recs;
	struct segarr frames, stacks, threads, rows;
	struct hmap frame_tab, stack_tab, thread_tab, row_tab;
	struct profile_totals totals;
	bool runq_known;
};

struct profile *profile__new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->frames.elem = sizeof(struct frame_rec);
	p->stacks.elem = sizeof(struct stack_rec);
	p->threads.elem = sizeof(struct thread_rec);
	p->rows.elem = sizeof(struct profile_row);
	p->frames.mem = p->stacks.mem = p->threads.mem = p->rows.mem = &p->recs;
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	arena__free(&p->names);
	arena__free(&p->stack_arena);
	arena__free(&p->recs);
	seg_free(&p->frames);
	seg_free(&p->stacks);
	seg_free(&p->threads);
	seg_free(&p->rows);
	hmap__free(&p->frame_tab);
	hmap__free(&p->stack_tab);
	hmap__free(&p->thread_tab);
	hmap__free(&p->row_tab);
	free(p);
}

static const struct {
	const char *name;
	char letter;
} frame_kinds[FRAME__COUNT] = {
	[FRAME_USER] = {"user", 'u'},
	[FRAME_KERNEL] = {"kernel", 'k'},
	[FRAME_MISSING] = {"missing", 'm'},
	[FRAME_INLINE] = {"inline", 'i'},
};

const char *frame_kind__name(enum frame_kind k)
{
	return (unsigned)k < FRAME__COUNT ? frame_kinds[k].name : "user";
}

char frame_kind__letter(enum frame_kind k)
{
	return (unsigned)k < FRAME__COUNT ? frame_kinds[k].letter : 'u';
}

int frame_kind__from_letter(char c, enum frame_kind *k)
{
	for (int i = 0; i < FRAME__COUNT; i++) {
		if (frame_kinds[i].letter == c) {
			*k = i;
			return 0;
		}
	}
	return -EINVAL;
}

int frame_kind__from_name(const char *name, enum frame_kind *k)
{
	for (int i = 0; i < FRAME__COUNT; i++) {
		if (!strcmp(frame_kinds[i].name, name)) {
			*k = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *offcpu_state__letter(enum offcpu_state s)
{
	switch (s) {
	case OFFCPU_STATE_SLEEP:
		return "S";
	case OFFCPU_STATE_DISK:
		return "D";
	case OFFCPU_STATE_PREEMPT:
		return "R";
	case OFFCPU_STATE_OTHER:
		return "O";
	default:
		return "?";
	}
}

const char *offcpu_state__name(enum offcpu_state s)
{
	switch (s) {
	case OFFCPU_STATE_SLEEP:
		return "sleep";
	case OFFCPU_STATE_DISK:
		return "disk";
	case OFFCPU_STATE_PREEMPT:
		return "preempt";
	case OFFCPU_STATE_OTHER:
		return "other";
	default:
		return "unknown";
	}
}

int profile__frame(struct profile *p, enum frame_kind kind, const char *name, size_t len)
{
	struct hmap *t = &p->frame_tab;
	struct frame_key *key;
	struct frame_rec *f;
	uint64_t h;
	size_t i;
	int err;

	if (!name || !len || len > UINT32_MAX || (unsigned)kind >= FRAME__COUNT)
		return -EINVAL;
	err = hmap__reserve(t);
	if (err)
		return err;
	h = hash_bytes(name, len, kind);
	for (i = hmap__first(t, h); (key = hmap__next(t, h, &i));) {
		if (key->len == len && key->kind == kind && mem_eq(key->name, name, len))
			return (int)key->id;
	}
	if (p->frames.n >= MAX_IDS)
		return -EOVERFLOW;
	if (len > SIZE_MAX - sizeof(*key) - 1)
		return -ENOMEM;
	key = arena__alloc(&p->names, sizeof(*key) + len + 1, _Alignof(struct frame_key));
	if (!key)
		return -ENOMEM;
	f = seg_push(&p->frames);
	if (!f)
		return -ENOMEM; /* the arena bytes stay unused until profile__free() */
	memcpy(key->name, name, len);
	key->name[len] = '\0';
	key->len = (uint32_t)len;
	key->kind = kind;
	key->id = (uint32_t)(p->frames.n - 1);
	f->pub.name = key->name;
	f->pub.kind = kind;
	hmap__put(t, i, h, key);
	return (int)key->id;
}

int profile__stack(struct profile *p, const uint32_t *frames, size_t n)
{
	struct hmap *t = &p->stack_tab;
	uint64_t h64 = n, nfr = p->frames.n;
	struct stack_key *key;
	struct stack_rec *s;
	uint32_t bad = 0;
	uint64_t h;
	size_t i;
	int err;

	if (n && !frames)
		return -EINVAL;
	/* Two ids per step halve the hash's dependency chain; one branch for all ids. */
	for (i = 0; i + 2 <= n; i += 2) {
		bad |= frames[i] >= nfr || frames[i + 1] >= nfr;
		h64 = hash_add64(h64, (uint64_t)frames[i] << 32 | frames[i + 1]);
	}
	if (i < n) {
		bad |= frames[i] >= nfr;
		h64 = hash_add64(h64, frames[i]);
	}
	if (bad)
		return -EINVAL;
	h = hash_mix64(h64);
	err = hmap__reserve(t);
	if (err)
		return err;
	for (i = hmap__first(t, h); (key = hmap__next(t, h, &i));) {
		if (key->n == n &&
		    mem_eq((const char *)key->frames, (const char *)frames, n * sizeof(*frames)))
			return (int)key->id;
	}
	if (p->stacks.n >= MAX_IDS)
		return -EOVERFLOW;
	if (n > UINT32_MAX || n > (SIZE_MAX - sizeof(*key)) / sizeof(*frames))
		return -ENOMEM;
	key = arena__alloc(&p->stack_arena, sizeof(*key) + n * sizeof(*frames),
			   _Alignof(struct stack_key));
	if (!key)
		return -ENOMEM;
	s = seg_push(&p->stacks);
	if (!s)
		return -ENOMEM;
	if (n)
		memcpy(key->frames, frames, n * sizeof(*frames));
	key->n = (uint32_t)n;
	key->id = (uint32_t)(p->stacks.n - 1);
	s->frames = key->frames;
	s->n = (uint32_t)n;
	hmap__put(t, i, h, key);
	return (int)key->id;
}

int profile__thread(struct profile *p, int pid, int tid, const char *comm)
{
	struct hmap *t = &p->thread_tab;
	struct thread_rec *r;
	size_t len, i;
	uint64_t h;
	char *copy;
	int err;

	if (!comm)
		comm = "";
	len = strlen(comm);
	err = hmap__reserve(t);
	if (err)
		return err;
	h = hash_bytes(comm, len, ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid);
	for (i = hmap__first(t, h); (r = hmap__next(t, h, &i));) {
		if (r->pub.pid == pid && r->pub.tid == tid && !strcmp(r->pub.comm, comm))
			return (int)r->id;
	}
	if (p->threads.n >= MAX_IDS)
		return -EOVERFLOW;
	copy = arena__alloc(&p->names, len + 1, 1);
	if (!copy)
		return -ENOMEM;
	r = seg_push(&p->threads);
	if (!r)
		return -ENOMEM;
	memcpy(copy, comm, len + 1);
	r->pub.pid = pid;
	r->pub.tid = tid;
	r->pub.comm = copy;
	r->id = (uint32_t)(p->threads.n - 1);
	hmap__put(t, i, h, r);
	return (int)r->id;
}

static bool weight_add_overflows(const struct profile_weight *a, const struct profile_weight *b)
{
	return a->count + b->count < a->count || a->off_ns + b->off_ns < a->off_ns ||
	       a->runq_ns + b->runq_ns < a->runq_ns;
}

static void weight_add(struct profile_weight *a, const struct profile_weight *b)
{
	a->count += b->count;
	a->off_ns += b->off_ns;
	a->runq_ns += b->runq_ns;
}

static uint64_t row_hash(uint32_t thread, uint32_t stack, enum offcpu_state state)
{
	return hash_mix64(hash_add64((uint64_t)thread << 32 | stack, state));
}

/* A zeroed row at the end of the rows; NULL when out of memory. */
static struct profile_row *new_row(struct profile *p, uint32_t thread, uint32_t stack,
				   enum offcpu_state state)
{
	struct profile_row *r = seg_push(&p->rows);

	if (r) {
		r->thread = thread;
		r->stack = stack;
		r->state = state;
	}
	return r;
}

void profile__prefetch(const struct profile *p, uint32_t stack)
{
	if (stack < p->stacks.n)
		__builtin_prefetch(seg_at(&p->stacks, stack));
}

void profile__prefetch_more(const struct profile *p, uint32_t stack)
{
	const struct stack_rec *sr;

	if (stack >= p->stacks.n)
		return;
	sr = seg_at(&p->stacks, stack);
	if (sr->row_hint)
		__builtin_prefetch(sr->row_hint);
}

int profile__add(struct profile *p, uint32_t thread, uint32_t stack, enum offcpu_state state,
		 const struct profile_weight *w)
{
	struct hmap *t = &p->row_tab;
	struct stack_rec *sr;
	struct profile_row *r;
	uint64_t h;
	size_t i;
	int err;

	if (!w || thread >= p->threads.n || stack >= p->stacks.n ||
	    (unsigned)state >= OFFCPU_STATE__COUNT || w->runq_ns > w->off_ns)
		return -EINVAL;
	/*
	 * Every row and per-state total is at most the grand total, so checking the
	 * grand total is enough to know that no sum below wraps.
	 */
	if (weight_add_overflows(&p->totals.all, w))
		return -EOVERFLOW;
	sr = seg_at(&p->stacks, stack);
	r = sr->row_hint;
	if (r && r->thread == thread && r->state == state)
		goto found;
	if (!r) {
		/* The stack's first row: nothing to look up, nothing to file. */
		r = new_row(p, thread, stack, state);
		if (!r)
			return -ENOMEM;
		sr->row_hint = r;
		goto found;
	}
	/* Room for two: a stack's first row is filed along with its second. */
	err = hmap__reserve_n(t, 2);
	if (err)
		return err;
	h = row_hash(thread, stack, state);
	i = hmap__first(t, h);
	if (sr->many_rows) {
		while ((r = hmap__next(t, h, &i))) {
			if (r->thread == thread && r->stack == stack && r->state == state) {
				sr->row_hint = r;
				goto found;
			}
		}
	}
	r = new_row(p, thread, stack, state);
	if (!r)
		return -ENOMEM;
	if (sr->many_rows) {
		hmap__put(t, i, h, r); /* i: the free slot the lookup ended on */
	} else {
		struct profile_row *first = sr->row_hint;

		/* Neither fails after the reserve. */
		hmap__add(t, row_hash(first->thread, first->stack, first->state), first);
		hmap__add(t, h, r);
		sr->many_rows = true;
	}
	sr->row_hint = r;
found:
	weight_add(&r->w, w);
	weight_add(&p->totals.all, w);
	weight_add(&p->totals.by_state[state], w);
	return 0;
}

int profile__set_thread_time(struct profile *p, uint32_t thread,
			     const struct profile_thread_time *t)
{
	struct thread_rec *r;

	if (!t || thread >= p->threads.n)
		return -EINVAL;
	r = seg_at(&p->threads, thread);
	r->time = *t;
	r->has_time = true;
	return 0;
}

const struct profile_thread_time *profile__thread_time(const struct profile *p, uint32_t thread)
{
	const struct thread_rec *r;

	if (thread >= p->threads.n)
		return NULL;
	r = seg_at(&p->threads, thread);
	return r->has_time ? &r->time : NULL;
}

uint64_t profile_thread_time__ran_ns(const struct profile_thread_time *t)
{
	return t->oncpu_ns - (t->idle_exit_ns < t->oncpu_ns ? t->idle_exit_ns : t->oncpu_ns);
}

void profile__set_runq_known(struct profile *p, bool known)
{
	p->runq_known = known;
}

bool profile__runq_known(const struct profile *p)
{
	return p->runq_known;
}

size_t profile__nr_frames(const struct profile *p)
{
	return p->frames.n;
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->stacks.n;
}

size_t profile__nr_threads(const struct profile *p)
{
	return p->threads.n;
}

size_t profile__nr_rows(const struct profile *p)
{
	return p->rows.n;
}

const struct profile_frame *profile__frame_at(const struct profile *p, uint32_t id)
{
	if (id >= p->frames.n)
		return NULL;
	return &((const struct frame_rec *)seg_at(&p->frames, id))->pub;
}

const uint32_t *profile__stack_at(const struct profile *p, uint32_t id, size_t *n)
{
	const struct stack_rec *s;

	if (id >= p->stacks.n) {
		if (n)
			*n = 0;
		return NULL;
	}
	s = seg_at(&p->stacks, id);
	if (n)
		*n = s->n;
	return s->frames;
}

const struct profile_thread *profile__thread_at(const struct profile *p, uint32_t id)
{
	if (id >= p->threads.n)
		return NULL;
	return &((const struct thread_rec *)seg_at(&p->threads, id))->pub;
}

const struct profile_row *profile__row_at(const struct profile *p, size_t idx)
{
	if (idx >= p->rows.n)
		return NULL;
	return seg_at(&p->rows, idx);
}

const struct profile_totals *profile__totals(const struct profile *p)
{
	return &p->totals;
}

static int cmp_stack_sum(const void *a, const void *b)
{
	const struct profile_stack_sum *x = a, *y = b;

	if (x->w.off_ns != y->w.off_ns)
		return x->w.off_ns > y->w.off_ns ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_thread_sum(const void *a, const void *b)
{
	const struct profile_thread_sum *x = a, *y = b;

	if (x->w.off_ns != y->w.off_ns)
		return x->w.off_ns > y->w.off_ns ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int cmp_row_by_thread(const void *a, const void *b)
{
	const struct profile_row *x = *(const struct profile_row *const *)a;
	const struct profile_row *y = *(const struct profile_row *const *)b;

	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Whether weight a beats b for "the thread with most off_ns" (count breaks off_ns ties). */
static bool weight_beats(const struct profile_weight *a, const struct profile_weight *b)
{
	return a->off_ns != b->off_ns ? a->off_ns > b->off_ns : a->count > b->count;
}

/* Below this many, qsort(); above, a radix sort, whose passes cost more than its compares save. */
#ifndef RADIX_MIN
#define RADIX_MIN 512
#endif

/*
 * Sort sums made in ascending stack order as cmp_stack_sum() does: off_ns
 * descending, then stack ascending. A big profile has 100k stacks and more:
 * a stable radix sort on off_ns, a byte a pass (passes where every key has
 * the same byte are skipped), keeps the stack order of ties for free. 0 or
 * -ENOMEM (the sums unchanged then).
 */
static int sort_stack_sums(struct profile_stack_sum *sums, size_t n)
{
	uint32_t *idx, *idx2;
	uint64_t *key, *key2;
	size_t count[256];

	if (n < RADIX_MIN) {
		qsort(sums, n, sizeof(*sums), cmp_stack_sum);
		return 0;
	}
	key = malloc(n * sizeof(*key) * 2);
	idx = malloc(n * sizeof(*idx) * 2);
	if (!key || !idx) {
		free(key);
		free(idx);
		return -ENOMEM;
	}
	key2 = key + n;
	idx2 = idx + n;
	for (size_t i = 0; i < n; i++) {
		key[i] = ~sums[i].w.off_ns; /* ascending ~off_ns is descending off_ns */
		idx[i] = (uint32_t)i;
	}
	for (int shift = 0; shift < 64; shift += 8) {
		uint64_t *kt;
		uint32_t *it;
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[key[i] >> shift & 0xff]++;
		if (count[key[0] >> shift & 0xff] == n)
			continue;
		for (int b = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			size_t d = count[key[i] >> shift & 0xff]++;

			key2[d] = key[i];
			idx2[d] = idx[i];
		}
		kt = key, key = key2, key2 = kt;
		it = idx, idx = idx2, idx2 = it;
	}
	/*
	 * Place i takes sums[idx[i]]: followed cycle by cycle in place, so that
	 * the sort needs no second copy of the sums (40 MB on 1M stacks).
	 */
	for (size_t i = 0; i < n; i++) {
		struct profile_stack_sum t;
		size_t j = i;

		if (idx[i] == i)
			continue;
		t = sums[i];
		while (idx[j] != i) {
			size_t k = idx[j];

			sums[j] = sums[k];
			idx[j] = (uint32_t)j;
			j = k;
		}
		sums[j] = t;
		idx[j] = (uint32_t)j;
	}
	free(key < key2 ? key : key2);
	free(idx < idx2 ? idx : idx2);
	return 0;
}

int profile__sum_by_stack(const struct profile *p, struct profile_stack_sum **out, size_t *n)
{
	size_t nst = p->stacks.n, nrows = p->rows.n, nout = 0;
	const struct profile_row **order = NULL;
	struct profile_stack_sum *sums = NULL;
	size_t *start = NULL;
	int err = -ENOMEM;

	*out = NULL;
	*n = 0;
	/*
	 * Counting sort of the rows by stack, then each stack's rows by thread, so
	 * the per-(stack, thread) sums that pick the top thread are runs: O(rows)
	 * plus small sorts, never a sort of all rows.
	 */
	start = calloc(nst + 1, sizeof(*start));
	order = malloc((nrows ? nrows : 1) * sizeof(*order));
	sums = calloc(nst ? nst : 1, sizeof(*sums));
	if (!start || !order || !sums)
		goto cleanup;
	for (size_t i = 0; i < nrows; i++)
		start[((const struct profile_row *)seg_at(&p->rows, i))->stack + 1]++;
	for (size_t s = 0; s < nst; s++)
		start[s + 1] += start[s];
	for (size_t i = 0; i < nrows; i++) {
		const struct profile_row *r = seg_at(&p->rows, i);

		order[start[r->stack]++] = r;
	}
	/* start[s] now holds the end of stack s's run, which is where s + 1 starts. */
	for (size_t s = 0, b = 0; s < nst; b = start[s], s++) {
		size_t e = start[s];
		struct profile_stack_sum *sum = &sums[nout];
		struct profile_weight best = {0};
		bool have_best = false;

		if (b == e)
			continue;
		if (e - b > 1) /* most stacks have one row */
			qsort(order + b, e - b, sizeof(*order), cmp_row_by_thread);
		memset(sum, 0, sizeof(*sum));
		sum->stack = (uint32_t)s;
		for (size_t i = b; i < e;) {
			struct profile_weight tw = {0};
			uint32_t th = order[i]->thread;

			for (; i < e && order[i]->thread == th; i++)
				weight_add(&tw, &order[i]->w);
			weight_add(&sum->w, &tw);
			/* Threads come in ascending id, so a strict win keeps the lowest id on
			 * ties. */
			if (!have_best || weight_beats(&tw, &best)) {
				best = tw;
				sum->thread = th;
				have_best = true;
			}
		}
		nout++;
	}
	err = sort_stack_sums(sums, nout);
	if (err)
		goto cleanup;
	*out = sums;
	*n = nout;
	sums = NULL;
	err = 0;
cleanup:
	free(start);
	free(order);
	free(sums);
	return err;
}

int profile__sum_by_thread(const struct profile *p, struct profile_thread_sum **out, size_t *n)
{
	size_t nth = p->threads.n, nout = 0;
	struct profile_thread_sum *sums;
	bool *seen;

	*out = NULL;
	*n = 0;
	sums = calloc(nth ? nth : 1, sizeof(*sums));
	seen = calloc(nth ? nth : 1, sizeof(*seen));
	if (!sums || !seen) {
		free(sums);
		free(seen);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct profile_row *r = seg_at(&p->rows, i);

		weight_add(&sums[r->thread].w, &r->w);
		seen[r->thread] = true;
	}
	for (size_t t = 0; t < nth; t++) {
		if (!seen[t])
			continue;
		sums[nout].thread = (uint32_t)t;
		sums[nout].w = sums[t].w;
		nout++;
	}
	free(seen);
	qsort(sums, nout, sizeof(*sums), cmp_thread_sum);
	*out = sums;
	*n = nout;
	return 0;
}

static int cmp_thread_sum_by_weight(const void *a, const void *b)
{
	const struct profile_thread_sum *x = a, *y = b;

	if (weight_beats(&x->w, &y->w))
		return -1;
	if (weight_beats(&y->w, &x->w))
		return 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Threads of one process next to each other: by pid, then (pid 0) by comm. */
static int cmp_thread_sum_by_proc(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	const struct profile_thread_sum *x = a, *y = b;
	const struct profile_thread *tx = seg_at(&p->threads, x->thread);
	const struct profile_thread *ty = seg_at(&p->threads, y->thread);

	if (tx->pid != ty->pid)
		return tx->pid < ty->pid ? -1 : 1;
	return tx->pid ? 0 : strcmp(tx->comm, ty->comm);
}

static bool same_proc(const struct profile_thread *a, const struct profile_thread *b)
{
	return a->pid == b->pid && (a->pid || !strcmp(a->comm, b->comm));
}

int profile__stack_threads(const struct profile *p, const uint32_t *stacks, size_t nr, size_t max,
			   struct profile_stack_threads **out)
{
	size_t nst = p->stacks.n, nrows = p->rows.n, nsel = 0;
	struct profile_stack_threads *res = NULL;
	const struct profile_row **order = NULL;
	struct profile_thread_sum *tmp = NULL, *tops;
	size_t *start = NULL;
	int32_t *slot = NULL;
	int err = -ENOMEM;

	*out = NULL;
	for (size_t i = 0; i < nr; i++)
		if (stacks[i] >= nst)
			return -EINVAL;
	res = calloc(1, (nr ? nr : 1) * (sizeof(*res) + max * sizeof(*tops)));
	slot = malloc((nst ? nst : 1) * sizeof(*slot));
	start = calloc(nr + 1, sizeof(*start));
	if (!res || !slot || !start)
		goto cleanup;
	tops = (struct profile_thread_sum *)(res + nr);
	for (size_t s = 0; s < nst; s++)
		slot[s] = -1;
	for (size_t i = 0; i < nr; i++) {
		res[i].stack = stacks[i];
		res[i].top = tops + i * max;
		if (slot[stacks[i]] < 0)
			slot[stacks[i]] = (int32_t)i;
	}
	/* The selected stacks' rows, grouped by stack (a counting sort), as in sum_by_stack. */
	for (size_t i = 0; i < nrows; i++) {
		int32_t k = slot[((const struct profile_row *)seg_at(&p->rows, i))->stack];

		if (k >= 0) {
			start[k + 1]++;
			nsel++;
		}
	}
	for (size_t k = 0; k < nr; k++)
		start[k + 1] += start[k];
	order = malloc((nsel ? nsel : 1) * sizeof(*order));
	tmp = malloc((nsel ? nsel : 1) * sizeof(*tmp));
	if (!order || !tmp)
		goto cleanup;
	for (size_t i = 0; i < nrows; i++) {
		const struct profile_row *r = seg_at(&p->rows, i);
		int32_t k = slot[r->stack];

		if (k >= 0)
			order[start[k]++] = r;
	}
	for (size_t k = 0, b = 0; k < nr; b = start[k], k++) {
		struct profile_stack_threads *st = &res[k];
		size_t e = start[k], nt = 0;

		if (slot[st->stack] != (int32_t)k) {
			/* The same stack asked for twice: the first one's answer. */
			const struct profile_stack_threads *first = &res[slot[st->stack]];

			st->nr_threads = first->nr_threads;
			st->nr_procs = first->nr_procs;
			st->nr_top = first->nr_top;
			memcpy(st->top, first->top, first->nr_top * sizeof(*tops));
			continue;
		}
		qsort(order + b, e - b, sizeof(*order), cmp_row_by_thread);
		for (size_t i = b; i < e;) {
			uint32_t th = order[i]->thread;

			tmp[nt] = (struct profile_thread_sum){.thread = th};
			for (; i < e && order[i]->thread == th; i++)
				weight_add(&tmp[nt].w, &order[i]->w);
			nt++;
		}
		st->nr_threads = nt;
		qsort_r(tmp, nt, sizeof(*tmp), cmp_thread_sum_by_proc, (void *)p);
		for (size_t i = 0; i < nt; i++)
			if (!i || !same_proc(seg_at(&p->threads, tmp[i - 1].thread),
					     seg_at(&p->threads, tmp[i].thread)))
				st->nr_procs++;
		qsort(tmp, nt, sizeof(*tmp), cmp_thread_sum_by_weight);
		st->nr_top = nt < max ? nt : max;
		memcpy(st->top, tmp, st->nr_top * sizeof(*tops));
	}
	*out = res;
	res = NULL;
	err = 0;
cleanup:
	free(res);
	free(slot);
	free(start);
	free(order);
	free(tmp);
	return err;
}
