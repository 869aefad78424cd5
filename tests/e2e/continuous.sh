#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Continuous mode (record --every, docs/continuous.md) with the real collector:
# periods back to back around a workload whose threads block across the
# boundaries (tests/workloads/hung ticker: two threads asleep for good, one
# sleeping 20 ms at a time), each period against the kernel's own accounting
# (schedstat, in the report's budget) and all of them against the window;
# SIGTERM mid-period; retention; a bad config line; push to the loopback
# receiver of tests/tools/pyroscope_rx.py (no live Pyroscope server here)
# failing, then recovering, and SIGHUP reading the config again.
. "$(dirname "$0")/lib.sh"
mount_tracefs

if ! need_root; then
	skip continuous "needs root to load the native collector"
	exit 0
fi

hung_pid=
cleanup() {
	[ -n "$hung_pid" ] && kill "$hung_pid" 2>/dev/null && wait "$hung_pid" 2>/dev/null
	rx_stop
}
trap cleanup EXIT

# The workload, up and in place ("ready") before any record starts.
"$W/hung" ticker >"$SCRATCH/hung.out" &
hung_pid=$!
for _ in $(seq 100); do
	grep -q ready "$SCRATCH/hung.out" 2>/dev/null && break
	sleep 0.05
done

# period_check BASE: one line per period directory (sorted by name): name,
# the workload's wall, on-CPU, off-CPU (ns) and the capture's state; exits 1
# when a period is not a readable lane.
period_table() {
	local d
	for d in "$1"/20*Z; do
		[ -d "$d" ] || continue
		"$OFFCPU_BIN" report --json --pid "$hung_pid" "$d" 2>/dev/null |
			python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["budget"]["total"]
print(sys.argv[1], t["wall_ns"], t["oncpu_ns"], t["off_ns"], d["integrity"]["status"])
' "$(basename "$d")" || return 1
	done
}

t=periods_back_to_back_match_schedstat_and_the_window
base=$SCRATCH/periods
start=$(date +%s%N)
if ! "$OFFCPU_BIN" record -p "$hung_pid" --every 1s -d 3.5 -o "$base" >"$SCRATCH/p.out" 2>&1; then
	fail $t "record failed: $(tail -n 3 "$SCRATCH/p.out" | tr '\n' ' ')"
else
	end=$(date +%s%N)
	period_table "$base" >"$SCRATCH/p.table" || true
	python3 - "$SCRATCH/p.table" "$start" "$end" >"$SCRATCH/p.verdict" <<-'EOF'
		import sys
		rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
		window = (int(sys.argv[3]) - int(sys.argv[2]))
		bad = []
		if len(rows) < 4:
		    bad.append("%d periods, want 4 or 5" % len(rows))
		walls = offs = cpus = 0
		for name, wall, cpu, off, status in rows:
		    wall, cpu, off = int(wall), int(cpu), int(off)
		    walls += wall; offs += off; cpus += cpu
		    # Three threads: their off-CPU time is their wall minus their
		    # run time, within 1% of the period and 3 ms.
		    if abs(off - (wall - cpu)) > wall * 0.01 + 3e6:
		        bad.append("%s: off %d vs wall-oncpu %d" % (name, off, wall - cpu))
		    if status != "complete":
		        bad.append("%s: %s" % (name, status))
		# Together, the window (three threads): no gap, nothing twice.
		if abs(offs - (walls - cpus)) > walls * 0.01:
		    bad.append("sum off %d vs wall-oncpu %d" % (offs, walls - cpus))
		if not (3 * 3.4e9 <= walls <= 3 * window):
		    bad.append("threads' wall %d for a %d ns window" % (walls, window))
		print("; ".join(bad) if bad else "ok")
	EOF
	v=$(cat "$SCRATCH/p.verdict")
	if [ "$v" = ok ]; then ok $t; else fail $t "$v; table: $(tr '\n' '|' <"$SCRATCH/p.table")"; fi
fi

