// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/perfmap.h"
#include "util/vec.h"

struct perfmap_entry {
	uint64_t start, end;
	uint32_t seq;
	char *name;
};

struct perfmap {
	struct perfmap_entry *e;
	size_t nr;
};

/* How many earlier-starting entries a lookup checks for one that still covers the address. */
#define PERFMAP_OVERLAP_SCAN 16

static int cmp_entry(const void *pa, const void *pb)
{
	const struct perfmap_entry *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int parse_line(char *line, struct perfmap_entry *e)
{
	char *p = line, *end;
	uint64_t size;
	size_t n;

	e->start = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return -EINVAL;
	p = end + 1;
	size = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || !size || e->start + size < e->start)
		return -EINVAL;
	e->end = e->start + size;
	p = end + 1;
	n = strcspn(p, "\r\n");
	if (!n)
		return -EINVAL;
	e->name = strndup(p, n);
	return e->name ? 0 : -ENOMEM;
}

struct perfmap *perfmap__load(FILE *in)
{
	struct perfmap *m = calloc(1, sizeof(*m));
	struct perfmap_entry e;
	size_t cap = 0, len = 0;
	char *line = NULL;
	int err = 0;

	if (!m)
		return NULL;
	while (getline(&line, &len, in) > 0) {
		err = parse_line(line, &e);
		if (err == -EINVAL) {
			err = 0;
			continue;
		}
		if (err)
			goto cleanup;
		if (vec_reserve(m->e, cap, m->nr + 1)) {
			free(e.name);
			err = -ENOMEM;
			goto cleanup;
		}
		e.seq = m->nr;
		m->e[m->nr++] = e;
	}
	if (ferror(in)) {
		err = -EIO;
		goto cleanup;
	}
	if (m->nr)
		qsort(m->e, m->nr, sizeof(*m->e), cmp_entry);
cleanup:
	free(line);
	if (err) {
		perfmap__free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr; i++)
		free(m->e[i].name);
	free(m->e);
	free(m);
}

const char *perfmap__resolve(const struct perfmap *m, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi = m ? m->nr : 0;
	const struct perfmap_entry *best = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* entries may overlap; of those covering addr, the newest line wins */
	for (size_t i = lo, seen = 0; i > 0 && seen < PERFMAP_OVERLAP_SCAN; i--, seen++) {
		const struct perfmap_entry *e = &m->e[i - 1];

		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	if (!best)
		return NULL;
	if (offset)
		*offset = addr - best->start;
	return best->name;
}

size_t perfmap__count(const struct perfmap *m)
{
	return m ? m->nr : 0;
}
