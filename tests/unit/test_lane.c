// SPDX-License-Identifier: GPL-2.0-only
/*
 * The seed's eight behaviours (../shared/seed/offcpu.zig), as tests of the C
 * lane: planning, wrapping, summarizing, and the caveats a harness relies on.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/external.h"
#include "lane/lane.h"
#include "unit.h"

static char *tmpdir(void)
{
	static char buf[PATH_MAX];
	const char *base = getenv("TMPDIR");

	snprintf(buf, sizeof(buf), "%s/lane.XXXXXX", base ? base : "/tmp");
	return mkdtemp(buf);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static const struct lane_evidence ran_ok = {
	.tool_available = true,
	.collector = {.started = true, .exited = true, .exit_code = 0},
	.collector_ready = true,
	.workload = {.started = true, .exited = true, .exit_code = 0},
};

TEST(plan_time_lane_files_and_default_tool)
{
	struct lane l;

	CHECK_INT(lane__plan(&l, "out/w", LANE_TIME, "offcputime-bpfcc"), 0);
	CHECK_STR(l.capture_path, "out/w/offcpu.time.txt");
	CHECK_STR(l.diagnostics_path, "out/w/offcpu.diagnostics.txt");
	CHECK_STR(l.summary_path, "out/w/offcpu.summary.json");
	CHECK_INT(l.collector, COLLECTOR_BCC);
	CHECK_INT(lane__plan(&l, "out/w", LANE_STACKS, "bpftrace"), 0);
	CHECK_STR(l.capture_path, "out/w/offcpu.stacks.txt");
	CHECK_INT(l.collector, COLLECTOR_BPFTRACE);
	/* --tool names a path: the collector is known by its basename. */
	CHECK_INT(collector_kind__from_tool("/opt/bcc/offcputime", LANE_STACKS), COLLECTOR_BCC);
	CHECK_INT(collector_kind__from_tool("/x/my-tool", LANE_TIME), COLLECTOR_BCC);
	CHECK_INT(collector_kind__from_tool("/x/my-tool", LANE_STACKS), COLLECTOR_BPFTRACE);
}

/* seed: "wraps direct binaries in the offcputime sidecar" */
TEST(bcc_collector_points_at_the_workload_pid_with_folded_output)
{
	struct lane l;
	char **argv;

	lane__plan(&l, "out/w", LANE_TIME, "offcputime-bpfcc");
	argv = external__argv(&l, "/usr/sbin/offcputime-bpfcc", 4242);
	CHECK(argv);
	CHECK_STR(argv[0], "/usr/sbin/offcputime-bpfcc");
	CHECK_STR(argv[1], "-f");
	CHECK_STR(argv[2], "-d");
	CHECK_STR(argv[3], "-p");
	CHECK_STR(argv[4], "4242");
	CHECK(argv[5] == NULL);
	external__argv_free(argv);
}

/*
 * seed: "wraps direct binaries in the bpftrace stacks tracer". The seed joined
 * argv into one string; here the workload never passes through bpftrace or a
 * shell, so the collector's argv holds only the pid and the capture path.
 */
TEST(bpftrace_collector_writes_capture_with_o_and_gets_pid)
{
	struct lane l;
	char **argv;

	lane__plan(&l, "out/w", LANE_STACKS, "bpftrace");
	argv = external__argv(&l, "/usr/bin/bpftrace", 77);
	CHECK(argv);
	CHECK_STR(argv[0], "/usr/bin/bpftrace");
	CHECK_STR(argv[1], "-o");
	CHECK_STR(argv[2], "out/w/offcpu.stacks.txt");
	CHECK_STR(argv[3], "-e");
	CHECK_CONTAINS(argv[4], "tracepoint:sched:sched_switch");
	CHECK_CONTAINS(argv[4], "@offcpu_ns[");
	CHECK_STR(argv[5], "77");
	CHECK(argv[6] == NULL);
	external__argv_free(argv);
}

