#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# How the workload ends, and what offcpu says about it: at -d its whole process
# group gets SIGTERM, then SIGKILL after --kill-after, like timeout(1); a second
# interrupt kills the whole group; an interrupt while offcpu starts gives 128+N.
# offcpu exits with the workload's status and the summary says what ended it.
. "$(dirname "$0")/lib.sh"
mount_tracefs
SCHEMA="$OFFCPU_ROOT/docs/summary.schema.json"
FAKE=$FAKES/fake_collector

valid() { "$OFFCPU_ROOT/tests/e2e/check_schema.py" "$SCHEMA" "$1" >/dev/null 2>&1; }
field() { jq -r "$2" "$1/offcpu.summary.json" 2>/dev/null; }
now_ms() { date +%s%3N; }

# gone PID: no such process, or only a zombie waiting for its (new) parent.
gone() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

# all_gone FILE: every pid listed in FILE is gone (a dying one gets 1 s).
all_gone() {
	local p i
	for p in $(cat "$1"); do
		for i in $(seq 50); do
			gone "$p" && break
			sleep 0.02
		done
		gone "$p" || return 1
	done
}

# wait_lines FILE N: up to 10 s for FILE to hold N lines.
wait_lines() {
	local i
	for i in $(seq 500); do
		[ "$(cat "$1" 2>/dev/null | wc -l)" -ge "$2" ] && return 0
		sleep 0.02
	done
	return 1
}

# ended D: the summary's account of the workload's end, for messages.
ended() { jq -c '.workload | [.ended_by, .exit_code, .signal_name]' "$1/offcpu.summary.json" 2>&1; }

if ! need_root; then
	skip workload_status "needs root to load BPF programs"
	exit 0
fi

t=deadline_terms_the_whole_group_and_exits_with_its_status
d=$SCRATCH/a
pids=$SCRATCH/a.pids
"$OFFCPU_BIN" record -q -o "$d" --json="$SCRATCH/a.json" -d 0.5s -- \
	sh -c "echo \$\$ >$pids; sleep 30 & echo \$! >>$pids; sleep 30"
rc=$?
if [ $rc -ne 143 ]; then
	fail $t "offcpu exited $rc, expected 143 (the workload's SIGTERM); summary: $(ended "$d")"
elif [ "$(field "$d" .workload.ended_by)/$(field "$d" .workload.signal)" != deadline/15 ]; then
	fail $t "summary says $(ended "$d"), expected the deadline and signal 15"
elif [ "$(jq -r '"\(.ended_by)/\(.signal)"' "$SCRATCH/a.json" 2>&1)" != deadline/15 ]; then
	fail $t "the --json record says $(cat "$SCRATCH/a.json"), expected ended_by deadline, signal 15"
elif [ "$(wc -l <"$pids")" -ne 2 ] || ! all_gone "$pids"; then
	fail $t "the workload or its child outlived offcpu: $(cat "$pids" | tr '\n' ' ')"
elif ! valid "$d/offcpu.summary.json"; then
	fail $t "summary does not match the schema"
else
	ok $t
fi

t=summarize_keeps_what_ended_the_workload
if "$OFFCPU_BIN" summarize "$SCRATCH/a" 2>/dev/null &&
	[ "$(field "$SCRATCH/a" .workload.ended_by)/$(field "$SCRATCH/a" .workload.signal)" = deadline/15 ]; then
	ok $t
else
	fail $t "after summarize the summary says $(ended "$SCRATCH/a")"
fi

t=deadline_kills_a_group_that_ignores_the_signal_after_the_grace
d=$SCRATCH/b
pids=$SCRATCH/b.pids
start=$(now_ms)
"$OFFCPU_BIN" record -q -o "$d" -d 0.3s --kill-after 0.3s -- \
	sh -c "trap '' TERM; echo \$\$ >$pids; sleep 30 & echo \$! >>$pids; sleep 30"
rc=$?
took=$(($(now_ms) - start))
if [ $rc -ne 137 ]; then
	fail $t "offcpu exited $rc, expected 137 (SIGKILL after the grace); summary: $(ended "$d")"
elif [ "$(field "$d" .workload.ended_by)/$(field "$d" .workload.signal_name)" != deadline/KILL ]; then
	fail $t "summary says $(ended "$d"), expected the deadline and KILL"
elif [ $took -lt 550 ]; then
	fail $t "SIGKILL came $took ms after the start: before the deadline plus the grace (600 ms)"
elif ! all_gone "$pids"; then
	fail $t "the workload or its child outlived offcpu: $(cat "$pids" | tr '\n' ' ')"
else
	ok $t
fi

t=deadline_workload_that_exits_on_the_signal_gives_its_own_status
d=$SCRATCH/c
"$OFFCPU_BIN" record -q -o "$d" -d 0.3s -- sh -c 'trap "exit 3" TERM; sleep 30 & wait'
rc=$?
if [ $rc -ne 3 ]; then
	fail $t "offcpu exited $rc, expected the workload's 3; summary: $(ended "$d")"
