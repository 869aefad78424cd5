// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/offcpu.h"
#include "collect/corebtf.h"
#include "collect/kbtf.h"
#include "offcpu.skel.h"
#include "unit.h"

/*
 * A kernel as BTF: task_struct holds an entity by value and a pointer to an
 * mm; cgroup, an unrelated struct, and a second struct named like a local one.
 */
static struct btf *kernel_btf(void)
{
	struct btf *b = btf__new_empty();
	int i32, u64, se, mm, arr, cint, pmm;

	if (!b)
		return NULL;
	/* libbpf adds a struct's members right after it: the types they use come first */
	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	u64 = btf__add_int(b, "long long unsigned int", 8, 0);
	mm = btf__add_struct(b, "mm_struct", 8);
	btf__add_field(b, "total_vm", u64, 0, 0);
	arr = btf__add_array(b, i32, i32, 2);
	cint = btf__add_const(b, i32);
	pmm = btf__add_ptr(b, mm);
	se = btf__add_struct(b, "sched_entity", 16);
	btf__add_field(b, "vruntime", u64, 0, 0);
	btf__add_field(b, "pair", arr, 64, 0);
	btf__add_struct(b, "task_struct", 40);
	btf__add_field(b, "pid", i32, 0, 0);
	btf__add_field(b, "flags", cint, 32, 0);
	btf__add_field(b, "se", se, 64, 0);
	btf__add_field(b, "mm", pmm, 192, 0);
	btf__add_field(b, "bits", i32, 256, 3);
	btf__add_struct(b, "cgroup", 4);
	btf__add_field(b, "level", i32, 0, 0);
	btf__add_struct(b, "unrelated", 4);
	btf__add_field(b, "x", i32, 0, 0);
	btf__add_union(b, "task_struct", 4); /* same name, another kind: kept too */
	btf__add_field(b, "u", i32, 0, 0);
	btf__add_enum(b, "state", 4);
	btf__add_enum_value(b, "RUNNING", 0);
	btf__add_enum_value(b, "SLEEPING", 1);
	return b;
}

/* The object's side: what it names, flavours included. */
static struct btf *local_btf(void)
{
	struct btf *b = btf__new_empty();
	int i32;

	if (!b)
		return NULL;
	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	btf__add_struct(b, "task_struct", 4);
	btf__add_field(b, "pid", i32, 0, 0);
	btf__add_struct(b, "cgroup___old", 4);
	btf__add_field(b, "level", i32, 0, 0);
	btf__add_enum(b, "state", 4);
	btf__add_enum_value(b, "RUNNING", 0);
	btf__add_struct(b, "only_local", 4);
	btf__add_field(b, "x", i32, 0, 0);
	return b;
}

static int find(const struct btf *b, const char *name, int kind)
{
	int id = btf__find_by_name_kind(b, name, kind);

	return id > 0 ? id : 0;
}

/* Whether struct (or union) a in ka and b in kb have the same size and members. */
static bool same_layout(const struct btf *ka, int a, const struct btf *kb, int b)
{
	const struct btf_type *ta = btf__type_by_id(ka, a), *tb = btf__type_by_id(kb, b);

	if (!ta || !tb || btf_kind(ta) != btf_kind(tb) || ta->size != tb->size ||
	    btf_vlen(ta) != btf_vlen(tb) ||
	    strcmp(btf__name_by_offset(ka, ta->name_off), btf__name_by_offset(kb, tb->name_off)))
		return false;
	for (int i = 0; i < btf_vlen(ta); i++) {
		const struct btf_member *ma = btf_members(ta) + i, *mb = btf_members(tb) + i;

		if (ma->offset != mb->offset || strcmp(btf__name_by_offset(ka, ma->name_off),
						       btf__name_by_offset(kb, mb->name_off)))
			return false;
	}
	return true;
}

