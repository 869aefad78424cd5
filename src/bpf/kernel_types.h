/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel types offcpu's BPF side uses, and only the fields it reads.
 *
 * In place of a vmlinux.h dumped from the build host's BTF: the build then
 * needs no BTF, and the object is the same on every build host. Each struct
 * is marked preserve_access_index, so every field access is a CO-RE
 * relocation that libbpf resolves against the running kernel's BTF at load
 * time: the layouts here are never used as such, only the names, so a field
 * may sit anywhere and the rest of the struct is left out. Types the
 * verifier checks by name (bpf_rdonly_cast() targets, tp_btf arguments) carry
 * the kernel's names.
 *
 * Named __VMLINUX_H__ for libbpf's bpf_tracing.h, which then uses the
 * kernel's pt_regs field names (ip, sp, bp) rather than the UAPI ones.
 */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

typedef unsigned char __u8;
typedef signed char __s8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
enum {
	false = 0,
	true = 1,
};

/* UAPI constants (linux/bpf.h), stable by contract. */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_HASH_OF_MAPS = 13,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
};

enum {
	BPF_F_USER_STACK = 1ULL << 8,
};

enum {
	BPF_F_NO_PREALLOC = 1U << 0,
	BPF_F_MMAPABLE = 1U << 10,
	BPF_F_INNER_MAP = 1U << 12,
};

enum {
	BPF_RB_NO_WAKEUP = 1ULL << 0,
	BPF_RB_FORCE_WAKEUP = 1ULL << 1,
};

enum {
	BPF_RB_AVAIL_DATA = 0,
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct {
	int counter;
} atomic_t;

struct timespec64 {
	__s64 tv_sec;
	long tv_nsec;
};

struct kernfs_node {
	__u64 id;
};

struct cgroup {
	int level;
	struct kernfs_node *kn;
	struct cgroup *ancestors[];
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct rq {
	__u64 clock;
};

struct cfs_rq {
	struct rq *rq;
};

struct sched_entity {
	__u64 sum_exec_runtime;
	struct cfs_rq *cfs_rq;
};

struct sched_info {
	unsigned long long run_delay;
	unsigned long long last_arrival;
	unsigned long long last_queued;
};

struct signal_struct {
	atomic_t live;
};

/*
 * What notify_track()'s stamp reads of a process's address space, and its
 * page table's top level (unwind.bpf.h: upt_walk()).
 */
struct mm_struct {
	unsigned long total_vm;
	unsigned long start_code;
	unsigned long start_stack;
	void *pgd;
};

struct task_struct {
	unsigned int __state;
	void *stack;
	int on_cpu;
	unsigned int flags;
	struct sched_entity se;
	struct sched_info sched_info;
	unsigned int in_iowait : 1;
	int pid;
	int tgid;
	__u64 start_time;
	char comm[16];
	struct signal_struct *signal;
	struct css_set *cgroups;
	struct mm_struct *mm;
	struct task_struct *real_parent;
	__u64 parent_exec_id; /* the parent's self_exec_id when it forked this one */
	__u64 self_exec_id;   /* copied at fork, one more at each exec */
};

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
};

/* The iter/task program's context. */
struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
};

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
};

/*
 * The registers a thread entered the kernel with. The kernel's own layout per
 * architecture; bpf_tracing.h's PT_REGS_* name the fields.
 */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long bp;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long sp;
};
#elif defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};

struct pt_regs {
	union {
		struct user_pt_regs user_regs;
		struct {
			__u64 regs[31];
			__u64 sp;
			__u64 pc;
			__u64 pstate;
		};
	};
	__u64 orig_x0;
	__s32 syscallno;
};
#else
#error "offcpu's BPF side supports __TARGET_ARCH_x86 and __TARGET_ARCH_arm64"
#endif

#pragma clang attribute pop

#endif
