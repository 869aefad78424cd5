// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/kallsyms: "ADDR TYPE NAME[\t[MODULE]]" lines, in no particular order,
 * with several names at one address and no sizes. Every symbol bounds the one
 * before it; only text symbols can be the answer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/symbolize.h"
#include "util/vec.h"
#include "util/hex.h"

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset into the string arena */
	uint32_t seq;  /* line number, for a stable choice among aliases */
	uint8_t type_rank;
	uint8_t underscores;
	bool text;
};

/*
 * While loading, syms (24 bytes a symbol, what the sort needs); once
 * finished, addr and name (12: a core kernel has over 120,000 symbols, kept
 * for the whole capture). name's top bit says text.
 */
#define KSYM_TEXT (1u << 31)

struct ksym_lazy;

struct ksyms {
	struct ksym_lazy *lazy; /* answers on demand (ksyms__new_lazy) */
	struct ksym *syms;
	size_t nr, cap;
	uint64_t *addr;
	uint32_t *name;
	char *str;
	size_t str_len, str_cap;
};

/* An address past the last symbol of all is still inside it only this far. */
#define KSYM_LAST_EXTENT 4096

static int add_str(struct ksyms *k, const char *s, size_t n, uint32_t *off)
{
	/* Offsets into the strings are 31 bits (the top one says text). */
	if (k->str_len + n + 1 > KSYM_TEXT)
		return -E2BIG;
	if (vec_reserve(k->str, k->str_cap, k->str_len + n + 1))
		return -ENOMEM;
	memcpy(k->str + k->str_len, s, n);
	k->str[k->str_len + n] = '\0';
	*off = k->str_len;
	k->str_len += n + 1;
	return 0;
}

/* Markers such as _etext end a region of code; they are never a function. */
static bool is_end_marker(const char *name, size_t n)
{
	static const char suffix[] = "_text_end";
	size_t sn = sizeof(suffix) - 1;

	if ((n == 6 && !memcmp(name, "_etext", 6)) || (n == 10 && !memcmp(name, "_einittext", 10)))
		return true;
	return n >= sn && !memcmp(name + n - sn, suffix, sn);
}

static int add_sym(struct ksyms *k, uint64_t addr, char type, const char *name, size_t n)
{
	struct ksym *s;
	int err;

	if (vec_reserve(k->syms, k->cap, k->nr + 1))
		return -ENOMEM;
	s = &k->syms[k->nr];
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	s->seq = k->nr;
	/* t/T is code, w/W is a weak symbol that is code in practice in kallsyms */
	s->text = strchr("tTwW", type) && !is_end_marker(name, n);
	/* among aliases prefer global, then local, then weak */
	s->type_rank = type == 'T' ? 0 : type == 't' ? 1 : type == 'W' ? 2 : 3;
	while (s->underscores < n && name[s->underscores] == '_' && s->underscores < 255)
		s->underscores++;
	err = s->text ? add_str(k, name, n, &s->name) : 0;
	if (err)
		return err;
	k->nr++;
	return 0;
}

/* Order by address; at one address the name a reader expects comes first. */
static int cmp_sym(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->text != b->text)
		return a->text ? -1 : 1;
	if (a->type_rank != b->type_rank)
		return a->type_rank - b->type_rank;
	if (a->underscores != b->underscores)
		return a->underscores - b->underscores;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int ksyms__add_line(struct ksyms *k, const char *line)
{
	const char *p, *name;
	uint64_t addr;
	char type;

	addr = hex__parse(line, &p);
	if (p == line || *p != ' ')
		return 0;
	p++;
	type = *p;
	if (!type || p[1] != ' ')
		return 0;
	name = p + 2;
	p = name + strcspn(name, " \t\n");
	/* unprivileged readers see every address as zero: nothing to resolve */
	if (p == name || !addr)
		return 0;
	return add_sym(k, addr, type, name, p - name);
}

struct ksyms *ksyms__new(void)
{
	return calloc(1, sizeof(struct ksyms));
}

int ksyms__finish(struct ksyms *k)
{
	size_t out = 0;
	void *fit;

	if (k->nr)
		qsort(k->syms, k->nr, sizeof(*k->syms), cmp_sym);
	/* one entry per address: the best alias, or a bare bound when none is text */
	for (size_t i = 0; i < k->nr; i++)
		if (!out || k->syms[out - 1].addr != k->syms[i].addr)
			k->syms[out++] = k->syms[i];
	k->nr = out;
	/* Kept for the whole capture: only what lookups read, without growth's slack. */
	k->addr = malloc((k->nr ? k->nr : 1) * sizeof(*k->addr));
	k->name = malloc((k->nr ? k->nr : 1) * sizeof(*k->name));
	if (!k->addr || !k->name)
		return -ENOMEM;
	for (size_t i = 0; i < k->nr; i++) {
		k->addr[i] = k->syms[i].addr;
		k->name[i] = k->syms[i].name | (k->syms[i].text ? KSYM_TEXT : 0);
	}
	free(k->syms);
	k->syms = NULL;
	k->cap = 0;
	if (k->str_len && (fit = realloc(k->str, k->str_len))) {
		k->str = fit;
		k->str_cap = k->str_len;
	}
	return 0;
}

