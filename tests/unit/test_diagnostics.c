// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "parse/diagnostics.h"
#include "unit.h"

#define DATA "tests/data/diagnostics/"

static enum diag_kind kind_of(const char *line)
{
	return diagnostics__classify_line(line, strlen(line));
}

static int parse_string(const char *s, struct diagnostics *d)
{
	FILE *f = unit_memfile(s);
	int err;

	if (!f)
		return -errno;
	err = diagnostics__parse(f, d);
	fclose(f);
	return err;
}

static int parse_path(const char *path, struct diagnostics *d)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return -errno;
	err = diagnostics__parse(f, d);
	fclose(f);
	return err;
}

TEST(diag_kind_names)
{
	CHECK_STR(diag_kind__name(DIAG_TEXT), "text");
	CHECK_STR(diag_kind__name(DIAG_BENIGN), "benign");
	CHECK_STR(diag_kind__name(DIAG_LOST_STACKS), "lost_stacks");
	CHECK_STR(diag_kind__name(DIAG_LOST_EVENTS), "lost_events");
	CHECK_STR(diag_kind__name(DIAG_KERNEL_HEADERS), "kernel_headers");
	CHECK_STR(diag_kind__name(DIAG_PERMISSION), "permission");
	CHECK_STR(diag_kind__name(DIAG_BPF_UNSUPPORTED), "bpf_unsupported");
	CHECK_STR(diag_kind__name(DIAG_LOCKDOWN), "lockdown");
	CHECK_STR(diag_kind__name(DIAG_ATTACH_FAILED), "attach_failed");
	CHECK_STR(diag_kind__name(DIAG_ERROR), "error");
	CHECK_STR(diag_kind__name(DIAG__COUNT), "unknown");
}

TEST(diag_benign_lines)
{
	CHECK_INT(kind_of("Attaching 4 probes..."), DIAG_BENIGN);
	CHECK_INT(kind_of("Attaching 1 probe..."), DIAG_BENIGN);
	/* Starts with "ERROR:" and says "Unknown error", yet the program loaded. */
	CHECK_INT(kind_of("ERROR: Unknown error -1: couldn't set RLIMIT_MEMLOCK for bpftrace. If "
			  "your "
			  "program is not loading, you can try \"ulimit -l 8192\" to fix the "
			  "problem"),
		  DIAG_BENIGN);
	CHECK_INT(kind_of("Tracing off-CPU time (us) of all threads by user + kernel stack... Hit "
			  "Ctrl-C to end."),
		  DIAG_BENIGN);
	/* Not a probe count: not the banner. */
	CHECK_INT(kind_of("Attaching to the target"), DIAG_TEXT);
}

TEST(diag_kernel_headers_bcc)
{
	CHECK_INT(kind_of("Unable to find kernel headers. Try rebuilding kernel with "
			  "CONFIG_IKHEADERS=m (module) or installing the kernel development "
			  "package for your running kernel version."),
		  DIAG_KERNEL_HEADERS);
	/* libbcc prints the message over several lines in some versions. */
	CHECK_INT(kind_of("Unable to find kernel headers. "), DIAG_KERNEL_HEADERS);
	CHECK_INT(kind_of("Try rebuilding kernel with CONFIG_IKHEADERS=m (module) "),
		  DIAG_KERNEL_HEADERS);
	CHECK_INT(kind_of("chdir(/lib/modules/6.18.44-fc-v1045/build): No such file or directory"),
		  DIAG_KERNEL_HEADERS);
	CHECK_INT(kind_of("Exception: Failed to compile BPF module <text>"), DIAG_ERROR);
	CHECK_INT(kind_of("Traceback (most recent call last):"), DIAG_ERROR);
	CHECK_INT(kind_of("  File \"/usr/sbin/offcputime-bpfcc\", line 258, in <module>"),
		  DIAG_TEXT);
}

TEST(diag_lost_stacks_and_events)
{
	CHECK_INT(kind_of("WARNING: 2 stack traces lost and could not be displayed."),
		  DIAG_LOST_STACKS);
	CHECK_INT(kind_of("ERROR: failed to look up stack id -17 (pid 1609081): -2"),
		  DIAG_LOST_STACKS);
	CHECK_INT(kind_of("Lost 12 events"), DIAG_LOST_EVENTS);
	CHECK_INT(kind_of("Possibly lost 3 samples"), DIAG_LOST_EVENTS);
	CHECK_INT(kind_of("{\"type\": \"lost_events\", \"data\": {\"events\": 7}}"),
		  DIAG_LOST_EVENTS);
	CHECK_INT(kind_of("lost connection to the display"), DIAG_TEXT);
}

