// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in collector, before it runs: what the running kernel offers
 * (kallsyms, BTF, cgroups), then open, configure, size, load and attach the
 * BPF object, in its tp_btf or raw_tp flavour.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collect/corebtf.h"
#include "collect/kbtf.h"
#include "collect/native_priv.h"
#include "collect/unwind.h"
#include "offcpu.skel.h"
#include "symbolize/symbolize.h"

/*
 * The kernel text from /proc/kallsyms, in one read: the range of __schedule
 * (the BPF side drops the tracer frames above it) and, for a timeline, the
 * interrupt entry code (a wakeup from an interrupt names no waker). Reading
 * kallsyms takes tens of milliseconds of the kernel's time, so it runs in a
 * thread while the verifier checks the programs: what it finds goes into the
 * BPF side's .bss after the load, before the attach. The same pass keeps the
 * symbols for the stacks' kernel frames (native_kernel_text() hands them to
 * the symbolizer), parsed line by line as the chunks come: the whole text
 * (5 MB or more) is never held.
 */
#define KALLSYMS_CHUNK (256 << 10)

static void *kernel_text_read(void *arg)
{
	struct native *n = arg;
	struct ktext_reader r;
	struct ksyms *ks = n->sym ? ksyms__new() : NULL;
	char *buf = malloc(KALLSYMS_CHUNK + 1);
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC), kerr = 0;
	size_t len = 0;
	ssize_t got = 0;

	ktext__begin(&r, &n->ktext);
	n->ktext_err = 0;
	if (fd < 0 || !buf) {
		n->ktext_err = fd < 0 ? -errno : -ENOMEM;
		goto cleanup;
	}
	while ((got = read(fd, buf + len, KALLSYMS_CHUNK - len)) > 0) {
		char *line = buf, *nl;

		len += (size_t)got;
		buf[len] = '\0';
		while ((nl = memchr(line, '\n', buf + len - line))) {
			*nl = '\0';
			ktext__line(&r, line);
			if (ks && !kerr)
				kerr = ksyms__add_line(ks, line);
			line = nl + 1;
		}
		/* a line longer than the chunk is no symbol: drop it */
		len = line == buf && len == KALLSYMS_CHUNK ? 0 : (size_t)(buf + len - line);
		memmove(buf, line, len);
	}
	if (got < 0) {
		n->ktext_err = -errno;
		goto cleanup;
	}
	if (len) {
		buf[len] = '\0';
		ktext__line(&r, buf);
		if (ks && !kerr)
			kerr = ksyms__add_line(ks, buf);
	}
	ktext__end(&r);
	if (ks && !kerr && n->ktext.text.lo && !ksyms__finish(ks)) {
		n->ksyms = ks;
		ks = NULL;
	}
cleanup:
	ksyms__free(ks);
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/*
 * The same from the ksym program (offcpu.bpf.c), which asks the kernel's own
 * kallsyms index: a few lookups instead of the kernel formatting every symbol
 * (40-60 ms of its time, and 50 more of ours to parse). Only the interrupt
 * entry code (a timeline's, found by name prefix) needs the whole list.
 */
static int ksym_run(int fd, struct offcpu_ksym_query *q)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .ctx_in = q, .ctx_size_in = sizeof(*q));

	if (bpf_prog_test_run_opts(fd, &t))
		return -errno;
	return t.retval ? -EINVAL : 0;
}

static int ksym_addr(int fd, const char *name, uint64_t *addr)
{
	struct offcpu_ksym_query q = {.len = strlen(name) + 1};
	int err;

	if (q.len > sizeof(q.name))
		return -ENAMETOOLONG;
	memcpy(q.name, name, q.len);
	if ((err = ksym_run(fd, &q)))
		return err;
	if (q.ret < 0)
		return (int)q.ret;
	*addr = q.addr;
	return q.addr ? 0 : -ENOENT;
}

/*
 * The symbol holding addr, its start and size: %pB names the symbol holding
 * its argument - 1 as "name+off/size [module]", off counted from the
 * argument. A ksyms_ask_fn: ctx is the program's fd.
 */
static int ksym_ask(void *ctx, uint64_t addr, char *name, size_t len, uint64_t *start,
		    uint64_t *size)
{
	struct offcpu_ksym_query q = {.addr = addr + 1};
	char *text = (char *)q.name, *plus, *end;
	uint64_t off;
	int err;

	if ((err = ksym_run((int)(intptr_t)ctx, &q)))
		return err;
	if (q.ret <= 0 || q.ret >= (int64_t)sizeof(q.name))
		return -ENOENT; /* no symbol ("0x..."), or a name too long to trust */
	text[sizeof(q.name) - 1] = '\0';
	if ((end = strstr(text, " [")))
		*end = '\0';
	plus = strrchr(text, '+');
	if (!plus || plus == text || (size_t)(plus - text) >= len)
		return -ENOENT;
	off = strtoull(plus + 1, &end, 16);
	if (*end != '/' || !off || off - 1 > addr)
		return -ENOENT;
	*size = strtoull(end + 1, &end, 16);
	*start = addr + 1 - off;
	memcpy(name, text, (size_t)(plus - text));
	name[plus - text] = '\0';
	return *end ? -ENOENT : 0;
}

