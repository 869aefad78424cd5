/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The built-in collector's insides, shared by its files and by nothing else:
 *
 *   native.c         the public entry points (start, poll, stats, free)
 *   native_load.c    what the kernel offers; open, size, load and attach
 *   native_maps.c    the preallocated maps, made in a thread before the load
 *   native_drain.c   the events ring buffer and the aggregation maps, drained
 *   native_stacks.c  stack ids to the profile's frames
 *   native_stop.c    stop: the threads at stop, the rows, the losses
 *   native_snap.c    the targets' threads asleep at start (snapshot.bpf.h)
 *
 * Files that touch the skeleton include "offcpu.skel.h" themselves.
 */
#ifndef OFFCPU_COLLECT_NATIVE_PRIV_H
#define OFFCPU_COLLECT_NATIVE_PRIV_H

#include <linux/types.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/offcpu.h"
#include "collect/ktext.h"
#include "collect/mmstamp.h"
#include "collect/native.h"
#include "collect/native_table.h"

#define NS_PER_SEC 1000000000ULL

#if defined(__x86_64__)
#define OFFCPU_DWARF_ARCH 1
#else
#define OFFCPU_DWARF_ARCH 0
#endif

/* Programs of the BPF object, each in a tp_btf and a raw_tp variant (native_load.c). */
#define NATIVE_NR_PROGS 13

/* A traced thread's identity and ground truth, from an exit record or at stop. */
struct native_thread {
	uint32_t tgid;
	uint32_t tid;
	uint64_t first_ns; /* its first sight: with tid, which thread this is */
	char comm[OFFCPU_COMM_LEN];
	bool have_time;
	struct profile_thread_time time;
};

/* A thread the snapshot found off the CPU at start, for the diagnostics. */
struct native_snapped {
	uint64_t since_ns; /* its last run began this long before start; 0: unknown */
	uint32_t state;
};

/* A stack the BPF side sent: frames innermost first, tracer frames removed. */
struct native_stack {
	uint64_t *ips;
	uint32_t nr;
	uint32_t used; /* the cut (n->cuts) that last needed it: older ones are evicted */
	uint64_t seq;  /* n->events when it came: the image it belongs to (symbolizer__exec()) */
};

/* A user stack the BPF side left to user space to unwind (struct offcpu_raw_ustack). */
struct native_raw {
	struct offcpu_raw_ustack *r;
	size_t len;   /* bytes of r->win received */
	uint64_t seq; /* as native_stack's */
};

/* A map native_maps_start() makes for the load (see native_maps.c). */
struct native_premade_map {
	struct bpf_map *m;
	int type;
	char name[16];
	uint32_t key, value, max, flags;
	int fd; /* or -errno */
};

struct native_premade {
	pthread_t thread;
	bool pending;
	size_t nr;
	struct native_premade_map maps[6];
};

struct offcpu_bpf;
struct ksyms;
struct unwinder;
struct bpf_link;
struct bpf_map;
struct ring_buffer;

