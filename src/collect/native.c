// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in collector, user-space side: load and attach offcpu.bpf.c,
 * drain its aggregates while it runs, then turn them into a profile.
 * The kernel side's design notes are at the top of src/bpf/offcpu.bpf.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/offcpu.h"
#include "collect/ktext.h"
#include "collect/native.h"
#include "collect/native_table.h"
#include "model/timeline.h"
#include "offcpu.skel.h"

_Static_assert(OFFCPU_ST_UNKNOWN == (int)OFFCPU_STATE_UNKNOWN, "state numbering");
_Static_assert(OFFCPU_ST_SLEEP == (int)OFFCPU_STATE_SLEEP, "state numbering");
_Static_assert(OFFCPU_ST_DISK == (int)OFFCPU_STATE_DISK, "state numbering");
_Static_assert(OFFCPU_ST_PREEMPT == (int)OFFCPU_STATE_PREEMPT, "state numbering");
_Static_assert(OFFCPU_ST_OTHER == (int)OFFCPU_STATE_OTHER, "state numbering");
_Static_assert(KTEXT_IRQ_RANGES == OFFCPU_IRQ_RANGES, "interrupt entry ranges");

/* Drain the aggregation map at least this often, and whenever it is half full. */
#define DRAIN_NS 1000000000ULL
#define NS_PER_SEC 1000000000ULL

/* A traced thread's identity and ground truth, from an exit record or at stop. */
struct native_thread {
	uint32_t tgid;
	uint32_t tid;
	char comm[OFFCPU_COMM_LEN];
	bool have_time;
	struct profile_thread_time time;
};

/* A stack the BPF side sent: frames innermost first, tracer frames removed. */
struct native_stack {
	uint64_t *ips;
	uint32_t nr;
};

#define NR_PROGS 7 /* fork, exec, exit, wakeup_new, wakeup, waking, switch */

struct native {
	struct offcpu_bpf *skel;
	struct bpf_link *links[NR_PROGS];
	size_t nr_links;
	struct ring_buffer *rb;
	struct symbolizer *sym;
	FILE *diag;
	bool raw_tp;
	bool stopped;
	bool membarrier_broken;
	bool switch_state, rdonly_cast, schedinfo;
	struct native_stats stats;
	int nr_cpus;
	enum offcpu_target target;
	uint32_t agg_entries;
	uint64_t sched_lo, sched_hi;
	struct addr_range irq[KTEXT_IRQ_RANGES]; /* interrupt entry code, for wakers */
	uint64_t cgroup_id;
	uint32_t cgroup_level;
	uint64_t start_ns, stop_ns, last_drain_ns;
	uint64_t inserts_at_flip;
	uint64_t tracked;
	struct ntable agg;    /* struct offcpu_agg_key -> struct offcpu_agg_val */
	struct ntable stacks; /* stack id -> struct native_stack */
	struct native_thread *exits;
	size_t nr_exits, cap_exits;
	struct timeline *timeline; /* o->timeline: filled at stop */
	uint64_t timeline_min_ns;
	struct offcpu_interval *ivs; /* the timeline's intervals as the kernel sent them */
	size_t nr_ivs, cap_ivs;
};

/* libbpf's print hook is process-wide; it writes to the diag of the collector in use. */
static FILE *libbpf_diag;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !libbpf_diag)
		return 0;
	fputs("libbpf: ", libbpf_diag);
	return vfprintf(libbpf_diag, fmt, ap);
}

static void note(struct native *n, const char *fmt, ...)
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* Wait until no BPF program still runs with an old view (an RCU grace period). */
static void quiesce(struct native *n)
{
	if (!n->membarrier_broken && syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	if (!n->membarrier_broken)
		note(n, "membarrier(GLOBAL) failed (%s): waiting 50 ms instead of a grace period",
		     strerror(errno));
	n->membarrier_broken = true;
	usleep(50000);
}

/*
 * The kernel text from /proc/kallsyms, in one read: the range of __schedule
 * (the BPF side drops the tracer frames above it) and, for a timeline, the
 * interrupt entry code (a wakeup from an interrupt names no waker).
 */
static void kernel_text(struct native *n, bool timeline)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	struct ktext k;
	int err = f ? ktext__read(f, &k) : -errno;

	if (f)
		fclose(f);
	if (err)
		memset(&k, 0, sizeof(k));
	n->sched_lo = k.sched.lo;
	n->sched_hi = k.sched.hi;
	if (!timeline)
		return;
	if (!err && !k.irq_err && k.nr_irq) {
		memcpy(n->irq, k.irq, sizeof(n->irq));
		return;
	}
	note(n, "timeline: interrupt entry code not found in /proc/kallsyms (%s): wakers unknown",
	     err ? strerror(-err) : k.irq_err ? strerror(-k.irq_err)
					      : "addresses hidden or names missing");
}

/*
 * What the running kernel's BTF says: whether raw_tp/sched_switch passes
 * prev_state as its 4th argument (5.18+); whether the bpf_rdonly_cast kfunc
 * exists (6.2+: the call-site cache reads kernel stack words with plain loads
 * instead of a helper call each); whether sched_info.last_queued and the
 * run queue's clock can be reached (CONFIG_SCHED_INFO, FAIR_GROUP_SCHED):
 * run-queue time then comes from the scheduler itself, and the wakeup
 * tracepoints are not needed.
 */
static bool has_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

static void kernel_features(struct native *n)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	int id;

	n->switch_state = true;
	n->rdonly_cast = n->schedinfo = false;
	if (!btf)
		return;
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	if (id > 0) {
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type); /* pointer */
		if (t && btf_is_ptr(t))
			t = btf__type_by_id(btf, t->type);
		if (t && btf_is_func_proto(t))
			n->switch_state = btf_vlen(t) >= 5; /* void *, preempt, prev, next, state */
	}
	n->rdonly_cast = btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;
	n->schedinfo = has_member(btf, "sched_info", "last_queued") &&
		       has_member(btf, "sched_entity", "cfs_rq") &&
		       has_member(btf, "cfs_rq", "rq") && has_member(btf, "rq", "clock");
	btf__free(btf);
}

/* Where cgroup v2 is mounted ("" when it is not), for a message. */
static void cgroup2_mount(char *out, size_t len)
{
	char line[4096], mnt[PATH_MAX];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	out[0] = '\0';
	while (f && !out[0] && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (sep && !strncmp(sep, " - cgroup2 ", 11) &&
		    sscanf(line, "%*d %*d %*s %*s %4095s", mnt) == 1)
			snprintf(out, len, "%s", mnt);
	}
	if (f)
		fclose(f);
}