TEST(corebtf_keeps_the_candidates_and_what_they_hold_by_value)
{
	struct btf *k = kernel_btf(), *l = local_btf(), *mini;
	const struct btf_type *t;
	const void *raw;
	void *out;
	size_t len, nr;
	struct kbtf kb;
	__u32 size;
	int id, se;

	CHECK(k && l);
	raw = btf__raw_data(k, &size);
	CHECK_INT(kbtf__from_mem(&kb, raw, size), 0);
	CHECK_INT(corebtf__make(&kb, l, &out, &len, &nr), 0);
	mini = btf__new(out, (__u32)len);
	CHECK(mini);
	CHECK_INT(btf__type_cnt(mini), nr + 1);
	/* the candidates, flavour stripped, each kind of the name */
	id = find(mini, "task_struct", BTF_KIND_STRUCT);
	CHECK(id && same_layout(k, find(k, "task_struct", BTF_KIND_STRUCT), mini, id));
	CHECK(find(mini, "task_struct", BTF_KIND_UNION));
	CHECK(find(mini, "cgroup", BTF_KIND_STRUCT));
	CHECK(find(mini, "state", BTF_KIND_ENUM));
	/* held by value: kept, with their members; behind a pointer or unnamed locally: not */
	se = find(mini, "sched_entity", BTF_KIND_STRUCT);
	CHECK(se && same_layout(k, find(k, "sched_entity", BTF_KIND_STRUCT), mini, se));
	t = btf__type_by_id(mini, btf_members(btf__type_by_id(mini, se))[1].type);
	CHECK(t && btf_is_array(t) && btf_array(t)->nelems == 2);
	CHECK(!find(mini, "mm_struct", BTF_KIND_STRUCT));
	CHECK(!find(mini, "unrelated", BTF_KIND_STRUCT));
	CHECK(!find(mini, "only_local", BTF_KIND_STRUCT));
	/* task_struct.mm: a pointer, to void now; .flags: const int; .bits: a bitfield */
	t = btf__type_by_id(mini, id);
	CHECK(btf_is_ptr(btf__type_by_id(mini, btf_members(t)[3].type)));
	CHECK_INT(btf__type_by_id(mini, btf_members(t)[3].type)->type, 0);
	CHECK(btf_is_const(btf__type_by_id(mini, btf_members(t)[1].type)));
	CHECK_INT(btf_member_bitfield_size(t, 4), 3);
	CHECK_INT(btf__resolve_size(mini, id), 40);
	btf__free(mini);
	free(out);
	kbtf__close(&kb);
	btf__free(k);
	btf__free(l);
}

TEST(corebtf_of_nothing_named_is_an_empty_btf)
{
	struct btf *k = kernel_btf(), *l = btf__new_empty(), *mini;
	const void *raw;
	void *out;
	size_t len, nr = 99;
	struct kbtf kb;
	__u32 size;

	CHECK(k && l);
	raw = btf__raw_data(k, &size);
	CHECK_INT(kbtf__from_mem(&kb, raw, size), 0);
	CHECK_INT(corebtf__make(&kb, l, &out, &len, &nr), 0);
	CHECK_INT(nr, 0);
	mini = btf__new(out, (__u32)len);
	CHECK(mini && btf__type_cnt(mini) == 1);
	btf__free(mini);
	free(out);
	kbtf__close(&kb);
	btf__free(k);
	btf__free(l);
}

/* The mini BTF of the running kernel for offcpu's object, in a file; NULL to skip. */
static char *kernel_mini(struct kbtf *kb, struct offcpu_bpf **skel, size_t *nr, char *path,
			 size_t path_len)
{
	void *out = NULL;
	size_t len = 0;
	FILE *f;
	int fd;

	*skel = offcpu_bpf__open();
	if (!*skel || kbtf__open(kb, "/sys/kernel/btf/vmlinux"))
		return NULL;
	if (corebtf__make(kb, bpf_object__btf((*skel)->obj), &out, &len, nr))
		return NULL;
	snprintf(path, path_len, "/tmp/offcpu-test-corebtf.XXXXXX");
	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f || fwrite(out, 1, len, f) != len || fclose(f)) {
		free(out);
		return NULL;
	}
	free(out);
	return path;
}