struct native {
	struct offcpu_bpf *skel;
	struct native_premade premade; /* its largest maps, made while the kernel's BTF is read */
	struct bpf_link *links[NATIVE_NR_PROGS];
	size_t nr_links;
	struct ring_buffer *rb;
	struct symbolizer *sym;
	FILE *diag;
	bool raw_tp;
	bool stopped;
	bool membarrier_broken;
	bool cpuvisit_broken; /* native_quiesce() falls back to membarrier */
	bool switch_state, rdonly_cast, schedinfo;
	/* Switch times from the run queue's clock (switch_now() in offcpu.bpf.c), else why not. */
	bool sched_clock;
	const char *clock_why;
	/* The kernel's ids of the types bpf_rdonly_cast() gives (kid_* in the rodata). */
	uint32_t kid_task_struct, kid_pt_regs, kid_timespec64;
	/*
	 * A memfd with the CO-RE target (corebtf.h): the object's
	 * btf_custom_path; -1 when there is none (libbpf walks the kernel's).
	 */
	int corebtf_fd;
	size_t corebtf_types;
	bool loop;	      /* the kernel has bpf_loop (5.17+) */
	bool ksym_prog;	      /* ... and bpf_kallsyms_lookup_name (5.16+): the ksym program */
	bool dwarf;	      /* user stacks by the .eh_frame unwinder (unwind.bpf.h) */
	struct unwinder *unw; /* its tables and mappings, when dwarf */
	/* Its cache hits read user words through the page table (upt_walk()), else why not. */
	int upt_levels;
	const char *upt_why;
	struct native_stats stats;
	int nr_cpus;
	enum offcpu_target target;
	uint32_t agg_entries;
	uint64_t sched_lo, sched_hi;
	struct addr_range sched_text; /* left out of a sleeping task's stack by the kernel */
	struct addr_range irq[KTEXT_IRQ_RANGES]; /* interrupt entry code, for wakers */
	/*
	 * The kallsyms read behind those, in a thread while the programs load,
	 * when the ksym program cannot answer instead (ktext_thread_on).
	 */
	pthread_t ktext_thread;
	bool ktext_thread_on, ktext_pending, ktext_done;
	int ktext_err;
	struct ktext ktext;
	struct ksyms *ksyms; /* ... and its symbols, for sym */
	uint64_t cgroup_id;
	uint32_t cgroup_level;
	uint64_t start_ns, stop_ns, last_drain_ns;
	uint64_t inserts_at_flip;
	bool drain_asked; /* the BPF side found the aggregation map half full */
	uint64_t tracked;
	uint64_t events;     /* records read from the ring so far: their order (native_stack.seq) */
	struct mmstamps mm;  /* track requests answered without re-reading the maps */
	bool snap;	     /* the snapshot program is loaded: -p, --cgroup, -a */
	bool snap_refused;   /* ... the kernel refused it: load without it */
	uint64_t snapped;    /* threads it found off the CPU at start */
	struct ntable snaps; /* tid -> struct native_snapped */
	struct ntable agg;   /* struct offcpu_agg_key -> struct offcpu_agg_val */
	struct ntable stacks; /* stack id -> struct native_stack */
	struct ntable raws;   /* stack id -> struct native_raw */
	struct native_thread *exits;
	size_t nr_exits, cap_exits;
	struct timeline *timeline; /* o->timeline: filled at stop */
	uint64_t timeline_min_ns;
	struct offcpu_interval *ivs; /* the timeline's intervals as the kernel sent them */
	size_t nr_ivs, cap_ivs;
	/*
	 * Periods (native__cut): what the cuts so far gave away, so that the
	 * next one gives only what is new. n->agg starts empty after each cut.
	 */
	uint64_t cuts;		    /* cuts made */
	uint64_t cut_ns;	    /* the last one (monotonic); 0: none */
	struct ntable credits;	    /* tid -> struct native_credit: open intervals split there */
	struct ntable site_given;   /* agg key -> agg val: live call-site weight given */
	struct ntable debts;	    /* agg key -> agg val: given ahead of its arrival */
	struct ntable sofar;	    /* tid -> struct profile_thread_time: ground truth given */
	struct offcpu_stats cut_st; /* the counters at the last cut */
	uint64_t stacks_evicted;    /* stacks forgotten after two periods unused */
	uint64_t debts_dropped;	    /* cuts that dropped debts of threads gone */
	uint64_t cut_misses;
	bool snap_finished;
};

/* A thread's ground truth up to the last cut, since its first sight. */
struct native_sofar {
	uint64_t first_ns;
	struct profile_thread_time time;
};

/* An interval open at a cut: the part up to the cut was given to that period. */
struct native_credit {
	uint64_t since; /* its switch-out (the thread's off_ns) */
	struct offcpu_agg_key key;
	struct offcpu_agg_val val;
};

/* native.c */
void native_note(struct native *n, const char *fmt, ...);
uint64_t native_mono_ns(void);

/* native_load.c */
/*
 * Start reading kallsyms in a thread, unless the ksym program can answer
 * (after native_kernel_features()); native_kernel_text() waits for it, or
 * asks the program, and takes the result.
 */
void native_kernel_text_start(struct native *n, bool timeline);
void native_kernel_text(struct native *n, bool timeline);
void native_kernel_features(struct native *n);
int native_cgroup_lookup(const char *dir, uint64_t *id, uint32_t *level);
/*
 * Open the object and size its maps, and start making the largest of them
 * (native_maps_start()). native_load_attach() does it itself when the
 * skeleton is not open (a retry after native_destroy_skel()).
 */
int native_open(struct native *n, const struct native_opts *o, char *why, size_t whylen);
int native_load_attach(struct native *n, const struct native_opts *o, bool raw, char *why,
		       size_t whylen);
