/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The running kernel's BTF, read for a few questions without libbpf's full
 * parse: record asks whether some types, members and enumerators exist
 * (native_kernel_features()), and libbpf parses the same 5 MB again for
 * CO-RE anyway. The raw file is mapped (6.16+; else read), walked once to
 * find the types asked for, and each type's offset kept for lookups by id.
 */
#ifndef OFFCPU_COLLECT_KBTF_H
#define OFFCPU_COLLECT_KBTF_H

#include <stddef.h>
#include <stdint.h>
#include <linux/btf.h>

struct kbtf {
	const uint8_t *data;
	size_t size;
	const char *strs;
	uint32_t str_len;
	const uint8_t *types;
	uint32_t *offs; /* type id -> offset in types; id 0 is void */
	uint32_t nr;	/* type ids: 1 .. nr - 1 */
	void *map;	/* what to unmap (or free) */
	size_t map_len;
	int mapped;
};

/* One type wanted by name and kind: id set to it, or 0. */
struct kbtf_want {
	const char *name;
	int kind; /* BTF_KIND_* */
	int id;
};

/* Open the BTF at path (mapped, else read whole). 0 or -errno. */
int kbtf__open(struct kbtf *k, const char *path);
/* The same over len bytes at data, which the caller keeps alive. */
int kbtf__from_mem(struct kbtf *k, const void *data, size_t len);
void kbtf__close(struct kbtf *k);
/* Set each want's id in one pass over the types (the first of that name and kind). */
void kbtf__find(const struct kbtf *k, struct kbtf_want *w, size_t n);
/* The type with this id, or NULL. */
const struct btf_type *kbtf__type(const struct kbtf *k, uint32_t id);
/* Bytes of type t with the records that follow it, or -1 for a kind unknown here. */
long kbtf__type_len(const struct btf_type *t);
/* The string at off, or "" when out of range. */
const char *kbtf__str(const struct kbtf *k, uint32_t off);
/* Whether struct (or union) id has a member of this name. */
int kbtf__has_member(const struct kbtf *k, int id, const char *member);
/* Whether enum id has an enumerator of this name. */
int kbtf__has_enumerator(const struct kbtf *k, int id, const char *name);
/*
 * Start parsing the kernel's BTF for libbpf in a thread: the next
 * btf__load_vmlinux_btf() (bpf_object__load()'s, for CO-RE) takes the
 * result. kbtf__preload_end() frees what no load took.
 */
void kbtf__preload(void);
void kbtf__preload_end(void);

#endif
