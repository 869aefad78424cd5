/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a run of a lane amounts to: the summary's state, caveat and capture
 * integrity, decided from evidence only (the collector's diagnostics, how the
 * collector and the workload ended, what was captured). The workload's own
 * stderr is never evidence about the collector.
 *
 * States (the seed's):  summary_written | tool_missing | tool_failed
 * Caveat kinds:
 *   tool_unavailable         the collector is not runnable on this host
 *   kernel_headers_missing   BCC could not compile its program (no headers)
 *   permission_denied        the collector lacked privilege (EPERM/EACCES)
 *   bpf_unsupported          the kernel lacks BPF, BTF or a needed feature, or its
 *                            verifier rejects the program (EACCES, E2BIG)
 *   bpf_locked_down          kernel lockdown forbids BPF
 *   attach_failed            a tracepoint or probe could not be attached
 *   collector_killed         the collector died of a signal we did not send
 *   collector_timeout        the collector did not stop in time and was killed
 *   workload_not_started     the workload could not be started (exec failed, or
 *                            offcpu was interrupted before it started)
 *   empty_capture            the collector ran, exited 0, and captured nothing
 *   no_off_cpu_time          (state summary_written) the built-in collector was
 *                            attached and lost nothing, and the target never
 *                            left the CPU: zero is the answer. External
 *                            collectors cannot prove they were attached: for
 *                            them no rows stays empty_capture.
 *   collector_failed         the collector failed in a way not recognised above
 *   offcpu_capture_partial   rows were written but something was lost
 *   offcpu_capture_integrity_unknown   rows were written, no diagnostics to judge
 * "collector_failed" is the last resort, never the common case: every kind a
 * real host gives has its own test.
 */
#ifndef OFFCPU_ANALYZE_OUTCOME_H
#define OFFCPU_ANALYZE_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/integrity.h"
#include "model/run.h"
#include "parse/diagnostics.h"

struct outcome_input {
	bool tool_available;
	/* NULL when the collector left no diagnostics file at all. */
	const struct diagnostics *diag;
	size_t rows; /* rows in the capture */
	struct proc_end collector;
	bool collector_ready;	  /* it attached before the workload ran */
	bool collector_stopped;	  /* we sent the stop signal (SIGINT) ourselves */
	bool collector_timed_out; /* it ignored the stop and was killed */
	int collector_errno;	  /* native collector: why it could not start (0: it did) */
	struct proc_end workload;
	bool interrupted; /* the user interrupted the run */
	/* The built-in collector attached and drained: no rows is a measurement. */
	bool native_attached;
	/* The capture's off-CPU time and intervals: what a loss is measured against. */
	uint64_t off_ns;
	uint64_t intervals;
};

/*
 * When a real loss changes an answer, so that the capture is partial
 * (docs/reliability.md, "When a capture is partial"): the off-CPU time the
 * losses that know it affect, summed, is more than OUTCOME_LOST_TIME_SHARE of
 * the capture's off-CPU time; or the losses that do not know their time count
 * more than OUTCOME_LOST_COUNT_SHARE of the capture's intervals; or a loss
 * without a bound (integrity__unbounded) has any count. Edges and facts
 * (integrity__class) never do.
 */
#define OUTCOME_LOST_TIME_SHARE 0.01
#define OUTCOME_LOST_COUNT_SHARE 0.001

struct outcome {
	const char *state;
	const char *caveat_kind; /* NULL: no caveat */
	char caveat_message[512];
};

/*
 * Decide the outcome; also completes in->integrity's status, message and the
 * losses' significant flags from the losses already recorded in it
 * (collectors add them) and from the diagnostics' counters (added here as
 * "lost_stack_traces" / "lost_events").
 */
int outcome__decide(const struct outcome_input *oi, struct integrity *in, struct outcome *out);

/* The caveat kind an errno from starting a collector stands for. */
const char *outcome__errno_kind(int err);

#endif
