// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading a whole BPF hash map while programs keep changing it (see bpfmap.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "collect/bpfmap.h"
#include "collect/native_table.h"

/* Room for at least need entries in both arrays. 0 or -ENOMEM. */
static int grow(void **keys, void **vals, size_t *cap, size_t need, size_t ksz, size_t vsz)
{
	size_t n = *cap ? *cap : 256;
	void *k, *v;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	k = realloc(*keys, n * ksz);
	if (!k)
		return -ENOMEM;
	*keys = k;
	v = realloc(*vals, n * vsz);
	if (!v)
		return -ENOMEM;
	*vals = v;
	*cap = n;
	return 0;
}

/* The walk key by key, each key kept once. */
static int read_keywise(int fd, size_t ksz, size_t vsz, void **keys, void **vals, size_t *nr,
			size_t *cap)
{
	char *prev = malloc(ksz), *next = malloc(ksz);
	bool first = true, created;
	struct ntable seen;
	int err = 0;

	if (!prev || !next || ntable_init(&seen, ksz, 1)) {
		free(prev);
		free(next);
		return -ENOMEM;
	}
	while (!bpf_map_get_next_key(fd, first ? NULL : prev, next)) {
		first = false;
		memcpy(prev, next, ksz);
		if (!ntable_get(&seen, next, &created)) {
			err = -ENOMEM;
			break;
		}
		if (!created)
			continue;
		if ((err = grow(keys, vals, cap, *nr + 1, ksz, vsz)))
			break;
		if (bpf_map_lookup_elem(fd, next, (char *)*vals + *nr * vsz))
			continue; /* deleted since */
		memcpy((char *)*keys + *nr * ksz, next, ksz);
		(*nr)++;
	}
	ntable_free(&seen);
	free(prev);
	free(next);
	return err;
}

int bpfmap__read_all(int fd, size_t ksz, size_t vsz, void **keys, void **vals, size_t *nr)
{
	uint32_t batch = 256;
	uint32_t in_b = 0, out_b = 0; /* a hash map's batch cursor: a bucket index */
	size_t cap = 0;
	bool first = true;
	int err;

	*keys = *vals = NULL;
	*nr = 0;
	for (;;) {
		uint32_t count = batch;
		int ret;

		if ((err = grow(keys, vals, &cap, *nr + batch, ksz, vsz)))
			return err;
		ret = bpf_map_lookup_batch(fd, first ? NULL : &in_b, &out_b,
					   (char *)*keys + *nr * ksz, (char *)*vals + *nr * vsz,
					   &count, NULL);
		if (ret && errno == ENOSPC && batch < (1u << 20)) {
			batch *= 2; /* one bucket holds more than a batch */
			continue;
		}
		if (ret && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP))
				return read_keywise(fd, ksz, vsz, keys, vals, nr, &cap);
			return -errno;
		}
		*nr += count;
		if (ret)
			return 0; /* ENOENT: every bucket read */
		first = false;
		in_b = out_b;
	}
}
