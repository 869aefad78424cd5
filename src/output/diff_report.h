/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `offcpu diff` prints: a diff (analyze/diff.h) and the gates'
 * verdicts, as text for a terminal or as JSON.
 *
 * Text: totals (base, new, change, relative change); blocked time by reason;
 * threads by comm and stacks, both largest change of off-CPU time first (at
 * most o->top each), a stack shown by its key frames as in the report; then
 * one line per gate, "FAIL" or "ok". Normalized diffs show shares of the
 * total ("39.0%", changes in percentage points "pp") or seconds off the CPU
 * per second of wall time. Every line fits in o->width columns.
 *
 * JSON:
 *   { "base": label, "new": label, "normalize": "none"|"total"|"wall",
 *     "stacks_partial": bool,
 *     "totals": {"off"|"blocked"|"runq"|"count": V},
 *     "reasons": [{"reason", "off": V}],
 *     "threads": [{"comm", "off": V, "blocked": V, "runq": V, "count": V,
 *                  "only_base", "only_new"}],
 *     "stacks":  [{"frames": [{name, kind}], "reason", "off": V, "blocked": V,
 *                  "runq": V, "count": V, "only_base", "only_new"}],
 *     "gates": [{"expr", "crossed", "base", "new", "matched_stacks"}] }
 * with V = {base, new, delta, rel, base_norm, new_norm}; delta is new - base
 * (raw), rel the relative change (null when base is 0), the _norm fields
 * only when normalized. Stacks and threads are all listed in JSON.
 *
 * Returns 0, or -EIO when writing failed.
 */
#ifndef OFFCPU_OUTPUT_DIFF_REPORT_H
#define OFFCPU_OUTPUT_DIFF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyze/diff.h"

struct diff_report_opts {
	bool color;
	bool json;
	int width; /* 0 means 80; at least 40 is used */
	int top;   /* threads and stacks in text; 0 means 10 */
	const char *base_label, *new_label;
};

int diff_report__write(FILE *out, const struct diff *d, const struct diff_gate *gates,
		       const struct diff_gate_result *results, size_t nr_gates,
		       const struct diff_report_opts *o);

#endif
