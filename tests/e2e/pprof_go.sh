#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `offcpu export` on a fixed capture directory, each format read back by its real
# consumer: `go tool pprof` (pprof), the published speedscope schema
# (speedscope), jq (chrome-trace). No kernel collector is needed.
#
# The fixture, tests/data/exports/lane/offcpu.time.txt (BCC folded, us):
#   5 lines, 20.3 ms in all; every stack ends in __schedule; main is on all but
#   the preempted 0.3 ms (20 ms); futex_wait_queue 12 ms; pipe_read 6 ms (two
#   lines of one stack); do_nanosleep 2 ms; comm worker 12.3 ms, server 8 ms.
# offcpu.timeline.txt beside it holds 3 intervals of tids 301 and 302.
. "$(dirname "$0")/lib.sh"

LANE="$SCRATCH/lane"
cp -r "$DATA/exports/lane" "$LANE"

# top_col FILE NAME COLUMN: a column of the `-top` row of function NAME (1 flat, 4 cum).
top_col() { awk -v n="$2" -v c="$3" '$6 == n { print $c; exit }' "$1"; }

t=export_pprof_go_tool_pprof
if ! command -v go >/dev/null 2>&1; then
	skip $t "go is not installed (Debian: golang-go)"
elif ! "$OFFCPU_BIN" export --format pprof "$LANE" -o "$SCRATCH/f.pb.gz" 2>"$SCRATCH/err"; then
	fail $t "export failed: $(head -n 1 "$SCRATCH/err")"
elif ! go tool pprof -top -unit=ms "$SCRATCH/f.pb.gz" >"$SCRATCH/top" 2>&1; then
	fail $t "go tool pprof could not read it: $(head -n 3 "$SCRATCH/top" | tr '\n' ' ')"
else
	why=
	grep -q "100% of 20.30ms total" "$SCRATCH/top" || why="total is not 20.30ms"
	[ "$(top_col "$SCRATCH/top" __schedule 1)" = 20.30ms ] || why="__schedule flat is not 20.30ms (leaf order?)"
	[ "$(top_col "$SCRATCH/top" main 4)" = 20ms ] || why="main cum is not 20ms"
	[ "$(top_col "$SCRATCH/top" futex_wait_queue 4)" = 12ms ] || why="futex_wait_queue cum is not 12ms"
	[ "$(top_col "$SCRATCH/top" pipe_read 4)" = 6ms ] || why="pipe_read cum is not 6ms"
	[ "$(top_col "$SCRATCH/top" do_nanosleep 4)" = 2ms ] || why="do_nanosleep cum is not 2ms"
	go tool pprof -top -sample_index=events "$SCRATCH/f.pb.gz" 2>&1 | grep -q "100% of 5 total" ||
		why="events total is not 5"
	go tool pprof -tags "$SCRATCH/f.pb.gz" 2>&1 | grep -q "12.3ms (60.59%): worker" ||
		why="comm tag of worker is not 12.3ms"
	if [ -n "$why" ]; then
		fail $t "$why: $(head -n 12 "$SCRATCH/top" | tr '\n' '|')"
	else
		ok $t
	fi
fi

t=export_pprof_default_output_is_gzip
rm -f "$LANE/offcpu.pb.gz"
if ! "$OFFCPU_BIN" export --format pprof "$LANE" 2>"$SCRATCH/err"; then
	fail $t "export failed: $(head -n 1 "$SCRATCH/err")"
elif ! gzip -t "$LANE/offcpu.pb.gz" 2>/dev/null; then
	fail $t "DIR/offcpu.pb.gz is missing or not gzip"
elif ls "$LANE"/offcpu.pb.gz.tmp* >/dev/null 2>&1; then
	fail $t "a temporary file was left behind"
else
	ok $t
fi

t=export_speedscope_schema_and_weights
if ! "$OFFCPU_BIN" export -f speedscope "$LANE" -o "$SCRATCH/s.json" 2>"$SCRATCH/err"; then
	fail $t "export failed: $(head -n 1 "$SCRATCH/err")"
elif [ "$(jq '[.profiles[].weights[]] | add' "$SCRATCH/s.json")" != 20300000 ]; then
	fail $t "weights do not add up to 20300000 ns"
elif [ "$(jq -r '.profiles[0].name' "$SCRATCH/s.json")" != worker ]; then
	fail $t "the heaviest thread (worker) is not first"
elif ! python3 -c 'import jsonschema' 2>/dev/null; then
	skip $t "python3-jsonschema is not installed"
elif ! python3 -c 'import json, sys, jsonschema
jsonschema.Draft6Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))' \
	"$DATA/exports/speedscope-file-format-schema.json" "$SCRATCH/s.json" 2>"$SCRATCH/err"; then
	fail $t "not valid against the speedscope schema: $(tail -n 1 "$SCRATCH/err")"
else
	ok $t
fi

t=export_chrome_trace_timeline
if ! "$OFFCPU_BIN" export -f chrome-trace "$LANE" -o "$SCRATCH/c.json" 2>"$SCRATCH/err"; then
	fail $t "export failed: $(head -n 1 "$SCRATCH/err")"
elif [ "$(jq '[.traceEvents[] | select(.ph == "X" and .cat == "offcpu")] | length' "$SCRATCH/c.json")" != 3 ]; then
	fail $t "not 3 X events"
elif [ "$(jq -r '[.traceEvents[] | select(.ph == "X" and .cat == "offcpu") | .name] | join(",")' "$SCRATCH/c.json")" != \
	"pipe,pipe,lock" ]; then
	fail $t "event names: $(jq -c '[.traceEvents[] | select(.ph == "X" and .cat == "offcpu") | .name]' "$SCRATCH/c.json")"
elif [ "$(jq -r '.displayTimeUnit' "$SCRATCH/c.json")" != ns ]; then
	fail $t "displayTimeUnit is not ns"
elif [ "$(jq '.otherData.overlaps_clipped + .otherData.overlaps_dropped' "$SCRATCH/c.json")" != 0 ]; then
	fail $t "overlaps reported in a timeline without any"
else
	ok $t
fi

t=export_chrome_trace_without_timeline_says_why
rm -f "$LANE/offcpu.timeline.txt"
"$OFFCPU_BIN" export -f chrome-trace "$LANE" -o "$SCRATCH/c2.json" 2>"$SCRATCH/err"
rc=$?
if [ $rc -ne 3 ]; then
	fail $t "exit status $rc, want 3 (an input cannot be used)"
elif ! grep -q "offcpu.timeline.txt" "$SCRATCH/err"; then
	fail $t "message does not name offcpu.timeline.txt: $(head -n 1 "$SCRATCH/err")"
elif [ -e "$SCRATCH/c2.json" ]; then
	fail $t "an output file was written anyway"
else
	ok $t
fi

t=export_usage_errors
"$OFFCPU_BIN" export -f svg "$LANE" 2>/dev/null
rc1=$?
"$OFFCPU_BIN" export "$LANE" 2>/dev/null
rc2=$?
"$OFFCPU_BIN" export -f pprof "$SCRATCH/no-such-dir" -o "$SCRATCH/x.pb.gz" 2>"$SCRATCH/err"
rc3=$?
if [ $rc1 -ne 2 ] || [ $rc2 -ne 2 ]; then
	fail $t "usage errors exit $rc1 and $rc2, want 2"
elif [ $rc3 -ne 3 ] || [ -e "$SCRATCH/x.pb.gz" ]; then
	fail $t "a missing directory exits $rc3 (want 3) or leaves a file"
else
	ok $t
fi

rm -rf "$SCRATCH"
