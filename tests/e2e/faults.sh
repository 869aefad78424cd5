#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Faults around record, with the external lane: a collector that loses stacks,
# crashes, hangs, fails at start, never attaches or flushes slowly; signals to
# offcpu; output that cannot be written. The collector here is
# tests/fakes/fake_collector: a FAKE that replays recorded BCC output, because
# BCC itself cannot run on this machine (no kernel headers). The workload is real.
. "$(dirname "$0")/lib.sh"
FAKE="$FAKES/fake_collector"
BCC="$DATA/bcc"
SCHEMA="$OFFCPU_ROOT/docs/summary.schema.json"

valid() { "$OFFCPU_ROOT/tests/e2e/check_schema.py" "$SCHEMA" "$1" >/dev/null 2>&1; }
field() { jq -r "$2" "$1/offcpu.summary.json" 2>/dev/null; }
now_ms() { date +%s%3N; }

t=fake_bcc_replay_keeps_rows_and_counts_lost_stacks
d=$SCRATCH/lost
OFFCPU_FAKE_STDOUT=$BCC/lost.folded OFFCPU_FAKE_STDERR=$BCC/lost.stderr \
	OFFCPU_FAKE_ARGV_LOG=$SCRATCH/lost.argv \
	"$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- sleep 0.1
rc=$?
pid=$(field "$d" .workload.pid)
if [ $rc -ne 0 ]; then
	fail $t "offcpu exited $rc"
elif [ "$(field "$d" .state)/$(field "$d" .caveat.kind)" != summary_written/offcpu_capture_partial ]; then
	fail $t "got $(field "$d" .state)/$(field "$d" .caveat.kind)"
elif [ "$(field "$d" .capture_integrity.lost_stack_trace_count)" != 3 ]; then
	fail $t "lost_stack_trace_count=$(field "$d" .capture_integrity.lost_stack_trace_count), expected 3"
elif [ "$(field "$d" .totals.rows)" -lt 3 ]; then
	fail $t "rows were not kept: $(field "$d" .totals.rows)"
elif [ "$(tr '\n' ' ' <"$SCRATCH/lost.argv")" != "-f -d -p $pid " ]; then
	fail $t "collector was asked: $(tr '\n' ' ' <"$SCRATCH/lost.argv")"
elif ! valid "$d/offcpu.summary.json"; then
	fail $t "summary does not match the schema"
else
	ok $t
fi

t=collector_crash_mid_run_keeps_the_workload
d=$SCRATCH/crash
OFFCPU_FAKE_MODE=crash OFFCPU_FAKE_DELAY_MS=100 OFFCPU_FAKE_STDOUT=$BCC/nanosleep.folded \
	"$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- sh -c "sleep 0.4; touch $d/done; exit 4"
rc=$?
if [ $rc -ne 4 ] || [ ! -e "$d/done" ]; then
	fail $t "workload did not finish normally (rc=$rc)"
elif [ "$(field "$d" .state)/$(field "$d" .caveat.kind)" != tool_failed/collector_killed ]; then
	fail $t "got $(field "$d" .state)/$(field "$d" .caveat.kind)"
else
	ok $t
fi

t=hung_collector_is_killed_after_a_bounded_wait
d=$SCRATCH/hang
start=$(now_ms)
OFFCPU_FAKE_MODE=hang OFFCPU_FAKE_STDOUT=$BCC/nanosleep.folded \
	"$OFFCPU_BIN" record --tool "$FAKE" --stop-timeout 0.3 -o "$d" -q -- true
rc=$?
took=$(($(now_ms) - start))
if [ $rc -ne 0 ]; then
	fail $t "offcpu exited $rc"
elif [ $took -gt 5000 ]; then
	fail $t "took $took ms; the wait is not bounded"
elif [ "$(field "$d" .caveat.kind)" != collector_timeout ]; then
	fail $t "got $(field "$d" .state)/$(field "$d" .caveat.kind)"
elif pgrep -f "$FAKE" >/dev/null; then
	fail $t "the hung collector is still running"
else
	ok $t
fi

t=collector_failing_at_start_is_classified_and_workload_runs
d=$SCRATCH/early
printf 'libbpf: failed to load object: -1 (Operation not permitted)\n' >"$SCRATCH/eperm.txt"
OFFCPU_FAKE_MODE=exit-early OFFCPU_FAKE_STDERR=$SCRATCH/eperm.txt \
	"$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- sh -c "touch $d/ran"
rc=$?
if [ $rc -ne 0 ] || [ ! -e "$d/ran" ]; then
	fail $t "the workload did not run (rc=$rc)"
elif [ "$(field "$d" .state)/$(field "$d" .caveat.kind)" != tool_failed/permission_denied ]; then
	fail $t "got $(field "$d" .state)/$(field "$d" .caveat.kind)"
else
	ok $t
fi

t=collector_never_seen_attached_makes_the_capture_partial
d=$SCRATCH/noattach
OFFCPU_FAKE_MODE=noattach OFFCPU_FAKE_STDOUT=$BCC/nanosleep.folded OFFCPU_FAKE_STDERR=/dev/null \
	"$OFFCPU_BIN" record --tool "$FAKE" --ready-timeout 0.2 -o "$d" -q -- true
