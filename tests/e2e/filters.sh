#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Host-wide captures: the report groups processes by name, and --pid, --comm
# and --top select the same threads in report, flamegraph and export.
#
# Two known workloads run through a 1 s host-wide capture (with a timeline):
# shell loops that start copies of /bin/sleep named zzfiltA (50 ms sleeps)
# and zzfiltB (30 ms sleeps), so each name is many short processes, each one
# off the CPU in one nanosleep.
. "$(dirname "$0")/lib.sh"
mount_tracefs

if ! need_root; then
	skip filters_host_wide "needs root to load BPF programs"
	exit 0
fi

BIN_DIR=$SCRATCH/bin
D=$SCRATCH/host
mkdir -p "$BIN_DIR"
cp /bin/sleep "$BIN_DIR/zzfiltA"
cp /bin/sleep "$BIN_DIR/zzfiltB"
(while :; do "$BIN_DIR/zzfiltA" 0.05; done) &
loop_a=$!
(while :; do "$BIN_DIR/zzfiltB" 0.03; done) &
loop_b=$!
sleep 0.2
"$OFFCPU_BIN" record -a -d 1s --timeline -q -o "$D" >"$SCRATCH/rec.out" 2>&1
rc=$?
kill "$loop_a" "$loop_b" 2>/dev/null
wait "$loop_a" "$loop_b" 2>/dev/null

if [ $rc -ne 0 ] || [ ! -s "$D/offcpu.profile.txt" ]; then
	fail filters_host_wide "record -a failed ($rc): $(tail -n 1 "$SCRATCH/rec.out")"
	exit 0
fi
"$OFFCPU_BIN" report --json "$D" >"$SCRATCH/all.json" 2>/dev/null

# group NAME FIELD: a field of the name's group in the unfiltered report.
group() { jq -r --arg n "$1" ".budget.groups[] | select(.comm == \$n) | .$2" "$SCRATCH/all.json"; }

t=filters_report_groups_processes_by_name
n_a=$(group zzfiltA processes)
if [ -z "$n_a" ] || [ "$n_a" -lt 5 ]; then
	fail $t "zzfiltA is not one group of many processes in --json: '${n_a}'"
elif ! "$OFFCPU_BIN" report --width 120 --top 100 "$D" >"$SCRATCH/all.txt" 2>/dev/null; then
	fail $t "report failed"
elif ! grep -Eq "^zzfilt[AB] \([0-9]+ processes, [0-9]+ threads\)" "$SCRATCH/all.txt"; then
	fail $t "no 'zzfiltA (N processes, N threads)' line: $(grep -n zzfilt "$SCRATCH/all.txt" | head -3 | tr '\n' '|')"
elif [ "$(jq '[.budget.groups[].off_ns] | . == (sort | reverse)' "$SCRATCH/all.json")" != true ]; then
	fail $t "groups are not sorted by off-CPU time"
else
	ok $t
fi

t=filters_report_comm_keeps_only_that_name_with_its_totals
want_off=$(group zzfiltA off_ns)
want_count=$(group zzfiltA count)
want_threads=$(group zzfiltA threads)
if ! "$OFFCPU_BIN" report --comm zzfiltA --json "$D" >"$SCRATCH/a.json" 2>"$SCRATCH/err"; then
	fail $t "report --comm failed: $(head -n 1 "$SCRATCH/err")"
elif [ "$(jq '[.budget.processes[].comm] | unique' -c "$SCRATCH/a.json")" != '["zzfiltA"]' ]; then
	# (a thread may still carry its shell's name from before its exec: the process is named by its last)
	fail $t "other processes: $(jq -c '[.budget.processes[].comm] | unique' "$SCRATCH/a.json")"
elif [ "$(json "$SCRATCH/a.json" .totals.off_ns)" != "$want_off" ] ||
	[ "$(json "$SCRATCH/a.json" .totals.count)" != "$want_count" ] ||
	[ "$(json "$SCRATCH/a.json" .totals.threads)" != "$want_threads" ]; then
	fail $t "totals $(jq -c '.totals' "$SCRATCH/a.json") vs the group's off_ns $want_off count $want_count threads $want_threads"
elif [ "$(json "$SCRATCH/a.json" '.filter.comms[0]')" != zzfiltA ] ||
	! "$OFFCPU_BIN" report --comm zzfiltA "$D" 2>/dev/null | grep -q "^filtered: --comm zzfiltA: $want_threads of "; then
	fail $t "the report does not say what was filtered"
else
	ok $t
fi

t=filters_flamegraph_pid_draws_only_that_process
pid_b=$(group zzfiltB 'pids[0]')
if [ -z "$pid_b" ]; then
	fail $t "no zzfiltB process in the capture"
elif ! "$OFFCPU_BIN" flamegraph --threads --pid "$pid_b" -o "$SCRATCH/b.svg" "$D" 2>"$SCRATCH/err"; then
	fail $t "flamegraph --pid failed: $(tail -n 1 "$SCRATCH/err")"
