// SPDX-License-Identifier: GPL-2.0-only
/* The CO-RE candidates of the kernel's BTF as a small BTF: see corebtf.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "collect/corebtf.h"
#include "collect/kbtf.h"
#include "util/hash.h"
#include "util/vec.h"

/* The kinds a relocation's root can have, on either side. */
static bool root_kind(int kind)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case 16: /* BTF_KIND_FLOAT */
	case 19: /* BTF_KIND_ENUM64 */
		return true;
	default:
		return false;
	}
}

/*
 * A name's length less its flavour suffix: libbpf's rule, the last "___"
 * with no underscore on either side ("cgroup___old": 6).
 */
static size_t essential_len(const char *name, size_t len)
{
	for (size_t i = len >= 5 ? len - 5 + 1 : 0; i-- > 0;)
		if (name[i] != '_' && name[i + 1] == '_' && name[i + 2] == '_' &&
		    name[i + 3] == '_' && name[i + 4] != '_')
			return i + 1;
	return len;
}

/* The local names, an open-addressed set (power-of-two slots, NULL when free). */
struct names {
	const char **name;
	size_t *len;
	size_t mask;
	uint64_t lens; /* bit l set: some name has essential length l (l < 64) */
};

static size_t names_slot(const struct names *s, const char *name, size_t len)
{
	size_t i = hash_bytes(name, len, 0) & s->mask;

	while (s->name[i] && (s->len[i] != len || memcmp(s->name[i], name, len)))
		i = (i + 1) & s->mask;
	return i;
}

static bool names_has(const struct names *s, const char *name, size_t len)
{
	if (len < 64 && !(s->lens >> len & 1))
		return false;
	return s->name[names_slot(s, name, len)] != NULL;
}

static int names_of(const struct btf *local, struct names *s)
{
	uint32_t n = btf__type_cnt(local);
	size_t cap = 16;

	while (cap < 2 * (size_t)n)
		cap *= 2;
	s->name = calloc(cap, sizeof(*s->name));
	s->len = calloc(cap, sizeof(*s->len));
	if (!s->name || !s->len)
		return -ENOMEM;
	s->mask = cap - 1;
	s->lens = 0;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(local, id);
		const char *name = btf__name_by_offset(local, t->name_off);
		size_t len, i;

		if (!root_kind(btf_kind(t)) || !name || !name[0])
			continue;
		len = essential_len(name, strlen(name));
		i = names_slot(s, name, len);
		s->name[i] = name;
		s->len[i] = len;
		if (len < 64)
			s->lens |= 1ull << len;
	}
	return 0;
}

/* A type id the kernel BTF refers to, by where it sits in the type's record. */
struct ref {
	uint32_t *at;
	bool pointer; /* a pointer's target: made void */
};

/*
 * Where the type whose record is at rec keeps the type ids it refers to, into
 * r (room for all); the count. The caller reads them, or patches a copy.
 */
static size_t refs_of(uint8_t *rec, struct ref *r)
{
	struct btf_type *t = (struct btf_type *)rec;
	size_t n = 0, vlen = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		r[n++] = (struct ref){&t->type, true};
		break;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_VAR:
	case 17: /* BTF_KIND_DECL_TAG */
	case 18: /* BTF_KIND_TYPE_TAG */
		r[n++] = (struct ref){&t->type, false};
		break;
	case BTF_KIND_ARRAY: {
		struct btf_array *a = (struct btf_array *)(t + 1);

		r[n++] = (struct ref){&a->type, false};
		r[n++] = (struct ref){&a->index_type, false};
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (size_t i = 0; i < vlen; i++)
			r[n++] = (struct ref){&((struct btf_member *)(t + 1))[i].type, false};
		break;
	case BTF_KIND_FUNC_PROTO:
		r[n++] = (struct ref){&t->type, false};
		for (size_t i = 0; i < vlen; i++)
			r[n++] = (struct ref){&((struct btf_param *)(t + 1))[i].type, false};
		break;
	case BTF_KIND_DATASEC:
		for (size_t i = 0; i < vlen; i++)
			r[n++] = (struct ref){&((struct btf_var_secinfo *)(t + 1))[i].type, false};
		break;
	default:
		break;
	}
	return n;
}

/* Where the type whose record is at rec keeps its name offsets, into at (room for all); the count.
 */
static size_t names_in(uint8_t *rec, uint32_t **at)
{
	struct btf_type *t = (struct btf_type *)rec;
	size_t n = 0, vlen = btf_vlen(t);

	at[n++] = &t->name_off;
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (size_t i = 0; i < vlen; i++)
			at[n++] = &((struct btf_member *)(t + 1))[i].name_off;
		break;
	case BTF_KIND_ENUM:
		for (size_t i = 0; i < vlen; i++)
			at[n++] = &((struct btf_enum *)(t + 1))[i].name_off;
		break;
	case 19: /* BTF_KIND_ENUM64: name_off, val_lo32, val_hi32 */
		for (size_t i = 0; i < vlen; i++)
			at[n++] = (uint32_t *)(rec + sizeof(*t) + 12 * i);
		break;
	case BTF_KIND_FUNC_PROTO:
		for (size_t i = 0; i < vlen; i++)
			at[n++] = &((struct btf_param *)(t + 1))[i].name_off;
		break;
	default:
		break;
	}
	return n;
}

static bool bit_test(const uint64_t *bits, uint32_t id)
{
	return bits[id / 64] >> (id % 64) & 1;
}