static void ksym_close(void *ctx)
{
	close((int)(intptr_t)ctx);
}

static int kernel_text_ask(struct native *n)
{
	struct ktext *k = &n->ktext;
	struct ksyms *ks;
	char name[256];
	uint64_t lo, size;
	int fd = bpf_program__fd(n->skel->progs.ksym), err;

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return -ENOENT;
	/* __schedule runs to the next symbol, as in kallsyms. */
	if ((err = ksym_addr(fd, "__schedule", &k->sched.lo)) ||
	    (err = ksym_ask((void *)(intptr_t)fd, k->sched.lo, name, sizeof(name), &lo, &size)))
		return err;
	if (lo != k->sched.lo || strcmp(name, "__schedule") || !size)
		return -ENOENT;
	k->sched.hi = lo + size;
	if ((err = ksym_addr(fd, "__sched_text_start", &k->sched_text.lo)) ||
	    (err = ksym_addr(fd, "__sched_text_end", &k->sched_text.hi)))
		return err;
	if (k->sched_text.hi <= k->sched_text.lo)
		k->sched_text = (struct addr_range){0, 0};
	if (!n->sym)
		return 0;
	/*
	 * The stacks' kernel frames, named at stop by the same program, one
	 * symbol at a time: no read of kallsyms at all. Its fd outlives the
	 * skeleton. The range is the kernel's half of the address space
	 * (x86-64, arm64): modules and BPF programs are named the same way.
	 */
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ks = ksyms__new_lazy(ksym_ask, (void *)(intptr_t)fd, ksym_close);
	if (!ks)
		return -ENOMEM;
	return symbolizer__kernel_core(n->sym, ks, 1ULL << 63, UINT64_MAX);
}

/*
 * Whether the switch program may read user stack words through the page
 * table (upt_walk() in unwind.bpf.h), decided before the load: upt_probe is
 * loaded only then. OFFCPU_UREAD=helper keeps bpf_probe_read_user().
 */
static bool upt_wanted(struct native *n, bool raw)
{
	const char *env = getenv("OFFCPU_UREAD");

	n->upt_levels = 0;
	n->upt_why = "no .eh_frame unwinder, bpf_rdonly_cast or bpf_kallsyms_lookup_name";
	if (!OFFCPU_DWARF_ARCH || !n->dwarf || !n->rdonly_cast || !n->ksym_prog)
		return false;
	n->upt_why = "the raw_tp programs";
	if (raw)
		return false;
	n->upt_why = "OFFCPU_UREAD=helper";
	return !env || strcmp(env, "helper");
}

/*
 * Then whether it can: upt_probe reads a word of ours through the page
 * table, in our own context, and says how many levels found it. Once, after
 * the load and before the attach.
 */
static void upt_learn(struct native *n)
{
#if defined(__x86_64__)
	volatile uint64_t word = 0x6f666663707521ULL ^ (uint64_t)(uintptr_t)&word;
	struct offcpu_upt_query q = {.addr = (uint64_t)(uintptr_t)&word, .value = word};
	LIBBPF_OPTS(bpf_test_run_opts, t, .ctx_in = &q, .ctx_size_in = sizeof(q));
	int fd = bpf_program__fd(n->skel->progs.upt_probe);

	n->upt_why = "the probe program could not run";
	if (fd < 0 || bpf_prog_test_run_opts(fd, &t) || t.retval)
		return;
	n->upt_why = "a word of ours was not found through the page table";
	if (q.levels == 4 || q.levels == 5)
		n->upt_levels = (int)q.levels;
#endif
}

void native_kernel_text_start(struct native *n, bool timeline)
{
	if (n->ksym_prog && !timeline)
		return;
	n->ktext_thread_on = true;
	n->ktext_pending = !pthread_create(&n->ktext_thread, NULL, kernel_text_read, n);
	if (!n->ktext_pending)
		kernel_text_read(n);
}

