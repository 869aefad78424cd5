// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/collectors.h"
#include "collect/probe.h"
#include "collect/proc.h"
#include "symbolize/symbolize.h"

const char *probe__btf_path(void)
{
	const char *path = getenv("OFFCPU_BTF_PATH");

	return path && *path ? path : "/sys/kernel/btf/vmlinux";
}

const char *probe_verdict__name(enum probe_verdict v)
{
	static const char *const names[] = {"ok", "warn", "FAIL", "info"};

	return v <= PROBE_INFO ? names[v] : "?";
}

static struct probe_result *add(struct probe_result *out, size_t max, size_t *n, const char *name,
				int native)
{
	static struct probe_result sink;
	struct probe_result *r = *n < max ? &out[(*n)++] : &sink;

	memset(r, 0, sizeof(*r));
	r->name = name;
	r->needed_by_native = native;
	return r;
}

void probe__say(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, 256, fmt, ap);
	va_end(ap);
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

static void check_privilege(struct probe_result *r)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};
	unsigned long long eff;
	int bpf, perfmon, admin;

	if (syscall(SYS_capget, &hdr, data)) {
		r->verdict = PROBE_FAIL;
		probe__say(r->seen, "capget failed: %s", strerror(errno));
		return;
	}
	eff = (unsigned long long)data[1].effective << 32 | data[0].effective;
	bpf = !!(eff & (1ull << CAP_BPF));
	perfmon = !!(eff & (1ull << CAP_PERFMON));
	admin = !!(eff & (1ull << CAP_SYS_ADMIN));
	probe__say(r->seen, "uid %d; CAP_BPF %s, CAP_PERFMON %s, CAP_SYS_ADMIN %s", (int)geteuid(),
		   bpf ? "yes" : "no", perfmon ? "yes" : "no", admin ? "yes" : "no");
	if (admin || (bpf && perfmon))
		return;
	r->verdict = PROBE_FAIL;
	probe__say(r->fix, "run as root (sudo offcpu ...) or grant CAP_BPF and CAP_PERFMON");
}

static void check_file(struct probe_result *r, const char *path, const char *fix)
{
	struct stat st;

	if (stat(path, &st)) {
		r->verdict = PROBE_FAIL;
		probe__say(r->seen, "%s: %s", path, strerror(errno));
		probe__say(r->fix, "%s", fix);
		return;
	}
	probe__say(r->seen, "%s (%lld KiB)", path, (long long)st.st_size / 1024);
}

/* A program that returns 0: enough to prove a type loads and attaches. */
static const struct bpf_insn ret0[] = {
	{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	{.code = BPF_JMP | BPF_EXIT},
};

/*
 * Load and attach a trivial program to sched_switch, as tp_btf (BTF-typed,
 * needs the kernel's BTF id of the tracepoint) or raw_tp; detach at once.
 */
static void check_sched_switch_attach(struct probe_result *r, bool btf)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	const char *what = btf ? "tp_btf/sched_switch" : "raw_tp/sched_switch";
	struct btf *vmlinux = NULL;
	int prog = -1, link = -1, err = 0;

	if (btf) {
		int id;

		vmlinux = btf__load_vmlinux_btf();
		id = vmlinux ? btf__find_by_name_kind(vmlinux, "btf_trace_sched_switch",
						      BTF_KIND_TYPEDEF)
			     : -ENOENT;
		if (id < 0) {
			err = id;
			goto out;
		}
		opts.expected_attach_type = BPF_TRACE_RAW_TP;
		opts.attach_btf_id = id;
	}
	prog = bpf_prog_load(btf ? BPF_PROG_TYPE_TRACING : BPF_PROG_TYPE_RAW_TRACEPOINT, NULL,
			     "GPL", ret0, 2, &opts);
	if (prog < 0) {
		err = -errno;
		goto out;
	}
	link = bpf_raw_tracepoint_open(btf ? NULL : "sched_switch", prog);
	if (link < 0)
		err = -errno;
out:
	if (link >= 0)
		close(link);
	if (prog >= 0)
		close(prog);
	btf__free(vmlinux);
	if (!err) {
		probe__say(r->seen, "%s loads and attaches", what);
		return;
	}
	r->verdict = btf ? PROBE_WARN : PROBE_FAIL;
	probe__say(r->seen, "%s does not attach: %s", what, strerror(-err));
	probe__say(r->fix, btf ? "offcpu falls back to raw_tp; nothing to do"
			       : "needs a kernel with BPF raw tracepoints (4.17+) and privilege");
}

