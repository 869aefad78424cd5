// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in collector, user-space side: load and attach offcpu.bpf.c,
 * drain its aggregates while it runs, then turn them into a profile.
 * The kernel side's design notes are at the top of src/bpf/offcpu.bpf.c;
 * this file holds the public entry points, native_priv.h says where the
 * rest lives.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/kbtf.h"
#include "collect/native_priv.h"
#include "collect/probe.h"
#include "collect/unwind.h"
#include "offcpu.skel.h"
#include "symbolize/symbolize.h"

_Static_assert(OFFCPU_ST_UNKNOWN == (int)OFFCPU_STATE_UNKNOWN, "state numbering");
_Static_assert(OFFCPU_ST_SLEEP == (int)OFFCPU_STATE_SLEEP, "state numbering");
_Static_assert(OFFCPU_ST_DISK == (int)OFFCPU_STATE_DISK, "state numbering");
_Static_assert(OFFCPU_ST_PREEMPT == (int)OFFCPU_STATE_PREEMPT, "state numbering");
_Static_assert(OFFCPU_ST_OTHER == (int)OFFCPU_STATE_OTHER, "state numbering");
_Static_assert(KTEXT_IRQ_RANGES == OFFCPU_IRQ_RANGES, "interrupt entry ranges");

/* Drain the aggregation map at least this often, and whenever it is half full. */
#define DRAIN_NS 1000000000ULL

/* libbpf's print hook is process-wide; it writes to the diag of the collector in use. */
static FILE *libbpf_diag;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !libbpf_diag)
		return 0;
	fputs("libbpf: ", libbpf_diag);
	return vfprintf(libbpf_diag, fmt, ap);
}

void native_note(struct native *n, const char *fmt, ...)
{
	va_list ap;

	if (!n->diag)
		return;
	va_start(ap, fmt);
	fputs("offcpu native: ", n->diag);
	vfprintf(n->diag, fmt, ap);
	fputc('\n', n->diag);
	va_end(ap);
}

uint64_t native_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* Exactly one target, as the BPF side knows it. 0 or -errno + reason. */
static int set_target(struct native *n, const struct native_opts *o, char *why, size_t whylen)
{
	int targets = (o->follow_pid > 0) + (o->nr_pids > 0) + (o->cgroup != NULL) + o->all;

	if (targets != 1 || (o->nr_pids && !o->pids)) {
		snprintf(why, whylen, "give exactly one target: a command, -p, --cgroup or -a");
		return -EINVAL;
	}
	n->target = o->all		? OFFCPU_TARGET_ALL
		    : o->cgroup != NULL ? OFFCPU_TARGET_CGROUP
					: OFFCPU_TARGET_TGIDS;
	return 0;
}