/* On the running kernel: every candidate of every local name, laid out as the kernel has it. */
TEST(corebtf_of_the_kernel_holds_every_candidate_as_the_kernel_lays_it_out)
{
	struct offcpu_bpf *skel = NULL;
	const struct btf *local;
	struct btf *vm, *mini;
	char path[64];
	struct kbtf kb;
	size_t nr = 0, structs = 0;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP("no /sys/kernel/btf/vmlinux");
	CHECK(kernel_mini(&kb, &skel, &nr, path, sizeof(path)));
	vm = btf__load_vmlinux_btf();
	mini = btf__parse(path, NULL);
	CHECK(vm && mini);
	/* a few hundred types of the kernel's 100,000 or more */
	CHECK(nr > 50 && nr < btf__type_cnt(vm) / 20);
	local = bpf_object__btf(skel->obj);
	for (__u32 id = 1; id < btf__type_cnt(local); id++) {
		const struct btf_type *t = btf__type_by_id(local, id);
		char name[128];
		char *flavour;
		int kid, mid;

		if (!btf_is_composite(t) || !t->name_off)
			continue;
		snprintf(name, sizeof(name), "%s", btf__name_by_offset(local, t->name_off));
		flavour = strstr(name, "___");
		if (flavour)
			*flavour = '\0';
		kid = find(vm, name, btf_kind(t));
		mid = find(mini, name, btf_kind(t));
		if (!kid) {
			CHECK(!mid);
			continue;
		}
		CHECK(mid && same_layout(vm, kid, mini, mid));
		CHECK_INT(btf__resolve_size(mini, mid), btf__resolve_size(vm, kid));
		structs++;
	}
	/* task_struct, mm_struct, rq, cfs_rq, pt_regs, cgroup, ... */
	CHECK(structs >= 10);
	unlink(path);
	btf__free(mini);
	btf__free(vm);
	kbtf__close(&kb);
	offcpu_bpf__destroy(skel);
}

static bool is_ld_map(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | BPF_DW) &&
	       (in->src_reg == BPF_PSEUDO_MAP_FD || in->src_reg == BPF_PSEUDO_MAP_VALUE);
}

/* The object loaded against btf_path (NULL: the kernel's own BTF), raw_tp programs left out. */
static struct offcpu_bpf *load_with(const char *btf_path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	struct offcpu_bpf *s = offcpu_bpf__open_opts(&opts);
	struct bpf_program *p;

	if (!s)
		return NULL;
	bpf_object__for_each_program(p, s->obj)
	{
		if (!strncmp(bpf_program__section_name(p), "raw_tp", 6))
			bpf_program__set_autoload(p, false);
	}
	if (offcpu_bpf__load(s)) {
		offcpu_bpf__destroy(s);
		return NULL;
	}
	return s;
}

/*
 * The test that matters: every program, relocated against the small BTF,
 * is instruction for instruction what it is against the kernel's own (the
 * map fds of ld_imm64 aside; their second halves, a value's offset, compared). A
 * bpf_core_type_id_kernel() would differ here (its id is the small BTF's), as would any candidate
 * the small BTF missed.
 */
TEST(corebtf_relocates_every_instruction_as_the_kernels_own_btf_does)
{
	struct offcpu_bpf *skel = NULL, *a, *b;
	struct bpf_program *pa, *pb;
	char path[64];
	struct kbtf kb;
	size_t nr, progs = 0, insns = 0;

	if (geteuid() != 0)
		SKIP("needs root: loads BPF programs into the running kernel");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP("no /sys/kernel/btf/vmlinux");
	CHECK(kernel_mini(&kb, &skel, &nr, path, sizeof(path)));
	a = load_with(path);
	b = load_with(NULL);
	CHECK(a && b);
	pb = bpf_object__next_program(b->obj, NULL);
	bpf_object__for_each_program(pa, a->obj)
	{
		const struct bpf_insn *ia = bpf_program__insns(pa), *ib = bpf_program__insns(pb);
		size_t n = bpf_program__insn_cnt(pa);

		CHECK(pb && !strcmp(bpf_program__name(pa), bpf_program__name(pb)));
		if (bpf_program__autoload(pa)) {
			CHECK_INT(n, bpf_program__insn_cnt(pb));
			for (size_t i = 0; i < n; i++) {
				bool fd = is_ld_map(&ia[i]);

				if (memcmp(&ia[i], &ib[i], sizeof(ia[i])) &&
				    !(fd && ia[i].src_reg == ib[i].src_reg &&
				      ia[i].dst_reg == ib[i].dst_reg)) {
					fprintf(stderr, "%s insn %zu differs\n",
						bpf_program__name(pa), i);
					CHECK(0);
				}
				insns++;
			}
			progs++;
		}
		pb = bpf_object__next_program(b->obj, pb);
	}
	CHECK(progs >= 5 && insns > 4000);
	offcpu_bpf__destroy(a);
	offcpu_bpf__destroy(b);
	unlink(path);
	kbtf__close(&kb);
	offcpu_bpf__destroy(skel);
}

int main(void)
{
	return unit_run();
}