static void check_kprobes(struct probe_result *r)
{
	struct stat st;

	if (!stat("/sys/bus/event_source/devices/kprobe", &st) ||
	    !stat("/sys/kernel/tracing/kprobe_events", &st)) {
		probe__say(r->seen, "kprobes available");
		return;
	}
	/* offcpu never needs kprobes; BCC's offcputime does. */
	r->verdict = PROBE_WARN;
	probe__say(r->seen, "no kprobes in this kernel (no kprobe PMU, no kprobe_events)");
	probe__say(r->fix, "offcpu's native collector does not need them; BCC's offcputime does "
			   "(CONFIG_KPROBES, CONFIG_KPROBE_EVENTS)");
}

static void check_tracefs(struct probe_result *r)
{
	struct stat st;

	if (!stat("/sys/kernel/tracing/events/sched/sched_switch", &st) ||
	    !stat("/sys/kernel/debug/tracing/events/sched/sched_switch", &st)) {
		probe__say(r->seen, "sched tracepoints visible in tracefs");
		return;
	}
	r->verdict = PROBE_WARN;
	probe__say(r->seen, "tracefs not mounted (bpftrace and BCC need it)");
	probe__say(r->fix, "mount -t tracefs nodev /sys/kernel/tracing");
}

static void check_lockdown(struct probe_result *r)
{
	char buf[128];

	if (read_small("/sys/kernel/security/lockdown", buf, sizeof(buf))) {
		probe__say(r->seen, "no lockdown LSM information (not locked down)");
		return;
	}
	probe__say(r->seen, "%s", buf);
	if (strstr(buf, "[integrity]") || strstr(buf, "[confidentiality]")) {
		r->verdict = strstr(buf, "[confidentiality]") ? PROBE_FAIL : PROBE_WARN;
		probe__say(r->fix,
			   "kernel lockdown restricts BPF tracing; boot with lockdown=none if "
			   "allowed");
	}
}

int probe__run_tool(char *const argv[], char *buf, size_t len, int timeout_ms)
{
	struct proc p;
	struct proc_opts o = {.stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
	char path[] = "/tmp/offcpu-doctor.XXXXXX";
	int fd = mkstemp(path), err;
	ssize_t n;

	if (fd < 0)
		return -1;
	unlink(path);
	o.stdout_fd = o.stderr_fd = fd;
	err = proc__spawn(&p, argv, &o);
	if (err) {
		close(fd);
		return -1;
	}
	if (proc__wait(&p, timeout_ms) == -ETIMEDOUT) {
		proc__kill(&p, SIGKILL);
		proc__wait(&p, -1);
		p.end.exit_code = -2;
	}
	proc__close(&p);
	n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return p.end.signal ? -1 : p.end.exit_code;
}

void probe__first_line(char *dst, const char *src)
{
	const char *nl = strchr(src, '\n');
	int n = nl ? (int)(nl - src) : (int)strlen(src);

	snprintf(dst, 256, "%.*s", n > 200 ? 200 : n, src);
}

static void check_binary(struct probe_result *r, const char *path)
{
	enum fp_verdict v = FP_UNKNOWN;
	int err = sym_binary__frame_pointers(path, &v);

	if (err) {
		r->verdict = PROBE_FAIL;
		probe__say(r->seen, "%s: %s", path, strerror(-err));
		return;
	}
	if (v == FP_PRESENT) {
		probe__say(r->seen, "%s has frame pointers: user stacks will be whole", path);
		return;
	}
	r->verdict = PROBE_WARN;
	probe__say(r->seen, "%s %s", path,
		   v == FP_ABSENT ? "is built without frame pointers"
				  : "may lack frame pointers (unclear)");
	probe__say(r->fix,
		   "rebuild with -fno-omit-frame-pointer (and -mno-omit-leaf-frame-pointer) "
		   "for whole user stacks");
}

size_t probe__run_all(struct probe_result *out, size_t max, const char *binary)
{
	size_t n = 0, i = 0;

	check_privilege(add(out, max, &n, "privilege", 1));
	check_file(add(out, max, &n, "btf", 1), probe__btf_path(),
		   "the native collector needs the kernel's BTF: a kernel built with "
		   "CONFIG_DEBUG_INFO_BTF=y (or record with --tool bpftrace)");
	check_sched_switch_attach(add(out, max, &n, "tp_btf", 0), true);
	check_sched_switch_attach(add(out, max, &n, "raw_tp", 1), false);
	check_kprobes(add(out, max, &n, "kprobes", 0));
	check_tracefs(add(out, max, &n, "tracefs", 0));
	check_lockdown(add(out, max, &n, "lockdown", 1));
	for (const struct collector *c; (c = collector__at(i)); i++)
		if (c->probe)
			c->probe(add(out, max, &n, c->name, 0));
	if (binary)
		check_binary(add(out, max, &n, "frame-ptr", 0), binary);
	return n < max ? n : max;
}
