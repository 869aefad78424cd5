/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pprof export: the profile as a gzipped profile.proto (github.com/google/pprof,
 * proto/profile.proto), readable by `go tool pprof` and everything built on it.
 *
 *   sample_type          [events/count, off_cpu/nanoseconds]
 *   default_sample_type  off_cpu (events when the profile has counts but no
 *                        time: bpftrace "stacks" captures)
 *   period_type          off_cpu/nanoseconds, period 1
 *   sample               one per profile row (thread, stack, state), two
 *                        when the row's run-queue part is known and it is not
 *                        a runqueue row: [count, off_ns - runq_ns] with the
 *                        row's reason, then [0, runq_ns] with reason
 *                        runqueue (so reason labels sum as the report's
 *                        reasons do); location ids leaf first;
 *                        labels: comm (str), state (str: sleep, disk, preempt,
 *                        other, unknown), pid and tid (num, only when known,
 *                        i.e. non-zero), runq_ns (num, unit nanoseconds, only
 *                        when the profile's run-queue split is known; the
 *                        row's), reason (str, analyze/reasons.h) and
 *                        reason_detail (str, when a rule gave one); with
 *                        opts->string_ids also process and thread (str: the
 *                        pid and tid in decimal, when known), for stores that
 *                        keep only string labels (Pyroscope drops numeric ones)
 *   function             one per distinct frame name (name = system_name)
 *   location             one per profile frame (id = frame id + 1), one line;
 *                        and one per chain of a frame and the functions
 *                        inlined into it (FRAME_INLINE frames after it), ids
 *                        after those, whose lines run innermost first as
 *                        pprof wants (the physical frame's function last):
 *                        samples use these, so `pprof -traces` shows the
 *                        inlined functions "(inline)"
 *   mapping              1 "[user]" (user and missing-stack frames), 2
 *                        "[kernel.kallsyms]" (kernel frames); the model keeps no
 *                        addresses, so both span [0, 0) with has_functions set,
 *                        which tells pprof not to symbolize
 *   string_table[0]      ""
 *
 * Integers above INT64_MAX cannot be represented (the values are int64):
 * -EOVERFLOW, nothing written. The output is deterministic (the gzip header
 * carries no time or name), so it can be compared byte for byte.
 */
#ifndef OFFCPU_OUTPUT_PPROF_H
#define OFFCPU_OUTPUT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

struct pprof_opts {
	int64_t time_nanos;	/* capture start, ns since the epoch; 0 leaves it out */
	int64_t duration_nanos; /* capture length; 0 leaves it out */
	const char *comment;	/* e.g. "offcpu 0.1.0 native"; NULL leaves it out */
	bool string_ids;	/* add the process and thread string labels (see above) */
};

/*
 * The uncompressed profile.proto message in a caller-freed (free()) buffer.
 * opts may be NULL. Returns 0, -ENOMEM, -EINVAL (a row names a missing stack,
 * frame or thread) or -EOVERFLOW.
 */
int pprof__encode(const struct profile *p, const struct pprof_opts *opts, uint8_t **buf,
		  size_t *len);

/* gzip(pprof__encode()) to out. Returns 0 or -errno as above, -EIO on a write error. */
int pprof__write(FILE *out, const struct profile *p, const struct pprof_opts *opts);

#endif
