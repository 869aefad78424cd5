// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "model/integrity.h"

const char *integrity_status__name(enum integrity_status s)
{
	switch (s) {
	case INTEGRITY_COMPLETE:
		return "complete";
	case INTEGRITY_PARTIAL:
		return "partial";
	case INTEGRITY_UNKNOWN:
		break;
	}
	return "unknown";
}

const char *integrity_class__name(enum integrity_class c)
{
	switch (c) {
	case INTEGRITY_EDGE:
		return "edge";
	case INTEGRITY_FACT:
		return "fact";
	case INTEGRITY_LOSS:
		break;
	}
	return "loss";
}

enum integrity_class integrity__class(const char *name)
{
	if (!strcmp(name, "inflight_at_start") || !strcmp(name, "inflight_at_stop"))
		return INTEGRITY_EDGE;
	if (!strcmp(name, "interrupted") || !strcmp(name, "threads_never_ran"))
		return INTEGRITY_FACT;
	return INTEGRITY_LOSS;
}

bool integrity__unbounded(const char *name)
{
	static const char *const names[] = {
		"collector_killed", "collector_timeout", "attach_unconfirmed", "drain_failed",
		"parse_overflow",   "map_full_threads",	 "map_full_procs",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

void integrity__sum(const struct integrity *in, enum integrity_class c, uint64_t *count,
		    uint64_t *affected_ns)
{
	*count = *affected_ns = 0;
	for (size_t i = 0; i < in->nr_losses; i++) {
		if (integrity__class(in->losses[i].name) != c)
			continue;
		*count = sat_add(*count, in->losses[i].count);
		*affected_ns = sat_add(*affected_ns, in->losses[i].affected_ns);
	}
}

/* A name longer than a loss holds is kept cut, and found by its cut form. */
static struct integrity_loss *find(const struct integrity *in, const char *name)
{
	for (size_t i = 0; i < in->nr_losses; i++)
		if (!strncmp(in->losses[i].name, name, sizeof(in->losses[i].name) - 1))
			return (struct integrity_loss *)&in->losses[i];
	return NULL;
}

int integrity__add_loss(struct integrity *in, const char *name, uint64_t count,
			uint64_t affected_ns)
{
	struct integrity_loss *l = find(in, name);

	if (!l) {
		if (in->nr_losses == INTEGRITY_MAX_LOSSES)
			return -ENOSPC;
		l = &in->losses[in->nr_losses++];
		memset(l, 0, sizeof(*l));
		strncpy(l->name, name, sizeof(l->name) - 1);
	}
	if (l->count + count < l->count || l->affected_ns + affected_ns < l->affected_ns)
		return -EOVERFLOW;
	l->count += count;
	l->affected_ns += affected_ns;
	return 0;
}

const struct integrity_loss *integrity__loss(const struct integrity *in, const char *name)
{
	return find(in, name);
}

uint64_t integrity__lost_stack_traces(const struct integrity *in)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < in->nr_losses; i++) {
		const char *n = in->losses[i].name;

		if (strcmp(n, "lost_stack_traces") && strcmp(n, "lost_stacks") &&
		    !strstr(n, "_stack_errors_"))
			continue;
		if (sum + in->losses[i].count < sum)
			return UINT64_MAX;
		sum += in->losses[i].count;
	}
	return sum;
}

uint64_t integrity__total_lost(const struct integrity *in)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < in->nr_losses; i++) {
		if (sum + in->losses[i].count < sum)
			return UINT64_MAX;
		sum += in->losses[i].count;
	}
	return sum;
}
