/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading a whole BPF hash map while programs keep changing it.
 */
#ifndef OFFCPU_COLLECT_BPFMAP_H
#define OFFCPU_COLLECT_BPFMAP_H

#include <stddef.h>

/*
 * Every entry of the hash map fd (keys of ksz bytes, values of vsz), each
 * once, into *keys and *vals (*nr of them; the caller frees both, also on
 * error). Returns 0 or -errno.
 *
 * A walk key by key (bpf_map_get_next_key) is not enough while entries are
 * deleted: a key gone since the last step sends the walk back to the first
 * key (the entries before come twice), and an element reused for another
 * key can lead the walk into another bucket's chain (the buckets between
 * are skipped). The batch read goes bucket by bucket, each whole under its
 * lock: an entry that stays in the map all along is read exactly once;
 * entries added or deleted meanwhile may or may not be. Kernels without
 * batch reads are walked key by key, each key kept once.
 */
int bpfmap__read_all(int fd, size_t ksz, size_t vsz, void **keys, void **vals, size_t *nr);

#endif
