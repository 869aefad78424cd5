// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded stacks. Each line is split in place (no copy, no allocation per line
 * or frame): find the value after the last space, cut the stack part at ';'
 * into a reused (pointer, length) array, decide each frame's kind, intern.
 *
 * Interning (hash, probe, compare) is most of the cost, and folded files are
 * often sorted (stackcollapse-*.pl sort their output), so consecutive lines
 * share long runs of root frames. The frames part of the previous line is kept
 * with each frame's id and kind state; frames wholly inside the common prefix
 * of the two lines reuse them instead of being interned again.
 *
 * Unsorted input (lines drawn from many stacks, as a capture concatenated or
 * not aggregated) repeats whole lines instead: a line cache maps the hash of a
 * line's frames part to the stack it gave last time. When the frames part of
 * that line is still in a ring of recent texts and equal byte for byte, the
 * stack is that line's. Otherwise the cache only guesses: each frame is
 * checked against the guessed stack's (by the parser's own table of the
 * profile's frames: no hash, no call), and at the first difference the line
 * is interned as if there had been no guess. So a hash collision costs time,
 * never a wrong stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "model/frame_name.h"
#include "parse/folded.h"
#include "util/arena.h"
#include "util/hash.h"
#include "util/lines.h"
#include "util/vec.h"

struct span {
	const char *s;
	size_t len;
};

/* What one span of the previous line gave. */
struct memo {
	int32_t id;  /* -1: nothing interned (delimiter, empty span) */
	bool kernel; /* the kind state after this span */
};

/*
 * A line cache slot: the stack id + 1 (0: empty slot), the line's hash, and
 * the stack's frames, so that the guess costs one cache miss (the frames)
 * after the slot's and not two. Stacks of more than 65535 frames are not
 * cached. When the line's frames part is still in the text ring, where it
 * is: a line equal to it byte for byte has its stack without a check. The
 * whole hash is kept so that a cache that grows keeps what it held (a line
 * dropped is interned again, frame by frame, when it comes back).
 */
struct line_slot {
	uint64_t hash;
	uint64_t text; /* ring position + 1, or 0 */
	const uint32_t *frames;
	uint32_t stack1;
	uint16_t n;
	uint16_t len; /* of the text */
};

#define RING_POS_MASK ((UINT64_C(1) << 48) - 1)

/* The parser's copy of what checking a guessed frame id needs, by frame id. */
struct frame_view {
	const char *name; /* the profile's */
	uint32_t len;
	uint32_t kind; /* FRAME__COUNT: not known yet (see intern_frame()) */
};

/* What the line cache guesses. */
struct line_guess {
	int stack; /* -1: no guess */
	uint16_t n;
	const uint32_t *frames;
};

/* The first size of the line cache, in slots; it grows with the profile's stacks. */
#define LINE_CACHE_MIN 1024

/*
 * The text ring keeps the frames parts of recent lines, up to RING_PER_STACK
 * bytes for each stack of the profile, within [RING_MIN, RING_MAX]: most
 * lines of a long input repeat a popular stack, which is still there, so the
 * bound costs few hits and keeps memory flat. A test makes the ring small.
 */
#ifndef RING_MIN
#define RING_MIN (64u << 10)
#endif
#ifndef RING_MAX
#define RING_MAX (4u << 20)
#endif
#define RING_PER_STACK 64

/*
 * The hash of a line's frames part. A test of the line cache makes it
 * constant, so that every line collides and every wrong guess is tried.
 */
#ifndef LINE_HASH
#define LINE_HASH(s, n) hash_bytes_wide((s), (n), 0)
#endif

