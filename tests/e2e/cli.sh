#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The command line: usage errors are one clear line and exit 2, help and
# version work, summarize rewrites a lane and points at bad input by file:line.
. "$(dirname "$0")/lib.sh"

usage_error() { # NAME ARGS...: exit 2, exactly one line on stderr, nothing run
	local t=$1 out rc
	shift
	out=$("$OFFCPU_BIN" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 2 ]; then
		fail "$t" "exit $rc, expected 2 (args: $*)"
	elif [ "$(echo "$out" | wc -l)" -ne 1 ] || [ -z "$out" ]; then
		fail "$t" "expected one line on stderr, got: $out"
	else
		ok "$t"
	fi
}

usage_error cli_no_command
usage_error cli_unknown_command frobnicate
usage_error cli_record_without_a_command record -o "$SCRATCH/x"
usage_error cli_record_bad_mode record --mode fast -- true
usage_error cli_record_bad_pid record -p 12x
usage_error cli_record_two_targets record -a -p 1 -d 1
usage_error cli_record_target_and_command record -p 1 -- true
usage_error cli_record_bad_duration record -d soon -a
usage_error cli_record_min_over_max record -m 10 -M 5 -- true
usage_error cli_summarize_without_dir summarize
usage_error cli_record_mode_that_the_tool_cannot_write record --tool bpftrace --mode time -- true
usage_error cli_record_bad_timeline_threshold record --timeline=soon -- true
usage_error cli_record_timeline_with_an_external_tool record --timeline --tool offcputime-bpfcc -- true

t=cli_external_tool_picks_its_own_format
OFFCPU_FAKE_STDOUT=/dev/null OFFCPU_FAKE_STDERR=/dev/null \
	"$OFFCPU_BIN" record --tool /x/bpftrace -o "$SCRATCH/fmt" -q -- true
if [ -e "$SCRATCH/fmt/offcpu.stacks.txt" ] && [ "$(jq -r .mode "$SCRATCH/fmt/offcpu.summary.json")" = stacks ]; then
	ok $t
else
	fail $t "--tool bpftrace did not make a stacks lane: $(ls "$SCRATCH/fmt")"
fi

t=cli_help_and_version
if "$OFFCPU_BIN" --help | grep -q "record" && "$OFFCPU_BIN" record --help | grep -q -- "--tool" &&
	"$OFFCPU_BIN" --version | grep -qE '^offcpu [0-9]+\.[0-9]+\.[0-9]+$'; then
	ok $t
else
	fail $t "help or version output is wrong"
fi

t=cli_summarize_rewrites_a_lane_and_keeps_the_workload
d=$SCRATCH/lane
mkdir -p "$d"
OFFCPU_FAKE_STDOUT=$DATA/bcc/nanosleep.folded OFFCPU_FAKE_STDERR=/dev/null \
	"$OFFCPU_BIN" record --tool "$FAKES/fake_collector" -o "$d" -q -- sh -c 'exit 6'
printf 'extra;frame 1000\n' >>"$d/offcpu.time.txt"
before=$(jq .totals.off_ns "$d/offcpu.summary.json")
"$OFFCPU_BIN" summarize "$d" 2>/dev/null
after=$(jq .totals.off_ns "$d/offcpu.summary.json")
if [ $((after - before)) -ne 1000000 ]; then
	fail $t "off_ns went from $before to $after, expected +1 ms"
elif [ "$(jq .workload.exit_code "$d/offcpu.summary.json")" != 6 ] ||
	[ "$(jq -r .tool "$d/offcpu.summary.json")" != "$FAKES/fake_collector" ]; then
	fail $t "the workload or tool was not kept: $(jq -c '[.tool, .workload.exit_code]' "$d/offcpu.summary.json")"
else
	ok $t
fi

t=cli_summarize_points_at_the_malformed_line
printf 'good;stack 10\nthis line has no value\nalso;good 5\n' >"$d/offcpu.time.txt"
err=$("$OFFCPU_BIN" summarize "$d" 2>&1 >/dev/null)
if echo "$err" | grep -q "offcpu.time.txt:2: 1 malformed"; then
	[ "$(jq .parse.first_malformed_line "$d/offcpu.summary.json")" = 2 ] && ok $t ||
		fail $t "summary parse: $(jq -c .parse "$d/offcpu.summary.json")"
else
	fail $t "stderr: $err"
fi

t=cli_summarize_missing_dir_is_an_error
"$OFFCPU_BIN" summarize "$SCRATCH/nope" 2>/dev/null
rc=$?
[ $rc -eq 3 ] && ok $t || fail $t "exit $rc, want 3 (an input cannot be used)"
rm -rf "$SCRATCH"