int native__check_cgroup(const char *dir, char *why, size_t why_len)
{
	char where[PATH_MAX], also[PATH_MAX + 64] = "";
	struct statfs sfs;
	struct stat st;
	int err;

	if (stat(dir, &st)) {
		err = -errno;
		snprintf(why, why_len, "--cgroup %s: %s", dir, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "--cgroup %s is not a directory; give a cgroup v2 directory",
			 dir);
		return -ENOTDIR;
	}
	if (statfs(dir, &sfs)) {
		err = -errno;
		snprintf(why, why_len, "--cgroup %s: %s", dir, strerror(-err));
		return err;
	}
	if (sfs.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	/* The hybrid layout mounts v1 at /sys/fs/cgroup and v2 below it. */
	cgroup2_mount(where, sizeof(where));
	if (where[0])
		snprintf(also, sizeof(also), "; cgroup v2 is mounted at %s", where);
	else
		snprintf(also, sizeof(also), "; cgroup v2 is not mounted here "
					     "(mount -t cgroup2 none /mnt/cgroup2)");
	snprintf(why, why_len, "--cgroup %s is %s, and offcpu needs a cgroup v2 directory%s", dir,
		 sfs.f_type == CGROUP_SUPER_MAGIC ? "on cgroup v1" : "not a cgroup directory",
		 also);
	return -ENOTDIR;
}

/* cgroup v2 id (the kernfs id a file handle carries) and depth of dir. */
static int cgroup_lookup(const char *dir, uint64_t *id, uint32_t *level)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = {.fh.handle_bytes = sizeof(uint64_t)};
	char real[PATH_MAX], line[4096];
	int mnt_id, best = -1;
	FILE *f;

	if (!realpath(dir, real))
		return -errno;
	if (name_to_handle_at(AT_FDCWD, real, &h.fh, &mnt_id, 0))
		return -errno;
	*id = h.id;
	/* Depth = components of the mount's root inside the hierarchy + below the mount point. */
	f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], mnt[PATH_MAX], *sep = strstr(line, " - ");
		int len;

		if (!sep || strncmp(sep, " - cgroup2 ", 11))
			continue;
		if (sscanf(line, "%*d %*d %*s %4095s %4095s", root, mnt) != 2)
			continue;
		len = strlen(mnt);
		if (strncmp(real, mnt, len) || (real[len] && real[len] != '/') || len <= best)
			continue;
		best = len;
		*level = 0;
		for (const char *p = root; *p; p++)
			*level += *p == '/' && p[1];
		for (const char *p = real + len; *p; p++)
			*level += *p == '/' && p[1];
	}
	fclose(f);
	return best < 0 ? -ENOTDIR : 0;
}

/* Keep one timeline interval until stop, when its stacks get their profile ids. */
static int keep_interval(struct native *n, const struct offcpu_interval *iv)
{
	if (n->nr_ivs == n->cap_ivs) {
		size_t cap = n->cap_ivs ? n->cap_ivs * 2 : 1024;
		void *p = realloc(n->ivs, cap * sizeof(*n->ivs));

		if (!p)
			return -ENOMEM;
		n->ivs = p;
		n->cap_ivs = cap;
	}
	n->ivs[n->nr_ivs++] = *iv;
	return 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct native *n = ctx;
	const struct offcpu_event *ev = data;
	struct native_thread *t;

	if (len < sizeof(uint32_t))
		return 0;
	if (ev->type == OFFCPU_EV_STACK) {
		const struct offcpu_stack *st = data;
		struct native_stack *ns;
		bool created;
		size_t nr;

		if (len < offsetof(struct offcpu_stack, ips) || st->first > st->nr)
			return 0;
		nr = (len - offsetof(struct offcpu_stack, ips)) / sizeof(uint64_t);
		if (st->nr < nr)
			nr = st->nr;
		if (st->first >= nr)
			return 0;
		ns = ntable_get(&n->stacks, &st->id, &created);
		if (!ns)
			return -ENOMEM;
		if (!created)
			return 0; /* sent again after the stacks map filled */
		ns->nr = nr - st->first;
		ns->ips = malloc(ns->nr * sizeof(*ns->ips));
		if (!ns->ips) {
			ns->nr = 0;
			return -ENOMEM;
		}
		memcpy(ns->ips, st->ips + st->first, ns->nr * sizeof(*ns->ips));
		return 0;
	}
	if (ev->type == OFFCPU_EV_INTERVAL) {
		if (len < sizeof(struct offcpu_interval))
			return 0;
		return keep_interval(n, data);
	}
	if (len < sizeof(*ev))
		return 0;
	if (ev->type == OFFCPU_EV_TRACK) {
		if (n->sym)
			symbolizer__track(n->sym, ev->tgid);
		n->tracked++;
		return 0;
	}
	if (ev->type != OFFCPU_EV_EXIT)
		return 0;
	if (n->nr_exits == n->cap_exits) {
		size_t cap = n->cap_exits ? n->cap_exits * 2 : 256;
		void *p = realloc(n->exits, cap * sizeof(*n->exits));

		if (!p)
			return -ENOMEM;
		n->exits = p;
		n->cap_exits = cap;
	}
	t = &n->exits[n->nr_exits++];
	memset(t, 0, sizeof(*t));
	t->tgid = ev->tgid;
	t->tid = ev->tid;
	memcpy(t->comm, ev->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	t->have_time = true;
	t->time.wall_ns = ev->end_ns > ev->first_ns ? ev->end_ns - ev->first_ns : 0;
	t->time.oncpu_ns = ev->exec_ns;
	t->time.runq_ns = ev->delay_ns;
	n->stats.switches += ev->switches;
	n->stats.cache_hits += ev->hits;
	n->stats.intervals += ev->intervals;
	n->stats.interval_ns += ev->interval_ns;
	return 0;
}

static int read_stats(struct native *n, struct offcpu_stats *sum)
{
	struct offcpu_stats *per = calloc(n->nr_cpus, sizeof(*per));
	uint32_t zero = 0;
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(n->skel->maps.stats), &zero, per)) {
		err = -errno;
		goto cleanup;
	}
	for (int c = 0; c < n->nr_cpus; c++) {
		const uint64_t *src = (const uint64_t *)&per[c];
		uint64_t *dst = (uint64_t *)sum;

		for (size_t i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
			dst[i] += src[i];
	}
cleanup:
	free(per);
	return err;
}