/* The types kept (a bit per kernel type id) and those whose references are still to follow. */
struct closure {
	uint64_t *keep;
	uint32_t *work;
	size_t nwork, cap;
	long kept;
};

/* Keep id and queue it. 0 or -ENOMEM. */
static int closure_add(struct closure *c, uint32_t id)
{
	if (vec_reserve(c->work, c->cap, c->nwork + 1))
		return -ENOMEM;
	c->work[c->nwork++] = id;
	c->keep[id / 64] |= 1ull << (id % 64);
	c->kept++;
	return 0;
}

/* The roots and their by-value closure, marked in keep; the count kept. */
static long closure(const struct kbtf *k, const struct names *want, uint64_t *keep)
{
	struct closure c = {.keep = keep};
	struct ref *r = NULL;
	size_t rcap = 0;
	int err = 0;

	for (uint32_t id = 1; id < k->nr && !err; id++) {
		const struct btf_type *t = kbtf__type(k, id);
		const char *name;

		if (!t->name_off || !root_kind(btf_kind(t)))
			continue;
		name = kbtf__str(k, t->name_off);
		if (names_has(want, name, essential_len(name, strlen(name))))
			err = closure_add(&c, id);
	}
	while (c.nwork && !err) {
		const struct btf_type *t = kbtf__type(k, c.work[--c.nwork]);
		size_t n;

		if (vec_reserve(r, rcap, (size_t)btf_vlen(t) + 2)) {
			err = -ENOMEM;
			break;
		}
		/* only read through here: the kernel's BTF is mapped read-only */
		n = refs_of((uint8_t *)t, r);
		for (size_t i = 0; i < n && !err; i++) {
			uint32_t to = *r[i].at;

			if (!r[i].pointer && to && to < k->nr && !bit_test(keep, to))
				err = closure_add(&c, to);
		}
	}
	free(c.work);
	free(r);
	return err ? err : c.kept;
}

/* The new id of kept kernel type id (ids sorted): 1 + its index. */
static uint32_t new_id(const uint32_t *ids, size_t n, uint32_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[lo] == id ? (uint32_t)lo + 1 : 0;
}

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static int buf_add(struct buf *b, const void *data, size_t len)
{
	if (vec_reserve(b->p, b->cap, b->len + len))
		return -ENOMEM;
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

int corebtf__make(const struct kbtf *k, const struct btf *local, void **out, size_t *len,
		  size_t *nr_types)
{
	struct names want = {0};
	struct buf types = {0}, strs = {0};
	struct btf_header h = {.magic = 0xeb9f, .version = 1, .hdr_len = sizeof(h)};
	uint64_t *keep = NULL;
	uint32_t *ids = NULL, **names = NULL;
	struct ref *r = NULL;
	size_t n = 0, rcap = 0, ncap = 0;
	long kept;
	int err;

	*out = NULL;
	*len = 0;
	if ((err = names_of(local, &want)))
		goto cleanup;
	keep = calloc(k->nr / 64 + 1, sizeof(*keep));
	if (!keep) {
		err = -ENOMEM;
		goto cleanup;
	}
	kept = closure(k, &want, keep);
	if (kept < 0) {
		err = (int)kept;
		goto cleanup;
	}
	ids = malloc(((size_t)kept + 1) * sizeof(*ids));
	/* the header first, filled in at the end; the strings follow the types */
	if (!ids || buf_add(&types, &h, sizeof(h)) || buf_add(&strs, "", 1)) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (uint32_t id = 1; id < k->nr; id++)
		if (bit_test(keep, id))
			ids[n++] = id;
	for (size_t i = 0; i < n; i++) {
		const struct btf_type *t = kbtf__type(k, ids[i]);
		size_t at = types.len, nr, vlen = btf_vlen(t);

		/* every kind has a length here: kbtf__from_mem() refused any other */
		if ((err = buf_add(&types, t, (size_t)kbtf__type_len(t))) ||
		    vec_reserve(r, rcap, vlen + 2) || vec_reserve(names, ncap, vlen + 1)) {
			err = -ENOMEM;
			goto cleanup;
		}
		nr = refs_of(types.p + at, r);
		for (size_t j = 0; j < nr; j++)
			*r[j].at = r[j].pointer ? 0 : new_id(ids, n, *r[j].at);
		nr = names_in(types.p + at, names);
		for (size_t j = 0; j < nr; j++) {
			const char *s = kbtf__str(k, *names[j]);
			size_t off = strs.len;

			if (!s[0]) {
				*names[j] = 0;
				continue;
			}
			/* names[] point into types.p, which buf_add() below does not move */
			if ((err = buf_add(&strs, s, strlen(s) + 1)))
				goto cleanup;
			*names[j] = (uint32_t)off;
		}
	}
	h.type_len = (uint32_t)(types.len - sizeof(h));
	h.str_off = h.type_len;
	h.str_len = (uint32_t)strs.len;
	if ((err = buf_add(&types, strs.p, strs.len)))
		goto cleanup;
	memcpy(types.p, &h, sizeof(h));
	*out = types.p;
	*len = types.len;
	types.p = NULL;
	if (nr_types)
		*nr_types = n;
cleanup:
	free(want.name);
	free(want.len);
	free(keep);
	free(ids);
	free(names);
	free(r);
	free(types.p);
	free(strs.p);
	return err;
}