t=period_names_are_utc_starts_on_the_boundaries
names=$(cd "$base" 2>/dev/null && ls -d 20*Z | tr '\n' ' ')
# After the first, every period starts on a whole second (--every 1s).
python3 - "$names" <<-'EOF' >"$SCRATCH/n.verdict"
	import sys, datetime
	names = sys.argv[1].split()
	ts = [datetime.datetime.strptime(n, "%Y-%m-%dT%H:%M:%SZ") for n in names]
	steps = [(b - a).total_seconds() for a, b in zip(ts, ts[1:])]
	print("ok" if len(ts) >= 4 and all(s == 1 for s in steps[1:]) and steps[0] in (0, 1)
	      else "names %s" % names)
EOF
v=$(cat "$SCRATCH/n.verdict")
if [ "$v" = ok ] && ! ls -a "$base" | grep -q '\.new$'; then ok $t; else fail $t "$v $(ls -a "$base" | tr '\n' ' ')"; fi

t=the_long_wait_is_split_not_lost
# The main thread's read() spans every boundary: each period has it, with its
# stack, and "never ran" in every period after the first; each summary is valid.
bad=
for d in "$base"/20*Z; do
	"$OFFCPU_BIN" report "$d" >"$SCRATCH/r.txt" 2>&1
	grep -q "hung_read" "$SCRATCH/r.txt" || bad="$bad $(basename "$d"):no-hung_read"
	python3 "$OFFCPU_ROOT/tests/e2e/check_schema.py" "$OFFCPU_ROOT/docs/summary.schema.json" \
		"$d/offcpu.summary.json" >/dev/null 2>&1 || bad="$bad $(basename "$d"):schema"
done
first=$(ls -d "$base"/20*Z | head -n 1)
for d in $(ls -d "$base"/20*Z | tail -n +2); do
	jq -e '.capture_integrity.losses.threads_never_ran.count >= 2' \
		"$d/offcpu.summary.json" >/dev/null 2>&1 || bad="$bad $(basename "$d"):never_ran"
done
if [ -z "$bad" ] && [ -n "$first" ]; then ok $t; else fail $t "$bad"; fi

t=host_wide_periods_under_exits_give_each_thread_its_period
# Host-wide, with processes exiting all the time (two loops of /bin/true):
# the cut reads every thread the kernel side knows while threads exit, and
# each must be read once. The workload's threads asleep across every
# boundary get each period's length, as in the first test.
churn=
for _ in 1 2; do
	(while :; do /bin/true; done) &
	churn="$churn $!"
done
base_a=$SCRATCH/host
if ! "$OFFCPU_BIN" record -q -a --every 1s -d 4.5 -o "$base_a" >"$SCRATCH/a.out" 2>&1; then
	kill $churn 2>/dev/null
	fail $t "record failed: $(tail -n 3 "$SCRATCH/a.out" | tr '\n' ' ')"
else
	kill $churn 2>/dev/null
	period_table "$base_a" >"$SCRATCH/a.table" || true
	python3 - "$SCRATCH/a.table" >"$SCRATCH/a.verdict" <<-'EOF'
		import sys
		rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
		# At least one cut (a loaded machine starts late: 2 to 5 periods).
		bad = [] if len(rows) >= 2 else ["%d periods, want 2 or more" % len(rows)]
		for name, wall, cpu, off, status in rows:
		    wall, cpu, off = int(wall), int(cpu), int(off)
		    if abs(off - (wall - cpu)) > wall * 0.01 + 3e6:
		        bad.append("%s: off %d vs wall-oncpu %d" % (name, off, wall - cpu))
		print("; ".join(bad) if bad else "ok")
	EOF
	v=$(cat "$SCRATCH/a.verdict")
	if [ "$v" = ok ]; then ok $t; else fail $t "$v; table: $(tr '\n' '|' <"$SCRATCH/a.table")"; fi
fi
wait $churn 2>/dev/null