struct ksyms *ksyms__load(FILE *in)
{
	struct ksyms *k = ksyms__new();
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	if (!k)
		return NULL;
	while (getline(&line, &cap, in) > 0) {
		err = ksyms__add_line(k, line);
		if (err)
			goto cleanup;
	}
	if (ferror(in)) {
		err = -EIO;
		goto cleanup;
	}
	err = ksyms__finish(k);
cleanup:
	free(line);
	if (err) {
		ksyms__free(k);
		errno = -err;
		return NULL;
	}
	return k;
}

/*
 * On demand: a symbol's range and name asked of ask() the first time an
 * address in it is resolved, then kept, sorted by start (a capture's
 * kernel stacks touch hundreds of functions, not 100,000). An address ask()
 * cannot name is kept as a one-byte miss, asked once.
 */
struct ksym_range {
	uint64_t lo, hi;
	uint32_t name; /* offset into str, or KSYM_NONE */
};

#define KSYM_NONE UINT32_MAX

struct ksym_lazy {
	ksyms_ask_fn ask;
	void *ctx;
	void (*free_ctx)(void *ctx);
	struct ksym_range *r;
	size_t nr, cap;
	uint64_t asked;
	char *str;
	size_t str_len, str_cap;
};

struct ksyms *ksyms__new_lazy(ksyms_ask_fn ask, void *ctx, void (*free_ctx)(void *ctx))
{
	struct ksyms *k = calloc(1, sizeof(*k));

	if (k && !(k->lazy = calloc(1, sizeof(*k->lazy)))) {
		free(k);
		k = NULL;
	}
	if (!k) {
		if (free_ctx)
			free_ctx(ctx);
		return NULL;
	}
	k->lazy->ask = ask;
	k->lazy->ctx = ctx;
	k->lazy->free_ctx = free_ctx;
	return k;
}

/* The first range ending above addr. */
static size_t lazy_find(const struct ksym_lazy *l, uint64_t addr)
{
	size_t lo = 0, hi = l->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->r[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const char *lazy_resolve(struct ksym_lazy *l, uint64_t addr, uint64_t *offset)
{
	struct ksym_range nr = {addr, addr + 1, KSYM_NONE};
	char name[512];
	size_t i = lazy_find(l, addr);
	uint64_t lo, size;

	if (i == l->nr || l->r[i].lo > addr) {
		l->asked++;
		if (!l->ask(l->ctx, addr, name, sizeof(name), &lo, &size) && lo <= addr &&
		    addr - lo < size) {
			nr.lo = lo;
			nr.hi = lo + size;
			/* Clip to the neighbours: ranges stay disjoint and sorted. */
			if (i && l->r[i - 1].hi > nr.lo)
				nr.lo = l->r[i - 1].hi;
			if (i < l->nr && l->r[i].lo < nr.hi)
				nr.hi = l->r[i].lo;
			if (vec_reserve(l->str, l->str_cap, l->str_len + strlen(name) + 1))
				return NULL;
			nr.name = l->str_len;
			memcpy(l->str + l->str_len, name, strlen(name) + 1);
			l->str_len += strlen(name) + 1;
		}
		if (vec_reserve(l->r, l->cap, l->nr + 1))
			return NULL;
		memmove(&l->r[i + 1], &l->r[i], (l->nr - i) * sizeof(*l->r));
		l->r[i] = nr;
		l->nr++;
	}
	if (l->r[i].name == KSYM_NONE)
		return NULL;
	if (offset)
		*offset = addr - l->r[i].lo;
	return l->str + l->r[i].name;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	if (k->lazy) {
		if (k->lazy->free_ctx)
			k->lazy->free_ctx(k->lazy->ctx);
		free(k->lazy->r);
		free(k->lazy->str);
		free(k->lazy);
	}
	free(k->syms);
	free(k->addr);
	free(k->name);
	free(k->str);
	free(k);
}

const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi = k && k->addr ? k->nr : 0;
	uint64_t at;

	if (k && k->lazy)
		return lazy_resolve(k->lazy, addr, offset);

	/* the last symbol starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->addr[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	at = k->addr[lo - 1];
	if (!(k->name[lo - 1] & KSYM_TEXT) || (lo == k->nr && addr - at >= KSYM_LAST_EXTENT))
		return NULL;
	if (offset)
		*offset = addr - at;
	return k->str + (k->name[lo - 1] & ~KSYM_TEXT);
}

size_t ksyms__count(const struct ksyms *k)
{
	size_t n = 0;

	for (size_t i = 0; k && k->lazy && i < k->lazy->nr; i++)
		n += k->lazy->r[i].name != KSYM_NONE;
	for (size_t i = 0; k && k->name && i < k->nr; i++)
		n += !!(k->name[i] & KSYM_TEXT);
	return n;
}
