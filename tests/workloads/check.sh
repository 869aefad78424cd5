#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Checks that the workloads do what their truth says and that the truth is sane:
# each one runs, exits 0, writes one well-formed line per reporting thread, and
# blocks about as long as it was designed to. Also checks the fake collector's
# modes. Speaks the tests/run.sh protocol (ok / FAIL / skip lines).
#
#   tests/workloads/check.sh BUILD_DIR
#
# The bounds are loose on purpose (a busy 2-CPU VM must pass): they catch a
# workload that stops blocking, blocks twice as long, or reports nonsense.
set -u
build=${1:-${OFFCPU_BUILD:-build}}
W=$build/tests/workloads
F=$build/tests/fakes/fake_collector
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wlcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }

# run NAME ARGS...: runs the workload with a fresh truth file ($tmp/NAME.jsonl).
run() {
	local name=$1
	shift
	rm -f "$tmp/$name.jsonl"
	if ! OFFCPU_TRUTH=$tmp/$name.jsonl "$W/$name" "$@" >"$tmp/$name.out" 2>&1; then
		fail "workload_$name" "exited $?: $(head -c 300 "$tmp/$name.out")"
		return 1
	fi
}

# field NAME COMM FIELD: the value from the last run of NAME (sum over threads).
field() {
	jq -s --arg c "$2" --arg f "$3" '[.[] | select(.comm == $c) | .[$f]] | add // "none"' \
		"$tmp/$1.jsonl"
}

# expect NAME COMM FIELD LO HI: LO <= value <= HI (values in ns or counts).
expect() {
	local v
	v=$(field "$1" "$2" "$3")
	if [ "$v" = '"none"' ]; then
		fail "truth_$1_$2_$3" "no thread $2 in the truth of $1"
	elif awk -v v="$v" -v lo="$4" -v hi="$5" 'BEGIN { exit !(v >= lo && v <= hi) }'; then
		ok "truth_$1_$2_$3"
	else
		fail "truth_$1_$2_$3" "$3 = $v, expected $4..$5"
	fi
}

# wellformed NAME LINES: LINES lines, all fields present, the arithmetic adds up.
wellformed() {
	local n bad
	n=$(wc -l <"$tmp/$1.jsonl")
	bad=$(jq -c 'select((.workload|type) != "string" or (.comm|type) != "string"
		or (.pid|type) != "number" or (.tid|type) != "number"
		or (.expect | IN("S","D","R","mixed") | not)
		or .offcpu_ns != .wall_ns - .oncpu_ns or .blocked_ns != .offcpu_ns - .runq_ns
		or .wall_ns <= 0 or .oncpu_ns < 0 or .runq_ns < 0 or (.waits|type) != "number")' \
		"$tmp/$1.jsonl" 2>&1 | head -n 1)
	if [ "$n" -ne "$2" ]; then
		fail "truth_$1_lines" "$n lines, expected $2"
	elif [ -n "$bad" ]; then
		fail "truth_$1_lines" "bad line: $bad"
	else
		ok "truth_$1_lines"
	fi
}

ms=1000000
if run nanosleep; then
	wellformed nanosleep 1
	expect nanosleep sleeper blocked_ns $((270 * ms)) $((360 * ms))
	expect nanosleep sleeper waits 10 10
	expect nanosleep sleeper oncpu_ns 0 $((30 * ms))
fi
if run crowd; then
	wellformed crowd 4
	for n in 1 2 3 4; do
		expect crowd crowd-$n blocked_ns $((n * 90 * ms)) $((n * 120 * ms))
		expect crowd crowd-$n waits 10 10
	done
fi
if run mutex; then
	wellformed mutex 2
	expect mutex holder blocked_ns $((240 * ms)) $((320 * ms))
	expect mutex waiter blocked_ns $((225 * ms)) $((320 * ms))
fi
# --hold-ms sets the hold whatever SCALE (5 x 20 ms here, not 5 x 150 ms); --wait-pipe
# changes only how the main thread, which reports no truth, waits.
if run mutex --hold-ms 20 --wait-pipe 3; then
	v=$(field mutex waiter blocked_ns)
	if awk -v v="$v" -v lo=$((90 * ms)) -v hi=$((140 * ms)) 'BEGIN { exit !(v >= lo && v <= hi) }'; then
		ok truth_mutex_hold_ms_wait_pipe_waiter_blocked_ns
	else
		fail truth_mutex_hold_ms_wait_pipe_waiter_blocked_ns "blocked_ns = $v, expected 90..140 ms"
	fi
fi
if run condvar; then
	wellformed condvar 2
	expect condvar signaler blocked_ns $((190 * ms)) $((260 * ms))
	expect condvar waiter blocked_ns $((180 * ms)) $((260 * ms))
	expect condvar waiter waits 5 5
fi
if run pipe; then
	wellformed pipe 2
	expect pipe writer blocked_ns $((230 * ms)) $((310 * ms))
	expect pipe reader blocked_ns $((215 * ms)) $((310 * ms))
	expect pipe reader waits 8 8
fi
if run fsync; then
	wellformed fsync 1
	# How long the disk takes is not ours to know; that it waited at all is.
	expect fsync syncer blocked_ns $((1 * ms)) $((5000 * ms))