static int agg_merge(struct native *n, const struct offcpu_agg_key *k,
		     const struct offcpu_agg_val *v)
{
	struct offcpu_agg_val *dst;
	bool created;

	dst = ntable_get(&n->agg, k, &created);
	if (!dst)
		return -ENOMEM;
	dst->count += v->count;
	dst->off_ns += v->off_ns;
	dst->runq_ns += v->runq_ns;
	return 0;
}

/* Move every entry of a map no program writes any more into n->agg. */
static int drain_map(struct native *n, struct bpf_map *map)
{
	enum { BATCH = 1024 };
	int fd = bpf_map__fd(map), err = 0;
	struct offcpu_agg_key *keys = calloc(BATCH, sizeof(*keys));
	struct offcpu_agg_val *vals = calloc(BATCH, sizeof(*vals));
	struct offcpu_agg_key key;
	struct offcpu_agg_val val;
	uint32_t in_b = 0, out_b = 0;
	bool first = true;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		uint32_t count = BATCH;
		int ret = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in_b, &out_b, keys,
							  vals, &count, NULL);

		if (ret && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP))
				break; /* no batch ops: the slow way below */
			err = -errno;
			goto cleanup;
		}
		for (uint32_t i = 0; i < count; i++)
			if ((err = agg_merge(n, &keys[i], &vals[i])))
				goto cleanup;
		if (ret)
			goto cleanup; /* ENOENT: done */
		first = false;
		in_b = out_b;
	}
	while (!bpf_map_get_next_key(fd, NULL, &key)) {
		if (!bpf_map_lookup_elem(fd, &key, &val) && (err = agg_merge(n, &key, &val)))
			goto cleanup;
		if (bpf_map_delete_elem(fd, &key)) {
			err = -errno;
			goto cleanup;
		}
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

/* Switch the BPF side to the other aggregation map and empty the one it left. */
static int drain(struct native *n)
{
	uint32_t old = n->skel->bss->gen & 1;
	struct offcpu_stats st;

	__atomic_store_n(&n->skel->bss->gen, old ^ 1, __ATOMIC_SEQ_CST);
	quiesce(n);
	if (!read_stats(n, &st))
		n->inserts_at_flip = st.agg_inserts;
	n->last_drain_ns = mono_ns();
	n->stats.drains++;
	return drain_map(n, old ? n->skel->maps.agg1 : n->skel->maps.agg0);
}

static uint32_t pick(uint32_t opt, uint32_t small, uint32_t large, enum offcpu_target t)
{
	if (opt)
		return opt;
	return t == OFFCPU_TARGET_TGIDS ? small : large;
}

static void destroy_skel(struct native *n)
{
	for (size_t i = 0; i < n->nr_links; i++)
		bpf_link__destroy(n->links[i]);
	n->nr_links = 0;
	offcpu_bpf__destroy(n->skel);
	n->skel = NULL;
}

/*
 * The events ring buffer: user space reads it every 200 ms (record's loop)
 * without being woken. Stacks and exits need little; a timeline sends every
 * interval above its threshold (72 bytes each): 16 MB holds 230k of them.
 */
static uint32_t ring_size(enum offcpu_target t, bool timeline)
{
	uint32_t mb = t == OFFCPU_TARGET_TGIDS ? 4 : 16;

	return (timeline ? 4 * mb : mb) << 20;
}

/* Open, configure, load and attach one flavour (tp_btf or raw_tp). 0 or -errno + reason. */
static int load_attach(struct native *n, const struct native_opts *o, bool raw, char *why,
		       size_t whylen)
{
	struct offcpu_bpf *s;
	struct bpf_program *btf_progs[NR_PROGS], *raw_progs[NR_PROGS];
	uint32_t threads, aggs, stacks;
	int err;

	s = n->skel = offcpu_bpf__open();
	if (!s) {
		err = -errno;
		snprintf(why, whylen, "cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	s->rodata->target = n->target;
	s->rodata->kernel_threads = o->kernel_threads;
	s->rodata->self_tgid = getpid();
	s->rodata->state_mask = o->state_mask;
	s->rodata->min_block_ns = o->min_block_ns;
	s->rodata->max_block_ns = o->max_block_ns;
	s->rodata->kernel_stacks = !o->no_kernel_stacks;
	s->rodata->user_stacks = !o->no_user_stacks;
	s->rodata->stack_cache = !o->no_stack_cache;
	s->rodata->sched_lo = n->sched_lo;
	s->rodata->sched_hi = n->sched_hi;
	s->rodata->switch_has_state = n->switch_state;
	s->rodata->kmem_direct = n->rdonly_cast;
	s->rodata->runq_schedinfo = n->schedinfo;
	s->rodata->cgroup_id = n->cgroup_id;
	s->rodata->cgroup_level = n->cgroup_level;
	s->rodata->timeline = o->timeline != NULL;
	s->rodata->timeline_min_ns = o->timeline_min_ns;
	for (int i = 0; i < OFFCPU_IRQ_RANGES; i++) {
		s->rodata->irq_lo[i] = n->irq[i].lo;
		s->rodata->irq_hi[i] = n->irq[i].hi;
	}

	threads = pick(o->thread_entries, 8192, 32768, n->target);
	aggs = n->agg_entries = pick(o->agg_entries, 16384, 65536, n->target);
	stacks = pick(o->stack_entries, 16384, 65536, n->target);
	if ((err = bpf_map__set_max_entries(s->maps.threads, threads)) ||
	    (err = bpf_map__set_max_entries(s->maps.procs, threads)) ||
	    (err = bpf_map__set_max_entries(s->maps.agg0, aggs)) ||
	    (err = bpf_map__set_max_entries(s->maps.agg1, aggs)) ||
	    (err = bpf_map__set_max_entries(s->maps.stacks, stacks)) ||
	    (err = bpf_map__set_max_entries(s->maps.events, ring_size(n->target, o->timeline)))) {
		snprintf(why, whylen, "cannot size the BPF maps: %s", strerror(-err));
		return err;
	}

	/* Attach order: process and wakeup bookkeeping before the switches that use it. */
	btf_progs[0] = s->progs.fork_btf, raw_progs[0] = s->progs.fork_raw;
	btf_progs[1] = s->progs.exec_btf, raw_progs[1] = s->progs.exec_raw;
	btf_progs[2] = s->progs.exit_btf, raw_progs[2] = s->progs.exit_raw;
	btf_progs[3] = s->progs.wkn_btf, raw_progs[3] = s->progs.wkn_raw;
	btf_progs[4] = s->progs.wk_btf, raw_progs[4] = s->progs.wk_raw;
	btf_progs[5] = s->progs.wkg_btf, raw_progs[5] = s->progs.wkg_raw;
	btf_progs[6] = s->progs.sw_btf, raw_progs[6] = s->progs.sw_raw;
	for (int i = 0; i < NR_PROGS; i++) {
		/*
		 * The wakeup tracepoints only time run-queue waits sched_info
		 * cannot; sched_waking names the waker of timeline intervals.
		 */
		bool needed = i == 5 ? o->timeline != NULL : !n->schedinfo || (i != 3 && i != 4);

		bpf_program__set_autoload(btf_progs[i], needed && !raw);
		bpf_program__set_autoload(raw_progs[i], needed && raw);
	}

	if ((err = offcpu_bpf__load(s))) {
		snprintf(why, whylen, "the kernel refused the %s programs: %s",
			 raw ? "raw_tp" : "tp_btf", strerror(-err));
		return err;
	}

	if (n->target == OFFCPU_TARGET_TGIDS) {
		int fd = bpf_map__fd(s->maps.procs);
		struct offcpu_proc zero = {};
		int root = o->follow_pid;

		for (size_t i = 0; i <= o->nr_pids; i++) {
			int pid = i < o->nr_pids ? o->pids[i] : root;

			if (pid <= 0)
				continue;
			if (bpf_map_update_elem(fd, &pid, &zero, BPF_ANY)) {
				err = -errno;
				snprintf(why, whylen, "cannot add process %d: %s", pid,
					 strerror(-err));
				return err;
			}
		}
	}

	n->start_ns = n->last_drain_ns = mono_ns();
	s->bss->start_ns = n->start_ns;
	s->bss->held_tgid = o->follow_pid > 0 ? o->follow_pid : 0;
	for (int i = 0; i < NR_PROGS; i++) {
		struct bpf_program *p = raw ? raw_progs[i] : btf_progs[i];
		struct bpf_link *l;

		if (!bpf_program__autoload(p))
			continue;
		l = bpf_program__attach(p);

		if (!l) {
			err = -errno;
			snprintf(why, whylen, "cannot attach %s: %s", bpf_program__section_name(p),
				 strerror(-err));
			return err;
		}
		n->links[n->nr_links++] = l;
	}
	n->raw_tp = raw;
	return 0;
}

struct native *native__start(const struct native_opts *o)
{
	struct native *n = NULL;
	char why[256] = "";
	int targets, err;

	if (!o) {
		errno = EINVAL;
		return NULL;
	}
	targets = (o->follow_pid > 0) + (o->nr_pids > 0) + (o->cgroup != NULL) + o->all;
	n = calloc(1, sizeof(*n));
	if (!n) {
		err = -ENOMEM;
		goto cleanup;
	}
	n->diag = o->diag;
	n->sym = o->sym;
	n->timeline = o->timeline;
	n->timeline_min_ns = o->timeline_min_ns;
	libbpf_diag = o->diag;
	libbpf_set_print(libbpf_print);
	if (targets != 1 || (o->nr_pids && !o->pids)) {
		err = -EINVAL;
		snprintf(why, sizeof(why),
			 "give exactly one target: a command, -p, --cgroup or -a");
		goto cleanup;
	}
	n->target = o->all		? OFFCPU_TARGET_ALL
		    : o->cgroup != NULL ? OFFCPU_TARGET_CGROUP
					: OFFCPU_TARGET_TGIDS;
	n->nr_cpus = libbpf_num_possible_cpus();
	if (n->nr_cpus <= 0) {
		err = n->nr_cpus ? n->nr_cpus : -EINVAL;
		snprintf(why, sizeof(why), "cannot count the CPUs");
		goto cleanup;
	}
	if (ntable_init(&n->agg, sizeof(struct offcpu_agg_key), sizeof(struct offcpu_agg_val)) ||
	    ntable_init(&n->stacks, sizeof(uint64_t), sizeof(struct native_stack))) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		err = -EOPNOTSUPP;
		snprintf(why, sizeof(why),
			 "the kernel has no BTF (/sys/kernel/btf/vmlinux): it needs "
			 "CONFIG_DEBUG_INFO_BTF; use the bcc or bpftrace collector");
		goto cleanup;
	}
	for (size_t i = 0; i <= o->nr_pids; i++) {
		int pid = i < o->nr_pids ? o->pids[i] : o->follow_pid;
		char path[64];

		if (pid <= 0 && i < o->nr_pids) {
			err = -EINVAL;
			snprintf(why, sizeof(why), "%d is not a process id", pid);
			goto cleanup;
		}
		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (pid > 0 && access(path, F_OK)) {
			err = -ESRCH;
			snprintf(why, sizeof(why), "no process %d", pid);
			goto cleanup;
		}
	}
	if (o->cgroup && (err = native__check_cgroup(o->cgroup, why, sizeof(why))))
		goto cleanup;
	if (o->cgroup && (err = cgroup_lookup(o->cgroup, &n->cgroup_id, &n->cgroup_level))) {
		snprintf(why, sizeof(why), "%s is not a cgroup v2 directory: %s", o->cgroup,
			 strerror(-err));
		goto cleanup;
	}
	kernel_text(n, o->timeline != NULL);
	kernel_features(n);
	if (!n->sched_lo)
		note(n, "__schedule not found in /proc/kallsyms: tracer frames are not stripped "
			"in the kernel");

	err = load_attach(n, o, o->force_raw_tp, why, sizeof(why));
	if (err && !o->force_raw_tp) {
		note(n, "tp_btf failed (%s); falling back to raw_tp", why);
		destroy_skel(n);
		err = load_attach(n, o, true, why, sizeof(why));
	}
	if (err)
		goto cleanup;
	n->rb = ring_buffer__new(bpf_map__fd(n->skel->maps.events), on_event, n, NULL);
	if (!n->rb) {
		err = -errno;
		snprintf(why, sizeof(why), "cannot map the event ring buffer: %s", strerror(-err));
		goto cleanup;
	}
	note(n, "attached %s programs: sched_switch, sched_process_fork/exec/exit%s%s",
	     n->raw_tp ? "raw_tp" : "tp_btf",
	     n->schedinfo ? " (run-queue time from sched_info)"
			  : ", sched_wakeup, sched_wakeup_new (no sched_info)",
	     o->timeline ? ", sched_waking (timeline wakers)" : "");
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
	/* Exit records do not wake us (BPF_RB_NO_WAKEUP): take them now. */
	ring_buffer__consume(n->rb);
	if (mono_ns() - n->last_drain_ns >= DRAIN_NS ||
	    (!read_stats(n, &st) && st.agg_inserts - n->inserts_at_flip > n->agg_entries / 2))
		return drain(n);
	return 0;
}

/* ---- stop: from BPF maps to the profile ---------------------------------- */

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
	size_t n;
};

struct build {
	struct native *n;
	struct profile *p;
	struct symbolizer *sym;
	struct ntable threads; /* thread_key -> native_thread */
	struct ntable parts;   /* part_key -> part */
	struct ntable at_stop; /* tid -> schedstat's two first fields at stop */
	uint64_t stripped;     /* kernel stacks whose tracer frames were dropped here */
	uint64_t unresolved;   /* stack ids whose frames never arrived */
};

static const char *errno_name(unsigned int e, bool upper)
{
	static const struct {
		unsigned int e;
		const char *lo, *up;
	} names[] = {
		{EFAULT, "efault", "EFAULT"}, {ENOMEM, "enomem", "ENOMEM"},
		{EEXIST, "eexist", "EEXIST"}, {EINVAL, "einval", "EINVAL"},
		{ENOENT, "enoent", "ENOENT"}, {EPERM, "eperm", "EPERM"},
		{EBUSY, "ebusy", "EBUSY"},    {EOPNOTSUPP, "eopnotsupp", "EOPNOTSUPP"},
		{ENOSPC, "enospc", "ENOSPC"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return upper ? names[i].up : names[i].lo;
	return NULL;
}

/* The placeholder frame of a stack that could not be had; side NULL: both sides. */
static int missing_frame(struct profile *p, const char *side, uint64_t id)
{
	const char *sp = side ? " " : "", *name;
	char buf[96];

	side = side ? side : "";
	if (id == OFFCPU_STACK_BEFORE_START)
		snprintf(buf, sizeof(buf), "[%s%sstack unknown: off-CPU since before start]", side,
			 sp);
	else if (id == OFFCPU_STACK_NEW_THREAD)
		snprintf(buf, sizeof(buf), "[new thread: waiting for its first run]");
	else if (id == OFFCPU_STACK_UNSEEN)
		snprintf(buf, sizeof(buf), "[%s%sstack unknown: switch-out not reported]", side,
			 sp);
	else if (id == OFFCPU_STACK_LOST)
		snprintf(buf, sizeof(buf), "[missing %s%sstack: ring buffer full]", side, sp);
	else if (id == ENOENT)
		snprintf(buf, sizeof(buf), "[missing %s%sstack: never received]", side, sp);
	else if ((name = errno_name(id, true)))
		snprintf(buf, sizeof(buf), "[missing %s%sstack: %s]", side, sp, name);
	else
		snprintf(buf, sizeof(buf), "[missing %s%sstack: errno %" PRIu64 "]", side, sp, id);
	return profile__frame(p, FRAME_MISSING, buf, strlen(buf));
}

static bool tracer_frame(const char *name)
{
	return !strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trace_run", 13) ||
	       !strncmp(name, "__bpf_trace_", 12) || !strncmp(name, "__traceiter_", 12) ||
	       !strncmp(name, "bpf_trampoline_", 15);
}

static int part_push(struct part *pt, int id)
{
	uint32_t *ids;

	if (id < 0)
		return id;
	ids = realloc(pt->ids, (pt->n + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	ids[pt->n++] = id;
	pt->ids = ids;
	return 0;
}

/* Frames of stack id of one side, root first, interned into the profile. */
static int part_build(struct build *b, struct part *pt, bool user, uint32_t tgid, uint64_t id)
{
	const struct native_stack *st;
	char name[256];
	size_t first = 0;

	if (id == OFFCPU_STACK_NONE)
		return 0;
	if (!(id & OFFCPU_STACK_REAL))
		return part_push(pt, missing_frame(b->p, user ? "user" : "kernel", id));
	st = ntable_find(&b->n->stacks, &id);
	if (!st || !st->nr) {
		b->unresolved++;
		return part_push(pt, missing_frame(b->p, user ? "user" : "kernel", ENOENT));
	}
	if (!user && !b->n->sched_lo && b->sym) {
		/* No __schedule anchor in the kernel: drop tracer frames by name. */
		while (first + 1 < st->nr &&
		       !symbolizer__kernel(b->sym, st->ips[first] - 1, name, sizeof(name)) &&
		       tracer_frame(name))
			first++;
		b->stripped += first != 0;
	}
	for (size_t i = st->nr; i-- > first;) {
		uint64_t ip = st->ips[i];
		int err = 0;

		if (!b->sym) {
			snprintf(name, sizeof(name), "0x%" PRIx64, ip);
			err = part_push(pt, profile__frame(b->p, user ? FRAME_USER : FRAME_KERNEL,
							   name, strlen(name)));
		} else if (!user) {
			/* Return addresses: look up the call instruction, not the one after. */
			symbolizer__kernel(b->sym, ip - 1, name, sizeof(name));
			err = part_push(pt, profile__frame(b->p, FRAME_KERNEL, name, strlen(name)));
		} else {
			struct sym_frame fr[8];
			int k = symbolizer__user(b->sym, tgid, i == 0 ? ip : ip - 1, fr, 8);

			if (k <= 0) {
				snprintf(fr[0].name, sizeof(fr[0].name), "0x%" PRIx64, ip);
				k = 1;
			}
			for (int j = 0; j < k && !err; j++)
				err = part_push(pt, profile__frame(b->p, FRAME_USER, fr[j].name,
								   strnlen(fr[j].name,
									   sizeof(fr[j].name))));
		}
		if (err)
			return err;
	}
	return 0;
}

static int part_get(struct build *b, bool user, uint32_t tgid, uint64_t id, const struct part **out)
{
	struct part_key key = {.id = id, .tgid = user ? tgid : 0, .user = user};
	struct part *pt, built = {};
	bool created;
	int err;

	pt = ntable_find(&b->parts, &key);
	if (pt) {
		*out = pt;
		return 0;
	}
	if ((err = part_build(b, &built, user, tgid, id))) {
		free(built.ids);
		return err;
	}
	pt = ntable_get(&b->parts, &key, &created);
	if (!pt) {
		free(built.ids);
		return -ENOMEM;
	}
	*pt = built;
	*out = pt;
	return 0;
}

/* The profile stack of a row: user part then kernel part, each root first. */
static int stack_of(struct build *b, const struct offcpu_agg_key *k)
{
	const struct part *u = NULL, *kp = NULL;
	uint32_t *ids;
	size_t nr;
	int err, id;

	/* Both sides unknown for the same reason: one placeholder says it. */
	if (k->kstack == k->ustack &&
	    (k->kstack == OFFCPU_STACK_BEFORE_START || k->kstack == OFFCPU_STACK_NEW_THREAD ||
	     k->kstack == OFFCPU_STACK_UNSEEN)) {
		uint32_t one;

		if ((id = missing_frame(b->p, NULL, k->kstack)) < 0)
			return id;
		one = id;
		return profile__stack(b->p, &one, 1);
	}
	if ((err = part_get(b, true, k->tgid, k->ustack, &u)) ||
	    (err = part_get(b, false, k->tgid, k->kstack, &kp)))
		return err;
	nr = u->n + kp->n;
	ids = malloc((nr ? nr : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	if (u->n)
		memcpy(ids, u->ids, u->n * sizeof(*ids));
	if (kp->n)
		memcpy(ids + u->n, kp->ids, kp->n * sizeof(*ids));
	id = profile__stack(b->p, ids, nr);
	free(ids);
	return id;
}

static int read_u64s(const char *path, uint64_t *v, int nr)
{
	FILE *f = fopen(path, "r");
	int got = 0;

	if (!f)
		return -errno;
	while (got < nr && fscanf(f, "%" SCNu64, &v[got]) == 1)
		got++;
	fclose(f);
	return got == nr ? 0 : -EINVAL;
}

static void read_comm(uint32_t tgid, uint32_t tid, char *comm)
{
	char path[96], buf[OFFCPU_COMM_LEN + 2];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", tgid, tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		buf[OFFCPU_COMM_LEN - 1] = '\0';
		memcpy(comm, buf, OFFCPU_COMM_LEN);
	}
	fclose(f);
}

/*
 * Threads still known to the BPF side at stop: their identity and ground
 * truth (schedstat now minus at first sight), and the open interval of those
 * still off the CPU, recorded up to stop.
 */
static int read_live_threads(struct build *b, uint64_t *inflight, uint64_t *inflight_ns,
			     uint64_t *both, uint64_t *both_ns)
{
	struct native *n = b->n;
	int fd = bpf_map__fd(n->skel->maps.threads);
	struct offcpu_thread th;
	uint32_t tid, next;
	bool first = true;
	int err;

	while (!bpf_map_get_next_key(fd, first ? NULL : &tid, &next)) {
		struct thread_key tk;
		struct native_thread *t;
		char path[96];
		uint64_t ss[2];
		const uint64_t *at;

		first = false;
		tid = next;
		if (bpf_map_lookup_elem(fd, &tid, &th))
			continue;
		n->stats.switches += th.switches;
		n->stats.cache_hits += th.hits;
		n->stats.intervals += th.intervals;
		n->stats.interval_ns += th.interval_ns;
		/* Weight accumulated in the call-site cache, not yet flushed. */
		for (int w = 0; w < OFFCPU_CACHE_WAYS; w++) {
			const struct offcpu_site *site = &th.sites[w];
			struct offcpu_agg_key k = {
				.kstack = site->kstack,
				.ustack = site->ustack,
				.tgid = th.tgid,
				.tid = tid,
				.state = site->state,
			};
			struct offcpu_agg_val v = {site->count, site->off_ns, site->runq_ns};

			if (site->count && (err = agg_merge(n, &k, &v)))
				return err;
		}
		tk = (struct thread_key){th.tgid, tid};
		t = ntable_get(&b->threads, &tk, NULL);
		if (!t)
			return -ENOMEM;
		t->tgid = th.tgid;
		t->tid = tid;
		memcpy(t->comm, th.comm, sizeof(t->comm));
		t->comm[sizeof(t->comm) - 1] = '\0';
		read_comm(th.tgid, tid, t->comm);
		snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", th.tgid, tid);
		at = ntable_find(&b->at_stop, &tid);
		if (at)
			memcpy(ss, at, sizeof(ss));
		if (at || !read_u64s(path, ss, 2)) {
			t->have_time = true;
			t->time.wall_ns = n->stop_ns > th.first_ns ? n->stop_ns - th.first_ns : 0;
			t->time.oncpu_ns = ss[0] > th.base_exec_ns ? ss[0] - th.base_exec_ns : 0;
			t->time.runq_ns = ss[1] > th.base_delay_ns ? ss[1] - th.base_delay_ns : 0;
		}

		if (!th.off_ns || (th.flags & OFFCPU_TH_FILTERED) || n->stop_ns <= th.off_ns)
			continue;
		struct offcpu_agg_key k = {
			.kstack = th.kstack,
			.ustack = th.ustack,
			.tgid = th.tgid,
			.tid = tid,
			.state = th.state,
		};
		struct offcpu_agg_val v = {.count = 1, .off_ns = n->stop_ns - th.off_ns};

		if (th.state == OFFCPU_ST_PREEMPT || (th.flags & OFFCPU_TH_NEW))
			v.runq_ns = v.off_ns;
		else if (th.wake_ns && th.wake_ns < n->stop_ns)
			v.runq_ns = n->stop_ns - th.wake_ns;
		if (v.runq_ns > v.off_ns)
			v.runq_ns = v.off_ns;
		if (th.flags & OFFCPU_TH_BEFORE_START) {
			k.kstack = k.ustack = OFFCPU_STACK_BEFORE_START;
			k.state = OFFCPU_ST_UNKNOWN;
			(*both)++;
			*both_ns += v.off_ns;
		}
		if (n->timeline && v.off_ns >= n->timeline_min_ns) {
			struct offcpu_interval iv = {
				.type = OFFCPU_EV_INTERVAL,
				.tgid = th.tgid,
				.tid = tid,
				.waker = th.waker,
				.start_ns = th.off_ns,
				.dur_ns = v.off_ns,
				.runq_ns = v.runq_ns,
				.kstack = k.kstack,
				.ustack = k.ustack,
				.state = k.state,
			};

			if ((err = keep_interval(n, &iv)))
				return err;
		}
		if ((err = agg_merge(n, &k, &v)))
			return err;
		(*inflight)++;
		*inflight_ns += v.off_ns;
	}
	return 0;
}

/*
 * The timeline's intervals, in the order the kernel sent them (those open at
 * stop last), with their stacks as the profile's ids: the same stacks their
 * rows have, so the timeline is a subset of the profile's time.
 */
static int build_timeline(struct build *b)
{
	struct native *n = b->n;

	if (!n->timeline)
		return 0;
	for (size_t i = 0; i < n->nr_ivs; i++) {
		const struct offcpu_interval *iv = &n->ivs[i];
		struct offcpu_agg_key k = {
			.kstack = iv->kstack,
			.ustack = iv->ustack,
			.tgid = iv->tgid,
			.tid = iv->tid,
			.state = iv->state,
		};
		struct timeline_interval t = {
			.start_ns = iv->start_ns,
			.dur_ns = iv->dur_ns,
			.runq_ns = iv->runq_ns > iv->dur_ns ? iv->dur_ns : iv->runq_ns,
			.pid = (int)iv->tgid,
			.tid = (int)iv->tid,
			.state = (enum offcpu_state)iv->state,
			.waker_tid = (int)iv->waker,
		};
		int sid = stack_of(b, &k), err;

		if (sid < 0)
			return sid;
		t.stack = (uint32_t)sid;
		if ((err = timeline__append(n->timeline, &t)))
			return err;
	}
	n->stats.timeline_intervals = n->nr_ivs;
	return 0;
}

/* The timeline's threshold and what the ring buffer dropped, once the stats are read. */
static void timeline_info(struct native *n, const struct offcpu_stats *st)
{
	struct timeline_info info = {
		.min_ns = n->timeline_min_ns,
		.lost = st->timeline_lost,
		.lost_ns = st->timeline_lost_ns,
	};

	if (n->timeline)
		timeline__set_info(n->timeline, &info);
}

/*
 * schedstat of the threads known at stop, read before the detach: the BPF
 * side records nothing past stop_ns, and a thread that ran on while the
 * links went (tens of ms) would count that run in a later reading.
 */
static int snapshot_live(struct native *n, struct ntable *at_stop)
{
	int fd = bpf_map__fd(n->skel->maps.threads);
	struct offcpu_thread th;
	uint32_t tid, next;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &tid, &next)) {
		char path[96];
		uint64_t ss[2], *v;

		first = false;
		tid = next;
		if (bpf_map_lookup_elem(fd, &tid, &th))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", th.tgid, tid);
		if (read_u64s(path, ss, 2))
			continue;
		v = ntable_get(at_stop, &tid, NULL);
		if (!v)
			return -ENOMEM;
		memcpy(v, ss, sizeof(ss));
	}
	return 0;
}

/* Program runs the kernel skipped (its recursion guard), over all loaded programs. */
static uint64_t missed_events(struct native *n)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	bpf_object__for_each_program(prog, n->skel->obj)
	{
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

static void add_loss(struct integrity *in, const char *name, uint64_t count, uint64_t ns)
{
	if (in)
		integrity__add_loss(in, name, count, ns);
}

int native__stop(struct native *n, struct profile *p, struct integrity *in, struct symbolizer *sym)
{
	struct build b = {.n = n, .p = p, .sym = sym};
	struct offcpu_stats st;
	uint64_t inflight = 0, inflight_ns = 0, both = 0, both_ns = 0, misses;
	struct native_stats *ns = &n->stats;
	uint64_t stacks_lost = 0, stacks_lost_ns = 0;
	const void *key;
	void *val;
	size_t pos;
	int err;

	if (!n || !p || n->stopped)
		return -EINVAL;
	n->stopped = true;
	if ((err = ntable_init(&b.threads, sizeof(struct thread_key),
			       sizeof(struct native_thread))) ||
	    (err = ntable_init(&b.parts, sizeof(struct part_key), sizeof(struct part))) ||
	    (err = ntable_init(&b.at_stop, sizeof(uint32_t), 2 * sizeof(uint64_t))))
		goto cleanup;
	n->stop_ns = mono_ns();
	n->skel->bss->stop_ns = n->stop_ns;
	err = snapshot_live(n, &b.at_stop);
	misses = missed_events(n);
	for (size_t i = 0; i < n->nr_links; i++)
		bpf_link__destroy(n->links[i]);
	n->nr_links = 0;
	quiesce(n); /* a program that started before the detach has finished */
	if (err)
		goto cleanup;
	ring_buffer__consume(n->rb);
	if ((err = drain_map(n, n->skel->maps.agg0)) || (err = drain_map(n, n->skel->maps.agg1)))
		goto cleanup;
	if ((err = read_stats(n, &st)))
		goto cleanup;
	for (size_t i = 0; i < n->nr_exits; i++) {
		struct thread_key tk = {n->exits[i].tgid, n->exits[i].tid};
		struct native_thread *t = ntable_get(&b.threads, &tk, NULL);

		if (!t) {
			err = -ENOMEM;
			goto cleanup;
		}
		*t = n->exits[i];
	}
	if ((err = read_live_threads(&b, &inflight, &inflight_ns, &both, &both_ns)))
		goto cleanup;

	for (pos = 0; ntable_next(&n->agg, &pos, &key, &val);) {
		const struct offcpu_agg_key *k = key;
		const struct offcpu_agg_val *v = val;
		struct thread_key tk = {k->tgid, k->tid};
		const struct native_thread *t = ntable_find(&b.threads, &tk);
		struct profile_weight w = {v->count, v->off_ns, v->runq_ns};
		int tid, sid;

		tid = profile__thread(p, k->tgid, k->tid, t ? t->comm : NULL);
		if (tid < 0) {
			err = tid;
			goto cleanup;
		}
		sid = stack_of(&b, k);
		if (sid < 0) {
			err = sid;
			goto cleanup;
		}
		if ((err = profile__add(p, tid, sid, k->state, &w)) < 0)
			goto cleanup;
		for (int side = 0; side < 2; side++) {
			uint64_t id = side ? k->ustack : k->kstack;
			char name[INTEGRITY_NAME_MAX];
			const char *e;

			if (id == OFFCPU_STACK_NONE || id > OFFCPU_STACK_ERRNO_MAX)
				continue;
			if (id == OFFCPU_STACK_LOST) {
				stacks_lost += v->count;
				stacks_lost_ns += v->off_ns;
				continue;
			}
			e = errno_name(id, false);
			if (e)
				snprintf(name, sizeof(name), "%s_stack_errors_%s",
					 side ? "user" : "kernel", e);
			else
				snprintf(name, sizeof(name), "%s_stack_errors_errno%u",
					 side ? "user" : "kernel", (unsigned int)id);
			add_loss(in, name, v->count, v->off_ns);
		}
	}
	if ((err = build_timeline(&b)))
		goto cleanup;
	for (pos = 0; ntable_next(&b.threads, &pos, &key, &val);) {
		const struct native_thread *t = val;
		int tid;

		if (!t->have_time)
			continue;
		tid = profile__thread(p, t->tgid, t->tid, t->comm);
		if (tid < 0 || (err = profile__set_thread_time(p, tid, &t->time)) < 0) {
			err = tid < 0 ? tid : err;
			goto cleanup;
		}
	}
	profile__set_runq_known(p, true);

	add_loss(in, "inflight_at_start", st.inflight_start + both, st.inflight_start_ns + both_ns);
	add_loss(in, "inflight_at_stop", inflight, inflight_ns);
	add_loss(in, "map_full_agg", st.map_full_agg, st.map_full_agg_ns);
	add_loss(in, "lost_stacks", stacks_lost, stacks_lost_ns);
	add_loss(in, "map_full_threads", st.map_full_threads, 0);
	add_loss(in, "map_full_procs", st.map_full_procs, 0);
	add_loss(in, "unmatched_switch_in", st.unmatched_switch_in, 0);
	add_loss(in, "unseen_switch_out", st.unseen_switch_out, st.unseen_switch_out_ns);
	add_loss(in, "unmatched_wakeups", st.unmatched_wakeups, 0);
	add_loss(in, "stack_cache_mismatch", st.cache_mismatch, st.cache_mismatch_ns);
	add_loss(in, "lost_thread_records", st.lost_records, 0);
	add_loss(in, "missed_events", misses, 0);
	if (in)
		in->evidence = 1;

	ns->raw_tp = n->raw_tp;
	ns->runq_schedinfo = n->schedinfo;
	ns->cache_misses = st.cache_misses;
	ns->cache_checks = st.cache_checks;
	ns->check_failures = st.check_failed_kernel + st.check_failed_user;
	ns->walks_kernel = st.walks_kernel;
	ns->walks_user = st.walks_user;
	ns->sites = st.sites_made;
	ns->sites_kernel_exact = st.sites_kernel_exact;
	ns->sites_user_exact = st.sites_user_exact;
	ns->timeline_lost = st.timeline_lost;
	ns->timeline_lost_ns = st.timeline_lost_ns;
	timeline_info(n, &st);
	if (n->timeline)
		note(n,
		     "timeline: %" PRIu64 " intervals of at least %" PRIu64 " ns kept, %" PRIu64
		     " dropped (ring buffer full; %" PRIu64 " ns, in the profile all the same)",
		     ns->timeline_intervals, n->timeline_min_ns, ns->timeline_lost,
		     ns->timeline_lost_ns);
	note(n,
	     "%s, %.3f s: %" PRIu64 " switch-outs of traced threads, %" PRIu64
	     " intervals, %" PRIu64 " filtered; stack walks %" PRIu64 " kernel / %" PRIu64
	     " user; %" PRIu64 " drains while running",
	     n->raw_tp ? "raw_tp" : "tp_btf", (n->stop_ns - n->start_ns) / 1e9, ns->switches,
	     ns->intervals, st.filtered, st.walks_kernel, st.walks_user, ns->drains);
	note(n,
	     "call-site cache: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " checks (%" PRIu64
	     " found another kernel stack, %" PRIu64 " another user stack; %" PRIu64
	     " intervals in failed checks), %" PRIu64
	     " key matches refused by kernel frames; %" PRIu64 " sites made, %" PRIu64
	     " kernel-exact, %" PRIu64 " user-exact%s",
	     ns->cache_hits, st.cache_misses, st.cache_checks, st.check_failed_kernel,
	     st.check_failed_user, st.cache_mismatch, st.kslot_rejects, st.sites_made,
	     st.sites_kernel_exact, st.sites_user_exact,
	     n->rdonly_cast ? "" : " (kernel words read by helper)");
	if (st.unseen_switch_in || st.unseen_switch_out)
		note(n,
		     "the kernel did not report %" PRIu64 " switch-ins and %" PRIu64
		     " switch-outs of traced threads; their intervals were rebuilt from schedstat",
		     st.unseen_switch_in, st.unseen_switch_out);
	note(n,
	     "%" PRIu64 " tracer-frame strips, %" PRIu64
	     " kernel stacks without __schedule, %" PRIu64 " truncated at %d frames, %" PRIu64
	     " wakeups while running, %" PRIu64 " sleeps without a seen wakeup, %" PRIu64
	     " processes tracked, %zu threads exited",
	     st.tracer_frames + b.stripped, st.unanchored, st.stack_truncated, OFFCPU_MAX_STACK,
	     st.wakeup_running, st.no_wakeup, n->tracked, n->nr_exits);
	if (b.unresolved)
		note(n, "%" PRIu64 " stack ids whose frames never arrived", b.unresolved);
	err = 0;
cleanup:
	for (pos = 0; b.parts.slots && ntable_next(&b.parts, &pos, &key, &val);)
		free(((struct part *)val)->ids);
	ntable_free(&b.parts);
	ntable_free(&b.threads);
	ntable_free(&b.at_stop);
	return err;
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
	ring_buffer__free(n->rb);
	if (n->skel)
		destroy_skel(n);
	ntable_free(&n->agg);
	for (size_t pos = 0; n->stacks.slots && ntable_next(&n->stacks, &pos, &key, &val);)
		free(((struct native_stack *)val)->ips);
	ntable_free(&n->stacks);
	free(n->exits);
	free(n->ivs);
	if (libbpf_diag == n->diag) {
		libbpf_diag = NULL;
		libbpf_set_print(NULL);
	}
	free(n);
}
