// SPDX-License-Identifier: GPL-2.0-only
/* The timeline model: a growable array (its text form: parse/timeline.h). */
#include <errno.h>
#include <stdlib.h>

#include "model/timeline.h"
#include "util/vec.h"

struct timeline {
	struct timeline_interval *iv;
	size_t nr, cap;
	struct timeline_info info;
};

struct timeline *timeline__new(void)
{
	return calloc(1, sizeof(struct timeline));
}

void timeline__free(struct timeline *t)
{
	if (!t)
		return;
	free(t->iv);
	free(t);
}

int timeline__append(struct timeline *t, const struct timeline_interval *iv)
{
	if (iv->runq_ns > iv->dur_ns || iv->start_ns + iv->dur_ns < iv->start_ns ||
	    (unsigned)iv->state >= OFFCPU_STATE__COUNT)
		return -EINVAL;
	if (vec_reserve(t->iv, t->cap, t->nr + 1))
		return -ENOMEM;
	t->iv[t->nr++] = *iv;
	return 0;
}

void timeline__set_info(struct timeline *t, const struct timeline_info *info)
{
	t->info = *info;
}

const struct timeline_info *timeline__info(const struct timeline *t)
{
	return &t->info;
}

size_t timeline__nr(const struct timeline *t)
{
	return t ? t->nr : 0;
}

const struct timeline_interval *timeline__at(const struct timeline *t, size_t idx)
{
	return t && idx < t->nr ? &t->iv[idx] : NULL;
}

static int cmp_tid_start(const void *a, const void *b, void *ctx)
{
	const struct timeline *t = ctx;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct timeline_interval *x = &t->iv[ia], *y = &t->iv[ib];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

int timeline__sorted(const struct timeline *t, size_t **idx)
{
	size_t *v;

	*idx = NULL;
	if (!t || !t->nr)
		return 0;
	v = malloc(t->nr * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr; i++)
		v[i] = i;
	qsort_r(v, t->nr, sizeof(*v), cmp_tid_start, (void *)t);
	*idx = v;
	return 0;
}