fi
if run preempt; then
	wellformed preempt 2
	# Half the 300 ms each when the two have the CPU to themselves, more when the
	# machine is busy; never none.
	expect preempt spin-a runq_ns $((90 * ms)) $((300 * ms))
	expect preempt spin-b runq_ns $((90 * ms)) $((300 * ms))
	# Host steal time counts as blocked (schedstat leaves it out of oncpu), and a
	# busy VM steals tens of ms now and then: hence 50 ms, not 0.
	expect preempt spin-a blocked_ns -$((25 * ms)) $((50 * ms))
fi
if run forkexec; then
	wellformed forkexec 3
	expect forkexec grandchild blocked_ns $((140 * ms)) $((220 * ms))
	expect forkexec child blocked_ns $((140 * ms)) $((240 * ms))
	expect forkexec parent blocked_ns $((140 * ms)) $((260 * ms))
	if [ "$(jq -s '[.[].pid] | unique | length' "$tmp/forkexec.jsonl")" -eq 3 ]; then
		ok forkexec_three_processes
	else
		fail forkexec_three_processes "the three lines do not come from three processes"
	fi
fi
if run earlyexit; then
	wellformed earlyexit 5
	expect earlyexit early-1 blocked_ns $((15 * ms)) $((45 * ms))
	expect earlyexit early-4 blocked_ns $((75 * ms)) $((120 * ms))
	expect earlyexit early-main blocked_ns $((265 * ms)) $((360 * ms))
fi
if run cpuhog 0.2; then
	wellformed cpuhog 1
	expect cpuhog cpuhog oncpu_ns $((20 * ms)) $((210 * ms))
	expect cpuhog cpuhog blocked_ns -$((10 * ms)) $((50 * ms))
fi
if run stress 8 0.5; then
	wellformed stress 8
	expect stress stress-0 waits 10 1000000000
	expect stress stress-3 waits 10 1000000000
fi
if run demo 0.3; then
	wellformed demo 8
	expect demo logger waits 2 100
fi

# Exit statuses that a profiler running the command must pass on.
"$W/exitcode" 7 >/dev/null 2>&1
rc=$?
[ $rc -eq 7 ] && ok exitcode_code || fail exitcode_code "exited $rc, expected 7"
# The subshell, not this shell, then reports the "Segmentation fault", into /dev/null.
("$W/exitcode" --signal SEGV >/dev/null 2>&1; exit $?) 2>/dev/null
rc=$?
[ $rc -eq 139 ] && ok exitcode_signal || fail exitcode_signal "exited $rc, expected 139"

bad=
for w in "$W"/*; do
	"$w" --help >/dev/null 2>&1 || bad="$bad $(basename "$w")"
	"$w" --no-such-option >/dev/null 2>&1 && bad="$bad $(basename "$w")(bad-arg)"
done
[ -z "$bad" ] && ok workloads_help || fail workloads_help "failing:$bad"

# The fake collector: attached the way a readiness check sees it, replays on SIGINT.
attached() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'anon_inode:\[perf_event\]'; }
fake_bcc=$root/tests/data/bcc
OFFCPU_FAKE_ARGV_LOG=$tmp/argv OFFCPU_FAKE_STDOUT=$fake_bcc/mutex.folded \
	OFFCPU_FAKE_STDERR=$fake_bcc/lost.stderr "$F" -f -p 1 >"$tmp/fo" 2>"$tmp/fe" &
pid=$!
for _ in $(seq 50); do attached $pid && break; sleep 0.02; done
state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
if attached $pid && [ "$state" = S ]; then ok fake_attached; else fail fake_attached "no perf_event fd or state '$state'"; fi
kill -INT $pid
wait $pid
rc=$?
if [ $rc -eq 0 ] && cmp -s "$tmp/fo" "$fake_bcc/mutex.folded" && cmp -s "$tmp/fe" "$fake_bcc/lost.stderr" &&
	[ "$(tr '\n' ' ' <"$tmp/argv")" = "-f -p 1 " ]; then
	ok fake_replay
else
	fail fake_replay "exit $rc, or stdout/stderr/argv log differ from what was given"
fi
OFFCPU_FAKE_MODE=noattach "$F" &
pid=$!
sleep 0.2
if attached $pid; then fail fake_noattach "has a perf_event fd"; else ok fake_noattach; fi
kill -INT $pid
wait $pid
(OFFCPU_FAKE_MODE=crash OFFCPU_FAKE_DELAY_MS=50 "$F"; exit $?) 2>/dev/null
rc=$?
[ $rc -eq 139 ] && ok fake_crash || fail fake_crash "exited $rc, expected 139 (SIGSEGV)"
OFFCPU_FAKE_MODE=exit-early OFFCPU_FAKE_STDERR=$fake_bcc/lost.stderr "$F" 2>"$tmp/fe"
rc=$?
if [ $rc -eq 1 ] && cmp -s "$tmp/fe" "$fake_bcc/lost.stderr"; then ok fake_exit_early; else fail fake_exit_early "exited $rc"; fi
OFFCPU_FAKE_MODE=hang "$F" &
pid=$!
sleep 0.2
kill -INT $pid
kill -TERM $pid
sleep 0.2
if kill -0 $pid 2>/dev/null; then ok fake_hang; else fail fake_hang "ended on SIGINT/SIGTERM"; fi
kill -KILL $pid
wait $pid 2>/dev/null
exit 0
