// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "symbolize/symtab.h"

/* 24 bytes: a host-wide capture indexes tens of thousands of symbols at its stop. */
struct tsym {
	uint64_t start;
	const char *name;
	uint32_t size;	   /* a function's: never near 4 GB */
	uint8_t bind_rank; /* 0 global, 1 weak, 2 local */
};

struct symtab {
	struct tsym *s;
	size_t nr;
	uint64_t max_size; /* of any symbol: how far back an enclosing one may start */
};

/* How many symbols below an address a lookup checks for one that still holds it. */
#define SYMTAB_NEST_SCAN 64

static int cmp_tsym(const void *pa, const void *pb)
{
	const struct tsym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->bind_rank != b->bind_rank)
		return a->bind_rank - b->bind_rank;
	/* the larger one first, so that it is the one kept */
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return strcmp(a->name, b->name);
}

static bool wanted(const GElf_Sym *sym, const char *name)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (!name || !*name || sym->st_shndx == SHN_UNDEF || sym->st_shndx == SHN_ABS)
		return false;
	/* arm64 and arm mapping symbols ($x, $d) mark code and data, not functions */
	if (name[0] == '$')
		return false;
	return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE;
}

struct symtab *symtab__build(Dwfl_Module *mod)
{
	struct symtab *t = calloc(1, sizeof(*t));
	int nsym = dwfl_module_getsymtab(mod);
	size_t out = 0;

	if (!t)
		return NULL;
	if (nsym <= 0)
		return t;
	t->s = malloc(nsym * sizeof(*t->s));
	if (!t->s) {
		free(t);
		return NULL;
	}
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		int bind;

		if (!wanted(&sym, name))
			continue;
		bind = GELF_ST_BIND(sym.st_info);
		t->s[t->nr++] = (struct tsym){
			.start = addr,
			.size = sym.st_size > UINT32_MAX ? UINT32_MAX : (uint32_t)sym.st_size,
			.name = name,
			.bind_rank = bind == STB_GLOBAL ? 0
				     : bind == STB_WEAK ? 1
							: 2,
		};
	}
	if (t->nr)
		qsort(t->s, t->nr, sizeof(*t->s), cmp_tsym);
	/* one symbol per address: the first after sorting */
	for (size_t i = 0; i < t->nr; i++) {
		if (out && t->s[out - 1].start == t->s[i].start)
			continue;
		t->s[out++] = t->s[i];
		if (t->s[i].size > t->max_size)
			t->max_size = t->s[i].size;
	}
	t->nr = out;
	return t;
}

void symtab__free(struct symtab *t)
{
	if (!t)
		return;
	free(t->s);
	free(t);
}

const char *symtab__resolve(const struct symtab *t, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi = t ? t->nr : 0;
	const struct tsym *hit = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->s[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* the innermost sized symbol holding addr: the nearest below it, or one enclosing that */
	for (size_t i = lo, seen = 0; i > 0 && seen < SYMTAB_NEST_SCAN; i--, seen++) {
		const struct tsym *c = &t->s[i - 1];

		if (addr - c->start >= t->max_size)
			break;
		if (c->size && addr - c->start < c->size) {
			hit = c;
			break;
		}
	}
	if (!hit && !t->s[lo - 1].size)
		hit = &t->s[lo - 1];
	if (!hit)
		return NULL;
	if (offset)
		*offset = addr - hit->start;
	return hit->name;
}

size_t symtab__count(const struct symtab *t)
{
	return t ? t->nr : 0;
}

const char *symtab__any_name(const struct symtab *t)
{
	return t && t->nr ? t->s[0].name : NULL;
}
