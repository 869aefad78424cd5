/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What this host can do for off-CPU collection, for `offcpu doctor`: one
 * check per fact, each with a verdict, what was seen and, when it is not ok,
 * the fix. Checks only look (files, feature probes, a trial run of a tool with
 * a bounded time); they change nothing.
 */
#ifndef OFFCPU_COLLECT_PROBE_H
#define OFFCPU_COLLECT_PROBE_H

#include <stddef.h>

enum probe_verdict { PROBE_OK = 0, PROBE_WARN, PROBE_FAIL, PROBE_INFO };

struct probe_result {
	const char *name; /* short, e.g. "btf" */
	enum probe_verdict verdict;
	char seen[256];	      /* what was found */
	char fix[256];	      /* what to do; empty when ok */
	int needed_by_native; /* a FAIL here means the native collector cannot run */
};

/* Run every check; fills up to max results, returns how many. binary may be NULL. */
size_t probe__run_all(struct probe_result *out, size_t max, const char *binary);
const char *probe_verdict__name(enum probe_verdict v);
/*
 * The kernel's BTF, which the native collector needs (CO-RE): $OFFCPU_BTF_PATH
 * when set (tests point it at a missing file), else /sys/kernel/btf/vmlinux.
 */
const char *probe__btf_path(void);

/* For the collectors' own checks (struct collector's probe). */
/* printf into a result's seen or fix (256 bytes). */
void probe__say(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run a tool with a bound; returns its exit status, -1 on failure to run; output to buf. */
int probe__run_tool(char *const argv[], char *buf, size_t len, int timeout_ms);
/* The first line of src, at most 200 bytes, into a 256-byte dst. */
void probe__first_line(char *dst, const char *src);

#endif