/* seed: "summarizes captured blocked time" */
TEST(summarizes_captured_blocked_time)
{
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir(), *text;

	lane__plan(&l, dir, LANE_TIME, "offcputime-bpfcc");
	put(l.capture_path, "bench-worker;futex_wait;do_futex 4200\nbench-main;epoll_wait 1300\n");
	put(l.diagnostics_path, "");
	CHECK_INT(lane__summarize(&l, &ran_ok, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "summary_written");
	CHECK(res.outcome.caveat_kind == NULL);
	CHECK(access(l.summary_path, F_OK) == 0);
	CHECK_U64(profile__totals(res.profile)->all.off_ns, 5500000);
	lane_result__free(&res);
	/* The summary names the collector and the mode as the table and the lane do. */
	text = unit_slurp(l.summary_path);
	CHECK_CONTAINS(text, "\"collector\": \"bcc\"");
	CHECK_CONTAINS(text, "\"mode\": \"time\"");
	free(text);
}

/* seed: "retains rows and caveats collector loss" */
TEST(retains_rows_and_caveats_collector_loss)
{
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir(), *text;

	lane__plan(&l, dir, LANE_TIME, "offcputime-bpfcc");
	put(l.capture_path, "bench;futex_wait;do_futex 4200\n");
	put(l.diagnostics_path, "WARNING: 2 stack traces lost and could not be displayed.\n");
	CHECK_INT(lane__summarize(&l, &ran_ok, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "summary_written");
	CHECK_STR(res.outcome.caveat_kind, "offcpu_capture_partial");
	CHECK_CONTAINS(res.outcome.caveat_message, "2 stack trace(s) lost");
	text = unit_slurp(l.summary_path);
	CHECK_CONTAINS(text, "\"lost_stack_trace_count\": 2");
	CHECK_CONTAINS(text, "\"status\": \"partial\"");
	/* The workload's stderr is not evidence: nothing of it may appear. */
	CHECK(!strstr(text, "workload warning"));
	free(text);
	lane_result__free(&res);
}

/* seed: "marks missing collector diagnostics unknown" */
/* The seed's lost_stack_trace_count counts the native collector's lost stacks too. */
TEST(lost_stack_trace_count_counts_every_collectors_lost_stacks)
{
	struct integrity in = {.evidence = 1};

	CHECK_INT(integrity__add_loss(&in, "lost_stacks", 3, 0), 0);
	CHECK_INT(integrity__add_loss(&in, "user_stack_errors_EFAULT", 2, 0), 0);
	CHECK_INT(integrity__add_loss(&in, "inflight_at_stop", 7, 0), 0);
	CHECK_U64(integrity__lost_stack_traces(&in), 5);
	CHECK_INT(integrity__add_loss(&in, "lost_stack_traces", 4, 0), 0);
	CHECK_U64(integrity__lost_stack_traces(&in), 9);
	CHECK_U64(integrity__total_lost(&in), 16);
}

TEST(marks_missing_collector_diagnostics_unknown)
{
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir();

	lane__plan(&l, dir, LANE_TIME, "offcputime-bpfcc");
	put(l.capture_path, "bench;futex_wait;do_futex 4200\n");
	CHECK_INT(lane__summarize(&l, &ran_ok, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "summary_written");
	CHECK_STR(res.outcome.caveat_kind, "offcpu_capture_integrity_unknown");
	CHECK_INT(res.integrity.status, INTEGRITY_UNKNOWN);
	lane_result__free(&res);
}

/* seed: "summarizes captured blocked stacks" */
TEST(summarizes_captured_blocked_stacks)
{
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir();

	lane__plan(&l, dir, LANE_STACKS, "bpftrace");
	put(l.capture_path, "@offcpu_kernel[\n    finish_task_switch+1\n    schedule+108\n]: 42\n");
	put(l.diagnostics_path, "");
	CHECK_INT(lane__summarize(&l, &ran_ok, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "summary_written");
	CHECK(access(l.summary_path, F_OK) == 0);
	CHECK_INT(profile__nr_rows(res.profile), 1);
	lane_result__free(&res);
}

/* seed: "classifies permission failures from stderr" -- the collector's stderr. */
TEST(classifies_permission_failures_from_collector_stderr)
{
	struct lane_evidence ev = ran_ok;
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir();

	ev.collector.exit_code = 1;
	lane__plan(&l, dir, LANE_TIME, "offcputime-bpfcc");
	put(l.diagnostics_path, "could not open bpf map: Operation not permitted\n");
	CHECK_INT(lane__summarize(&l, &ev, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "tool_failed");
	CHECK_STR(res.outcome.caveat_kind, "permission_denied");
	lane_result__free(&res);
}

/* seed: "reports missing tools as caveats" */
TEST(reports_missing_tools_as_caveats)
{
	struct lane_evidence ev = ran_ok;
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir(), *text;

	ev.tool_available = false;
	lane__plan(&l, dir, LANE_TIME, "offcputime-bpfcc");
	CHECK_INT(lane__summarize(&l, &ev, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "tool_missing");
	CHECK_STR(res.outcome.caveat_kind, "tool_unavailable");
	text = unit_slurp(l.summary_path);
	CHECK_CONTAINS(text, "\"state\": \"tool_missing\"");
	free(text);
	lane_result__free(&res);
}

/* seed: an exit code of 0 with nothing captured counts as a failure. */
TEST(exit_zero_with_nothing_captured_is_a_failure)
{
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir();

	lane__plan(&l, dir, LANE_TIME, "offcputime-bpfcc");
	put(l.capture_path, "");
	put(l.diagnostics_path, "");
	CHECK_INT(lane__summarize(&l, &ran_ok, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "tool_failed");
	CHECK_STR(res.outcome.caveat_kind, "empty_capture");
	lane_result__free(&res);
}

TEST(summary_is_written_atomically_over_an_old_one)
{
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir(), *text;
	struct stat st;

	lane__plan(&l, dir, LANE_TIME, "offcputime-bpfcc");
	put(l.capture_path, "a;b 1\n");
	put(l.diagnostics_path, "");
	put(l.summary_path, "old");
	CHECK_INT(lane__summarize(&l, &ran_ok, NULL, NULL, 0, &res), 0);
	text = unit_slurp(l.summary_path);
	CHECK(text && text[0] == '{');
	CHECK_CONTAINS(text, "\"schema_version\": 1");
	free(text);
	/* No temporary file is left behind. */
	{
		char tmp[PATH_MAX + 32];

		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", l.summary_path, (int)getpid());
		CHECK(stat(tmp, &st) != 0);
	}
	lane_result__free(&res);
}

int main(void)
{
	return unit_run();
}

/*
 * The collector table: each row is found by its kind, a tool named like a
 * row's match picks that row, and what a lane's summary calls its collector
 * and how record runs it come from the row.
 */
TEST(collector_table_rows_answer_for_their_kind)
{
	static const struct {
		enum collector_kind kind;
		const char *tool, *name;
		bool builtin, writes_capture;
	} want[] = {
		{COLLECTOR_NATIVE, "native", "native", true, false},
		{COLLECTOR_BCC, "offcputime-bpfcc", "bcc", false, false},
		{COLLECTOR_BPFTRACE, "bpftrace", "bpftrace", false, true},
	};
	struct lane l;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct collector *c = collector__get(want[i].kind);

		CHECK_INT(c->kind, want[i].kind);
		CHECK_STR(c->name, want[i].name);
		CHECK_STR(collector_kind__name(want[i].kind), want[i].name);
		CHECK_INT(c->builtin, want[i].builtin);
		CHECK_INT(c->writes_capture, want[i].writes_capture);
		/* Built in: no argv; external: one, and a format of its own. */
		CHECK_INT(!c->argv, c->builtin);
		/* offcpu doctor checks each external collector. */
		CHECK_INT(!c->probe, c->builtin);
		CHECK_INT(lane__plan(&l, "out/w", c->builtin ? LANE_TIME : c->mode, want[i].tool),
			  0);
		CHECK_INT(l.collector, want[i].kind);
		CHECK_STR(l.collector_name, want[i].name);
	}
	/* The mode's default when nothing matches; a name holding two matches is bpftrace. */
	CHECK_INT(collector__get(COLLECTOR_BCC)->mode, LANE_TIME);
	CHECK_INT(collector__get(COLLECTOR_BPFTRACE)->mode, LANE_STACKS);
	CHECK_INT(collector_kind__from_tool("bpftrace-offcputime", LANE_TIME), COLLECTOR_BPFTRACE);
	CHECK_INT(collector_kind__from_tool("/usr/bin/native-ish", LANE_TIME), COLLECTOR_BCC);
	/* Built in: external__argv refuses it. */
	lane__plan(&l, "out/w", LANE_TIME, NULL);
	CHECK_STR(l.collector_name, "native");
	errno = 0;
	CHECK(!external__argv(&l, "/bin/true", 1));
	CHECK_INT(errno, EINVAL);
}

/* An external collector's tuning reaches its environment, overriding ours; others get ours. */
TEST(collector_env_overrides_ours)
{
	struct lane l;
	char **envp;
	int seen = 0;

	setenv("BPFTRACE_MAP_KEYS_MAX", "12", 1);
	lane__plan(&l, "out/w", LANE_STACKS, "bpftrace");
	envp = external__envp(&l);
	CHECK(envp);
	for (size_t i = 0; envp[i]; i++) {
		CHECK(strcmp(envp[i], "BPFTRACE_MAP_KEYS_MAX=12"));
		seen += !strcmp(envp[i], "BPFTRACE_MAP_KEYS_MAX=65536");
	}
	external__envp_free(envp);
	CHECK_INT(seen, 1);
	lane__plan(&l, "out/w", LANE_TIME, "offcputime-bpfcc");
	envp = external__envp(&l);
	CHECK(envp);
	seen = 0;
	for (size_t i = 0; envp[i]; i++)
		seen += !strcmp(envp[i], "BPFTRACE_MAP_KEYS_MAX=12");
	external__envp_free(envp);
	unsetenv("BPFTRACE_MAP_KEYS_MAX");
	CHECK_INT(seen, 1);
}

/* The built-in collector knows it was attached: its empty profile is an answer, zero. */
TEST(native_attached_empty_profile_is_no_off_cpu_time)
{
	struct lane_evidence ev = ran_ok;
	struct lane_result res = {};
	struct lane l;
	char *dir = tmpdir(), *text;

	CHECK(dir);
	lane__plan(&l, dir, LANE_TIME, "native");
	put(l.diagnostics_path, "");
	ev.native_attached = true;
	res.profile = profile__new();
	res.integrity.evidence = 1;
	CHECK(res.profile);
	CHECK_INT(lane__summarize(&l, &ev, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "summary_written");
	CHECK_STR(res.outcome.caveat_kind, "no_off_cpu_time");
	text = unit_slurp(l.summary_path);
	CHECK_CONTAINS(text, "\"no_off_cpu_time\"");
	CHECK_CONTAINS(text, "\"off_ns\": 0");
	free(text);
	lane_result__free(&res);

	/* Not attached, or attached but losing events: nothing is not an answer. */
	ev.native_attached = false;
	res = (struct lane_result){.profile = profile__new()};
	res.integrity.evidence = 1;
	CHECK_INT(lane__summarize(&l, &ev, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "tool_failed");
	lane_result__free(&res);
	ev.native_attached = true;
	res = (struct lane_result){.profile = profile__new()};
	res.integrity.evidence = 1;
	integrity__add_loss(&res.integrity, "map_full_agg", 2, 0);
	CHECK_INT(lane__summarize(&l, &ev, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "tool_failed");
	lane_result__free(&res);
	/* An interrupt ends the window; the collector watched all of it: zero stays the answer. */
	ev.interrupted = true;
	res = (struct lane_result){.profile = profile__new()};
	res.integrity.evidence = 1;
	CHECK_INT(lane__summarize(&l, &ev, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.caveat_kind, "no_off_cpu_time");
	lane_result__free(&res);
	/* A workload that never ran has no off-CPU time to speak of: it did not start. */
	ev.interrupted = false;
	ev.workload = (struct proc_end){.exec_errno = ENOENT};
	res = (struct lane_result){.profile = profile__new()};
	res.integrity.evidence = 1;
	CHECK_INT(lane__summarize(&l, &ev, NULL, NULL, 0, &res), 0);
	CHECK_STR(res.outcome.state, "tool_failed");
	CHECK_STR(res.outcome.caveat_kind, "workload_not_started");
	lane_result__free(&res);
}

/* lane__load: what every subcommand reads a directory through. */
static int load(const char *dir, struct lane_load *ld)
{
	struct profile *p = NULL;
	struct lane l;
	int err = lane__load(dir, &p, &l, ld);

	if (!err != !!p)
		err = -EFAULT;
	profile__free(p);
	return err;
}

#define PROFILE_HEAD "# offcpu profile v1\nframe 0 u main\nstack 0 0\nthread 0 1 1 a\n"

TEST(load_refuses_a_truncated_profile_with_file_and_line)
{
	struct lane_load ld;
	char path[512], want[640];
	char *dir = tmpdir();

	CHECK(dir);
	snprintf(path, sizeof(path), "%s/offcpu.time.txt", dir);
	put(path, "main 5\n");
	snprintf(path, sizeof(path), "%s/offcpu.profile.txt", dir);
	put(path, PROFILE_HEAD "row 0 0 S 1 5 0\nend 1 1 5 0\n");
	CHECK_INT(load(dir, &ld), 0);
	CHECK(ld.from_profile);
	put(path, PROFILE_HEAD "row 0 0 S 1 5 0\n");
	CHECK_INT(load(dir, &ld), -EBADMSG);
	snprintf(want, sizeof(want), "%s/offcpu.profile.txt:5: truncated", dir);
	CHECK(strstr(ld.error, want));
	put(path, "sleep;main 5\n");
	CHECK_INT(load(dir, &ld), -EINVAL);
	snprintf(want, sizeof(want), "%s/offcpu.profile.txt:1: not an offcpu profile", dir);
	CHECK(strstr(ld.error, want));
}

TEST(load_errors_name_the_file_and_the_line)
{
	struct lane_load ld;
	char path[512], want[640];
	char *dir = tmpdir();

	CHECK(dir);
	CHECK_INT(load(dir, &ld), -ENOENT);
	CHECK(strstr(ld.error, "holds no capture"));
	snprintf(path, sizeof(path), "%s/offcpu.time.txt", dir);
	put(path, "a;b 1\na;c 18446744073709551615\n");
	CHECK_INT(load(dir, &ld), -EOVERFLOW);
	snprintf(want, sizeof(want), "%s/offcpu.time.txt:2: ", dir);
	CHECK(strstr(ld.error, want));
	snprintf(path, sizeof(path), "%s/nope", dir);
	CHECK(load(path, &ld) == -ENOENT);
	CHECK(strstr(ld.error, path));
	snprintf(path, sizeof(path), "%s/offcpu.time.txt", dir);
	CHECK_INT(load(path, &ld), -ENOTDIR);
	CHECK(strstr(ld.error, path));
}

TEST(load_refuses_a_summary_schema_it_does_not_know)
{
	struct lane_load ld;
	char path[PATH_MAX + 32];
	char *dir = tmpdir();

	CHECK(dir);
	snprintf(path, sizeof(path), "%s/offcpu.time.txt", dir);
	put(path, "a;b 1\n");
	snprintf(path, sizeof(path), "%s/offcpu.summary.json", dir);
	put(path, "{\"schema_version\": 99, \"kind\": \"offcpu_time\", \"tool\": \"native\"}\n");
	CHECK_INT(load(dir, &ld), -EPROTO);
	CHECK(strstr(ld.error, path));
	CHECK(strstr(ld.error, "schema_version 99"));
	/* A summary that is not JSON is a warning: the capture is still read. */
	put(path, "{\"schema_version\": 1, \"kind\"");
	CHECK_INT(load(dir, &ld), 0);
	CHECK(strstr(ld.summary_problem, path));
}

TEST(load_warnings_name_the_file_line_and_reason)
{
	struct lane_load ld;
	struct profile *p = NULL;
	struct lane l;
	char path[512], want[640], *out = NULL;
	char *dir = tmpdir();
	size_t len = 0;
	FILE *f;

	CHECK(dir);
	snprintf(path, sizeof(path), "%s/offcpu.time.txt", dir);
	/* Negative and fractional counts are not weights: counted, never dropped silently. */
	put(path, "a;b 1\na;c -5\na;d 1.5\n");
	CHECK_INT(lane__load(dir, &p, &l, &ld), 0);
	CHECK_INT(ld.parse.malformed, 2);
	f = open_memstream(&out, &len);
	CHECK(f);
	lane_load__warn(&ld, "report", f);
	fclose(f);
	snprintf(want, sizeof(want), "offcpu report: %s:2: 2 malformed line(s) skipped", path);
	CHECK(strstr(out, want));
	free(out);
	profile__free(p);
}
