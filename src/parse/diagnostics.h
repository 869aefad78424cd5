/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A collector's own stderr (offcpu.diagnostics.txt), line by line, into kinds.
 * Only the collector's stderr is ever passed here: the workload's stderr is not
 * collector evidence.
 *
 * The patterns are one table in diagnostics.c; every kind has a unit test
 * with the real wording of BCC, bpftrace and libbpf.
 */
#ifndef OFFCPU_PARSE_DIAGNOSTICS_H
#define OFFCPU_PARSE_DIAGNOSTICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum diag_kind {
	DIAG_TEXT = 0, /* unclassified text, kept for the message */
	DIAG_BENIGN,   /* known noise: "Attaching N probes...", bpftrace's RLIMIT_MEMLOCK notice */
	/*
	 * BCC: "WARNING: N stack traces lost and could not be displayed." (N);
	 * bpftrace: "ERROR: failed to look up stack id -17 (pid 1234): -2" (1 each)
	 */
	DIAG_LOST_STACKS,
	DIAG_LOST_EVENTS,    /* bpftrace: "Lost N events"; BCC: "Possibly lost N samples" */
	DIAG_KERNEL_HEADERS, /* BCC: "Unable to find kernel headers" */
	DIAG_PERMISSION, /* "Operation not permitted", "Permission denied", "must be run as root" */
	DIAG_BPF_UNSUPPORTED, /* no bpf() syscall, no BTF, program type or helper unsupported */
	DIAG_LOCKDOWN,	      /* kernel lockdown forbids BPF */
	DIAG_ATTACH_FAILED,   /* a probe/tracepoint/kprobe that could not be attached */
	DIAG_ERROR,	      /* other error lines: "ERROR:", "Error:", "Traceback", "Exception:" */
	DIAG__COUNT,
};

#define DIAG_TEXT_MAX 240

struct diagnostics {
	size_t nr_lines; /* non-blank lines */
	size_t count[DIAG__COUNT];
	uint64_t lost_stack_traces; /* sum over DIAG_LOST_STACKS lines */
	uint64_t lost_events;	    /* sum over DIAG_LOST_EVENTS lines */
	/* First line of each kind (trimmed, truncated, NUL-terminated) and its 1-based number. */
	char first[DIAG__COUNT][DIAG_TEXT_MAX];
	size_t first_line[DIAG__COUNT];
};

const char *diag_kind__name(enum diag_kind k);
/* The kind of one line (no trailing newline needed). */
enum diag_kind diagnostics__classify_line(const char *line, size_t len);
/* Read all of in. Returns 0, -EOVERFLOW (a lost count wraps), -ENOMEM or -EIO. */
int diagnostics__parse(FILE *in, struct diagnostics *d);

#endif
