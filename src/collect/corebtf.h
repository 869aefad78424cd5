/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's types that the BPF object's CO-RE relocations can match, as a
 * small BTF of their own, for libbpf's btf_custom_path.
 *
 * Why: libbpf finds a relocated type's candidates by walking every type of
 * the target BTF, once per type relocated (125,851 types on 6.18: 1.2 ms a
 * walk, 15 ms for the object's 12, on the start-up's critical path). Over a
 * target that holds only the candidates the walks cost nothing. libbpf uses
 * the custom BTF for CO-RE only: tp_btf attach points and kfuncs still
 * resolve against the kernel's own BTF.
 *
 * What it holds: every kernel type whose name, less a flavour suffix
 * ("cgroup___old" is "cgroup"), is that of a named type of the object's
 * BTF; and what those types hold by value (members, array elements, typedef
 * and modifier targets), with the kernel's names, sizes and offsets. A
 * pointer's target becomes void: a relocation never follows a pointer (each
 * dereference is a relocation of its own, on the pointee's type), and
 * libbpf's field compatibility takes any pointer for any pointer.
 *
 * Its type ids are not the kernel's. A relocation asking for the kernel's id
 * of a type (bpf_core_type_id_kernel()) would be given a wrong one: the BPF
 * side takes such ids from its read-only data instead (kid_* in
 * offcpu.bpf.c), and test_corebtf checks that the object asks for none.
 */
#ifndef OFFCPU_COLLECT_COREBTF_H
#define OFFCPU_COLLECT_COREBTF_H

#include <stddef.h>

struct btf;
struct kbtf;

/*
 * The candidates for local's named types, taken from the kernel BTF k, as
 * raw BTF in *out (malloc'd, *len bytes; the caller frees it). *nr_types,
 * when not NULL, is set to the count of types kept. 0 or -errno.
 */
int corebtf__make(const struct kbtf *k, const struct btf *local, void **out, size_t *len,
		  size_t *nr_types);

#endif