/* Detach and free the skeleton, and the unwinder made on its maps (a retry makes both again). */
void native_destroy_skel(struct native *n);
/* OFFCPU_VERIFIER_STATS is set: verifier statistics and start-up times in the diagnostics. */
bool native_vstats_on(void);

/*
 * native_maps.c: start making the skeleton's preallocated maps and its ring
 * buffer (sized, not loaded) in a thread. native_maps_take() waits for it and
 * hands them to libbpf (bpf_map__reuse_fd), before the load: the number
 * taken; any other is made by the load as usual. native_maps_drop() waits
 * and closes what was not taken (any time; again is harmless).
 */
void native_maps_start(struct native *n);
int native_maps_take(struct native *n);
void native_maps_drop(struct native *n);

/* native_snap.c: run the snapshot once, after the attach. 0 or -errno. */
int native_snapshot(struct native *n, const struct native_opts *o);
/*
 * native_snap.c, at stop: give the snapshot's kernel stacks the scheduler
 * frames of the same wait seen at a switch-out, and read the processes whose
 * snapshot user stacks wait for their mappings.
 */
struct symbolizer;
int native_snap_finish(struct native *n, struct symbolizer *sym);

/* native_stacks.c */
int native_raw_unwind(struct native *n, uint64_t id, const struct native_stack **out, bool final);

/* native_drain.c */
int native_on_event(void *ctx, void *data, size_t len);
/* Track tgid in the unwinder and sym (either may be absent), its mappings read once. */
int native_track_maps(struct native *n, struct symbolizer *sym, uint32_t tgid);
int native_keep_interval(struct native *n, const struct offcpu_interval *iv);
int native_read_stats(struct native *n, struct offcpu_stats *sum);
int native_agg_merge(struct native *n, const struct offcpu_agg_key *k,
		     const struct offcpu_agg_val *v);
int native_drain_map(struct native *n, struct bpf_map *map);
int native_drain(struct native *n);
uint32_t native_flip(struct native *n);
int native_drain_left(struct native *n, uint32_t old);
void native_quiesce(struct native *n);

/* ---- stop: from BPF maps to the profile (native_stacks.c, native_stop.c) ---- */

struct thread_key {
	uint32_t tgid;
	uint32_t tid;
};

/* A stack half (kernel or user), as frame ids root first. */
struct part_key {
	uint64_t id;
	uint32_t tgid; /* user stacks only: addresses mean something per process */
	uint32_t user;
};

struct part {
	uint32_t *ids;
	size_t n, cap;
};

struct build {
	struct native *n;
	struct profile *p;
	struct symbolizer *sym;
	struct ntable threads;		/* thread_key -> native_thread */
	struct ntable parts;		/* part_key -> part */
	struct ntable at_stop;		/* tid -> schedstat's two first fields at stop */
	bool final;			/* native__stop (detached), not a cut */
	uint64_t end_ns;		/* the window's end: stop, or the cut */
	struct ntable minus;		/* agg key -> agg val: given by earlier cuts */
	struct ntable credits;		/* a cut's open intervals (native->credits next) */
	struct ntable site_now;		/* live call-site weight now */
	struct ntable sofar;		/* ground truth given up to end_ns */
	uint64_t carried, carried_ns;	/* open at the last cut and still open */
	uint64_t stripped;		/* kernel stacks whose tracer frames were dropped here */
	uint64_t unresolved;		/* stack ids whose frames never arrived */
	uint64_t inflight, inflight_ns; /* intervals open at stop */
	uint64_t both, both_ns;		/* ... that also began before start */
	uint64_t never_ran;		/* ... of threads that did not run in the window */
	uint64_t stacks_lost, stacks_lost_ns; /* rows whose stacks the ring buffer dropped */
	struct ntable unseen; /* thread_key -> native_unseen: switch-outs not reported */
};

/* A thread's intervals whose switch-out the kernel did not report (its rows). */
struct native_unseen {
	uint64_t count, ns;
	char comm[OFFCPU_COMM_LEN];
};

/* native_stop.c */
/*
 * The processes of unseen (thread_key -> native_unseen), most time first, at
 * most four and how many more, as one line into buf. Returns how many
 * processes there are (0: buf is empty) or -ENOMEM.
 */
int native_unseen_line(const struct ntable *unseen, char *buf, size_t size);

/* native_stacks.c */
const char *native_errno_name(unsigned int e, bool upper);
int native_stack_of(struct build *b, const struct offcpu_agg_key *k);

#endif