else
	threads=$(grep -oE 'zzfilt[AB]-[0-9]+' "$SCRATCH/b.svg" | sort -u)
	if [ "$threads" != "zzfiltB-$pid_b" ]; then
		fail $t "zzfilt thread frames in the SVG: $(echo "$threads" | head -5 | tr '\n' ' ')"
	elif grep -Eq '(^|[^a-z])(bash|sh)-[0-9]+' "$SCRATCH/b.svg"; then
		fail $t "the shell loops' threads are in the SVG"
	else
		ok $t
	fi
fi

t=filters_export_pprof_comm_totals_match_the_report
if ! command -v go >/dev/null 2>&1; then
	skip $t "go is not installed (Debian: golang-go)"
elif ! "$OFFCPU_BIN" export -f pprof --comm zzfiltA -o "$SCRATCH/a.pb.gz" "$D" 2>"$SCRATCH/err"; then
	fail $t "export failed: $(tail -n 1 "$SCRATCH/err")"
else
	got=$(go tool pprof -top -unit=ns "$SCRATCH/a.pb.gz" 2>/dev/null |
		sed -n 's/.* of \([0-9]*\)ns total.*/\1/p')
	comms=$(go tool pprof -tags "$SCRATCH/a.pb.gz" 2>/dev/null |
		awk '/^ *comm:/ { on = 1; next } /^ *[a-z_]+:/ { on = 0 } on && NF { print $NF }')
	if [ "$got" != "$want_off" ]; then
		fail $t "pprof total ${got:-none} ns, report's zzfiltA $want_off ns"
	elif [ "$comms" != zzfiltA ]; then
		fail $t "comm tags: $(echo "$comms" | tr '\n' ' ')"
	else
		ok $t
	fi
fi

t=filters_export_top_keeps_the_largest_names
top1=$(jq -r '.budget.groups[0].comm' "$SCRATCH/all.json")
want=$(jq -r '.budget.groups[0].pids[]' "$SCRATCH/all.json" | sort -n | tr '\n' ' ')
if [ "$(jq '.budget.groups | length' "$SCRATCH/all.json")" -lt 2 ]; then
	fail $t "the capture has fewer than two process names"
elif ! "$OFFCPU_BIN" export -f speedscope --top 1 -o "$SCRATCH/top.json" "$D" 2>"$SCRATCH/err"; then
	fail $t "export --top failed: $(tail -n 1 "$SCRATCH/err")"
else
	got=$(jq -r '.profiles[].name' "$SCRATCH/top.json" | sed -n 's/.* pid \([0-9]*\) .*/\1/p' |
		sort -nu | tr '\n' ' ')
	if [ "$got" != "$want" ]; then
		fail $t "processes exported: $got; the top name '$top1' has $want"
	else
		ok $t
	fi
fi

t=filters_chrome_trace_pid_keeps_that_process_intervals
if ! "$OFFCPU_BIN" export -f chrome-trace --pid "$pid_b" -o "$SCRATCH/b.trace.json" "$D" 2>"$SCRATCH/err"; then
	fail $t "export failed: $(tail -n 1 "$SCRATCH/err")"
else
	# Off-CPU intervals (cat offcpu); the wakeup slices of their wakers
	# (interrupt tracks, waker threads) stay with the waits they woke.
	pids=$(jq -c '[.traceEvents[] | select(.ph == "X" and .cat == "offcpu") | .pid] | unique' "$SCRATCH/b.trace.json")
	if [ "$pids" != "[$pid_b]" ]; then
		fail $t "X events of pids $pids, want [$pid_b]"
	else
		ok $t
	fi
fi

t=filters_matching_nothing_writes_nothing_and_exits_3
why=
for cmd in "report" "flamegraph -o $SCRATCH/none.svg" "export -f pprof -o $SCRATCH/none.pb.gz"; do
	# shellcheck disable=SC2086 # the command's words
	"$OFFCPU_BIN" $cmd --comm zzfilt-none "$D" >"$SCRATCH/none.out" 2>"$SCRATCH/none.err"
	rc=$?
	[ $rc -eq 3 ] || why="$why ${cmd%% *} exited $rc;"
	# Warnings about the capture may come first; the reason is the last line.
	tail -n 1 "$SCRATCH/none.err" | grep -q "no thread of the capture matches --comm zzfilt-none" ||
		why="$why ${cmd%% *} said '$(head -n 2 "$SCRATCH/none.err" | tr '\n' '|')';"
	[ -s "$SCRATCH/none.out" ] && why="$why ${cmd%% *} printed something;"
done
ls "$SCRATCH"/none.svg "$SCRATCH"/none.pb.gz >/dev/null 2>&1 && why="$why a file was written;"
if [ -n "$why" ]; then
	fail $t "$why"
else
	ok $t
fi
