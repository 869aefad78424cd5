// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/procgroups.h"

static int cmp_group(const void *a, const void *b)
{
	const struct proc_group *x = a, *y = b;

	if (x->e.off_ns != y->e.off_ns)
		return x->e.off_ns > y->e.off_ns ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

/* A group's index by name: names sorted, each with its group. */
struct name_ix {
	const char *name;
	size_t group;
};

static int cmp_name_ix(const void *a, const void *b)
{
	return strcmp(((const struct name_ix *)a)->name, ((const struct name_ix *)b)->name);
}

struct proc_groups *proc_groups__new(const struct budget *b)
{
	size_t np = b->nr_procs, ng = 0;
	struct proc_groups *gs = calloc(1, sizeof(*gs));
	struct proc_group *g = calloc(np ? np : 1, sizeof(*g));
	struct name_ix *ix = malloc((np ? np : 1) * sizeof(*ix));
	size_t *members = malloc((np ? np : 1) * sizeof(*members));

	if (!gs || !g || !ix || !members) {
		free(gs);
		gs = NULL;
		errno = ENOMEM;
		goto cleanup;
	}
	/* Names sorted with their first process; each process then finds its group by name. */
	for (size_t i = 0; i < np; i++)
		ix[i] = (struct name_ix){b->procs[i].comm ? b->procs[i].comm : "", i};
	qsort(ix, np, sizeof(*ix), cmp_name_ix);
	for (size_t i = 0; i < np; i++) {
		if (i && !strcmp(ix[i - 1].name, ix[i].name)) {
			ix[i].group = ix[i - 1].group;
			continue;
		}
		g[ng].comm = ix[i].name;
		ix[i].group = ng++;
	}
	for (size_t i = 0; i < np; i++) {
		struct name_ix key = {b->procs[i].comm ? b->procs[i].comm : ""}, *k;

		k = bsearch(&key, ix, np, sizeof(*ix), cmp_name_ix);
		g[k->group].nr_procs++;
		budget_entry__add(&g[k->group].e, &b->procs[i]);
	}
	/* One array of members, cut into the groups in the budget's order. */
	for (size_t j = 0, at = 0; j < ng; j++) {
		g[j].procs = members + at;
		at += g[j].nr_procs;
		g[j].nr_procs = 0;
	}
	for (size_t i = 0; i < np; i++) {
		struct name_ix key = {b->procs[i].comm ? b->procs[i].comm : ""}, *k;

		k = bsearch(&key, ix, np, sizeof(*ix), cmp_name_ix);
		g[k->group].procs[g[k->group].nr_procs++] = i;
	}
	for (size_t j = 0; j < ng; j++) {
		g[j].e.pid = g[j].e.tid = 0;
		g[j].e.comm = g[j].comm;
	}
	qsort(g, ng, sizeof(*g), cmp_group);
	*gs = (struct proc_groups){g, ng, members};
	g = NULL;
	members = NULL;
cleanup:
	free(g);
	free(ix);
	free(members);
	return gs;
}

void proc_groups__free(struct proc_groups *gs)
{
	if (!gs)
		return;
	free(gs->members);
	free(gs->groups);
	free(gs);
}
