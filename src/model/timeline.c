// SPDX-License-Identifier: GPL-2.0-only
/* The timeline model: a growable array (its text form: parse/timeline.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/timeline.h"
#include "util/vec.h"

struct timeline {
	struct timeline_interval *iv;
	size_t nr, cap;
	struct timeline_info info;
	char **irqs; /* waker_irq N is irqs[N - 1] */
	size_t nr_irqs, cap_irqs;
};

struct timeline *timeline__new(void)
{
	return calloc(1, sizeof(struct timeline));
}

void timeline__free(struct timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_irqs; i++)
		free(t->irqs[i]);
	free(t->irqs);
	free(t->iv);
	free(t);
}

int timeline__append(struct timeline *t, const struct timeline_interval *iv)
{
	if (iv->runq_ns > iv->dur_ns || iv->start_ns + iv->dur_ns < iv->start_ns ||
	    (unsigned)iv->state >= OFFCPU_STATE__COUNT || iv->waker_irq > t->nr_irqs ||
	    (iv->waker_irq && iv->waker_tid))
		return -EINVAL;
	if (vec_reserve(t->iv, t->cap, t->nr + 1))
		return -ENOMEM;
	t->iv[t->nr++] = *iv;
	return 0;
}

/* Few distinct contexts per capture (tens): a linear search is enough. */
int timeline__irq(struct timeline *t, const char *name)
{
	char *copy;

	if (!name || !*name)
		return -EINVAL;
	for (size_t i = 0; i < t->nr_irqs; i++)
		if (!strcmp(t->irqs[i], name))
			return (int)(i + 1);
	if (t->nr_irqs >= INT32_MAX || vec_reserve(t->irqs, t->cap_irqs, t->nr_irqs + 1))
		return -ENOMEM;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	t->irqs[t->nr_irqs++] = copy;
	return (int)t->nr_irqs;
}

const char *timeline__irq_name(const struct timeline *t, uint32_t id)
{
	return t && id && id <= t->nr_irqs ? t->irqs[id - 1] : NULL;
}

size_t timeline__nr_irqs(const struct timeline *t)
{
	return t ? t->nr_irqs : 0;
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