struct folded_state {
	struct profile *p;
	struct parse_stats *st;
	uint64_t scale;
	bool count_only;
	struct span *spans;
	size_t spans_cap;
	uint32_t *ids;
	size_t ids_cap;
	/* The previous line's frames part (after "comm;") and what each span gave. */
	char *prev;
	size_t prev_len, prev_cap, prev_nspans;
	bool prev_ok, prev_delim;
	int prev_stack;
	struct memo *memo;
	size_t memo_cap;
	char *comm; /* NUL-terminated copy for profile__thread() */
	size_t comm_cap;
	/*
	 * Comms seen, by hash: lines of different threads interleave, and
	 * profile__thread() wants a NUL-terminated copy, a strlen() and a strcmp().
	 */
	struct comm_slot {
		const char *comm; /* the profile's copy; NULL: empty */
		size_t len;
		int id;
	} comms[64];
	/*
	 * Sets of two slots, at least twice as many slots as stacks (64 to 128
	 * bytes a stack): with fewer, sets overflow and drop lines that come
	 * back, each then interned again frame by frame.
	 */
	struct line_slot *cache;
	size_t cache_mask;     /* slots - 1 */
	struct frame_view *fv; /* for every frame id below nr_fv */
	size_t nr_fv, fv_cap;
	size_t fv_from; /* the profile's frames before the parse: from here on, each is in fv */
	/*
	 * The text ring: ring_w is where the next byte goes, counted from the
	 * start of the parse, so a position older than ring_size is overwritten.
	 */
	char *ring;
	size_t ring_size; /* a power of two */
	uint64_t ring_w;
	/*
	 * Lines ahead (see look_ahead()): [0] is this line's, [1] the next one's,
	 * [2] the one after.
	 */
	struct ahead {
		const char *fp; /* the frames part; NULL: nothing known */
		size_t len;
		uint64_t h;
		int stack; /* the line cache's guess; -1: none */
	} ahead[3];
};

static bool span_is(const struct span *sp, const char *lit)
{
	size_t n = strlen(lit);

	return sp->len == n && !memcmp(sp->s, lit, n);
}

static bool has_prefix(const struct span *sp, const char *pre, size_t n)
{
	return sp->len >= n && !memcmp(sp->s, pre, n);
}

/*
 * Where a stack without the "-" delimiter turns from user to kernel: the
 * kernel's entry points from user space (syscalls, interrupts and exceptions
 * taken from user mode, kernel threads and the idle task), on x86 and arm64.
 */
static bool is_kernel_entry(const struct span *sp)
{
	uint32_t k;

	/*
	 * It runs on every user frame of a line without "-": first a test of the
	 * first three bytes against those of the names below, without a branch
	 * per name, so that most frames are told "no" at the cost of one
	 * well-predicted branch.
	 */
	if (sp->len < 4)
		return false;
	k = (uint8_t)sp->s[0] | (uint32_t)(uint8_t)sp->s[1] << 8 |
	    (uint32_t)(uint8_t)sp->s[2] << 16;
#define K3(a, b, c) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16)
	if (!((k == K3('a', 's', 'm')) | (k == K3('c', 'o', 'm')) | (k == K3('c', 'p', 'u')) |
	      (k == K3('d', 'o', '_')) | (k == K3('e', 'n', 't')) | (k == K3('e', 'l', '0')) |
	      (k == K3('e', 'l', '1')) | (k == K3('r', 'e', 't')) | (k == K3('r', 'e', 's')) |
	      (k == K3('s', 'e', 'c')) | (k == K3('s', 't', 'a')) | (k == K3('x', '8', '6')) |
	      (k == K3('_', '_', 'd'))))
		return false;
#undef K3
#define PRE(lit) has_prefix(sp, lit, sizeof(lit) - 1)
	switch (sp->s[0]) {
	case 'a':
		return PRE("asm_");
	case 'c':
		return PRE("common_startup_64") || PRE("cpu_startup_entry");
	case 'd':
		return PRE("do_syscall_64") || PRE("do_fast_syscall_32") ||
		       PRE("do_int80_syscall_32");
	case 'e':
		return PRE("entry_SYSCALL") || PRE("entry_INT80") || PRE("entry_SYSENTER") ||
		       PRE("el0t_") || PRE("el0_svc") || PRE("el1h_");
	case 'r':
		return PRE("ret_from_fork") || PRE("rest_init");
	case 's':
		return PRE("secondary_startup_64") || PRE("start_secondary") || PRE("start_kernel");
	case 'x':
		return PRE("x86_64_start_kernel");
	case '_':
		return PRE("__do_fast_syscall_32");
	}
	return false;
#undef PRE
}

