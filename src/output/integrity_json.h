/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The capture-integrity object, in the one shape the summary and the report's
 * JSON both write (docs/summary.schema.json, "capture_integrity"):
 *
 *	{"status": ..., "message": ..., "lost_stack_trace_count": N, "lost_total": N,
 *	 "lost": {"count": N, "affected_ns": N}, "edges": {...}, "interrupted": B,
 *	 "partial_threshold": {"lost_time_share": X, "lost_count_share": X},
 *	 "losses": {"NAME": {"count": N, "affected_ns": N, "class": C,
 *	                     "significant": B}, ...}}
 *
 * lost_total sums every counter, edges and the interrupt included, as it
 * always has; "lost" sums the real losses only.
 */
#ifndef OFFCPU_OUTPUT_INTEGRITY_JSON_H
#define OFFCPU_OUTPUT_INTEGRITY_JSON_H

#include "model/integrity.h"
#include "util/json_writer.h"

/* Write "key": the object, or null when in is NULL. */
void integrity_json__write(struct jw *w, const char *key, const struct integrity *in);

#endif