elif [ "$(field "$d" .workload.ended_by)/$(field "$d" .workload.exit_code)" != deadline/3 ]; then
	fail $t "summary says $(ended "$d"), expected the deadline and exit code 3"
else
	ok $t
fi

t=deadline_signal_and_grace_are_options
d=$SCRATCH/c2
"$OFFCPU_BIN" record -q -o "$d" -d 0.3s --deadline-signal INT --kill-after 2s -- sleep 30
rc=$?
if [ $rc -ne 130 ] || [ "$(field "$d" .workload.signal_name)" != INT ]; then
	fail $t "--deadline-signal INT: offcpu exited $rc, summary $(ended "$d")"
elif out=$("$OFFCPU_BIN" record --deadline-signal NOPE -- true 2>&1); [ $? -ne 2 ] ||
	[ "$(echo "$out" | wc -l)" -ne 1 ]; then
	fail $t "an unknown signal is not a one-line usage error: $out"
else
	ok $t
fi

t=deadline_with_pids_only_ends_the_capture
d=$SCRATCH/p
sleep 30 &
victim=$!
"$OFFCPU_BIN" record -q -o "$d" -p $victim -d 0.3s
rc=$?
if [ $rc -ne 0 ] || gone $victim; then
	fail $t "offcpu exited $rc (expected 0), the watched process is $(gone $victim && echo gone || echo alive)"
elif [ "$(field "$d" .workload.ended_by)" != null ] || ! valid "$d/offcpu.summary.json"; then
	fail $t "summary says $(ended "$d") for a watched pid"
else
	ok $t
fi
kill $victim 2>/dev/null
wait $victim 2>/dev/null

t=second_interrupt_kills_the_whole_group
d=$SCRATCH/d
pids=$SCRATCH/d.pids
"$OFFCPU_BIN" record -q -o "$d" -- \
	sh -c "trap '' INT; echo \$\$ >$pids; sleep 30 & echo \$! >>$pids; sleep 30" &
rec=$!
if ! wait_lines "$pids" 2; then
	kill -KILL $rec
	fail $t "the workload did not start"
else
	kill -INT $rec
	sleep 0.3
	kill -INT $rec
	wait $rec
	rc=$?
	if [ $rc -ne 137 ]; then
		fail $t "offcpu exited $rc, expected 137 (SIGKILL); summary: $(ended "$d")"
	elif [ "$(field "$d" .workload.ended_by)/$(field "$d" .workload.signal_name)" != interrupt/KILL ]; then
		fail $t "summary says $(ended "$d"), expected an interrupt and KILL"
	elif ! all_gone "$pids"; then
		fail $t "the workload or its child outlived offcpu: $(cat "$pids" | tr '\n' ' ')"
	elif [ "$(field "$d" .capture_integrity.losses.interrupted.count)" != 1 ] ||
		! valid "$d/offcpu.summary.json"; then
		fail $t "summary is not a valid interrupted capture"
	else
		ok $t
	fi
fi

t=terminal_ctrl_c_reaches_the_workload_group
d=$SCRATCH/tty
pids=$SCRATCH/tty.pids
# offcpu in a pseudo-terminal of its own; ^C typed once the workload runs.
out=$(python3 - "$OFFCPU_BIN" "$d" "$pids" <<'EOF' 2>&1
import os, sys, time
bin, d, pids = sys.argv[1:4]
pid, fd = os.forkpty()
if pid == 0:
    os.execv(bin, [bin, "record", "-q", "-o", d, "--", "sh", "-c",
                   "echo $$ >%s; sleep 30 & echo $! >>%s; wait" % (pids, pids)])
for _ in range(500):
    if os.path.exists(pids) and len(open(pids).read().split()) == 2:
        break
    time.sleep(0.02)
os.write(fd, b"\x03")
for _ in range(500):
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print(os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.02)
else:
    os.kill(pid, 9)
    print("hung")
EOF
)
if [ "$out" != 130 ]; then
	fail $t "offcpu under a terminal after ^C: $out, expected exit 130; summary: $(ended "$d")"
elif [ "$(field "$d" .workload.ended_by)/$(field "$d" .workload.signal_name)" != interrupt/INT ]; then
	fail $t "summary says $(ended "$d"), expected an interrupt and INT"
elif ! all_gone "$pids"; then
	fail $t "the workload or its child outlived offcpu: $(cat "$pids" | tr '\n' ' ')"
else
	ok $t
fi