/*
 * The next ';' in [p, end), or end. Eight bytes a step (the "has zero byte"
 * trick on p ^ ";;;;;;;;"): frames are short and a call to memchr per frame
 * costs more than the scan.
 */
static inline const char *find_semi(const char *p, const char *end)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t w, hit;

	for (; end - p >= 8; p += 8) {
		memcpy(&w, p, 8);
		w ^= ones * ';';
		hit = (w - ones) & ~w & highs;
		if (hit) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			/* A borrow marks only bytes above a real match: the lowest is it. */
			return p + (__builtin_ctzll(hit) >> 3);
#else
			break;
#endif
		}
	}
	for (; p < end; p++)
		if (*p == ';')
			return p;
	return end;
}

/* Append the span [s, e) to fs->spans; note the first "-" after the comm in *delim. */
static inline int push_span(struct folded_state *fs, const char *s, const char *e, size_t *n,
			    size_t *delim)
{
	if (*n == fs->spans_cap && vec_reserve(fs->spans, fs->spans_cap, *n + 1))
		return -ENOMEM;
	fs->spans[*n].s = s;
	fs->spans[*n].len = e - s;
	if (*delim == SIZE_MAX && e - s == 1 && *s == '-' && *n)
		*delim = *n;
	(*n)++;
	return 0;
}

/*
 * Cut [line, end) at every ';' into fs->spans: *n spans, *delim the index of
 * the "-" span (SIZE_MAX: none). With SSE2, sixteen bytes are compared at
 * once and each ';' is a bit of a mask: the loop branches once per span and
 * once per sixteen bytes, not once per eight bytes of every frame.
 */
static int cut_spans(struct folded_state *fs, const char *line, const char *end, size_t *n,
		     size_t *delim)
{
	const char *s = line, *q = line;
	int err;

	*n = 0;
	*delim = SIZE_MAX;
#ifdef __SSE2__
	const __m128i semi = _mm_set1_epi8(';');

	for (; end - q >= 16; q += 16) {
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)q), semi));

		for (; m; m &= m - 1) {
			const char *e = q + __builtin_ctz(m);

			err = push_span(fs, s, e, n, delim);
			if (err)
				return err;
			s = e + 1;
		}
	}
#endif
	for (;;) {
		const char *e = find_semi(q, end);

		err = push_span(fs, s, e, n, delim);
		if (err || e == end)
			return err;
		s = q = e + 1;
	}
}

