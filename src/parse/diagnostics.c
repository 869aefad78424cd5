// SPDX-License-Identifier: GPL-2.0-only
/*
 * Classifying a collector's stderr. The wording below is what the tools print
 * (BCC 0.26 Python and libbcc, bpftrace 0.17, libbpf 1.1, the kernel's own
 * messages as relayed by them); tests/unit/test_diagnostics.c holds real lines.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "parse/diagnostics.h"
#include "util/lines.h"

/*
 * Lines are only searched in their first bytes: every message we know fits,
 * and a megabyte of junk on one line must not cost a megabyte per pattern.
 */
#define CLASSIFY_MAX 4096

enum match {
	PREFIX,
	PREFIX_NUM, /* the prefix, then a digit */
	CONTAINS,
};

struct pattern {
	enum diag_kind kind;
	enum match how;
	const char *text; /* matched case-insensitively */
};

/*
 * First match wins, so the table runs from the most specific kind to the least:
 * "ERROR: ... couldn't set RLIMIT_MEMLOCK" is benign before it is an error,
 * "Exception: Need super-user privileges" is a permission problem before it is
 * an exception, and lockdown (which also makes bpf() fail with EPERM) comes
 * before permission.
 */
static const struct pattern patterns[] = {
	/* bpftrace: "Kernel lockdown is enabled and set to 'confidentiality'..." */
	{DIAG_LOCKDOWN, CONTAINS, "lockdown"},
	/* kernel: "Lockdown: bpftrace: use of bpf to read kernel RAM is restricted" */
	{DIAG_LOCKDOWN, CONTAINS, "locked down"},

	/* libbcc: "Unable to find kernel headers. Try rebuilding kernel with ..." */
	{DIAG_KERNEL_HEADERS, CONTAINS, "unable to find kernel headers"},
	{DIAG_KERNEL_HEADERS, CONTAINS, "CONFIG_IKHEADERS"},
	{DIAG_KERNEL_HEADERS, CONTAINS, "kernel development package"},
	/* libbcc, right after: "chdir(/lib/modules/6.18.44-fc-v1045/build): No such file ..." */
	{DIAG_KERNEL_HEADERS, PREFIX, "chdir(/lib/modules/"},

	/* BCC offcputime: "WARNING: 2 stack traces lost and could not be displayed." */
	{DIAG_LOST_STACKS, CONTAINS, "stack traces lost"},
	/*
	 * bpftrace: "ERROR: failed to look up stack id -17 (pid 1234): -2", one line
	 * per stack it printed as empty (map full, hash collision); it stays quiet
	 * for -EFAULT, a thread without that stack.
	 */
	{DIAG_LOST_STACKS, CONTAINS, "failed to look up stack id"},

	/* bpftrace: "Lost 5 events"; libbcc perf buffer: "Possibly lost 5 samples" */
	{DIAG_LOST_EVENTS, PREFIX_NUM, "lost "},
	{DIAG_LOST_EVENTS, PREFIX_NUM, "possibly lost "},
	/* bpftrace -f json: {"type": "lost_events", "data": {"events": 5}} */
	{DIAG_LOST_EVENTS, CONTAINS, "\"lost_events\""},

	/* bpftrace: "Attaching 4 probes..." / "Attaching 1 probe..." */
	{DIAG_BENIGN, PREFIX_NUM, "attaching "},
	/*
	 * bpftrace 0.17: "ERROR: Unknown error -1: couldn't set RLIMIT_MEMLOCK for
	 * bpftrace. If your program is not loading, you can try ..." It is printed
	 * whenever setrlimit fails; kernels >= 5.11 account BPF memory to memcg
	 * and load the program anyway.
	 */
	{DIAG_BENIGN, CONTAINS, "couldn't set RLIMIT_MEMLOCK"},
	/* BCC tools' banner, when stdout and stderr were merged */
	{DIAG_BENIGN, CONTAINS, "Hit Ctrl-C to end"},
	/* libbpf: "libbpf: elf: skipping unrecognized data section(7) .rodata.str1.1" */
	{DIAG_BENIGN, PREFIX, "libbpf: elf: skipping "},

	/* libbpf, strerror(EPERM); libbpf's own "-EPERM" and its memlock hint */
	{DIAG_PERMISSION, CONTAINS, "operation not permitted"},
	{DIAG_PERMISSION, CONTAINS, "permission denied"},
	{DIAG_PERMISSION, CONTAINS, "-EPERM"},
	{DIAG_PERMISSION, CONTAINS, "permission error"},
	/* BCC: "Exception: Need super-user privileges to run" */
	{DIAG_PERMISSION, CONTAINS, "need super-user privileges"},
	/* bpftrace: "ERROR: bpftrace currently only supports running as the root user." */
	{DIAG_PERMISSION, CONTAINS, "running as the root user"},
	{DIAG_PERMISSION, CONTAINS, "must be run as root"},
	{DIAG_PERMISSION, CONTAINS, "requires root"},

	/* libbpf: "libbpf: vmlinux BTF is not found", "BTF is required, but is missing or
	   corrupted." */
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "vmlinux BTF is not found"},
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "BTF is required"},
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "Error loading vmlinux BTF"},
	/* bpftrace: "BTF: failed to find BTF data for vmlinux", "BTF data not available" */
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "failed to find BTF data"},
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "BTF data not available"},
	/* bpf() missing: strerror(ENOSYS) */
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "function not implemented"},
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "CONFIG_BPF_SYSCALL"},
	/* the verifier on a helper the kernel lacks: "invalid func unknown#195" */
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "invalid func "},
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "not supported by the kernel"},
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "kernel doesn't support"},
	{DIAG_BPF_UNSUPPORTED, CONTAINS, "kernel does not support"},

	/* bpftrace: "ERROR: Error attaching probe: 'kprobe:finish_task_switch'" */
	{DIAG_ATTACH_FAILED, CONTAINS, "error attaching probe"},
	{DIAG_ATTACH_FAILED, CONTAINS, "could not attach"},
	/* libbpf: "libbpf: prog 'x': failed to attach to ..."; BCC: "Failed to attach BPF program
	   ..." */
	{DIAG_ATTACH_FAILED, CONTAINS, "failed to attach"},
	/* libbcc: "cannot attach kprobe, probe entry may not exist" */
	{DIAG_ATTACH_FAILED, CONTAINS, "cannot attach"},
	/* libbcc: "Unable to open or attach TRACEPOINT or BREAKPOINT events" */
	{DIAG_ATTACH_FAILED, CONTAINS, "unable to open or attach"},
	/* libbcc without kprobe support: "open(/sys/kernel/tracing/kprobe_events): No such ..." */
	{DIAG_ATTACH_FAILED, CONTAINS, "kprobe_events)"},

	{DIAG_ERROR, PREFIX, "error"},
	{DIAG_ERROR, PREFIX, "fatal"},
	{DIAG_ERROR, PREFIX, "traceback (most recent call last)"},
	/* Python's last traceback line: "Exception: Failed to compile BPF module <text>" */
	{DIAG_ERROR, CONTAINS, "Exception: "},
	{DIAG_ERROR, CONTAINS, "Error: "},
	/* libbpf: "libbpf: failed to load object 'x'", "prog 'x': BPF program load failed: ..." */
	{DIAG_ERROR, PREFIX, "libbpf: failed"},
	{DIAG_ERROR, CONTAINS, "load failed"},
	{DIAG_ERROR, CONTAINS, "failed to load"},
};