TEST(diag_permission)
{
	CHECK_INT(kind_of("bpf: Failed to load program: Operation not permitted"), DIAG_PERMISSION);
	CHECK_INT(kind_of("Exception: Need super-user privileges to run"), DIAG_PERMISSION);
	CHECK_INT(kind_of("ERROR: bpftrace currently only supports running as the root user."),
		  DIAG_PERMISSION);
	/* libbpf >= 1.6 spells errnos; the cause beats the attach failure it led to. */
	CHECK_INT(kind_of("libbpf: prog 'handle_switch': failed to attach: -EPERM"),
		  DIAG_PERMISSION);
	CHECK_INT(kind_of("libbpf: permission error while running as root; try raising 'ulimit "
			  "-l'? current value: 64.0 KiB"),
		  DIAG_PERMISSION);
	CHECK_INT(kind_of("libbpf: prog 'handle_switch': BPF program load failed: Permission "
			  "denied"),
		  DIAG_PERMISSION);
}

TEST(diag_lockdown_beats_permission)
{
	CHECK_INT(kind_of("Kernel lockdown is enabled and set to 'confidentiality'. Lockdown mode "
			  "blocks"),
		  DIAG_LOCKDOWN);
	CHECK_INT(kind_of("Lockdown: offcpu: use of bpf to read kernel RAM is restricted; see man "
			  "kernel_lockdown.7"),
		  DIAG_LOCKDOWN);
	CHECK_INT(kind_of("libbpf: Error in bpf_object__probe_loading(): Operation not permitted "
			  "(kernel is locked down)"),
		  DIAG_LOCKDOWN);
}

TEST(diag_bpf_unsupported)
{
	CHECK_INT(kind_of("libbpf: vmlinux BTF is not found"), DIAG_BPF_UNSUPPORTED);
	CHECK_INT(kind_of("libbpf: BTF is required, but is missing or corrupted."),
		  DIAG_BPF_UNSUPPORTED);
	CHECK_INT(kind_of("ERROR: BTF: failed to find BTF data for vmlinux"), DIAG_BPF_UNSUPPORTED);
	CHECK_INT(kind_of("bpf: Failed to load program: Function not implemented"),
		  DIAG_BPF_UNSUPPORTED);
	CHECK_INT(kind_of("invalid func unknown#195"), DIAG_BPF_UNSUPPORTED);
}

TEST(diag_attach_failed)
{
	CHECK_INT(kind_of("ERROR: Error attaching probe: 'kprobe:finish_task_switch'"),
		  DIAG_ATTACH_FAILED);
	CHECK_INT(kind_of("Exception: Failed to attach BPF program b'oncpu' to kprobe "
			  "b'^finish_task_switch$|^finish_task_switch\\\\.isra\\\\.\\\\d$'"),
		  DIAG_ATTACH_FAILED);
	CHECK_INT(kind_of("libbpf: prog 'sched_switch': failed to attach to raw tracepoint "
			  "'sched_switch': No such file or directory"),
		  DIAG_ATTACH_FAILED);
	CHECK_INT(kind_of("cannot attach kprobe, probe entry may not exist"), DIAG_ATTACH_FAILED);
	CHECK_INT(kind_of("open(/sys/kernel/tracing/kprobe_events): No such file or directory"),
		  DIAG_ATTACH_FAILED);
}

TEST(diag_other_errors_and_text)
{
	CHECK_INT(kind_of("ERROR: syntax error, unexpected ]"), DIAG_ERROR);
	CHECK_INT(kind_of("libbpf: failed to load object 'offcpu_bpf'"), DIAG_ERROR);
	CHECK_INT(kind_of("   "), DIAG_TEXT);
	CHECK_INT(kind_of(""), DIAG_TEXT);
	CHECK_INT(diagnostics__classify_line(NULL, 0), DIAG_TEXT);
	CHECK_INT(kind_of("ready"), DIAG_TEXT);
	/* Only len bytes are looked at. */
	CHECK_INT(diagnostics__classify_line("ready Lost 3 events", 5), DIAG_TEXT);
}

TEST(diag_parse_real_bcc_failure)
{
	struct diagnostics d;

	CHECK_INT(parse_path(DATA "bcc_compile_failure.txt", &d), 0);
	CHECK_INT(d.count[DIAG_KERNEL_HEADERS], 1);
	CHECK_INT(d.first_line[DIAG_KERNEL_HEADERS], 2);
	CHECK_STR(d.first[DIAG_KERNEL_HEADERS],
		  "chdir(/lib/modules/6.18.44-fc-v1045/build): No such file or directory");
	CHECK_INT(d.count[DIAG_ERROR], 2);
	CHECK_STR(d.first[DIAG_ERROR], "Traceback (most recent call last):");
	CHECK_INT(d.first_line[DIAG_ERROR], 3);
	CHECK_INT(d.nr_lines, 9);
	CHECK_U64(d.lost_stack_traces, 0);
}