/* The length of the common prefix of a and b. */
static size_t common_prefix(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen, i = 0;
	uint64_t x, y;

	for (; i + 8 <= n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return i + (__builtin_ctzll(x ^ y) >> 3);
#else
			break;
#endif
		}
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

static inline const struct line_slot *line_cache__set(const struct folded_state *fs, uint64_t h)
{
	return &fs->cache[h & fs->cache_mask & ~(size_t)1];
}

/* The stack the line whose frames part hashed to h gave last time, if any. */
static struct line_guess line_cache__get(const struct folded_state *fs, uint64_t h)
{
	const struct line_slot *set;

	if (!fs->cache)
		return (struct line_guess){.stack = -1};
	set = line_cache__set(fs, h);
	for (int k = 0; k < 2; k++) {
		if (set[k].stack1 && set[k].hash == h)
			return (struct line_guess){(int)(set[k].stack1 - 1), set[k].n,
						   set[k].frames};
	}
	return (struct line_guess){.stack = -1};
}

/* The stack of a line whose frames part [fp, fp + len) is in the ring, or -1. */
static int ring__find(const struct folded_state *fs, uint64_t h, const char *fp, size_t len)
{
	const struct line_slot *set;

	if (!fs->cache || !fs->ring)
		return -1;
	set = line_cache__set(fs, h);
	for (int k = 0; k < 2; k++) {
		uint64_t pos1 = set[k].text;

		if (!set[k].stack1 || set[k].hash != h || !pos1 || set[k].len != len)
			continue;
		/* Overwritten once the writer is a whole ring past it (or the ring grew). */
		if (fs->ring_w - (pos1 - 1) > fs->ring_size)
			continue;
		if (!memcmp(fs->ring + ((pos1 - 1) & (fs->ring_size - 1)), fp, len))
			return (int)(set[k].stack1 - 1);
	}
	return -1;
}

/* Start fetching the ring's text of the line hashing to h, which ring__find() compares. */
static void ring__prefetch(const struct folded_state *fs, uint64_t h)
{
	const struct line_slot *set;

	if (!fs->cache || !fs->ring)
		return;
	set = line_cache__set(fs, h);
	for (int k = 0; k < 2; k++) {
		const char *t;

		if (!set[k].stack1 || set[k].hash != h || !set[k].text ||
		    fs->ring_w - (set[k].text - 1) > fs->ring_size)
			continue;
		t = fs->ring + ((set[k].text - 1) & (fs->ring_size - 1));
		for (size_t off = 0; off < set[k].len; off += 64)
			__builtin_prefetch(t + off);
		return;
	}
}

/*
 * Copy a frames part into the ring; its position + 1, or 0 when it is not
 * kept (too long, out of memory). A ring that grows starts empty.
 */
static uint64_t ring__put(struct folded_state *fs, const char *fp, size_t len)
{
	size_t want = profile__nr_stacks(fs->p) * RING_PER_STACK, off;
	uint64_t pos;

	/* Doubled only when the double is still within what the stacks ask for. */
	if (!fs->ring || (fs->ring_size < RING_MAX && fs->ring_size * 2 <= want)) {
		size_t size = fs->ring ? fs->ring_size * 2 : RING_MIN;
		char *r = bigmem__alloc(size);

		if (r) {
			bigmem__free(fs->ring, fs->ring_size);
			fs->ring = r;
			fs->ring_size = size;
			/* Every position kept so far is now more than a ring behind. */
			fs->ring_w += size;
		}
	}
	if (!fs->ring || len > fs->ring_size / 16 || len > UINT16_MAX ||
	    fs->ring_w > RING_POS_MASK - 2 * (uint64_t)fs->ring_size)
		return 0;
	off = fs->ring_w & (fs->ring_size - 1);
	if (off + len > fs->ring_size) {
		fs->ring_w += fs->ring_size - off; /* a text is never cut in two */
		off = 0;
	}
	memcpy(fs->ring + off, fp, len);
	pos = fs->ring_w;
	fs->ring_w += len;
	return pos + 1;
}

/*
 * Move what the cache holds into a new one of twice its slots (mask + 1): a
 * set's entries go to one of two sets, by one more bit of their hash, so none
 * is dropped, and the newer stays first.
 */
static void line_cache__move(const struct folded_state *fs, struct line_slot *to, size_t mask)
{
	for (size_t i = 0; fs->cache && i <= fs->cache_mask; i += 2) {
		for (int k = 1; k >= 0; k--) {
			const struct line_slot *e = &fs->cache[i + k];
			struct line_slot *set;

			if (!e->stack1)
				continue;
			set = &to[e->hash & mask & ~(size_t)1];
			set[1] = set[0];
			set[0] = *e;
		}
	}
}

/*
 * Remember that the line hashing to h gave stack; the set's older entry is
 * the one that goes. The cache is only an accelerator: when it cannot grow
 * (out of memory) it stays as it is.
 */
static void line_cache__put(struct folded_state *fs, uint64_t h, int stack, const char *fp,
			    size_t fp_len)
{
	size_t nst = profile__nr_stacks(fs->p), n;
	const uint32_t *frames = profile__stack_at(fs->p, stack, &n);
	struct line_slot *set;
	uint64_t text;

	if (!frames || n > UINT16_MAX)
		return;
	if (!fs->cache || 2 * nst > fs->cache_mask + 1) {
		size_t slots = fs->cache ? (fs->cache_mask + 1) * 2 : LINE_CACHE_MIN;
		struct line_slot *c =
			slots < SIZE_MAX / sizeof(*c) ? bigmem__alloc(slots * sizeof(*c)) : NULL;

		if (c) {
			line_cache__move(fs, c, slots - 1);
			if (fs->cache)
				bigmem__free(fs->cache, (fs->cache_mask + 1) * sizeof(*c));
			fs->cache = c;
			fs->cache_mask = slots - 1;
		}
		if (!fs->cache)
			return;
	}
	set = (struct line_slot *)line_cache__set(fs, h);
	text = ring__put(fs, fp, fp_len);
	/* The same line again (its text had gone from the ring): only the text changes. */
	for (int k = 0; k < 2; k++) {
		if (set[k].stack1 == (uint32_t)stack + 1 && set[k].hash == h) {
			set[k].text = text;
			set[k].len = (uint16_t)fp_len;
			return;
		}
	}
	set[1] = set[0];
	set[0] = (struct line_slot){
		h, text, frames, (uint32_t)stack + 1, (uint16_t)n, (uint16_t)fp_len};
}

/* Whether frame id is (kind, name[0..len)), as profile__frame() would intern it. */
static inline bool frame_is(const struct folded_state *fs, uint32_t id, enum frame_kind kind,
			    const char *name, size_t len)
{
	const struct frame_view *v;

	if (id >= fs->nr_fv)
		return false;
	v = &fs->fv[id];
	return v->kind == (uint32_t)kind && v->len == len && mem_eq(v->name, name, len);
}

/*
 * Intern a frame, and keep fs->fv up to date with the profile's frames. The
 * profile says a frame's name but not its length, which a NUL byte in a name
 * from another parser would hide: a frame is known only once this parser has
 * interned it; frames that were in the profile before are not guessed till then.
 */
static int intern_frame(struct folded_state *fs, enum frame_kind kind, const char *name, size_t len)
{
	int id = profile__frame(fs->p, kind, name, len);
	size_t n = profile__nr_frames(fs->p);

	if (id < 0)
		return id;
	/*
	 * Known already: a frame's name and kind never change. Frames this parse
	 * made are all known, which is told without reading the view (a cache miss).
	 */
	if ((size_t)id < fs->nr_fv &&
	    ((size_t)id >= fs->fv_from || fs->fv[id].kind != FRAME__COUNT))
		return id;
	if (fs->nr_fv < n) {
		if (vec_reserve(fs->fv, fs->fv_cap, n))
			return -ENOMEM;
		for (; fs->nr_fv < n; fs->nr_fv++)
			fs->fv[fs->nr_fv] = (struct frame_view){.kind = FRAME__COUNT};
	}
	fs->fv[id] = (struct frame_view){profile__frame_at(fs->p, id)->name, (uint32_t)len, kind};
	return id;
}

static int thread_of(struct folded_state *fs, const char *comm, size_t len)
{
	struct comm_slot *c = &fs->comms[hash_bytes(comm, len, 0) % 64];
	int id;

	if (c->comm && c->len == len && !memcmp(comm, c->comm, len))
		return c->id;
	if (vec_reserve(fs->comm, fs->comm_cap, len + 1))
		return -ENOMEM;
	memcpy(fs->comm, comm, len);
	fs->comm[len] = '\0';
	id = profile__thread(fs->p, 0, 0, fs->comm);
	if (id >= 0) {
		/* A line has no NUL byte, so the copy is len bytes long too. */
		*c = (struct comm_slot){profile__thread_at(fs->p, id)->comm, len, id};
	}
	return id;
}

static int parse_line(struct folded_state *fs, const char *line, size_t len, size_t lineno)
{
	struct parse_stats *st = fs->st;
	struct profile_weight w = {0};
	const char *sp, *end, *fp, *comm_end;
	size_t nspans = 0, nids = 0, i, delim = SIZE_MAX, reuse = 1, fp_len;
	bool same = false; /* the frames part is the previous line's */
	bool kernel = false;
	/* The line cache's guess, while every frame so far agrees with it. */
	struct line_guess guess = {.stack = -1};
	bool guessing = false;
	uint64_t v, h;
	int err, thread, stack;

	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return 0;
	if (line[0] == '#') {
		st->skipped++;
		return 0;
	}
	if (memchr(line, '\0', len)) {
		parse__malformed(st, lineno, "NUL byte in line");
		return 0;
	}
	for (sp = line + len; sp > line && sp[-1] != ' ' && sp[-1] != '\t'; sp--)
		;
	if (sp == line) {
		parse__malformed(st, lineno, "no value after the last space");
		return 0;
	}
	err = parse__u64(sp, line + len - sp, &v);
	if (err == -EINVAL) {
		parse__malformed(st, lineno, "value is not a non-negative integer");
		return 0;
	}
	if (err)
		return err;
	if (fs->count_only) {
		w.count = v;
	} else {
		if (v > UINT64_MAX / fs->scale)
			return -EOVERFLOW;
		w.count = 1;
		w.off_ns = v * fs->scale;
	}

	/* The stack part: everything before the value's separator. */
	end = sp - 1;
	/*
	 * The frames part's hash, made two lines ago by look_ahead() (or now, for
	 * the first lines), and its line cache set.
	 */
	comm_end = find_semi(line, end);
	fp = comm_end + (comm_end < end);
	fp_len = end - fp;
	if (fp == fs->ahead[0].fp && fp_len == fs->ahead[0].len) {
		h = fs->ahead[0].h; /* the set was prefetched two lines ago */
	} else {
		h = LINE_HASH(fp, fp_len);
		if (fs->cache)
			__builtin_prefetch(line_cache__set(fs, h));
	}
	/* A frames part seen before, byte for byte: the stack it gave, at the cost of a memcmp. */
	if (comm_end > line && (stack = ring__find(fs, h, fp, fp_len)) >= 0) {
		fs->prev_ok = false; /* the spans were not cut: nothing to reuse */
		thread = thread_of(fs, line, comm_end - line);
		if (thread < 0)
			return thread;
		goto add;
	}
	guess = line_cache__get(fs, h);
	/* The guess is checked against the frames' views: fetched while the spans are cut. */
	for (i = 0; i < guess.n && guess.stack >= 0; i++)
		if (guess.frames[i] < fs->nr_fv)
			__builtin_prefetch(&fs->fv[guess.frames[i]]);
	err = cut_spans(fs, line, end, &nspans, &delim);
	if (err)
		return err;
	if (!fs->spans[0].len) {
		parse__malformed(st, lineno, "empty comm");
		return 0;
	}
	if (vec_reserve(fs->ids, fs->ids_cap, nspans) ||
	    vec_reserve(fs->memo, fs->memo_cap, nspans))
		return -ENOMEM;

	/*
	 * Spans ending (with their ';') inside the common prefix are the previous
	 * line's spans, byte for byte. Their kinds match too when both lines agree
	 * on having a "-" delimiter: kinds then depend only on the frames before.
	 */
	if (fs->prev_ok && (delim != SIZE_MAX) == fs->prev_delim) {
		size_t common = common_prefix(fp, fp_len, fs->prev, fs->prev_len);
		same = common == fp_len && fp_len == fs->prev_len;

		while (reuse < nspans && reuse < fs->prev_nspans &&
		       (same || (size_t)(fs->spans[reuse].s + fs->spans[reuse].len - fp) < common))
			reuse++;
	}
	guessing = !same && guess.stack >= 0;

	for (i = 1; i < nspans; i++) {
		struct span f = fs->spans[i];
		char unsym[64];
		enum frame_kind kind;
		int id;

		if (i < reuse) {
			kernel = fs->memo[i].kernel;
			if (fs->memo[i].id >= 0) {
				if (guessing && (nids >= guess.n ||
						 guess.frames[nids] != (uint32_t)fs->memo[i].id))
					guessing = false;
				fs->ids[nids++] = fs->memo[i].id;
			}
			continue;
		}
		fs->memo[i].id = -1;
		if (i == delim) {
			kernel = true;
			fs->memo[i].kernel = kernel;
			continue;
		}
		if (!f.len) {
			fs->memo[i].kernel = kernel;
			continue; /* ";;": nothing to intern */
		}
		if (span_is(&f, "[Missed User Stack]")) {
			kind = FRAME_MISSING;
			/* BCC prints the kernel stack next, without "-" when a stack is missing. */
			kernel = true;
		} else if (span_is(&f, "[Missed Kernel Stack]")) {
			kind = FRAME_MISSING;
		} else if (f.len > 4 && !memcmp(f.s + f.len - 4, "_[k]", 4)) {
			f.len -= 4;
			kind = FRAME_KERNEL;
		} else if (!kernel && f.len > 4 && !memcmp(f.s + f.len - 4, "_[i]", 4)) {
			f.len -= 4;
			kind = FRAME_INLINE;
		} else {
			if (!kernel && delim == SIZE_MAX && is_kernel_entry(&f))
				kernel = true;
			kind = kernel ? FRAME_KERNEL : FRAME_USER;
		}
		/*
		 * "[unknown]", "0x7f12ab34": not a symbol, and not to be taken for one.
		 * Both start with '[' or '0'; the first is common and needs no printf.
		 */
		if (kind != FRAME_MISSING && (f.s[0] == '[' || f.s[0] == '0') &&
		    frame_name__is_raw(f.s, f.len)) {
			if (f.len == 9 && !memcmp(f.s, "[unknown]", 9)) {
				f.s = FRAME_NAME_UNSYMBOLIZED;
				f.len = sizeof(FRAME_NAME_UNSYMBOLIZED) - 1;
			} else {
				f.len = frame_name__unsymbolize(f.s, f.len, unsym, sizeof(unsym));
				f.s = unsym;
			}
		}
		/* A few frames ahead, the name the check will compare (its view is in cache). */
		if (guessing && nids + 3 < guess.n && guess.frames[nids + 3] < fs->nr_fv)
			__builtin_prefetch(fs->fv[guess.frames[nids + 3]].name);
		if (guessing && nids < guess.n &&
		    frame_is(fs, guess.frames[nids], kind, f.s, f.len)) {
			id = (int)guess.frames[nids];
		} else {
			guessing = false;
			id = intern_frame(fs, kind, f.s, f.len);
			if (id < 0)
				return id;
		}
		fs->memo[i].id = id;
		fs->memo[i].kernel = kernel;
		fs->ids[nids++] = id;
	}
	if (vec_reserve(fs->prev, fs->prev_cap, fp_len + 1))
		return -ENOMEM;
	memcpy(fs->prev, fp, fp_len);
	fs->prev_len = fp_len;
	fs->prev_nspans = nspans;
	fs->prev_delim = delim != SIZE_MAX;
	fs->prev_ok = true;

	thread = thread_of(fs, fs->spans[0].s, fs->spans[0].len);
	if (thread < 0)
		return thread;
	if (same) {
		stack = fs->prev_stack;
	} else if (guessing && nids == guess.n) {
		stack = guess.stack;
	} else {
		stack = profile__stack(fs->p, fs->ids, nids);
		if (stack < 0)
			return stack;
	}
	if (!same)
		line_cache__put(fs, h, stack, fp, fp_len);
	fs->prev_stack = stack;
add:
	err = profile__add(fs->p, thread, stack, OFFCPU_STATE_UNKNOWN, &w);
	if (err)
		return err;
	st->records++;
	return 0;
}

/*
 * Memory latency, not work, is most of a line's time on a big profile: its
 * line cache set, its stack's frames, the stack's record and row are cache
 * misses, each needed to find the next. So they are fetched ahead, one step
 * a line: two lines ahead, the set (look_ahead()); one line ahead, the frames
 * and the record the set names (fetch_ahead()); just before the line, the row
 * the record names (profile__prefetch_more()). Hints only: parse_line() takes
 * a hash from here only for the bytes it was made from (same place, same
 * length), and a wrong one would cost time, never a wrong stack.
 */
static void look_ahead(struct folded_state *fs, const char *line, size_t len)
{
	struct ahead *a = &fs->ahead[2];
	const char *end = line + len, *sp, *fp;

	a->fp = NULL;
	a->stack = -1;
	while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (sp = end; sp > line && sp[-1] != ' ' && sp[-1] != '\t'; sp--)
		;
	if (sp == line)
		return;
	end = sp - 1;
	fp = find_semi(line, end);
	fp += fp < end;
	a->fp = fp;
	a->len = end - fp;
	a->h = LINE_HASH(fp, end - fp);
	if (fs->cache)
		__builtin_prefetch(line_cache__set(fs, a->h));
}

static void fetch_ahead(struct folded_state *fs)
{
	struct ahead *a = &fs->ahead[1];
	struct line_guess g;

	a->stack = -1;
	if (!a->fp)
		return;
	g = line_cache__get(fs, a->h);
	a->stack = g.stack;
	if (g.stack < 0)
		return;
	__builtin_prefetch(g.frames);
	__builtin_prefetch(g.frames + g.n - !!g.n);
	profile__prefetch(fs->p, g.stack);
	ring__prefetch(fs, a->h);
}

int folded__parse(FILE *in, struct profile *p, const struct folded_opts *opts,
		  struct parse_stats *stats)
{
	struct parse_stats local;
	struct folded_state fs = {
		.p = p,
		.st = stats ? stats : &local,
		.scale = opts && opts->value_scale_ns ? opts->value_scale_ns : 1000,
		.count_only = opts && opts->count_only,
	};
	struct line_reader *lr;
	const char *line, *next;
	size_t len, next_len;
	int err;

	memset(fs.st, 0, sizeof(*fs.st));
	fs.fv_from = profile__nr_frames(p);
	lr = line_reader__new(in);
	if (!lr)
		return -ENOMEM;
	while ((err = line_reader__next(lr, &line, &len)) > 0) {
		fs.st->lines++;
		fs.ahead[0] = fs.ahead[1];
		fs.ahead[1] = fs.ahead[2];
		if (fs.ahead[0].fp && fs.ahead[0].stack >= 0)
			profile__prefetch_more(p, fs.ahead[0].stack);
		fetch_ahead(&fs);
		if (line_reader__peek2(lr, &next, &next_len) > 0)
			look_ahead(&fs, next, next_len);
		else
			fs.ahead[2].fp = NULL;
		err = parse_line(&fs, line, len, fs.st->lines);
		if (err) {
			fs.st->error_line = fs.st->lines;
			break;
		}
	}
	line_reader__free(lr);
	free(fs.spans);
	free(fs.ids);
	free(fs.comm);
	free(fs.prev);
	free(fs.memo);
	if (fs.cache)
		bigmem__free(fs.cache, (fs.cache_mask + 1) * sizeof(*fs.cache));
	free(fs.fv);
	bigmem__free(fs.ring, fs.ring_size);
	return err;
}