static const char *const kind_names[DIAG__COUNT] = {
	[DIAG_TEXT] = "text",
	[DIAG_BENIGN] = "benign",
	[DIAG_LOST_STACKS] = "lost_stacks",
	[DIAG_LOST_EVENTS] = "lost_events",
	[DIAG_KERNEL_HEADERS] = "kernel_headers",
	[DIAG_PERMISSION] = "permission",
	[DIAG_BPF_UNSUPPORTED] = "bpf_unsupported",
	[DIAG_LOCKDOWN] = "lockdown",
	[DIAG_ATTACH_FAILED] = "attach_failed",
	[DIAG_ERROR] = "error",
};

const char *diag_kind__name(enum diag_kind k)
{
	return (unsigned)k < DIAG__COUNT ? kind_names[k] : "unknown";
}

static bool ci_prefix(const char *s, size_t len, const char *pre)
{
	size_t n = strlen(pre);

	return n <= len && !strncasecmp(s, pre, n);
}

static const char *ci_find(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	int c0 = tolower((unsigned char)needle[0]);

	for (size_t i = 0; i + n <= len; i++)
		if (tolower((unsigned char)s[i]) == c0 && !strncasecmp(s + i, needle, n))
			return s + i;
	return NULL;
}

static void trim(const char **s, size_t *len)
{
	while (*len && isspace((unsigned char)**s))
		(*s)++, (*len)--;
	while (*len && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static enum diag_kind classify(const char *s, size_t len)
{
	if (len > CLASSIFY_MAX)
		len = CLASSIFY_MAX;
	/* strncasecmp stops at NUL; a NUL inside the line just ends what is searched. */
	len = strnlen(s, len);
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		const struct pattern *pt = &patterns[i];

		size_t n = strlen(pt->text);
		bool hit;

		switch (pt->how) {
		case PREFIX:
			hit = ci_prefix(s, len, pt->text);
			break;
		case PREFIX_NUM:
			hit = ci_prefix(s, len, pt->text) && n < len &&
			      isdigit((unsigned char)s[n]);
			break;
		default:
			hit = ci_find(s, len, pt->text) != NULL;
			break;
		}
		if (hit)
			return pt->kind;
	}
	return DIAG_TEXT;
}

enum diag_kind diagnostics__classify_line(const char *line, size_t len)
{
	if (!line)
		return DIAG_TEXT;
	trim(&line, &len);
	return len ? classify(line, len) : DIAG_TEXT;
}

static int parse_digits(const char *s, const char *end, uint64_t *n)
{
	*n = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (*n > (UINT64_MAX - (*s - '0')) / 10)
			return -EOVERFLOW;
		*n = *n * 10 + (*s - '0');
	}
	return 0;
}