if [ "$(field "$d" .capture_integrity.status)" != partial ] ||
	[ "$(field "$d" '.capture_integrity.losses.attach_unconfirmed.count')" != 1 ]; then
	fail $t "integrity: $(jq -c .capture_integrity "$d/offcpu.summary.json")"
else
	ok $t
fi

t=slow_flush_within_the_stop_timeout_is_complete
d=$SCRATCH/slow
OFFCPU_FAKE_MODE=slowflush OFFCPU_FAKE_DELAY_MS=300 OFFCPU_FAKE_STDOUT=$BCC/nanosleep.folded \
	OFFCPU_FAKE_STDERR=/dev/null "$OFFCPU_BIN" record --tool "$FAKE" --stop-timeout 3 -o "$d" -q -- true
if [ "$(field "$d" .state)/$(field "$d" .capture_integrity.status)" != summary_written/complete ]; then
	fail $t "got $(field "$d" .state)/$(field "$d" .capture_integrity.status)"
else
	ok $t
fi

t=sigterm_to_offcpu_reaches_the_workload_and_says_interrupted
d=$SCRATCH/term
OFFCPU_FAKE_STDOUT=$BCC/nanosleep.folded OFFCPU_FAKE_STDERR=/dev/null \
	"$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- sleep 10 &
rec=$!
sleep 0.5
kill -TERM $rec
wait $rec
rc=$?
if [ $rc -ne 143 ]; then
	fail $t "offcpu exited $rc, expected 143 (the workload's SIGTERM)"
elif [ "$(field "$d" '.capture_integrity.losses.interrupted.count')" != 1 ] ||
	[ "$(field "$d" .capture_integrity.interrupted)/$(field "$d" .capture_integrity.status)" != true/complete ] ||
	[ "$(field "$d" .workload.signal_name)" != TERM ]; then
	fail $t "summary: $(jq -c '[.capture_integrity.status, .workload.signal_name]' "$d/offcpu.summary.json")"
elif ! valid "$d/offcpu.summary.json"; then
	fail $t "summary does not match the schema"
else
	ok $t
fi

t=second_interrupt_aborts_at_once_with_a_valid_summary
d=$SCRATCH/abort
start=$(now_ms)
OFFCPU_FAKE_STDOUT=$BCC/nanosleep.folded OFFCPU_FAKE_STDERR=/dev/null \
	"$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- sh -c 'trap "" INT; sleep 5' &
rec=$!
sleep 0.4
kill -INT $rec
sleep 0.2
kill -INT $rec
wait $rec
took=$(($(now_ms) - start))
if [ $took -gt 3000 ]; then
	fail $t "took $took ms after two interrupts"
elif ! valid "$d/offcpu.summary.json" || [ "$(field "$d" .capture_integrity.interrupted)" != true ]; then
	fail $t "no valid summary that says interrupted"
else
	ok $t
fi

t=unwritable_output_fails_before_the_workload_runs
"$OFFCPU_BIN" record --tool "$FAKE" -o /proc/offcpu-no/such -q -- sh -c "touch $SCRATCH/should-not" 2>"$SCRATCH/unw.err"
rc=$?
if [ $rc -ne 125 ]; then
	fail $t "offcpu exited $rc, expected 125"
elif [ -e "$SCRATCH/should-not" ]; then
	fail $t "the workload ran although nothing could be written"
elif [ "$(wc -l <"$SCRATCH/unw.err")" -ne 1 ]; then
	fail $t "the error is not one line: $(cat "$SCRATCH/unw.err")"
else
	ok $t
fi

t=full_disk_never_leaves_a_truncated_summary
if ! need_root; then
	skip $t "needs root to mount a small tmpfs"
else
	m=$SCRATCH/full
	mkdir -p "$m" && mount -t tmpfs -o size=64k tmpfs "$m"
	mkdir "$m/d"
	printf '{"kind": "offcpu_time", "old": true}\n' >"$m/d/offcpu.summary.json"
	head -c 70000 /dev/zero >"$m/filler" 2>/dev/null
	OFFCPU_FAKE_STDOUT=$BCC/system.folded OFFCPU_FAKE_STDERR=/dev/null \
		"$OFFCPU_BIN" record --tool "$FAKE" -o "$m/d" -q -- true 2>"$SCRATCH/full.err"
	rc=$?
	if ! jq -e .old "$m/d/offcpu.summary.json" >/dev/null 2>&1; then
		fail $t "the old summary was replaced or truncated: $(head -c 80 "$m/d/offcpu.summary.json")"
	elif [ $rc -ne 0 ]; then
		fail $t "offcpu exited $rc; the workload's status (0) must be kept"
	elif ! grep -q "No space left" "$SCRATCH/full.err"; then
		fail $t "no clear error: $(cat "$SCRATCH/full.err")"
	else
		ok $t
	fi
	umount "$m"
fi

rm -rf "$SCRATCH"
