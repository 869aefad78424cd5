// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "collect/kbtf.h"
#include "unit.h"

/* A small BTF as the kernel's would hold it: built by libbpf, walked by kbtf. */
static struct btf *small_btf(void)
{
	struct btf *b = btf__new_empty();
	int i32, task, ptr, proto;

	if (!b)
		return NULL;
	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	task = btf__add_struct(b, "task_struct", 8);
	btf__add_field(b, "pid", i32, 0, 0);
	btf__add_field(b, "tgid", i32, 32, 0);
	btf__add_enum(b, "bpf_func_id", 4);
	btf__add_enum_value(b, "BPF_FUNC_unspec", 0);
	btf__add_enum_value(b, "BPF_FUNC_loop", 181);
	ptr = btf__add_ptr(b, task);
	proto = btf__add_func_proto(b, i32);
	btf__add_func_param(b, "ctx", ptr);
	btf__add_func_param(b, "preempt", i32);
	btf__add_func(b, "bpf_loop", BTF_FUNC_GLOBAL, proto);
	btf__add_typedef(b, "btf_trace_x", btf__add_ptr(b, proto));
	btf__add_array(b, i32, i32, 4);
	btf__add_struct(b, "rq", 8);
	btf__add_field(b, "clock", i32, 0, 0);
	return b;
}

TEST(kbtf_finds_types_members_and_enumerators_in_one_walk)
{
	struct btf *b = small_btf();
	struct kbtf_want w[] = {
		{"task_struct", BTF_KIND_STRUCT}, {"bpf_loop", BTF_KIND_FUNC},
		{"bpf_func_id", BTF_KIND_ENUM},	  {"btf_trace_x", BTF_KIND_TYPEDEF},
		{"rq", BTF_KIND_STRUCT},	  {"rq", BTF_KIND_TYPEDEF},
		{"missing", BTF_KIND_STRUCT},
	};
	const struct btf_type *t;
	const void *raw;
	struct kbtf k;
	__u32 size;

	CHECK(b);
	raw = btf__raw_data(b, &size);
	CHECK(raw);
	CHECK_INT(kbtf__from_mem(&k, raw, size), 0);
	CHECK_INT(k.nr, btf__type_cnt(b));
	kbtf__find(&k, w, sizeof(w) / sizeof(w[0]));
	for (size_t i = 0; i < 5; i++)
		CHECK_INT(w[i].id, btf__find_by_name_kind(b, w[i].name, w[i].kind));
	CHECK_INT(w[5].id, 0);
	CHECK_INT(w[6].id, 0);
	CHECK(kbtf__has_member(&k, w[0].id, "tgid"));
	CHECK(!kbtf__has_member(&k, w[0].id, "comm"));
	CHECK(kbtf__has_member(&k, w[4].id, "clock"));
	CHECK(!kbtf__has_member(&k, w[2].id, "clock"));
	CHECK(kbtf__has_enumerator(&k, w[2].id, "BPF_FUNC_loop"));
	CHECK(!kbtf__has_enumerator(&k, w[2].id, "BPF_FUNC_kallsyms_lookup_name"));
	CHECK(!kbtf__has_enumerator(&k, w[0].id, "BPF_FUNC_loop"));
	/* typedef -> pointer -> prototype of two parameters */
	t = kbtf__type(&k, w[3].id);
	CHECK(t && (t = kbtf__type(&k, t->type)) && BTF_INFO_KIND(t->info) == BTF_KIND_PTR);
	t = kbtf__type(&k, t->type);
	CHECK(t && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC_PROTO && BTF_INFO_VLEN(t->info) == 2);
	CHECK(!kbtf__type(&k, 0) && !kbtf__type(&k, k.nr));
	kbtf__close(&k);
	btf__free(b);
}

TEST(kbtf_refuses_what_is_not_whole_btf)
{
	struct btf *b = small_btf();
	const void *raw;
	char copy[4096];
	struct kbtf k;
	__u32 size;

	CHECK(b);
	raw = btf__raw_data(b, &size);
	CHECK(raw && size <= sizeof(copy));
	memcpy(copy, raw, size);
	CHECK_INT(kbtf__from_mem(&k, copy, size - 1), -EINVAL);
	CHECK_INT(kbtf__from_mem(&k, copy, 8), -EINVAL);
	copy[0] ^= 0xff; /* magic */
	CHECK_INT(kbtf__from_mem(&k, copy, size), -EINVAL);
	btf__free(b);
}

/* On the running kernel: the same answers as libbpf's full parse. */
TEST(kbtf_agrees_with_libbpf_on_the_kernel)
{
	struct kbtf_want w[] = {
		{"btf_trace_sched_switch", BTF_KIND_TYPEDEF},
		{"bpf_loop", BTF_KIND_FUNC},
		{"bpf_rdonly_cast", BTF_KIND_FUNC},
		{"bpf_func_id", BTF_KIND_ENUM},
		{"sched_info", BTF_KIND_STRUCT},
		{"rq", BTF_KIND_STRUCT},
		{"task_struct", BTF_KIND_STRUCT},
	};
	struct btf *b;
	struct kbtf k;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP("no /sys/kernel/btf/vmlinux");
	b = btf__load_vmlinux_btf();
	CHECK(b);
	CHECK_INT(kbtf__open(&k, "/sys/kernel/btf/vmlinux"), 0);
	CHECK_INT(k.nr, btf__type_cnt(b));
	kbtf__find(&k, w, sizeof(w) / sizeof(w[0]));
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		CHECK_INT(w[i].id, btf__find_by_name_kind(b, w[i].name, w[i].kind) > 0
					   ? btf__find_by_name_kind(b, w[i].name, w[i].kind)
					   : 0);
	CHECK(w[6].id > 0 && kbtf__has_member(&k, w[6].id, "pid"));
	kbtf__close(&k);
	btf__free(b);
}

int main(void)
{
	return unit_run();
}