t=sigterm_ends_the_current_period_cleanly
base2=$SCRATCH/term
"$OFFCPU_BIN" record -p "$hung_pid" --every 30s -o "$base2" >"$SCRATCH/t.out" 2>&1 &
rpid=$!
sleep 1.5
kill -TERM $rpid
t0=$(date +%s%N)
wait $rpid
rc=$?
took=$((($(date +%s%N) - t0) / 1000000))
# One period, or two if a boundary (a multiple of 30 s) fell in the 1.5 s.
n=$(ls -d "$base2"/20*Z 2>/dev/null | wc -l)
d=$(ls -d "$base2"/20*Z 2>/dev/null | tail -n 1)
by=$(jq -r .workload.ended_by "$d/offcpu.summary.json" 2>/dev/null)
wall=$(cat "$base2"/20*Z/offcpu.summary.json 2>/dev/null | jq -s 'map(.workload.wall_ns) | add')
if [ $rc -eq 0 ] && [ "$n" -ge 1 ] && [ "$n" -le 2 ] && [ "$by" = interrupt ] && [ "$took" -lt 5000 ] &&
	[ "${wall:-0}" -gt 1000000000 ] && [ "${wall:-0}" -lt 5000000000 ]; then
	ok $t
else
	fail $t "rc $rc, $n periods, ended_by $by, wall $wall, stop took $took ms: $(tail -n 2 "$SCRATCH/t.out" | tr '\n' ' ')"
fi

t=retention_keeps_the_newest_within_the_limit
base3=$SCRATCH/keep
mkdir -p "$base3/not-a-period"
"$OFFCPU_BIN" record -q -p "$hung_pid" --every 1s --keep 2s -d 4.5 -o "$base3" >"$SCRATCH/k.out" 2>&1
n=$(ls -d "$base3"/20*Z 2>/dev/null | wc -l)
if [ "$n" -ge 1 ] && [ "$n" -le 3 ] && [ -d "$base3/not-a-period" ]; then
	ok $t
else
	fail $t "$n periods left: $(ls "$base3" | tr '\n' ' ')"
fi

t=config_error_names_file_and_line
cfg=$SCRATCH/bad.conf
printf '# test\nevery = 1s\nkeep = soon\n' >"$cfg"
"$OFFCPU_BIN" record -p "$hung_pid" --config "$cfg" -o "$SCRATCH/cfgbad" >"$SCRATCH/c.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "^offcpu record: $cfg:3: --keep takes a duration" "$SCRATCH/c.out" &&
	[ "$(wc -l <"$SCRATCH/c.out")" -eq 1 ]; then
	ok $t
else
	fail $t "rc $rc: $(cat "$SCRATCH/c.out")"
fi

t=push_every_period_once_through_failures_and_a_sighup
rx_start "$SCRATCH/rx" --mode fail:2
base4=$SCRATCH/push
cfg=$SCRATCH/push.conf
printf 'every = 1s\npush = %s\nlabel = env=test\n' "$url" >"$cfg"
"$OFFCPU_BIN" record -p "$hung_pid" --config "$cfg" -o "$base4" >"$SCRATCH/u.out" 2>&1 &
rpid=$!
sleep 2.5
printf 'every = 1s\npush = %s\nlabel = env=after\n' "$url" >"$cfg"
kill -HUP $rpid
sleep 2.5
kill -TERM $rpid
wait $rpid
rc=$?
# Every period written arrives once (by its start), the first ones after the
# server's two failures; those after the SIGHUP carry the new label.
want=$(for d in "$base4"/20*Z; do jq -r '.workload.started_unix_ns / 1000000000 | floor' "$d/offcpu.summary.json"; done | sort -n | tr '\n' ' ')
got=$(awk '{ print $2 }' "$SCRATCH/rx/log" 2>/dev/null | sort -n | tr '\n' ' ')
dups=$(awk '{ print $2 }' "$SCRATCH/rx/log" 2>/dev/null | sort | uniq -d | wc -l)
after=$(grep -c 'env=after' "$SCRATCH/rx/log" 2>/dev/null)
before=$(grep -c 'env=test' "$SCRATCH/rx/log" 2>/dev/null)
if [ $rc -eq 0 ] && [ -n "$want" ] && [ "$want" = "$got" ] && [ "$dups" -eq 0 ] &&
	[ "$after" -ge 1 ] && [ "$before" -ge 1 ]; then
	ok $t
else
	fail $t "rc $rc; periods [$want], received [$got], $dups twice, $before before / $after after the SIGHUP: $(tail -n 3 "$SCRATCH/u.out" | tr '\n' ' ')"
fi