/*
 * The number of a lost-count line: the one before "stack traces lost", the one
 * after "Lost "/"Possibly lost ", or JSON's "events": N; 1 for bpftrace's
 * per-stack line. -EOVERFLOW when it does not fit 64 bits.
 */
static int lost_count(enum diag_kind kind, const char *s, size_t len, uint64_t *n)
{
	const char *end = s + len, *p;

	*n = 0;
	if (len > CLASSIFY_MAX)
		end = s + CLASSIFY_MAX;
	if (kind == DIAG_LOST_STACKS) {
		p = ci_find(s, end - s, "stack traces lost");
		if (!p) {
			*n = 1; /* bpftrace: one line per stack */
			return 0;
		}
		while (p > s && p[-1] == ' ')
			p--;
		while (p > s && p[-1] >= '0' && p[-1] <= '9')
			p--;
		return parse_digits(p, end, n);
	}
	p = ci_find(s, end - s, "\"events\"");
	if (p) {
		for (p += 8; p < end && (*p == ' ' || *p == ':'); p++)
			;
		return parse_digits(p, end, n);
	}
	p = ci_find(s, end - s, "lost ");
	if (!p)
		return 0;
	return parse_digits(p + 5, end, n);
}

int diagnostics__parse(FILE *in, struct diagnostics *d)
{
	struct line_reader *lr = line_reader__new(in);
	const char *line;
	size_t len;
	int err;

	memset(d, 0, sizeof(*d));
	if (!lr)
		return -ENOMEM;
	while ((err = line_reader__next(lr, &line, &len)) > 0) {
		enum diag_kind k;
		uint64_t lost, *sum = NULL;

		trim(&line, &len);
		if (!len)
			continue;
		k = classify(line, len);
		if (k == DIAG_LOST_STACKS)
			sum = &d->lost_stack_traces;
		else if (k == DIAG_LOST_EVENTS)
			sum = &d->lost_events;
		if (sum) {
			err = lost_count(k, line, len, &lost);
			if (!err && *sum + lost < *sum)
				err = -EOVERFLOW;
			if (err)
				break;
			*sum += lost;
		}
		d->nr_lines++;
		if (d->count[k]++ == 0) {
			size_t n = len < DIAG_TEXT_MAX - 1 ? len : DIAG_TEXT_MAX - 1;

			memcpy(d->first[k], line, n);
			d->first[k][n] = '\0';
			d->first_line[k] = line_reader__lineno(lr);
		}
	}
	line_reader__free(lr);
	return err;
}