t=workload_that_reads_the_terminal_gets_it
d=$SCRATCH/tty2
# Its process group is not the terminal's foreground: offcpu hands it over.
out=$(python3 - "$OFFCPU_BIN" "$d" <<'EOF' 2>&1
import os, sys, time
bin, d = sys.argv[1:3]
pid, fd = os.forkpty()
if pid == 0:
    os.execv(bin, [bin, "record", "-q", "-o", d, "--", "sh", "-c",
                   "read x; echo got $x; exit 4"])
os.write(fd, b"hello\n")
for _ in range(500):
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print(os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.02)
else:
    os.kill(pid, 9)
    print("hung")
EOF
)
if [ "$out" != 4 ]; then
	fail $t "offcpu under a terminal, the workload reading it: $out, expected its exit 4"
else
	ok $t
fi

t=ctrl_z_stops_offcpu_with_the_workload_and_fg_continues_both
d=$SCRATCH/tty3
# As a shell would: ^Z typed to the workload that holds the terminal, then fg.
out=$(python3 - "$OFFCPU_BIN" "$d" <<'EOF' 2>&1
import os, signal, sys, time
bin, d = sys.argv[1:3]
pid, fd = os.forkpty()
if pid == 0:
    os.execv(bin, [bin, "record", "-q", "-o", d, "--", "sh", "-c",
                   "read x; echo got $x; exit 4"])

def until(cond, what):
    for _ in range(500):
        if cond():
            return
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    print("timed out waiting for " + what)
    sys.exit(0)

def stopped():
    done, status = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
    return done and os.WIFSTOPPED(status)

until(lambda: os.tcgetpgrp(fd) not in (pid, 0, -1), "the workload to get the terminal")
os.write(fd, b"\x1a")
until(stopped, "offcpu to stop with the workload")
if os.tcgetpgrp(fd) != pid:
    print("offcpu stopped without taking the terminal back")
os.kill(pid, signal.SIGCONT)
until(lambda: os.tcgetpgrp(fd) not in (pid, 0, -1), "the workload to get the terminal again")
os.write(fd, b"hi\n")
res = []
until(lambda: res.append(os.waitpid(pid, os.WNOHANG)) or res[-1][0], "the end")
print(os.waitstatus_to_exitcode(res[-1][1]))
EOF
)
if [ "$out" != 4 ]; then
	fail $t "$out"
else
	ok $t
fi

t=interrupt_while_the_native_collector_loads_exits_130
d=$SCRATCH/e
mark=$SCRATCH/e.ran
"$OFFCPU_BIN" record -q -o "$d" -- touch "$mark" &
rec=$!
# The held workload is offcpu's child that has not exec'd yet: start-up.
me=$(readlink -f "$OFFCPU_BIN")
held=
for i in $(seq 1000); do
	for c in $(pgrep -P $rec); do
		[ "$(readlink /proc/$c/exe 2>/dev/null)" = "$me" ] && held=$c
	done
	[ -n "$held" ] && break
	sleep 0.002
done
kill -INT $rec
wait $rec
rc=$?
if [ -z "$held" ]; then
	fail $t "never saw offcpu's held workload (start-up too short to observe?)"
elif [ $rc -ne 130 ]; then
	fail $t "offcpu exited $rc, expected 130; summary: $(ended "$d")"
elif [ -e "$mark" ]; then
	fail $t "the workload ran after offcpu was interrupted"
elif [ "$(field "$d" .workload.ended_by)/$(field "$d" .workload.started)" != interrupt/false ] ||
	[ "$(field "$d" .caveat.kind)" != workload_not_started ] || ! valid "$d/offcpu.summary.json"; then
	fail $t "summary says $(ended "$d"), started $(field "$d" .workload.started), caveat $(field "$d" .caveat.kind)"
else
	ok $t
fi

t=interrupt_while_a_collector_attaches_exits_130_at_once
d=$SCRATCH/e2
mark=$SCRATCH/e2.ran
start=$(now_ms)
# noattach: the collector is never seen attached, so start-up lasts --ready-timeout.
OFFCPU_FAKE_MODE=noattach OFFCPU_FAKE_STDOUT=/dev/null OFFCPU_FAKE_STDERR=/dev/null \
	"$OFFCPU_BIN" record --tool "$FAKE" --ready-timeout 4s -q -o "$d" -- touch "$mark" &
rec=$!
sleep 0.3
kill -INT $rec
wait $rec
rc=$?
took=$(($(now_ms) - start))
if [ $rc -ne 130 ]; then
	fail $t "offcpu exited $rc, expected 130; summary: $(ended "$d")"
elif [ -e "$mark" ]; then
	fail $t "the workload ran after offcpu was interrupted"
elif [ $took -gt 3000 ]; then
	fail $t "took $took ms: the interrupt did not end the wait for the collector"
elif [ "$(field "$d" .workload.ended_by)/$(field "$d" .capture_integrity.losses.interrupted.count)" != interrupt/1 ] ||
	! valid "$d/offcpu.summary.json"; then
	fail $t "summary says $(ended "$d"), not an interrupted capture"
else
	ok $t
fi
