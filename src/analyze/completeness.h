/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How much of the off-CPU time has a whole user stack, and where the rest
 * was lost: the summary's "user_stacks" and the report's warning line.
 *
 * Every row falls in one class by its stack (docs/stacks.md):
 *
 *   complete     at least one user frame (any kind but kernel and missing)
 *                and no "[unwind: ...]" marker (model/frame_name.h)
 *   incomplete   an "[unwind: REASON in BIN]" marker: the unwinder stopped;
 *                its time is charged to (BIN, REASON)
 *   missing      no user frame, and a placeholder for the user side or both
 *                ("[missing user stack: ...]", "[stack unknown: ...]",
 *                "[new thread: ...]", BCC's "[Missed User Stack]"): the
 *                switch-out was not seen or the stack could not be had
 *   no user      nothing of the user side: kernel threads, kernel-only stacks
 *
 * with_user_ns = complete + incomplete; the complete share is
 * complete / with_user. It is known only when the collector's unwinder marks
 * the stacks it could not finish, which only the built-in collector does;
 * BCC and bpftrace walk frame pointers and stop silently, so their share is
 * unknown, never 1.
 *
 * Independently, unsymbolized_ns is the time of rows whose stack holds a frame
 * without a name (frame_name__unsymbolized()), whichever class they are in.
 */
#ifndef OFFCPU_ANALYZE_COMPLETENESS_H
#define OFFCPU_ANALYZE_COMPLETENESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/lane.h"
#include "model/profile.h"

/* Below this complete share the report warns (docs/stacks.md). */
#define COMPLETENESS_WARN_SHARE 0.90

enum unwinder {
	UNWINDER_DWARF =
		0,	 /* the built-in collector: .eh_frame CFI, marks what it could not finish */
	UNWINDER_FP_BCC, /* BCC's frame-pointer walk, silent when it stops */
	UNWINDER_FP_BPFTRACE /* bpftrace's frame-pointer walk, silent when it stops */
};
/* "dwarf", "frame pointers (bcc)", "frame pointers (bpftrace)". */
const char *unwinder__name(enum unwinder u);
enum unwinder unwinder__of_collector(enum collector_kind c);
/* Whether the unwinder marks the stacks it could not finish. */
bool unwinder__marks_incomplete(enum unwinder u);

/* Incomplete time of one (binary, reason). */
struct completeness_loss {
	const char *binary; /* NULL: the marker names none */
	const char *reason;
	uint64_t off_ns;
};

struct completeness {
	enum unwinder unwinder;
	bool known; /* unwinder__marks_incomplete() */
	uint64_t off_ns;
	uint64_t with_user_ns, complete_ns, incomplete_ns;
	uint64_t missing_ns, no_user_ns;
	uint64_t unsymbolized_ns;
	/* Most off_ns first, then by binary and reason; empty when !known. */
	struct completeness_loss *losses;
	size_t nr_losses;
};

/* NULL and errno (ENOMEM) on failure. p may have no rows. */
struct completeness *completeness__new(const struct profile *p, enum unwinder u);
void completeness__free(struct completeness *c);
/* complete / with_user in [0, 1]; negative when not known or there is no user stack. */
double completeness__share(const struct completeness *c);

#endif
