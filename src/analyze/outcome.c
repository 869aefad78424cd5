// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyze/outcome.h"

const char *outcome__errno_kind(int err)
{
	switch (err) {
	case EPERM:
		return "permission_denied";
	/* bpf() answers EACCES when the verifier rejects a program, not for privilege. */
	case EACCES:
	case E2BIG:
	case ENOSYS:
	case EOPNOTSUPP:
	case EINVAL:
		return "bpf_unsupported";
	case ENOENT:
	case ESRCH:
		return "attach_failed";
	default:
		return "collector_failed";
	}
}

/* Diagnostics kinds that explain a failure, most specific first. */
static const struct {
	enum diag_kind kind;
	const char *caveat;
} diag_causes[] = {
	{DIAG_KERNEL_HEADERS, "kernel_headers_missing"}, {DIAG_LOCKDOWN, "bpf_locked_down"},
	{DIAG_PERMISSION, "permission_denied"},		 {DIAG_BPF_UNSUPPORTED, "bpf_unsupported"},
	{DIAG_ATTACH_FAILED, "attach_failed"},
};

static void set_caveat(struct outcome *out, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_caveat(struct outcome *out, const char *kind, const char *fmt, ...)
{
	va_list ap;

	out->caveat_kind = kind;
	va_start(ap, fmt);
	vsnprintf(out->caveat_message, sizeof(out->caveat_message), fmt, ap);
	va_end(ap);
}

/* Append to the integrity's message; false once it is full. */
static bool say(struct integrity *in, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool say(struct integrity *in, size_t *used, const char *fmt, ...)
{
	size_t cap = sizeof(in->message);
	va_list ap;
	int n;

	if (*used >= cap - 1)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(in->message + *used, cap - *used, fmt, ap);
	va_end(ap);
	if (n < 0)
		return false;
	*used = *used + (size_t)n < cap - 1 ? *used + (size_t)n : cap - 1;
	return true;
}

/* The real losses with a count, "; "-separated; only the significant ones when only is set. */
static void say_losses(struct integrity *in, size_t *used, bool only)
{
	const char *sep = "";

	for (size_t i = 0; i < in->nr_losses; i++) {
		const struct integrity_loss *l = &in->losses[i];
		bool ok;

		if (!l->count || integrity__class(l->name) != INTEGRITY_LOSS ||
		    (only && !l->significant))
			continue;
		if (!strcmp(l->name, "lost_stack_traces"))
			ok = say(in, used, "%s%" PRIu64 " stack trace(s) lost", sep, l->count);
		else if (!strcmp(l->name, "lost_events"))
			ok = say(in, used, "%s%" PRIu64 " event(s) lost", sep, l->count);
		else
			ok = say(in, used, "%s%s: %" PRIu64, sep, l->name, l->count);
		if (!ok)
			return;
		sep = "; ";
	}
}

static void integrity_message(struct integrity *in)
{
	uint64_t lost, lost_ns, edges, edges_ns, facts, facts_ns;
	size_t used = 0;

	in->message[0] = '\0';
	if (in->status == INTEGRITY_UNKNOWN) {
		say(in, &used, "the collector left no diagnostics; losses cannot be judged");
		return;
	}
	if (in->status == INTEGRITY_PARTIAL) {
		say_losses(in, &used, true);
		return;
	}
	integrity__sum(in, INTEGRITY_LOSS, &lost, &lost_ns);
	integrity__sum(in, INTEGRITY_EDGE, &edges, &edges_ns);
	integrity__sum(in, INTEGRITY_FACT, &facts, &facts_ns);
	if (lost) {
		say(in, &used, "no loss that changes an answer (below the threshold: ");
		say_losses(in, &used, false);
		say(in, &used, ")");
	} else {
		say(in, &used, "the collector reported no loss");
	}
	if (edges)
		say(in, &used,
		    "; %" PRIu64 " wait(s) in progress at the window's start or stop "
		    "counted within it",
		    edges);
	if (integrity__loss(in, "interrupted") && integrity__loss(in, "interrupted")->count)
		say(in, &used, "; interrupted: the window ends at the interrupt");
}

/*
 * Mark the real losses that change an answer (OUTCOME_LOST_*): true when one
 * does. Losses that know the time they affect are judged together against the
 * capture's off-CPU time, those that do not against its intervals.
 */
static bool judge(struct integrity *in, uint64_t off_ns, uint64_t intervals)
{
	uint64_t timed_ns = 0, counted = 0;
	bool timed_big, counted_big, any = false;

	for (size_t i = 0; i < in->nr_losses; i++) {
		const struct integrity_loss *l = &in->losses[i];

		if (!l->count || integrity__class(l->name) != INTEGRITY_LOSS)
			continue;
		if (l->affected_ns)
			timed_ns = timed_ns + l->affected_ns < timed_ns ? UINT64_MAX
									: timed_ns + l->affected_ns;
		else
			counted = counted + l->count < counted ? UINT64_MAX : counted + l->count;
	}
	timed_big = (double)timed_ns > (double)off_ns * OUTCOME_LOST_TIME_SHARE;
	counted_big = (double)counted > (double)intervals * OUTCOME_LOST_COUNT_SHARE;
	for (size_t i = 0; i < in->nr_losses; i++) {
		struct integrity_loss *l = &in->losses[i];

		l->significant = l->count && integrity__class(l->name) == INTEGRITY_LOSS &&
				 (integrity__unbounded(l->name) ||
				  (l->affected_ns ? timed_big : counted_big));
		any = any || l->significant;
	}
	return any;
}

/* Why a collector that captured nothing failed. */
static void classify_failure(const struct outcome_input *oi, struct outcome *out)
{
	const struct diagnostics *d = oi->diag;

	if (!oi->workload.started && oi->workload.exec_errno == EINTR) {
		set_caveat(out, "workload_not_started",
			   "offcpu was interrupted before the workload started");
		return;
	}
	if (!oi->workload.started && oi->workload.exec_errno) {
		set_caveat(out, "workload_not_started", "the workload could not be started: %s",
			   strerror(oi->workload.exec_errno));
		return;
	}
	if (oi->collector_errno == EACCES || oi->collector_errno == E2BIG) {
		set_caveat(out, outcome__errno_kind(oi->collector_errno),
			   "the kernel's verifier rejected the built-in collector's program%s%s",
			   d && d->count[DIAG_ERROR] ? ": " : "",
			   d && d->count[DIAG_ERROR] ? d->first[DIAG_ERROR] : "");
		return;
	}
	if (oi->collector_errno) {
		set_caveat(out, outcome__errno_kind(oi->collector_errno),
			   "the built-in collector could not start: %s%s%s",
			   strerror(oi->collector_errno), d && d->count[DIAG_ERROR] ? ": " : "",
			   d && d->count[DIAG_ERROR] ? d->first[DIAG_ERROR] : "");
		return;
	}
	if (!oi->collector.started) {
		set_caveat(out, "tool_unavailable", "the collector could not be executed: %s",
			   strerror(oi->collector.exec_errno ? oi->collector.exec_errno : ENOENT));
		return;
	}
	for (size_t i = 0; d && i < sizeof(diag_causes) / sizeof(diag_causes[0]); i++) {
		if (d->count[diag_causes[i].kind]) {
			set_caveat(out, diag_causes[i].caveat, "%s", d->first[diag_causes[i].kind]);
			return;
		}
	}
	if (oi->collector_timed_out) {
		set_caveat(out, "collector_timeout",
			   "the collector did not stop after the workload ended and was killed");
		return;
	}
	if (oi->collector.signal && !(oi->collector_stopped && oi->collector.signal == SIGINT)) {
		set_caveat(out, "collector_killed", "the collector was killed by signal %d (%s)",
			   oi->collector.signal, strsignal(oi->collector.signal));
		return;
	}
	if (oi->collector.exited && oi->collector.exit_code == 0 && !oi->collector.signal) {
		/* The seed's rule: exit 0 with nothing captured is a failure too. */
		set_caveat(out, "empty_capture",
			   "the collector exited 0 but captured no off-CPU "
			   "rows%s",
			   oi->collector_ready ? "" : " (it never attached)");
		return;
	}
	if (d && d->count[DIAG_ERROR])
		set_caveat(out, "collector_failed", "%s", d->first[DIAG_ERROR]);
	else if (d && d->count[DIAG_TEXT])
		set_caveat(out, "collector_failed", "%s", d->first[DIAG_TEXT]);
	else
		set_caveat(out, "collector_failed",
			   "the collector exited with status %d and said "
			   "nothing",
			   oi->collector.exit_code ? oi->collector.exit_code : 1);
}

int outcome__decide(const struct outcome_input *oi, struct integrity *in, struct outcome *out)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!oi->tool_available) {
		out->state = "tool_missing";
		set_caveat(out, "tool_unavailable",
			   "the off-CPU profiler is not runnable on this "
			   "host; blocked time was not captured");
		in->status = INTEGRITY_UNKNOWN;
		integrity_message(in);
		return 0;
	}
	if (oi->diag) {
		in->evidence = 1;
		err = integrity__add_loss(in, "lost_stack_traces", oi->diag->lost_stack_traces, 0);
		if (!err)
			err = integrity__add_loss(in, "lost_events", oi->diag->lost_events, 0);
	}
	/* An abnormal end loses whatever the collector had not written out yet. */
	if (!err && oi->rows && oi->collector_timed_out)
		err = integrity__add_loss(in, "collector_timeout", 1, 0);
	if (!err && oi->rows && oi->collector.signal &&
	    !(oi->collector_stopped && oi->collector.signal == SIGINT) && !oi->collector_timed_out)
		err = integrity__add_loss(in, "collector_killed", 1, 0);
	/* Not seen attached before the workload ran: its start may be missing. */
	if (!err && oi->rows && oi->collector.started && !oi->collector_ready &&
	    !oi->collector_errno)
		err = integrity__add_loss(in, "attach_unconfirmed", 1, 0);
	if (!err && oi->interrupted)
		err = integrity__add_loss(in, "interrupted", 1, 0);
	if (err)
		return err;

	/* Judged even without evidence, so that what was counted says what it weighs. */
	if (judge(in, oi->off_ns, oi->intervals) && in->evidence)
		in->status = INTEGRITY_PARTIAL;
	else
		in->status = in->evidence ? INTEGRITY_COMPLETE : INTEGRITY_UNKNOWN;
	integrity_message(in);

	/* Zero is an answer only about a workload that ran (a target that is not a command did). */
	if (!oi->rows && oi->native_attached && oi->tool_available && !oi->collector_errno &&
	    in->status == INTEGRITY_COMPLETE &&
	    (oi->workload.started || !oi->workload.exec_errno)) {
		out->state = "summary_written";
		set_caveat(out, "no_off_cpu_time",
			   "the built-in collector was attached and lost nothing: the target never "
			   "left the CPU");
		return 0;
	}
	if (!oi->rows) {
		/* Nothing was captured: "complete" would claim a whole answer. */
		if (in->status == INTEGRITY_COMPLETE) {
			in->status = INTEGRITY_UNKNOWN;
			integrity_message(in);
		}
		out->state = "tool_failed";
		classify_failure(oi, out);
		return 0;
	}
	out->state = "summary_written";
	if (in->status == INTEGRITY_PARTIAL)
		set_caveat(out, "offcpu_capture_partial", "%s", in->message);
	else if (in->status == INTEGRITY_UNKNOWN)
		set_caveat(out, "offcpu_capture_integrity_unknown", "%s", in->message);
	return 0;
}
