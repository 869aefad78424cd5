#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A top stack that merges threads names them (issue #11 item 5), and every
# stack line splits its time into blocked and run queue by the reason table's
# rule (item 6). tests/workloads/crowd runs four threads on one nanosleep
# stack (start_thread <- crowd <- nap) with 10, 20, 30 and 40% of its time;
# its truth file says each thread's pid, tid and blocked time.
. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$SCRATCH"' EXIT

if ! need_root; then
	skip merged_threads "needs root to load BPF programs"
	exit 0
fi
mount_tracefs
D=$SCRATCH/crowd
TRUTH=$SCRATCH/crowd.truth
if ! OFFCPU_TRUTH=$TRUTH "$OFFCPU_BIN" record -q -o "$D" -- "$W/crowd" >/dev/null 2>"$SCRATCH/rec.err"; then
	fail merged_threads_capture "record failed: $(head -n 2 "$SCRATCH/rec.err" | tr '\n' ' ')"
	exit 0
fi
ok merged_threads_capture

"$OFFCPU_BIN" report --json --top 100000 "$D" >"$SCRATCH/r.json"
"$OFFCPU_BIN" report --width 100 --color=never "$D" >"$SCRATCH/r.txt"
pid=$(jq -s -r '.[0].pid' "$TRUTH")
# The workload's threads, most blocked first, and their blocked time in all.
want_tids=$(jq -s -r 'sort_by(-.blocked_ns) | map(.tid) | join(" ")' "$TRUTH")
truth_blocked=$(jq -s -r 'map(.blocked_ns) | add' "$TRUTH")
nap=$(jq -c '[.top_stacks[] | select(any(.frames[]; .name == "nap"))] | max_by(.off_ns)' "$SCRATCH/r.json")

t=merged_threads_json_names_the_threads
got=$(jq -r '"\(.threads) \(.processes) \(.top_threads | map(.tid) | join(" "))"' <<<"$nap")
if [ "$got" = "4 1 $want_tids" ]; then
	ok $t
else
	fail $t "nap stack: threads, processes, top tids '$got', want '4 1 $want_tids'"
fi

# "crowd PID: 4 threads (TID 40%, TID 30%, +2)", the shares within 2 points.
t=merged_threads_text_names_the_threads
read -r t1 t2 _ <<<"$want_tids"
line=$(grep -E "crowd $pid: 4 threads \($t1 [0-9]+%, $t2 [0-9]+%, \+2\)" "$SCRATCH/r.txt")
p1=$(sed -E 's/.*\([0-9]+ ([0-9]+)%.*/\1/' <<<"$line")
p2=$(sed -E 's/.*, [0-9]+ ([0-9]+)%, \+2\).*/\1/' <<<"$line")
if [ -n "$line" ] && within "$p1" 40 0 2 && within "$p2" 30 0 2; then
	ok $t
else
	fail $t "no 'crowd $pid: 4 threads ($t1 40%, $t2 30%, +2)' line: $(grep -E 'threads \(' "$SCRATCH/r.txt" | head -n 2 | tr '\n' ' ')"
fi

# The main thread's join is one thread's stack: named as one.
t=merged_threads_one_thread_stays_one
if grep -qE "^ *[0-9]+ lock: join .* crowd $pid/$pid$" "$SCRATCH/r.txt"; then
	ok $t
else
	fail $t "no lock: join line naming crowd $pid/$pid: $(grep -E '^ *[0-9]+ lock' "$SCRATCH/r.txt" | head -n 1)"
fi

# The nap line: blocked + runq = off, blocked as the workload measured it.
t=merged_threads_stack_line_splits_blocked_and_runq
read -r off blocked runq <<<"$(jq -r '"\(.off_ns) \(.blocked_ns) \(.runq_ns)"' <<<"$nap")"
if [ $((blocked + runq)) -eq "$off" ] && within "$blocked" "$truth_blocked" 5 5000000 &&
	grep -qE '^ +reason +off +share +blocked +runq +count +threads$' "$SCRATCH/r.txt"; then
	ok $t
else
	fail $t "off $off blocked $blocked runq $runq, truth blocked $truth_blocked; header: $(grep -E '^ +reason' "$SCRATCH/r.txt")"
fi

# Summed by the lines' reasons, the lines' blocked time is the reason table's
# (their run-queue time its runqueue line), in report and in diff.
t=merged_threads_stack_lines_sum_to_the_reason_table
by_reason='[.[] | {r: .reason, b: .blocked, q: .runq}] |
	(group_by(.r) | map({r: .[0].r, n: (map(.b) | add)})) + [{r: "runqueue", n: (map(.q) | add)}] |
	group_by(.r) | map({r: .[0].r, n: (map(.n) | add)}) | .[] | select(.n > 0) | "\(.r) \(.n)"'
table=$(jq -r '.reasons[] | select(.ns > 0) | "\(.reason) \(.ns)"' "$SCRATCH/r.json" | sort)
lines=$(jq '[.top_stacks[] | {reason, blocked: .blocked_ns, runq: .runq_ns}]' "$SCRATCH/r.json" |
	jq -r "$by_reason" | sort)
dlines=$("$OFFCPU_BIN" diff --json "$D" "$D" | jq '[.stacks[] | {reason, blocked: .blocked.new, runq: .runq.new}]' |
	jq -r "$by_reason" | sort)
if [ -n "$table" ] && [ "$table" = "$lines" ] && [ "$table" = "$dlines" ]; then
	ok $t
else
	fail $t "table '$(tr '\n' , <<<"$table")', report lines '$(tr '\n' , <<<"$lines")', diff lines '$(tr '\n' , <<<"$dlines")'"
fi