/* Wait for the read, or ask the ksym program (once), and take what it found. */
void native_kernel_text(struct native *n, bool timeline)
{
	struct ktext *k = &n->ktext;
	int err;

	if (n->ktext_done)
		return;
	if (n->ktext_pending)
		pthread_join(n->ktext_thread, NULL);
	n->ktext_pending = false;
	n->ktext_done = true;
	if (!n->ktext_thread_on && (err = kernel_text_ask(n))) {
		native_note(n,
			    "kernel symbols: the ksym program could not answer (%s): "
			    "reading /proc/kallsyms",
			    strerror(-err));
		kernel_text_read(n);
	}
	err = n->ktext_err;
	if (err)
		memset(k, 0, sizeof(*k));
	n->sched_lo = k->sched.lo;
	n->sched_hi = k->sched.hi;
	n->sched_text = k->sched_text;
	/* The stacks' kernel frames then need no second read of kallsyms at stop. */
	if (n->ksyms)
		symbolizer__kernel_core(n->sym, n->ksyms, k->text.lo, k->text.hi);
	n->ksyms = NULL;
	if (!n->sched_lo)
		native_note(n, "__schedule not found in /proc/kallsyms: tracer frames are not "
			       "stripped in the kernel");
	if (!timeline)
		return;
	if (!err && !k->irq_err && k->nr_irq) {
		memcpy(n->irq, k->irq, sizeof(n->irq));
		return;
	}
	native_note(
		n,
		"timeline: interrupt entry code not found in /proc/kallsyms (%s): wakers unknown",
		err	     ? strerror(-err)
		: k->irq_err ? strerror(-k->irq_err)
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
enum {
	W_SWITCH,
	W_RDONLY_CAST,
	W_LOOP,
	W_FUNC_ID,
	W_SCHED_INFO,
	W_SCHED_ENTITY,
	W_CFS_RQ,
	W_RQ,
	W_TASK,
	W_PT_REGS,
	W_TIMESPEC64,
	W_NR
};

/*
 * The object's CO-RE target into its memfd: the candidates alone
 * (corebtf.h), else the kernel's whole BTF (whole, len), which gives the
 * same answers the slow way; the object was opened pointing at the memfd.
 */
static void corebtf_write(struct native *n, const struct kbtf *k, const void *whole, size_t len)
{
	const struct btf *local = n->skel ? bpf_object__btf(n->skel->obj) : NULL;
	const uint8_t *p = whole;
	void *mini = NULL;
	size_t mini_len = 0;
	ssize_t w = 0;

	n->corebtf_types = 0;
	if (n->corebtf_fd < 0)
		return;
	if (k && local && !corebtf__make(k, local, &mini, &mini_len, &n->corebtf_types)) {
		p = mini;
		len = mini_len;
	}
	if (!p || ftruncate(n->corebtf_fd, 0))
		goto cleanup;
	for (size_t at = 0; at < len && w >= 0; at += (size_t)w)
		if ((w = pwrite(n->corebtf_fd, p + at, len - at, (off_t)at)) <= 0)
			break;
cleanup:
	free(mini);
}

/* Whether line (a /proc/cpuinfo "flags" line) holds word as a whole word. */
static bool has_flag(const char *line, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = line; (p = strstr(p, word)); p += len)
		if ((p == line || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return true;
	return false;
}

/*
 * Whether sched_clock agrees across CPUs (the kernel's sched_clock_stable()),
 * so that switch times from the run queues' clocks can be subtracted across
 * CPUs (switch_now() in offcpu.bpf.c). On x86 the kernel marks it stable
 * when the TSC is: invariant (constant_tsc, nonstop_tsc) and still the
 * clocksource (an unstable TSC is replaced). Elsewhere the switches read
 * bpf_ktime_get_ns(), as they do with OFFCPU_CLOCK=ktime.
 */
static bool sched_clock_stable(void)
{
#if defined(__x86_64__)
	char line[8192] = "";
	bool ok = false;
	FILE *f;

	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (!f)
		return false;
	ok = fgets(line, sizeof(line), f) && !strcmp(line, "tsc\n");
	fclose(f);
	f = ok ? fopen("/proc/cpuinfo", "r") : NULL;
	ok = false;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		ok = has_flag(line, "constant_tsc") && has_flag(line, "nonstop_tsc");
		break;
	}
	if (f)
		fclose(f);
	return ok;
#else
	return false;
#endif
}

/*
 * Read with kbtf (one walk, no libbpf parse: libbpf parses the same BTF for
 * CO-RE at load, and a second full parse cost 10-15 ms); libbpf's loader
 * only when the file cannot be read so (it also looks outside sysfs).
 */
void native_kernel_features(struct native *n)
{
	const char *clock_env = getenv("OFFCPU_CLOCK");
	struct kbtf_want w[W_NR] = {
		[W_SWITCH] = {"btf_trace_sched_switch", BTF_KIND_TYPEDEF},
		[W_RDONLY_CAST] = {"bpf_rdonly_cast", BTF_KIND_FUNC},
		[W_LOOP] = {"bpf_loop", BTF_KIND_FUNC},
		[W_FUNC_ID] = {"bpf_func_id", BTF_KIND_ENUM},
		[W_SCHED_INFO] = {"sched_info", BTF_KIND_STRUCT},
		[W_SCHED_ENTITY] = {"sched_entity", BTF_KIND_STRUCT},
		[W_CFS_RQ] = {"cfs_rq", BTF_KIND_STRUCT},
		[W_RQ] = {"rq", BTF_KIND_STRUCT},
		[W_TASK] = {"task_struct", BTF_KIND_STRUCT},
		[W_PT_REGS] = {"pt_regs", BTF_KIND_STRUCT},
		[W_TIMESPEC64] = {"timespec64", BTF_KIND_STRUCT},
	};
	struct btf *btf = NULL;
	const struct btf_type *t;
	struct kbtf k;
	const void *raw;
	__u32 size;

	/* libbpf's parse of the same file, for the load, meanwhile on the other CPU. */
	kbtf__preload();
	n->switch_state = true;
	n->rdonly_cast = n->schedinfo = n->loop = n->ksym_prog = n->sched_clock = false;
	n->clock_why = "no bpf_rdonly_cast or no sched_info";
	if (kbtf__open(&k, "/sys/kernel/btf/vmlinux")) {
		btf = btf__load_vmlinux_btf();
		raw = btf ? btf__raw_data(btf, &size) : NULL;
		if (!raw || kbtf__from_mem(&k, raw, size)) {
			corebtf_write(n, NULL, raw, size);
			btf__free(btf);
			return;
		}
	}
	kbtf__find(&k, w, W_NR);
	t = kbtf__type(&k, w[W_SWITCH].id);
	t = t ? kbtf__type(&k, t->type) : NULL; /* pointer */
	if (t && BTF_INFO_KIND(t->info) == BTF_KIND_PTR)
		t = kbtf__type(&k, t->type);
	/* void *, preempt, prev, next, state */
	if (t && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC_PROTO)
		n->switch_state = BTF_INFO_VLEN(t->info) >= 5;
	n->kid_task_struct = (uint32_t)w[W_TASK].id;
	n->kid_pt_regs = (uint32_t)w[W_PT_REGS].id;
	n->kid_timespec64 = (uint32_t)w[W_TIMESPEC64].id;
	n->rdonly_cast = w[W_RDONLY_CAST].id > 0 && n->kid_task_struct && n->kid_pt_regs &&
			 n->kid_timespec64;
	/* The unwinder needs bpf_loop (5.17) and is written for x86-64. */
	n->loop = w[W_LOOP].id > 0;
	n->dwarf = OFFCPU_DWARF_ARCH && n->loop;
	/* Helpers are no BTF functions: the kernel's enum of them names each. */
	n->ksym_prog = kbtf__has_enumerator(&k, w[W_FUNC_ID].id, "BPF_FUNC_kallsyms_lookup_name");
	n->schedinfo = kbtf__has_member(&k, w[W_SCHED_INFO].id, "last_queued") &&
		       kbtf__has_member(&k, w[W_SCHED_ENTITY].id, "cfs_rq") &&
		       kbtf__has_member(&k, w[W_CFS_RQ].id, "rq") &&
		       kbtf__has_member(&k, w[W_RQ].id, "clock");
	if (n->rdonly_cast && n->schedinfo) {
		if (clock_env && !strcmp(clock_env, "ktime"))
			n->clock_why = "OFFCPU_CLOCK=ktime";
		else if (!sched_clock_stable())
			n->clock_why = "sched_clock not known to be stable";
		else
			n->sched_clock = true;
	}
	corebtf_write(n, &k, k.data, k.size);
	if (btf) {
		free(k.offs); /* the data is libbpf's */
		btf__free(btf);
	} else {
		kbtf__close(&k);
	}
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
		snprintf(also, sizeof(also),
			 "; cgroup v2 is not mounted here "
			 "(mount -t cgroup2 none /mnt/cgroup2)");
	snprintf(why, why_len, "--cgroup %s is %s, and offcpu needs a cgroup v2 directory%s", dir,
		 sfs.f_type == CGROUP_SUPER_MAGIC ? "on cgroup v1" : "not a cgroup directory",
		 also);
	return -ENOTDIR;
}

/* cgroup v2 id (the kernfs id a file handle carries) and depth of dir. */
int native_cgroup_lookup(const char *dir, uint64_t *id, uint32_t *level)
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

/*
 * The BPF object's programs, in attach order: process and wakeup bookkeeping
 * before the switches that use it. Each has a tp_btf and a raw_tp variant
 * (offsets of their pointers in the skeleton); user space loads one set.
 */
enum prog_need {
	PROG_ALWAYS = 0,
	/* The wakeup tracepoints only time run-queue waits sched_info cannot. */
	PROG_NO_SCHEDINFO = 1 << 0,
	/* sched_waking names the waker of timeline intervals. */
	PROG_TIMELINE = 1 << 1,
};

struct native_prog {
	size_t btf, raw;
	unsigned int need; /* enum prog_need */
};

/* Where the skeleton keeps a program's pointer. */
#define SKEL_PROG(name) offsetof(struct offcpu_bpf, progs.name)

static const struct native_prog progs[] = {
	{SKEL_PROG(fork_btf), SKEL_PROG(fork_raw), PROG_ALWAYS},     /* sched_process_fork */
	{SKEL_PROG(exec_btf), SKEL_PROG(exec_raw), PROG_ALWAYS},     /* sched_process_exec */
	{SKEL_PROG(exit_btf), SKEL_PROG(exit_raw), PROG_ALWAYS},     /* sched_process_exit */
	{SKEL_PROG(wkn_btf), SKEL_PROG(wkn_raw), PROG_NO_SCHEDINFO}, /* sched_wakeup_new */
	{SKEL_PROG(wk_btf), SKEL_PROG(wk_raw), PROG_NO_SCHEDINFO},   /* sched_wakeup */
	/* The interrupt contexts that name timeline wakers (wakeup.bpf.h), before sched_waking. */
	{SKEL_PROG(sie_btf), SKEL_PROG(sie_raw), PROG_TIMELINE}, /* softirq_entry */
	{SKEL_PROG(six_btf), SKEL_PROG(six_raw), PROG_TIMELINE}, /* softirq_exit */
	{SKEL_PROG(hie_btf), SKEL_PROG(hie_raw), PROG_TIMELINE}, /* irq_handler_entry */
	{SKEL_PROG(hix_btf), SKEL_PROG(hix_raw), PROG_TIMELINE}, /* irq_handler_exit */
	{SKEL_PROG(hte_btf), SKEL_PROG(hte_raw), PROG_TIMELINE}, /* hrtimer_expire_entry */
	{SKEL_PROG(htx_btf), SKEL_PROG(htx_raw), PROG_TIMELINE}, /* hrtimer_expire_exit */
	{SKEL_PROG(wkg_btf), SKEL_PROG(wkg_raw), PROG_TIMELINE}, /* sched_waking */
	{SKEL_PROG(sw_btf), SKEL_PROG(sw_raw), PROG_ALWAYS},	 /* sched_switch */
};

_Static_assert(sizeof(progs) / sizeof(progs[0]) == NATIVE_NR_PROGS, "one link per program");

static struct bpf_program *prog_of(struct offcpu_bpf *s, const struct native_prog *p, bool raw)
{
	return *(struct bpf_program **)((char *)s + (raw ? p->raw : p->btf));
}

static bool prog_needed(const struct native *n, const struct native_prog *p, bool timeline)
{
	if ((p->need & PROG_NO_SCHEDINFO) && n->schedinfo)
		return false;
	if ((p->need & PROG_TIMELINE) && !timeline)
		return false;
	return true;
}

static uint32_t pick(uint32_t opt, uint32_t small, uint32_t large, enum offcpu_target t)
{
	if (opt)
		return opt;
	return t == OFFCPU_TARGET_TGIDS ? small : large;
}

/* The threads on the host now (/proc/loadavg's fourth field: running/all), or 0. */
static uint32_t host_threads(void)
{
	FILE *f = fopen("/proc/loadavg", "re");
	unsigned int running = 0, all = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%*s %*s %*s %u/%u", &running, &all) != 2)
		all = 0;
	fclose(f);
	return all;
}

/*
 * A map's size for a capture of many processes: per_thread times the
 * threads the host has, within [small, large] (powers of two). The maps
 * preallocate: creating 32768 threads entries (1.1 KB each, the call-site
 * cache) took 64 ms and 37 MB of kernel memory, a quarter of a host-wide
 * capture's CPU time on a host of 300 threads, and each 65536-entry
 * aggregation map 22 ms. A threads map that fills counts what it loses; an
 * aggregation map wakes user space to drain it at half full (agg_filled()
 * in offcpu.bpf.c); a full stacks map makes stacks be sent again.
 */
static uint32_t size_for_host(uint32_t per_thread, uint32_t small, uint32_t large)
{
	uint64_t want = (uint64_t)per_thread * host_threads(), size = small;

	while (size < want && size < large)
		size *= 2;
	return (uint32_t)size;
}

void native_destroy_skel(struct native *n)
{
	/* First: it holds the skeleton's map fds, and its first chunk's thread may use them. */
	unwinder__free(n->unw);
	n->unw = NULL;
	for (size_t i = 0; i < n->nr_links; i++)
		bpf_link__destroy(n->links[i]);
	n->nr_links = 0;
	native_maps_drop(n);
	offcpu_bpf__destroy(n->skel);
	n->skel = NULL;
}

/*
 * The events ring buffer: user space reads it every 200 ms (record's loop),
 * and sooner when a quarter of it is unread (ring_wake() on the BPF side).
 * Stacks and exits need little; a timeline sends every interval above its
 * threshold (72 bytes each): 16 MB holds 230k of them. Its pages are all
 * resident, twice (the kernel maps the data area twice, so that a record
 * can wrap): the recorder's largest allocation while it runs.
 */
static uint32_t ring_size(bool timeline)
{
	return (timeline ? 16u : 4u) << 20;
}

/* The settings the BPF side reads as constants, fixed before load. */
static void set_rodata(struct native *n, const struct native_opts *o)
{
	struct offcpu_bpf *s = n->skel;

	s->rodata->target = n->target;
	s->rodata->ring_wake_bytes = ring_size(o->timeline) / 4;
	s->rodata->kernel_threads = o->kernel_threads;
	s->rodata->self_tgid = getpid();
	s->rodata->state_mask = o->state_mask;
	s->rodata->min_block_ns = o->min_block_ns;
	s->rodata->max_block_ns = o->max_block_ns;
	s->rodata->kernel_stacks = !o->no_kernel_stacks;
	s->rodata->user_stacks = !o->no_user_stacks;
	s->rodata->stack_cache = !o->no_stack_cache;
	n->dwarf = n->dwarf && !o->fp_unwind && !o->no_user_stacks;
	s->rodata->dwarf_unwind = n->dwarf;
	s->rodata->switch_has_state = n->switch_state;
	s->rodata->kmem_direct = n->rdonly_cast;
	s->rodata->kid_task_struct = n->kid_task_struct;
	s->rodata->kid_pt_regs = n->kid_pt_regs;
	s->rodata->kid_timespec64 = n->kid_timespec64;
	s->rodata->have_loop = n->loop;
	s->rodata->runq_schedinfo = n->schedinfo;
	s->rodata->switch_rq_clock = n->sched_clock;
	s->rodata->cgroup_id = n->cgroup_id;
	s->rodata->cgroup_level = n->cgroup_level;
	s->rodata->timeline = o->timeline != NULL;
	s->rodata->timeline_min_ns = o->timeline_min_ns;
}

static int size_maps(struct native *n, const struct native_opts *o)
{
	struct offcpu_bpf *s = n->skel;
	uint32_t threads, aggs, stacks;
	int err;

	threads = pick(o->thread_entries, OFFCPU_MAX_THREADS, OFFCPU_MAX_THREADS_LARGE, n->target);
	aggs = pick(o->agg_entries, OFFCPU_MAX_AGG, OFFCPU_MAX_AGG_LARGE, n->target);
	stacks = pick(o->stack_entries, OFFCPU_MAX_STACKS, OFFCPU_MAX_STACKS_LARGE, n->target);
	/* Continuous mode keeps the large sizes: its host grows over hours. */
	if (!o->long_run && n->target != OFFCPU_TARGET_TGIDS) {
		if (!o->thread_entries)
			threads = size_for_host(4, OFFCPU_MAX_THREADS, OFFCPU_MAX_THREADS_LARGE);
		if (!o->agg_entries)
			aggs = size_for_host(16, OFFCPU_MAX_AGG, OFFCPU_MAX_AGG_LARGE);
		if (!o->stack_entries)
			stacks = size_for_host(16, OFFCPU_MAX_STACKS, OFFCPU_MAX_STACKS_LARGE);
	}
	n->agg_entries = aggs;
	s->rodata->agg_wake_at = aggs / 2;
	native_note(
		n,
		"map sizes: %u threads and processes, %u aggregation keys (two maps), %u stack ids",
		threads, aggs, stacks);
	if ((err = bpf_map__set_max_entries(s->maps.threads, threads)) ||
	    (err = bpf_map__set_max_entries(s->maps.procs, threads)) ||
	    (err = bpf_map__set_max_entries(s->maps.umaps, threads)) ||
	    (err = bpf_map__set_max_entries(s->maps.agg0, aggs)) ||
	    (err = bpf_map__set_max_entries(s->maps.agg1, aggs)) ||
	    (err = bpf_map__set_max_entries(s->maps.stacks, stacks)) ||
	    (err = bpf_map__set_max_entries(s->maps.events, ring_size(o->timeline))))
		return err;
	return 0;
}

/* The processes to trace, into the procs map (their forks join on their own). */
static int add_pids(struct native *n, const struct native_opts *o, char *why, size_t whylen)
{
	int fd = bpf_map__fd(n->skel->maps.procs);
	struct offcpu_proc zero = {};

	for (size_t i = 0; i <= o->nr_pids; i++) {
		int pid = i < o->nr_pids ? o->pids[i] : o->follow_pid;
		int err;

		if (pid <= 0)
			continue;
		if (bpf_map_update_elem(fd, &pid, &zero, BPF_ANY)) {
			err = -errno;
			snprintf(why, whylen, "cannot add process %d: %s", pid, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* A map made from the object's own definition of m (inner_fd: its inner map's template). */
static int map_make(struct bpf_map *m, int inner_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(m),
		    .inner_map_fd = inner_fd);
	int fd = bpf_map_create(bpf_map__type(m), bpf_map__name(m), bpf_map__key_size(m),
				bpf_map__value_size(m), bpf_map__max_entries(m), &o);

	return fd < 0 ? -errno : fd;
}

/* m made here and handed to libbpf, which then does not make it: 0 or -errno. */
static int map_preset(struct bpf_map *m, int inner_fd)
{
	int fd = map_make(m, inner_fd), err;

	if (fd < 0)
		return fd;
	err = bpf_map__reuse_fd(m, fd); /* takes a duplicate */
	close(fd);
	return err;
}

/*
 * The unwinder's maps (umaps, cfi_files) made here, before the programs
 * load, instead of by libbpf during the load: the unwinder can then start
 * at once, and adding its first chunk of rows to cfi_files, which waits for
 * an RCU grace period (10-20 ms), overlaps the verifier's work instead of
 * following it (or holding up the stop of a short command).
 */
static int unwind_maps_preset(struct native *n)
{
	struct offcpu_bpf *s = n->skel;
	int inner, err;

	if ((err = map_preset(s->maps.umaps, 0)))
		return err;
	inner = map_make(bpf_map__inner_map(s->maps.cfi_files), 0);
	if (inner < 0)
		return inner;
	err = map_preset(s->maps.cfi_files, inner);
	close(inner);
	return err;
}

/*
 * The unwinder's user-space half, and the tables of the processes given by
 * pid, loaded before tracing starts (a followed workload has not exec'd yet:
 * its image is loaded when its first stack asks). Before the programs load,
 * on maps unwind_maps_preset() made.
 */
static int unwind_setup(struct native *n, const struct native_opts *o, char *why, size_t whylen)
{
	struct unwinder_opts uo = {
		.umaps_fd = bpf_map__fd(n->skel->maps.umaps),
		.files_fd = bpf_map__fd(n->skel->maps.cfi_files),
		.budget = o->unwind_budget,
		.diag = n->diag,
		/* a process maps many binaries its stacks never reach (collect/unwind.h) */
		.lazy = true,
	};

	n->unw = unwinder__new(&uo);
	if (!n->unw) {
		snprintf(why, whylen, "cannot set up the unwinder: %s", strerror(errno));
		return -errno;
	}
	for (size_t i = 0; i < o->nr_pids; i++)
		unwinder__track(n->unw, o->pids[i]);
	return 0;
}

/*
 * OFFCPU_VERIFIER_STATS=1 in the environment: each program loads with the
 * verifier's statistics (log level 4), and the diagnostics get a line per
 * program: its size, the instructions the verifier processed, its states and
 * the time it took. What start-up costs is mostly this (bench/verifier.sh).
 */
/* Room for what the verifier writes and then discards (global functions), not the stats alone. */
#define VSTATS_LOG 65536

struct vstats {
	char log[NATIVE_NR_PROGS + 1][VSTATS_LOG];
};

bool native_vstats_on(void)
{
	const char *env = getenv("OFFCPU_VERIFIER_STATS");

	return env && *env && strcmp(env, "0");
}

static struct vstats *vstats_arm(struct offcpu_bpf *s)
{
	struct bpf_program *p;
	struct vstats *v;
	size_t i = 0;

	if (!native_vstats_on())
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	bpf_object__for_each_program(p, s->obj)
	{
		if (!bpf_program__autoload(p) || i == NATIVE_NR_PROGS + 1)
			continue;
		bpf_program__set_log_buf(p, v->log[i++], VSTATS_LOG);
		bpf_program__set_log_level(p, 4);
	}
	return v;
}

/* The number after key in the verifier's statistics, or -1. */
static long long vstats_num(const char *log, const char *key)
{
	const char *at = strstr(log, key);

	return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

static void vstats_report(struct native *n, struct offcpu_bpf *s, struct vstats *v)
{
	struct bpf_program *p;
	size_t i = 0;

	if (!v)
		return;
	bpf_object__for_each_program(p, s->obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		const char *log;

		if (!bpf_program__autoload(p) || i == NATIVE_NR_PROGS + 1)
			continue;
		log = v->log[i++];
		if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			info.verified_insns = 0;
		native_note(n,
			    "verifier: %s: %zu insns, %u processed, %lld states (peak %lld), "
			    "%.1f ms",
			    bpf_program__name(p), bpf_program__insn_cnt(p), info.verified_insns,
			    vstats_num(log, "total_states "), vstats_num(log, "peak_states "),
			    vstats_num(log, "verification time ") / 1000.0);
	}
}

static int attach_all(struct native *n, bool raw, char *why, size_t whylen)
{
	for (size_t i = 0; i < NATIVE_NR_PROGS; i++) {
		struct bpf_program *p = prog_of(n->skel, &progs[i], raw);
		struct bpf_link *l;
		int err;

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
	return 0;
}

int native_open(struct native *n, const struct native_opts *o, char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	char path[64];
	int err;

	/*
	 * Made once: a retry's object reads the same target. libbpf opens it by
	 * path: without a /proc that lets this process reopen its own fds, the
	 * object walks the kernel's BTF as before.
	 */
	if (n->corebtf_fd < 0)
		n->corebtf_fd = memfd_create("offcpu-corebtf", MFD_CLOEXEC);
	if (n->corebtf_fd >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", n->corebtf_fd);
		if (access(path, R_OK)) {
			close(n->corebtf_fd);
			n->corebtf_fd = -1;
		} else {
			opts.btf_custom_path = path;
		}
	}
	n->skel = offcpu_bpf__open_opts(&opts);
	if (!n->skel) {
		err = -errno;
		snprintf(why, whylen, "cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	if ((err = size_maps(n, o))) {
		snprintf(why, whylen, "cannot size the BPF maps: %s", strerror(-err));
		return err;
	}
	native_maps_start(n);
	return 0;
}

/* Open, configure, load and attach one flavour (tp_btf or raw_tp). 0 or -errno + reason. */
int native_load_attach(struct native *n, const struct native_opts *o, bool raw, char *why,
		       size_t whylen)
{
	struct offcpu_bpf *s;
	struct vstats *vs;
	uint64_t t[2], unw_ns;
	bool timed, upt;
	int err, ahead;

	if (!n->skel && (err = native_open(n, o, why, whylen)))
		return err;
	s = n->skel;
	set_rodata(n, o);
	for (size_t i = 0; i < NATIVE_NR_PROGS; i++) {
		bool needed = prog_needed(n, &progs[i], o->timeline != NULL);

		bpf_program__set_autoload(prog_of(s, &progs[i], false), needed && !raw);
		bpf_program__set_autoload(prog_of(s, &progs[i], true), needed && raw);
	}
	/* A command's threads are all new: only attach targets have threads asleep at start. */
	n->snap = !raw && o->follow_pid <= 0 && !n->snap_refused;
	bpf_program__set_autoload(s->progs.snap, n->snap);
	/* A timeline reads kallsyms anyway (native_kernel_text_start()). */
	bpf_program__set_autoload(s->progs.ksym, n->ksym_prog && !o->timeline);
	upt = upt_wanted(n, raw);
#if defined(__x86_64__)
	bpf_program__set_autoload(s->progs.upt_probe, upt);
#endif
	vs = vstats_arm(s);
	t[0] = native_mono_ns();
	unw_ns = t[0];
	if (n->dwarf) {
		if ((err = unwind_maps_preset(n))) {
			free(vs);
			snprintf(why, whylen, "cannot make the unwinder's maps: %s",
				 strerror(-err));
			return err;
		}
		if ((err = unwind_setup(n, o, why, whylen))) {
			free(vs);
			return err;
		}
	}
	unw_ns = native_mono_ns() - unw_ns;
	ahead = native_maps_take(n);
	err = offcpu_bpf__load(s);
	if (err) {
		free(vs);
		snprintf(why, whylen, "the kernel refused the %s programs: %s",
			 raw ? "raw_tp" : "tp_btf", strerror(-err));
		return err;
	}
	vstats_report(n, s, vs);
	timed = vs != NULL;
	free(vs);
	native_kernel_text(n, o->timeline != NULL);
	if (upt)
		upt_learn(n);
	s->bss->sched_lo = n->sched_lo;
	s->bss->sched_hi = n->sched_hi;
	for (int i = 0; i < OFFCPU_IRQ_RANGES; i++) {
		s->bss->irq_lo[i] = n->irq[i].lo;
		s->bss->irq_hi[i] = n->irq[i].hi;
	}
	if (n->target == OFFCPU_TARGET_TGIDS && (err = add_pids(n, o, why, whylen)))
		return err;
	t[1] = native_mono_ns();
	n->start_ns = n->last_drain_ns = native_mono_ns();
	s->bss->start_ns = n->start_ns;
	s->bss->held_tgid = o->follow_pid > 0 ? o->follow_pid : 0;
	if ((err = attach_all(n, raw, why, whylen)))
		return err;
	if (timed)
		native_note(n,
			    "start-up: load %.1f ms, maps and unwinder %.1f ms, attach %.1f ms; "
			    "%d maps made ahead of the load",
			    (t[1] - t[0] - unw_ns) / 1e6, (n->start_ns - t[1] + unw_ns) / 1e6,
			    (native_mono_ns() - n->start_ns) / 1e6, ahead);
	n->raw_tp = raw;
	/*
	 * Start-up's garbage (two parses of vmlinux BTF, the kallsyms text, the
	 * unwind tables' scratch) is freed but stays resident in malloc's heaps:
	 * 16 MB of a -p capture's 40. A capture runs for minutes or days.
	 */
	malloc_trim(0);
	/* After the attach: a thread that runs before its turn in the walk is seen running. */
	if (n->snap && (err = native_snapshot(n, o)))
		native_note(n,
			    "snapshot of the threads at start failed: %s: threads asleep "
			    "through the window are missing",
			    strerror(-err));
	return 0;
}