/* The processes or the cgroup to trace exist. 0 or -errno + reason. */
static int check_target(struct native *n, const struct native_opts *o, char *why, size_t whylen)
{
	int err;

	for (size_t i = 0; i <= o->nr_pids; i++) {
		int pid = i < o->nr_pids ? o->pids[i] : o->follow_pid;
		char path[64];

		if (pid <= 0 && i < o->nr_pids) {
			snprintf(why, whylen, "%d is not a process id", pid);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (pid > 0 && access(path, F_OK)) {
			snprintf(why, whylen, "no process %d", pid);
			return -ESRCH;
		}
	}
	if (o->cgroup && (err = native__check_cgroup(o->cgroup, why, whylen)))
		return err;
	if (o->cgroup && (err = native_cgroup_lookup(o->cgroup, &n->cgroup_id, &n->cgroup_level))) {
		snprintf(why, whylen, "%s is not a cgroup v2 directory: %s", o->cgroup,
			 strerror(-err));
		return err;
	}
	return 0;
}

/* What the collector needs before it loads anything. 0 or -errno + reason. */
static int prepare(struct native *n, const struct native_opts *o, char *why, size_t whylen)
{
	const char *btf = probe__btf_path();

	n->nr_cpus = libbpf_num_possible_cpus();
	if (n->nr_cpus <= 0) {
		snprintf(why, whylen, "cannot count the CPUs");
		return n->nr_cpus ? n->nr_cpus : -EINVAL;
	}
	if (ntable_init(&n->agg, sizeof(struct offcpu_agg_key), sizeof(struct offcpu_agg_val)) ||
	    ntable_init(&n->stacks, sizeof(uint64_t), sizeof(struct native_stack)) ||
	    ntable_init(&n->raws, sizeof(uint64_t), sizeof(struct native_raw)) ||
	    ntable_init(&n->snaps, sizeof(uint32_t), sizeof(struct native_snapped)) ||
	    ntable_init(&n->credits, sizeof(uint32_t), sizeof(struct native_credit)) ||
	    ntable_init(&n->site_given, sizeof(struct offcpu_agg_key),
			sizeof(struct offcpu_agg_val)) ||
	    ntable_init(&n->debts, sizeof(struct offcpu_agg_key), sizeof(struct offcpu_agg_val)) ||
	    ntable_init(&n->sofar, sizeof(uint32_t), sizeof(struct native_sofar)))
		return -ENOMEM;
	if (access(btf, R_OK)) {
		snprintf(why, whylen,
			 "the kernel has no BTF (%s): it needs "
			 "CONFIG_DEBUG_INFO_BTF; use the bcc or bpftrace collector",
			 btf);
		return -EOPNOTSUPP;
	}
	return check_target(n, o, why, whylen);
}

struct native *native__start(const struct native_opts *o)
{
	struct native *n = NULL;
	char why[256] = "";
	uint64_t t[3];
	int err;

	if (!o) {
		errno = EINVAL;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		err = -ENOMEM;
		goto cleanup;
	}
	n->corebtf_fd = -1;
	n->diag = o->diag;
	n->sym = o->sym;
	n->timeline = o->timeline;
	n->timeline_min_ns = o->timeline_min_ns;
	libbpf_diag = o->diag;
	libbpf_set_print(libbpf_print);
	if ((err = set_target(n, o, why, sizeof(why))) || (err = prepare(n, o, why, sizeof(why))))
		goto cleanup;
	/*
	 * Three things at once: libbpf's parse of the kernel's BTF (for the
	 * load), the largest maps made (native_open()), and the kernel's
	 * features read here.
	 */
	kbtf__preload();
	if ((err = native_open(n, o, why, sizeof(why))))
		goto cleanup;
	t[0] = native_mono_ns();
	native_kernel_features(n);
	t[1] = native_mono_ns();
	native_kernel_text_start(n, o->timeline != NULL);
	t[2] = native_mono_ns();

	err = native_load_attach(n, o, o->force_raw_tp, why, sizeof(why));
	if (err && n->snap) {
		/* A kernel without sleepable task iterators: trace all the same. */
		char first[sizeof(why)];

		snprintf(first, sizeof(first), "%s", why);
		native_destroy_skel(n);
		n->snap_refused = true;
		err = native_load_attach(n, o, o->force_raw_tp, why, sizeof(why));
		if (!err)
			native_note(n,
				    "the snapshot of the threads at start did not load (%s): "
				    "threads asleep through the window are missing",
				    first);
	}
	if (err && !o->force_raw_tp) {
		native_note(n, "tp_btf failed (%s); falling back to raw_tp", why);
		native_destroy_skel(n);
		err = native_load_attach(n, o, true, why, sizeof(why));
	}
	kbtf__preload_end(); /* a parse no load took */
	if (err)
		goto cleanup;
	if (native_vstats_on()) {
		char core[48] = "all of its types";

		if (n->corebtf_types)
			snprintf(core, sizeof(core), "%zu of its types", n->corebtf_types);
		native_note(
			n,
			"start-up: kernel BTF %.1f ms (CO-RE against %s), kallsyms thread %s in "
			"%.1f ms, load and attach %.1f ms",
			(t[1] - t[0]) / 1e6, core, n->ktext_thread_on ? "started" : "not needed",
			(t[2] - t[1]) / 1e6, (native_mono_ns() - t[2]) / 1e6);
	}
	n->rb = ring_buffer__new(bpf_map__fd(n->skel->maps.events), native_on_event, n, NULL);
	if (!n->rb) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot map the event ring buffer: %s", strerror(-err));
		goto cleanup;
	}
	native_note(n, "attached %s programs: sched_switch, sched_process_fork/exec/exit%s%s",
		    n->raw_tp ? "raw_tp" : "tp_btf",
		    n->schedinfo ? " (run-queue time from sched_info)"
				 : ", sched_wakeup, sched_wakeup_new (no sched_info)",
		    o->timeline
			    ? ", sched_waking, softirq/irq_handler/hrtimer_expire entry and exit "
			      "(timeline wakers)"
			    : "");
	return n;

cleanup:
	if (err == -EPERM)
		snprintf(why, sizeof(why),
			 "not allowed to load BPF programs: run as root (or with CAP_BPF and "
			 "CAP_PERFMON)");
	if (n && n->diag)
		fprintf(n->diag, "offcpu native: %s\n", why[0] ? why : strerror(-err));
	native__free(n);
	errno = -err;
	return NULL;
}

int native__poll(struct native *n, int timeout_ms)
{
	struct offcpu_stats st;
	int err;

	if (!n || n->stopped)
		return -EINVAL;
	err = ring_buffer__poll(n->rb, timeout_ms);
	if (err < 0 && err != -EINTR)
		return err;
	/* Exit records and stacks wake us only when the ring fills (ring_wake()): take them now. */
	ring_buffer__consume(n->rb);
	if (n->drain_asked || native_mono_ns() - n->last_drain_ns >= DRAIN_NS ||
	    (!native_read_stats(n, &st) &&
	     st.agg_inserts - n->inserts_at_flip > n->agg_entries / 2))
		return native_drain(n);
	return 0;
}

int native__fd(const struct native *n)
{
	return n && n->rb ? ring_buffer__epoll_fd(n->rb) : -1;
}

int native__stats(const struct native *n, struct native_stats *st)
{
	if (!n || !st)
		return -EINVAL;
	*st = n->stats;
	return 0;
}

void native__free(struct native *n)
{
	const void *key;
	void *val;

	if (!n)
		return;
	if (n->ktext_pending)
		pthread_join(n->ktext_thread, NULL);
	ksyms__free(n->ksyms);
	ring_buffer__free(n->rb);
	if (n->skel)
		native_destroy_skel(n);
	unwinder__free(n->unw);
	ntable_free(&n->agg);
	for (size_t pos = 0; n->stacks.slots && ntable_next(&n->stacks, &pos, &key, &val);)
		free(((struct native_stack *)val)->ips);
	ntable_free(&n->stacks);
	for (size_t pos = 0; n->raws.slots && ntable_next(&n->raws, &pos, &key, &val);)
		free(((struct native_raw *)val)->r);
	ntable_free(&n->raws);
	ntable_free(&n->snaps);
	ntable_free(&n->credits);
	ntable_free(&n->site_given);
	ntable_free(&n->debts);
	ntable_free(&n->sofar);
	mmstamps__free(&n->mm);
	if (n->corebtf_fd >= 0)
		close(n->corebtf_fd);
	free(n->exits);
	free(n->ivs);
	if (libbpf_diag == n->diag) {
		libbpf_diag = NULL;
		libbpf_set_print(NULL);
	}
	free(n);
}
