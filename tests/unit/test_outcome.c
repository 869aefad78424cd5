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

TEST(interrupted_capture_with_rows_is_partial)
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
	CHECK_STR(out.caveat_kind, "offcpu_capture_partial");
	CHECK_INT(in.status, INTEGRITY_PARTIAL);
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
