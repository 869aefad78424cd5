/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The collector table: everything the rest of offcpu needs to know about a
 * collector, one row each (collect/collectors.c). A collector lives in its own
 * file, which defines its row (struct collector NAME_collector); adding one is
 * that file, a line in the table and its value in enum collector_kind
 * (model/lane.h).
 *
 * Built-in collectors run inside offcpu (record's start_native); the others
 * are programs record runs beside the workload (collect/external.h), with
 * their stdout as the capture unless they write it themselves. The capture is
 * parsed by its mode (lane/lane.h): an external collector writes one format,
 * its row's mode; a built-in one writes the mode asked for.
 */
#ifndef OFFCPU_COLLECT_COLLECTORS_H
#define OFFCPU_COLLECT_COLLECTORS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/lane.h"

struct probe_result;

struct collector {
	enum collector_kind kind;
	const char *name; /* the summary's "collector" */
	/* A tool whose basename contains this (built in: equals it) is this collector. */
	const char *match;
	enum lane_mode mode; /* the format an external collector writes */
	bool builtin;
	bool writes_capture; /* writes the capture itself (its stdout is not the capture) */
	/*
	 * An external collector's argv against pid, tool_path as argv[0]; a
	 * NULL-terminated, malloc'ed vector (external__argv_free), NULL with errno.
	 */
	char **(*argv)(const struct lane *l, const char *tool_path, const char *pid);
	const char *const *env; /* NAME=VALUE set for it, overriding ours; NULL-terminated */
	/* offcpu doctor's check that it can run here (collect/probe.h); NULL: none. */
	void (*probe)(struct probe_result *r);
};

/* The i-th row in table order; NULL past the last. */
const struct collector *collector__at(size_t i);
/* The row of kind k; the native row for a kind out of range. */
const struct collector *collector__get(enum collector_kind k);
const char *collector_kind__name(enum collector_kind c);
/*
 * The collector a tool name or path stands for: its basename contains
 * "bpftrace" -> BPFTRACE, "offcputime" -> BCC, "native" -> NATIVE; any other
 * tool is taken to speak the mode's format (time: BCC's, stacks: bpftrace's).
 */
enum collector_kind collector_kind__from_tool(const char *tool, enum lane_mode mode);

#endif