TEST(diag_parse_bcc_no_headers)
{
	struct diagnostics d;

	CHECK_INT(parse_path(DATA "bcc_no_headers.txt", &d), 0);
	CHECK_INT(d.count[DIAG_KERNEL_HEADERS], 2);
	CHECK_INT(d.first_line[DIAG_KERNEL_HEADERS], 1);
	CHECK_STR(d.first[DIAG_KERNEL_HEADERS],
		  "Unable to find kernel headers. Try rebuilding kernel with CONFIG_IKHEADERS=m "
		  "(module) or installing the kernel development package for your running "
		  "kernel version.");
	CHECK_STR(d.first[DIAG_ERROR], "Traceback (most recent call last):");
	CHECK_INT(d.count[DIAG_ERROR], 2);
}

TEST(diag_parse_real_bpftrace_noise_and_lost_stack)
{
	struct diagnostics d;

	CHECK_INT(parse_path(DATA "bpftrace_memlock_stackid.txt", &d), 0);
	CHECK_INT(d.count[DIAG_BENIGN], 1);
	CHECK_INT(d.count[DIAG_ERROR], 0);
	CHECK_INT(d.count[DIAG_LOST_STACKS], 1);
	CHECK_U64(d.lost_stack_traces, 1);
	CHECK_INT(d.first_line[DIAG_LOST_STACKS], 2);
}

TEST(diag_parse_sums_lost_counts_crlf)
{
	struct diagnostics d;

	CHECK_INT(parse_path(DATA "bcc_lost_stacks_crlf.txt", &d), 0);
	CHECK_INT(d.count[DIAG_LOST_STACKS], 2);
	CHECK_U64(d.lost_stack_traces, 7);
	/* The '\r' is not part of the kept text. */
	CHECK_STR(d.first[DIAG_LOST_STACKS],
		  "WARNING: 2 stack traces lost and could not be displayed.");
	CHECK_INT(parse_string("Attaching 2 probes...\n\nLost 5 events\n  Lost 6 events  \n"
			       "{\"type\": \"lost_events\", \"data\": {\"events\": 10}}\n",
			       &d),
		  0);
	CHECK_U64(d.lost_events, 21);
	CHECK_INT(d.count[DIAG_LOST_EVENTS], 3);
	CHECK_INT(d.first_line[DIAG_LOST_EVENTS], 3);
	CHECK_STR(d.first[DIAG_LOST_EVENTS], "Lost 5 events");
	CHECK_INT(d.nr_lines, 4); /* the blank line is not counted */
	CHECK_INT(d.count[DIAG_BENIGN], 1);
}

TEST(diag_parse_keeps_truncated_first_line)
{
	char buf[1000];
	struct diagnostics d;

	memset(buf, 'x', sizeof(buf));
	memcpy(buf, "ERROR: ", 7);
	buf[sizeof(buf) - 2] = '\n';
	buf[sizeof(buf) - 1] = '\0';
	CHECK_INT(parse_string(buf, &d), 0);
	CHECK_INT(d.count[DIAG_ERROR], 1);
	CHECK_INT(strlen(d.first[DIAG_ERROR]), DIAG_TEXT_MAX - 1);
	CHECK(!strncmp(d.first[DIAG_ERROR], "ERROR: xxx", 10));
}

TEST(diag_parse_lost_overflow)
{
	struct diagnostics d;

	CHECK_INT(parse_string("Lost 18446744073709551615 events\nLost 1 events\n", &d),
		  -EOVERFLOW);
	CHECK_INT(parse_string("Lost 18446744073709551616 events\n", &d), -EOVERFLOW);
	CHECK_INT(parse_string("WARNING: 99999999999999999999 stack traces lost and could not be "
			       "displayed.\n",
			       &d),
		  -EOVERFLOW);
	CHECK_INT(parse_string("Lost 18446744073709551615 events\n", &d), 0);
	CHECK_U64(d.lost_events, UINT64_MAX);
}

TEST(diag_parse_empty_and_binary)
{
	static const char junk[] = "\x01\x02\xff\0Lost 5 events\n\0\0\0\nERROR: x\n";
	struct diagnostics d;
	FILE *f;

	CHECK_INT(parse_string("", &d), 0);
	CHECK_INT(d.nr_lines, 0);
	f = fmemopen((void *)junk, sizeof(junk) - 1, "r");
	CHECK(f);
	CHECK_INT(diagnostics__parse(f, &d), 0);
	fclose(f);
	/* NUL bytes end what a line is matched on; the lines are still counted. */
	CHECK_INT(d.nr_lines, 3);
	CHECK_U64(d.lost_events, 0);
	CHECK_INT(d.count[DIAG_ERROR], 1);
	CHECK_INT(d.first_line[DIAG_ERROR], 3);
}

int main(void)
{
	return unit_run();
}
