#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Attach mode (-p) as a user meets it: the window's edges are not losses, -p
# ends with its targets (children forked later included), threads asleep
# through the whole window are in the capture with their stacks (a hung
# process is the case), coverage above 100% is shown as such, and the live
# status line is drawn on a terminal only.
. "$(dirname "$0")/lib.sh"
SCHEMA="$OFFCPU_ROOT/docs/summary.schema.json"

valid() { "$OFFCPU_ROOT/tests/e2e/check_schema.py" "$SCHEMA" "$1" >/dev/null 2>&1; }
now_ms() { date +%s%3N; }

# wait_tracing FILE: until record's stderr says it is tracing (10 s at most).
wait_tracing() {
	for _ in $(seq 200); do
		grep -q "tracing" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

if ! need_root; then
	for t in edge_only_attach_capture_is_complete_with_edges_counted \
		p_ends_when_its_target_exits p_follows_children_forked_later_until_they_exit \
		p_capture_has_idle_threads_with_their_whole_window \
		hung_process_capture_is_complete_with_its_stack \
		signal_frame_is_named_between_handler_and_interrupted_code; do
		skip $t "needs root for the native collector"
	done
else
	# A thread that sleeps 300 ms at a time: a wait in progress at start and
	# one at stop, nothing lost. That is a complete capture.
	t=edge_only_attach_capture_is_complete_with_edges_counted
	d=$SCRATCH/edges
	"$W/nanosleep" 20 &
	spid=$!
	"$OFFCPU_BIN" record -p $spid -d 1s -o "$d" 2>"$SCRATCH/edges.err"
	rc=$?
	"$OFFCPU_BIN" report "$d" >"$SCRATCH/edges.report" 2>"$SCRATCH/edges.report.err"
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null || true
	s=$d/offcpu.summary.json
	if [ $rc -ne 0 ]; then
		fail $t "record exited $rc: $(head -3 "$SCRATCH/edges.err")"
	elif [ "$(json "$s" .capture_integrity.status)/$(json "$s" .caveat)" != complete/null ]; then
		fail $t "got $(json "$s" .capture_integrity.status), caveat $(json "$s" .caveat.kind): $(json "$s" .capture_integrity.message)"
	elif [ "$(json "$s" .capture_integrity.edges.count)" -lt 1 ] ||
		[ "$(json "$s" .capture_integrity.losses.inflight_at_start.count)" -lt 1 ] ||
		[ "$(json "$s" .capture_integrity.losses.inflight_at_start.class)" != edge ] ||
		[ "$(json "$s" .capture_integrity.lost.count)" != 0 ]; then
		fail $t "edges not counted apart: $(jq -c '.capture_integrity | [.edges, .lost]' "$s")"
	elif grep -q '!!' "$SCRATCH/edges.report" || ! grep -Eq '^edges: [0-9]+ waits? at start' "$SCRATCH/edges.report"; then
		fail $t "report: $(head -3 "$SCRATCH/edges.report")"
	elif grep -qi partial "$SCRATCH/edges.report.err" "$SCRATCH/edges.err"; then
		fail $t "called partial: $(grep -hi partial "$SCRATCH/edges.report.err" "$SCRATCH/edges.err")"
	elif ! valid "$s"; then
		fail $t "summary does not match the schema"
	else
		ok $t
	fi

	# perf record -p stops when its targets are gone; so does offcpu.
	t=p_ends_when_its_target_exits
	d=$SCRATCH/ends
	sleep 2 &
	spid=$!
	start=$(now_ms)
	"$OFFCPU_BIN" record -p $spid -d 10s -o "$d" 2>"$SCRATCH/ends.err"
	rc=$?
	took=$(($(now_ms) - start))
	wait $spid
	s=$d/offcpu.summary.json
	if [ $rc -ne 0 ]; then
		fail $t "record exited $rc: $(head -3 "$SCRATCH/ends.err")"
	elif [ $took -gt 6000 ]; then
		fail $t "a 2 s target with -d 10s took $took ms"
	elif [ "$(json "$s" .workload.wall_ns)" -gt 4000000000 ]; then
		fail $t "window of $(json "$s" .workload.wall_ns) ns"
	elif ! grep -q "every traced process has exited" "$SCRATCH/ends.err" "$d/offcpu.diagnostics.txt"; then
		fail $t "no word of why it stopped: $(cat "$SCRATCH/ends.err")"
	elif [ "$(json "$s" .capture_integrity.status)" != complete ]; then
		fail $t "capture $(json "$s" .capture_integrity.status): $(json "$s" .capture_integrity.message)"
	else
		ok $t
	fi

	# -p follows what its targets fork once tracing began: the capture lasts
	# until the last of them is gone, not the parent.
	t=p_follows_children_forked_later_until_they_exit
	d=$SCRATCH/kids
	sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; sleep 2 & exit 0' sh "$SCRATCH/kids.go" &
	spid=$!
	start=$(now_ms)
	"$OFFCPU_BIN" record -p $spid -d 10s -o "$d" 2>"$SCRATCH/kids.err" &
	rec=$!
	wait_tracing "$SCRATCH/kids.err"
	go=$(now_ms)
	touch "$SCRATCH/kids.go"
	wait $rec
	rc=$?
	end=$(now_ms)
	s=$d/offcpu.summary.json
	if [ $rc -ne 0 ]; then
		fail $t "record exited $rc: $(head -3 "$SCRATCH/kids.err")"
	elif [ $((end - go)) -lt 1800 ] || [ $((end - start)) -gt 8000 ]; then
		fail $t "ended $((end - go)) ms after the fork (the child sleeps 2 s), $((end - start)) ms in all"
	elif ! jq -e '[.threads[] | select(.comm == "sleep" and .off_ns > 1500000000)] | length == 1' "$s" >/dev/null; then
		fail $t "the child is not in the capture: $(jq -c '[.threads[] | [.comm, .off_ns]]' "$s")"
	else
		ok $t
	fi
fi

if need_root; then
	# start_hung NAME [ticker]: tests/workloads/hung in the background, once
	# its threads are in their waits; its pid in $hpid.
	start_hung() {
		"$W/hung" ${2:+"$2"} >"$SCRATCH/$1.hung" &
		hpid=$!
		for _ in $(seq 100); do
			grep -q ready "$SCRATCH/$1.hung" && return 0
			sleep 0.05
		done
		return 1
	}
	# window_share S TID: the thread's off-CPU time over the window, in percent.
	window_share() {
		jq -r --argjson tid "$2" '(.threads[] | select(.tid == $tid) | .off_ns) * 100 / .workload.wall_ns | floor' "$1"
	}

	# Threads that sleep through the whole window never pass a tracepoint: they
	# are in the capture all the same, with their whole window and the stack
	# they sleep in, and the report counts them. A thread woken during the
	# window has the stack it slept in at start, not a placeholder.
	t=p_capture_has_idle_threads_with_their_whole_window
	d=$SCRATCH/idle
	if ! start_hung idle ticker; then
		fail $t "the workload did not start: $(cat "$SCRATCH/idle.hung")"
	else
		"$OFFCPU_BIN" record -p $hpid -d 1s -o "$d" 2>"$SCRATCH/idle.err"
		rc=$?
		"$OFFCPU_BIN" report "$d" >"$SCRATCH/idle.report" 2>&1
		idler=$(awk '$1 == "thread" && $5 == "idler" { print $4 }' "$d/offcpu.profile.txt")
		s=$d/offcpu.summary.json
		if [ $rc -ne 0 ]; then
			fail $t "record exited $rc: $(head -3 "$SCRATCH/idle.err")"
		elif [ -z "$idler" ]; then
			fail $t "no thread idler in the capture: $(jq -c '[.threads[] | [.comm, .off_ns]]' "$s")"
		elif [ "$(window_share "$s" "$idler")" -lt 97 ] || [ "$(window_share "$s" "$idler")" -gt 101 ]; then
			fail $t "idler off the CPU $(window_share "$s" "$idler")% of the window"
		elif ! "$OFFCPU_BIN" export -f pprof -o - "$d" >/dev/null 2>&1 ||
			! grep -q 'idle_wait' "$d/offcpu.profile.txt" || ! grep -q 'hung_read' "$d/offcpu.profile.txt"; then
			fail $t "the sleepers' stacks are missing: $(grep -c frame "$d/offcpu.profile.txt") frames"
		elif grep -q 'since before start' "$d/offcpu.profile.txt"; then
			fail $t "a placeholder where the snapshot has the stack: $(grep 'since before start' "$d/offcpu.profile.txt")"
		elif ! grep -Eq '3 threads in 1 process, 2 never ran' "$SCRATCH/idle.report"; then
			fail $t "report: $(sed -n 1,4p "$SCRATCH/idle.report")"
		elif [ "$(json "$s" .capture_integrity.losses.threads_never_ran.count)" != 2 ]; then
			fail $t "summary: $(jq -c .capture_integrity.losses.threads_never_ran "$s")"
		else
			ok $t
		fi
		kill $hpid
		wait $hpid 2>/dev/null
	fi

	# "My process hangs, where?": every thread asleep for the whole window. A
	# complete capture, each thread's whole window, the stack it hangs in.
	t=hung_process_capture_is_complete_with_its_stack
	d=$SCRATCH/hung
	if ! start_hung hung; then
		fail $t "the workload did not start: $(cat "$SCRATCH/hung.hung")"
	else
		"$OFFCPU_BIN" record -p $hpid -d 1s -o "$d" 2>"$SCRATCH/hung.err"
		rc=$?
		s=$d/offcpu.summary.json
		top=$(jq -r '.top_stacks[] | [.frames[].name] | join(";")' "$s" | grep hung_read | head -1)
		if [ $rc -ne 0 ]; then
			fail $t "record exited $rc: $(head -3 "$SCRATCH/hung.err")"
		elif [ "$(json "$s" .capture_integrity.status)/$(json "$s" .caveat)" != complete/null ]; then
			fail $t "got $(json "$s" .capture_integrity.status), caveat $(json "$s" .caveat.kind): $(json "$s" .caveat.message)"
		elif [ "$(window_share "$s" $hpid)" -lt 97 ] || [ "$(jq '.threads | length' "$s")" != 2 ]; then
			fail $t "threads: $(jq -c '[.threads[] | [.comm, .off_ns]]' "$s"), window $(json "$s" .workload.wall_ns)"
		elif ! echo "$top" | grep -Eq '(^|;)main;hung_read;.*read;.*pipe_read'; then
			fail $t "the main thread's stack: $top"
		elif [ "$(json "$s" .user_stacks.complete_share)" != 1 ] 2>/dev/null; then
			fail $t "user stacks: $(jq -c .user_stacks "$s")"
		else
			ok $t
		fi
		kill $hpid
		wait $hpid 2>/dev/null
	fi

	# A wait inside a signal handler: the trampoline is a named frame, and
	# what it interrupted (under it) decides no reason rule.
	t=signal_frame_is_named_between_handler_and_interrupted_code
	d=$SCRATCH/sig
	if ! start_hung sig signal; then
		fail $t "the workload did not start: $(cat "$SCRATCH/sig.hung")"
	else
		"$OFFCPU_BIN" record -p $hpid -d 0.5s -o "$d" 2>"$SCRATCH/sig.err"
		rc=$?
		s=$d/offcpu.summary.json
		top=$(jq -r '.top_stacks[] | [.frames[].name] | join(";")' "$s" 2>/dev/null | grep hung_read | head -1)
		if [ $rc -ne 0 ]; then
			fail $t "record exited $rc: $(head -3 "$SCRATCH/sig.err")"
		elif ! echo "$top" | grep -Eq '(^|;)main;raise_signal;.*;\[signal handler called\];on_signal;hung_read;'; then
			fail $t "the main thread's stack: $top"
		else
			ok $t
		fi
		kill $hpid
		wait $hpid 2>/dev/null
	fi
fi

# Rows that claim more off-CPU time than the kernel saw (coverage 1.05):
# the report shows 105% and a negative unaccounted time, and says what it
# means, instead of "cover 100%, unacct 0".
t=coverage_above_100_percent_is_shown_and_explained
d=$SCRATCH/over
mkdir -p "$d"
cat >"$d/offcpu.profile.txt" <<'PROFILE'
# offcpu profile v1
runq_known 1
frame 0 k do_nanosleep
stack 0 0
thread 0 42 42 worker
time 0 4000000000 400000000 0
row 0 0 S 7 3780000000 0
end 1 7 3780000000 0
PROFILE
"$OFFCPU_BIN" report --width 80 "$d" >"$SCRATCH/over.txt" 2>"$SCRATCH/over.err"
rc=$?
"$OFFCPU_BIN" report --json "$d" >"$SCRATCH/over.json" 2>/dev/null
if [ $rc -ne 0 ]; then
	fail $t "report exited $rc: $(cat "$SCRATCH/over.err")"
elif ! grep -Eq '^42 worker .* -180ms +105% ' "$SCRATCH/over.txt"; then
	fail $t "budget row: $(grep worker "$SCRATCH/over.txt" | head -1)"
elif ! grep -q '^overcount: cover > 100% or unacct < 0: the rows claim 180ms more' "$SCRATCH/over.txt"; then
	fail $t "no word of the overcount"
elif [ "$(jq -r '.budget.processes[0].coverage' "$SCRATCH/over.json")" != 1.0500 ] &&
	[ "$(jq -r '.budget.processes[0].coverage' "$SCRATCH/over.json")" != 1.05 ]; then
	fail $t "JSON coverage $(jq -r '.budget.processes[0].coverage' "$SCRATCH/over.json")"
else
	ok $t
fi

# The live status line: on a terminal (script(1) gives offcpu a pty), drawn a
# few times a second with the collector's counters and erased before the
# summary line; never without a terminal, never with -q; --progress forces it.
# status_check FILE MIN_DRAWS: the status line was drawn MIN_DRAWS times or
# more, showed switches, and was erased before offcpu's last line.
status_check() {
	python3 - "$1" "$2" <<'PY'
import re, sys
out = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
draws = re.findall(r"\roffcpu: [0-9.]+s, [0-9.]+s left: (\d+(?:\.\d+)?[kMG]?) switches, \S+ threads, \S+ stacks, \S+ lost\x1b\[K", out)
if len(draws) < int(sys.argv[2]):
    sys.exit("drawn %d times: %r" % (len(draws), out[:300]))
if draws[-1] == "0":
    sys.exit("no switches counted: %r" % out[-300:])
end = out.rfind("\r\x1b[K")
if end < 0 or "left:" in out[end:] or not re.match(r"\r\x1b\[Koffcpu: .* -> ", out[end:]):
    sys.exit("not erased before the summary line: %r" % out[-300:])
PY
}

if ! need_root; then
	for t in status_line_is_drawn_and_erased_on_a_terminal status_line_is_absent_without_a_terminal_or_with_q \
		status_line_progress_forces_it; do
		skip $t "needs root for the native collector"
	done
elif ! command -v script >/dev/null; then
	for t in status_line_is_drawn_and_erased_on_a_terminal status_line_is_absent_without_a_terminal_or_with_q \
		status_line_progress_forces_it; do
		skip $t "no script(1) (util-linux) to give offcpu a terminal"
	done
else
	# Busy enough to count switches in any window: a shell forking sleeps.
	sh -c 'while :; do sleep 0.05; done' &
	spid=$!

	t=status_line_is_drawn_and_erased_on_a_terminal
	d=$SCRATCH/status_tty
	script -q -e -c "'$OFFCPU_BIN' record -p $spid -d 1.5s -o '$d'" /dev/null </dev/null >"$SCRATCH/status_tty.out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		fail $t "record under script exited $rc: $(tr '\r' '\n' <"$SCRATCH/status_tty.out" | tail -3)"
	elif why=$(status_check "$SCRATCH/status_tty.out" 3 2>&1); then
		ok $t
	else
		fail $t "$why"
	fi

	t=status_line_is_absent_without_a_terminal_or_with_q
	"$OFFCPU_BIN" record -p $spid -d 0.6s -o "$SCRATCH/status_pipe" 2>"$SCRATCH/status_pipe.err" | cat
	script -q -e -c "'$OFFCPU_BIN' record -q -p $spid -d 0.6s -o '$SCRATCH/status_q'" /dev/null </dev/null >"$SCRATCH/status_q.out" 2>&1
	if grep -q "left:" "$SCRATCH/status_pipe.err" || grep -q $'\e' "$SCRATCH/status_pipe.err"; then
		fail $t "drawn on a file: $(tr '\r' '\n' <"$SCRATCH/status_pipe.err" | head -3)"
	elif ! grep -q "capture complete" "$SCRATCH/status_pipe.err"; then
		fail $t "no summary line without a terminal: $(head -3 "$SCRATCH/status_pipe.err")"
	elif grep -q "left:" "$SCRATCH/status_q.out"; then
		fail $t "drawn with -q: $(tr '\r' '\n' <"$SCRATCH/status_q.out" | head -3)"
	else
		ok $t
	fi

	t=status_line_progress_forces_it
	"$OFFCPU_BIN" record --progress -p $spid -d 1s -o "$SCRATCH/status_forced" 2>"$SCRATCH/status_forced.err"
	if why=$(status_check "$SCRATCH/status_forced.err" 2 2>&1); then
		ok $t
	else
		fail $t "$why"
	fi
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null || true
fi
