// SPDX-License-Identifier: GPL-2.0-only
/* The classifier: every failure kind a real host gives, from real wording. */
#include <errno.h>
#include <signal.h>

#include "analyze/outcome.h"
#include "parse/diagnostics.h"
#include "unit.h"

static struct outcome_input base(void)
{
	return (struct outcome_input){
		.tool_available = true,
		.collector = {.started = true, .exited = true, .exit_code = 1},
		.collector_ready = true,
		.workload = {.started = true, .exited = true},
	};
}

static const char *kind_for(const char *diag_text, struct outcome_input oi)
{
	static struct outcome out;
	static struct diagnostics d;
	struct integrity in = {};
	FILE *f = unit_memfile(diag_text);

	diagnostics__parse(f, &d);
	fclose(f);
	oi.diag = &d;
	outcome__decide(&oi, &in, &out);
	return out.caveat_kind ? out.caveat_kind : "(none)";
}

TEST(bcc_without_kernel_headers)
{
	const char *text =
		"sh: 1: modprobe: not found\n"
		"Unable to find kernel headers. Try rebuilding kernel with CONFIG_IKHEADERS=m "
		"(module) or installing the kernel development package for your running kernel "
		"version.\n"
		"chdir(/lib/modules/6.18.44-fc-v1045/build): No such file or directory\n"
		"Traceback (most recent call last):\n"
		"  File \"/usr/sbin/offcputime-bpfcc\", line 258, in <module>\n"
		"Exception: Failed to compile BPF module <text>\n";

	CHECK_STR(kind_for(text, base()), "kernel_headers_missing");
}

TEST(permission_denied_from_libbpf_and_bpftrace)
{
	CHECK_STR(kind_for("libbpf: Failed to bump RLIMIT_MEMLOCK (err = -1)\n"
			   "libbpf: failed to load object 'offcputime_bpf': -1 (Operation not "
			   "permitted)\n",
			   base()),
		  "permission_denied");
}

TEST(lockdown_is_its_own_kind)
{
	CHECK_STR(kind_for("bpf: Lockdown: bpftrace is use of bpf to read kernel RAM is "
			   "restricted; see man kernel_lockdown.7\n",
			   base()),
		  "bpf_locked_down");
}

TEST(collector_killed_by_a_signal_we_did_not_send)
{
	struct outcome_input oi = base();

	oi.collector.signal = SIGSEGV;
	CHECK_STR(kind_for("", oi), "collector_killed");
	/* Our own SIGINT to stop it is the normal end, not a kill. */
	oi.collector.signal = SIGINT;
	oi.collector_stopped = true;
	CHECK(strcmp(kind_for("", oi), "collector_killed") != 0);
}

TEST(collector_that_hung_is_a_timeout)
{
	struct outcome_input oi = base();

	oi.collector.signal = SIGKILL;
	oi.collector_stopped = true;
	oi.collector_timed_out = true;
	CHECK_STR(kind_for("", oi), "collector_timeout");
}

TEST(workload_that_could_not_start)
{
	struct outcome_input oi = base();

	oi.workload.started = false;
	oi.workload.exec_errno = ENOENT;
	CHECK_STR(kind_for("", oi), "workload_not_started");
}

TEST(native_start_errno_is_classified)
{
	struct outcome_input oi = base();

	oi.collector_errno = EPERM;
	CHECK_STR(kind_for("", oi), "permission_denied");
	oi.collector_errno = ENOSYS;
	CHECK_STR(kind_for("", oi), "bpf_unsupported");
}

TEST(unrecognised_failure_is_the_last_resort_with_its_text)
{
	struct outcome_input oi = base();
	struct diagnostics d;
	struct integrity in = {};
	struct outcome out;
	FILE *f = unit_memfile("ERROR: something nobody has seen before\n");

	diagnostics__parse(f, &d);
	fclose(f);
	oi.diag = &d;
	outcome__decide(&oi, &in, &out);
	CHECK_STR(out.state, "tool_failed");
	CHECK_STR(out.caveat_kind, "collector_failed");
	CHECK_CONTAINS(out.caveat_message, "something nobody has seen before");
}

/* An interrupt ends the window: a fact the integrity keeps, not a loss. */
TEST(interrupted_capture_with_rows_is_complete_and_says_so)
{
	struct outcome_input oi = base();
	struct diagnostics d = {};
	struct integrity in = {};
	struct outcome out;

	oi.diag = &d;
	oi.rows = 3;
	oi.interrupted = true;
	outcome__decide(&oi, &in, &out);
	CHECK_STR(out.state, "summary_written");
	CHECK(out.caveat_kind == NULL);
	CHECK_INT(in.status, INTEGRITY_COMPLETE);
	CHECK_U64(integrity__loss(&in, "interrupted")->count, 1);
	CHECK_CONTAINS(in.message, "interrupted");
}

/* A collector's evidence with these losses, on a capture of off_ns in intervals. */
static void decide_with(struct integrity *in, struct outcome *out, uint64_t off_ns,
			uint64_t intervals)
{
	struct outcome_input oi = base();
	struct diagnostics d = {};

	oi.diag = &d;
	oi.rows = 5;
	oi.off_ns = off_ns;
	oi.intervals = intervals;
	outcome__decide(&oi, in, out);
}

