/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The user-stack completeness object (analyze/completeness.h), in the one
 * shape the summary ("user_stacks", docs/summary.md) and the report's JSON
 * both write:
 *
 *	{"unwinder": "dwarf", "known": true, "with_user_stack_ns": N,
 *	 "complete_ns": N|null, "complete_share": F|null, "incomplete_ns": N|null,
 *	 "stack_missing_ns": N, "no_user_stack_ns": N,
 *	 "unsymbolized_ns": N, "unsymbolized_share": F|null,
 *	 "incomplete": [{"binary": S|null, "reason": S, "off_ns": N, "share": F}]}
 *
 * Shares of with_user_stack_ns, except unsymbolized_share: of all off-CPU time.
 */
#ifndef OFFCPU_OUTPUT_COMPLETENESS_JSON_H
#define OFFCPU_OUTPUT_COMPLETENESS_JSON_H

#include "analyze/completeness.h"
#include "util/json_writer.h"

void completeness_json__write(struct jw *w, const char *key, const struct completeness *c);

#endif