/* Waits in progress at start and stop are counted within the window: not losses. */
TEST(edges_alone_leave_a_capture_complete)
{
	struct integrity in = {.evidence = 1};
	struct outcome out;

	integrity__add_loss(&in, "inflight_at_start", 3, 2000000000);
	integrity__add_loss(&in, "inflight_at_stop", 2, 1500000000);
	decide_with(&in, &out, 4000000000, 5);
	CHECK_INT(in.status, INTEGRITY_COMPLETE);
	CHECK(out.caveat_kind == NULL);
	CHECK(!integrity__loss(&in, "inflight_at_start")->significant);
	CHECK_CONTAINS(in.message, "5 wait(s) in progress");
	CHECK_INT(integrity__class("inflight_at_stop"), INTEGRITY_EDGE);
	CHECK_INT(integrity__class("interrupted"), INTEGRITY_FACT);
	CHECK_INT(integrity__class("stack_cache_mismatch"), INTEGRITY_LOSS);
}

/* Losses are weighed: time against 1% of the off-CPU time, counts against 0.1% of intervals. */
TEST(losses_make_a_capture_partial_only_above_the_threshold)
{
	struct integrity in = {.evidence = 1};
	struct outcome out;

	/* One cache mismatch of 22 us in 2 s: it cannot change an answer. */
	integrity__add_loss(&in, "stack_cache_mismatch", 1, 22000);
	decide_with(&in, &out, 2000000000, 5000);
	CHECK_INT(in.status, INTEGRITY_COMPLETE);
	CHECK(out.caveat_kind == NULL);
	CHECK_CONTAINS(in.message, "below the threshold: stack_cache_mismatch: 1");
	/* 30 ms more in 2 s: 2.6%, over 1%. */
	in = (struct integrity){.evidence = 1};
	integrity__add_loss(&in, "stack_cache_mismatch", 1, 22000);
	integrity__add_loss(&in, "map_full_agg", 9, 30000000);
	decide_with(&in, &out, 2000000000, 5000);
	CHECK_INT(in.status, INTEGRITY_PARTIAL);
	CHECK_STR(out.caveat_kind, "offcpu_capture_partial");
	CHECK(integrity__loss(&in, "map_full_agg")->significant);
	CHECK_CONTAINS(out.caveat_message, "map_full_agg: 9");
	/* Just at 1% is not over it. */
	in = (struct integrity){.evidence = 1};
	integrity__add_loss(&in, "lost_stacks", 1, 20000000);
	decide_with(&in, &out, 2000000000, 5000);
	CHECK_INT(in.status, INTEGRITY_COMPLETE);
	/* Counts without a time: 4 events in 5000 intervals is 0.08%, 6 is 0.12%. */
	in = (struct integrity){.evidence = 1};
	integrity__add_loss(&in, "missed_events", 4, 0);
	decide_with(&in, &out, 2000000000, 5000);
	CHECK_INT(in.status, INTEGRITY_COMPLETE);
	integrity__add_loss(&in, "unmatched_switch_in", 2, 0);
	decide_with(&in, &out, 2000000000, 5000);
	CHECK_INT(in.status, INTEGRITY_PARTIAL);
	CHECK(integrity__loss(&in, "missed_events")->significant);
}

/* Whole threads missing, or a collector that ended abnormally: no bound, any count. */
TEST(unbounded_losses_make_a_capture_partial_at_any_count)
{
	struct integrity in = {.evidence = 1};
	struct outcome out;

	integrity__add_loss(&in, "map_full_threads", 1, 0);
	integrity__add_loss(&in, "inflight_at_start", 1, 100);
	decide_with(&in, &out, 100000000000ull, 10000000);
	CHECK_INT(in.status, INTEGRITY_PARTIAL);
	CHECK(integrity__loss(&in, "map_full_threads")->significant);
	CHECK(!integrity__loss(&in, "inflight_at_start")->significant);
	CHECK_STR(out.caveat_message, "map_full_threads: 1");
}

TEST(benign_noise_keeps_a_capture_complete)
{
	struct outcome_input oi = base();
	struct diagnostics d;
	struct integrity in = {};
	struct outcome out;
	FILE *f = unit_memfile(
		"Attaching 5 probes...\n"
		"ERROR: Unknown error -1: couldn't set RLIMIT_MEMLOCK for bpftrace. If your "
		"program is not loading, you can try \"ulimit -l 8192\" to fix the problem\n");

	diagnostics__parse(f, &d);
	fclose(f);
	oi.diag = &d;
	oi.rows = 1;
	oi.collector.exit_code = 0;
	outcome__decide(&oi, &in, &out);
	CHECK_STR(out.state, "summary_written");
	CHECK(out.caveat_kind == NULL);
	CHECK_INT(in.status, INTEGRITY_COMPLETE);
}

TEST(rows_from_a_collector_never_seen_attached_are_partial)
{
	struct outcome_input oi = base();
	struct diagnostics d = {};
	struct integrity in = {};
	struct outcome out;

	oi.diag = &d;
	oi.rows = 1;
	oi.collector_ready = false;
	outcome__decide(&oi, &in, &out);
	CHECK_STR(out.caveat_kind, "offcpu_capture_partial");
	CHECK_U64(integrity__loss(&in, "attach_unconfirmed")->count, 1);
}

TEST(verifier_rejection_is_not_a_permission_problem)
{
	struct outcome_input oi = base();

	oi.collector_errno = EACCES;
	CHECK_STR(kind_for("", oi), "bpf_unsupported");
}

TEST(nothing_captured_is_never_called_complete)
{
	struct outcome_input oi = base();
	struct diagnostics d = {};
	struct integrity in = {};
	struct outcome out;

	oi.diag = &d;
	oi.collector.exit_code = 0;
	outcome__decide(&oi, &in, &out);
	CHECK_STR(out.state, "tool_failed");
	CHECK_INT(in.status, INTEGRITY_UNKNOWN);
}

int main(void)
{
	return unit_run();
}
