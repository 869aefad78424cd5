#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The native collector under faults and load: offcpu killed with SIGKILL
# leaves nothing attached, a stress workload's accounted plus counted-lost
# time matches the kernel's own per-thread accounting, and offcpu's own memory
# does not grow while the stress runs.
. "$(dirname "$0")/lib.sh"
. "$OFFCPU_ROOT/tests/e2e/truth.sh"
mount_tracefs
if ! need_root || ! command -v bpftool >/dev/null; then
	skip native_faults "needs root and bpftool"
	exit 0
fi
progs() { bpftool prog show 2>/dev/null | grep -c '^[0-9]*:'; }

t=sigkill_of_offcpu_leaves_no_bpf_program_attached
before=$(progs)
"$OFFCPU_BIN" record -o "$SCRATCH/k" -q -- sleep 3 &
rec=$!
during=$before
for _ in $(seq 100); do
	during=$(progs)
	[ "$during" -gt "$before" ] && break
	sleep 0.05
done
kill -KILL $rec
wait $rec 2>/dev/null
after=$before
for _ in $(seq 40); do
	after=$(progs)
	[ "$after" -le "$before" ] && break
	sleep 0.05
done
pkill -f "^sleep 3$" 2>/dev/null
if [ "$during" -le "$before" ]; then
	fail $t "no program was seen attached ($before before, $during during)"
elif [ "$after" -gt "$before" ]; then
	fail $t "$((after - before)) program(s) still loaded after SIGKILL"
elif ! "$OFFCPU_BIN" record -o "$SCRATCH/k2" -q -- true ||
	[ "$(json "$SCRATCH/k2/offcpu.summary.json" .state)" = tool_failed ] &&
	[ "$(json "$SCRATCH/k2/offcpu.summary.json" .caveat.kind)" != empty_capture ]; then
	fail $t "the next run did not work: $(json "$SCRATCH/k2/offcpu.summary.json" .caveat.message)"
else
	ok $t
fi

t=stress_256_threads_accounted_plus_lost_matches_schedstat
d=$SCRATCH/stress
truth=$SCRATCH/stress.truth
OFFCPU_TRUTH=$truth "$OFFCPU_BIN" record -o "$d" -q -- "$W/stress" 256 3
s=$d/offcpu.summary.json
measured=$(jq '[.threads[] | select(.comm | startswith("stress-")) | .off_ns] | add // 0' "$s")
lost=$(jq '[.capture_integrity.losses[] | .affected_ns] | add // 0' "$s")
want=$(jq -s '[.[] | select(.comm | startswith("stress-")) | .offcpu_ns] | add // 0' "$truth")
threads=$(jq -s 'length' "$truth")
if [ "$threads" -lt 256 ] || [ "$want" -le 0 ] || [ "$measured" -le 0 ]; then
	fail $t "the workload reported $threads threads, truth $want ns, measured $measured ns"
elif within $((measured + lost)) "$want" 1 0; then
	ok $t
else
	fail $t "accounted $measured + lost $lost ns vs truth $want ns (more than 1% apart)"
fi

# The switch programs time a switch by the run queue's clock where sched_clock
# is stable (x86: the TSC is invariant and the clocksource), else by
# bpf_ktime_get_ns(); OFFCPU_CLOCK=ktime forces the latter. The stress above
# ran with the default; the same stress with ktime must agree with schedstat
# as closely, and each run's diagnostics must name the clock it used. The
# kernel says whether sched_clock is stable in debugfs: the run queue's clock
# must never be used when it is not, and must be where offcpu can tell.
t=switch_clock_named_and_both_clocks_match_schedstat
[ -e /sys/kernel/debug/sched ] || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
kernel=$(awk '/^sched_clock_stable\(\)/ { print $NF }' /sys/kernel/debug/sched/debug 2>/dev/null)
tsc=no
if [ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)" = tsc ] &&
	grep -m1 '^flags' /proc/cpuinfo | grep -qw constant_tsc &&
	grep -m1 '^flags' /proc/cpuinfo | grep -qw nonstop_tsc && [ "$(uname -m)" = x86_64 ]; then
	tsc=yes
fi
[ "$kernel" = 0 ] && stable=no || stable=$tsc
clock=$(grep -o 'switch clock: [^,(]*' "$d/offcpu.diagnostics.txt" | head -1)
syncs=$(sed -n 's/.*CLOCK_MONOTONIC taken \([0-9]*\) times.*/\1/p' "$d/offcpu.diagnostics.txt" | head -1)
k=$SCRATCH/stress-ktime
OFFCPU_CLOCK=ktime OFFCPU_TRUTH=$k.truth "$OFFCPU_BIN" record -o "$k" -q -- "$W/stress" 64 2
kclock=$(grep -o 'switch clock: [^,(]*' "$k/offcpu.diagnostics.txt" | head -1)
kmeasured=$(jq '[.threads[] | select(.comm | startswith("stress-")) | .off_ns] | add // 0' "$k/offcpu.summary.json")
klost=$(jq '[.capture_integrity.losses[] | .affected_ns] | add // 0' "$k/offcpu.summary.json")
kwant=$(jq -s '[.[] | select(.comm | startswith("stress-")) | .offcpu_ns] | add // 0' "$k.truth")
if [ $stable = yes ] && { [ "$clock" != "switch clock: the run queue's " ] || [ "${syncs:-0}" -lt 1 ]; }; then
	fail $t "sched_clock is stable here (kernel: ${kernel:-not read}), but the default run said \"$clock\" (${syncs:-no} syncs)"
elif [ $stable = no ] && [ "$clock" != "switch clock: bpf_ktime_get_ns" ]; then
	fail $t "sched_clock is not stable here (kernel: ${kernel:-not read}, TSC clocksource: $tsc), but the default run said \"$clock\""
elif [ "$kclock" != "switch clock: bpf_ktime_get_ns" ]; then
	fail $t "OFFCPU_CLOCK=ktime ran with \"$kclock\""
elif [ "$kwant" -le 0 ] || ! within $((kmeasured + klost)) "$kwant" 1 0; then
	fail $t "with ktime: accounted $kmeasured + lost $klost ns vs truth $kwant ns (more than 1% apart)"
else
	ok $t
fi
# offcpu's own memory does not grow while it records: intervals add up in BPF
# maps (per thread and call site) that user space drains as rows (every second
# and at the end), so nothing in offcpu may grow with the switch count. At start it loads the C library's symbols (about 24 of its
# ~36 MiB); under 256 busy threads on 2 CPUs that one-time cost takes it seconds
# of wall time, so the workload waits on a FIFO until offcpu's RSS has settled.
#
# flat_run SECS NAME: offcpu records `stress 256 SECS`; leaves NAME/ (the lane),
# NAME.rss (a sample every 0.2 s: "MS RSS_KIB CHILD_COMM") and NAME.max (offcpu's
# peak RSS over its whole life, stop included, in KiB, from wait4).
rss_kib() {
	local k v _r=0
	while read -r k v _; do [ "$k" = VmRSS: ] && _r=$v; done <"/proc/$1/status"
	echo "$_r"
}
# The interpreter itself, not a wrapper (pyenv's shim forks helpers that would pass
# for offcpu).
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
flat_run() {
	local d=$SCRATCH/$2 fifo=$SCRATCH/$2.go wrap

	mkfifo "$fifo"
	MAXRSS_OUT=$d.max "${py:-python3}" -c 'import os, sys
pid = os.fork()
if pid == 0:
	os.execvp(sys.argv[1], sys.argv[1:])
_, st, ru = os.wait4(pid, 0)
print(ru.ru_maxrss, file=open(os.environ["MAXRSS_OUT"], "w"))' \
		"$OFFCPU_BIN" record -o "$d" -q -- sh -c "read _ <'$fifo'; exec '$W/stress' 256 $1" &
	wrap=$!
	# A real-time sampler: 256 runnable threads would leave it hardly any samples.
	(
		chrt -f -p 10 $BASHPID >/dev/null 2>&1
		t0=$(date +%s%N) rec= released=0 stable=0 last=0
		while kill -0 $wrap 2>/dev/null; do
			if [ "$(cat /proc/${rec:-0}/comm 2>/dev/null)" != offcpu ]; then
				rec=$(cat /proc/$wrap/task/$wrap/children 2>/dev/null)
				rec=${rec%% *}
			fi
			c=$(cat /proc/${rec:-0}/task/${rec:-0}/children 2>/dev/null)
			comm=$(cat /proc/${c%% *}/comm 2>/dev/null)
			r=$(rss_kib ${rec:-0} 2>/dev/null)
			ms=$((($(date +%s%N) - t0) / 1000000))
			echo "$ms ${r:-0} ${comm:-none}"
			if [ $released = 0 ] && [ "$comm" = sh ]; then
				d=$((r - last))
				[ ${d#-} -le 256 ] && stable=$((stable + 1)) || stable=0
				last=$r
			fi
			if [ $released = 0 ] && { [ $stable -ge 5 ] || [ $ms -ge 15000 ]; }; then
				timeout 5 sh -c "echo >'$fifo'"
				released=1
			fi
			sleep 0.2
		done
	) >"$d.rss"
	wait $wrap
}
# intervals NAME: intervals of the stress threads in run NAME.
intervals() {
	jq '[.threads[] | select(.comm | startswith("stress-")) | .count] | add // 0' \
		"$SCRATCH/$1/offcpu.summary.json" 2>/dev/null || echo 0
}
flat_kib=4096
flat_run 2 short
flat_run 6 long

# While it records, the RSS from 1 s into the stress to its end (~5 s). Threshold
# 4 MiB: here that window grows by at most 0.5 MiB; a leak of 3 MiB per drain (one
# a second, fewer when offcpu is short of CPU), or of anything per switch the user
# side might come to handle (~400k/s here), goes past it.
t=stress_256_threads_offcpu_memory_stays_flat_while_recording
read -r base peak win_ms <<<"$(awk '$3 == "stress" { if (!s) s = $1; if ($1 - s >= 1000) {
	if (!b) { b = $2; t = $1 } if ($2 > p) p = $2; e = $1 } }
	END { print b + 0, p + 0, e - t }' "$SCRATCH/long.rss")"
if [ "${base:-0}" -le 0 ] || [ "${win_ms:-0}" -lt 2000 ]; then
	fail $t "no RSS window while stress ran (base ${base:-0} KiB over ${win_ms:-0} ms);\
 samples: $(tr '\n' ';' <"$SCRATCH/long.rss" | tail -c 300)"
elif [ $((peak - base)) -le $flat_kib ]; then
	ok $t
else
	fail $t "offcpu's RSS grew $((peak - base)) KiB (from $base to $peak) in $win_ms ms\
 of stress (limit $flat_kib KiB)"
fi

# Peak RSS over offcpu's whole life, stop included, after 6 s against 2 s of the
# same stress: what depends on rows, stacks and binaries is alike in both (here the
# two peaks are within 0.5 MiB), what grows with intervals is not. One 32-byte
# malloc chunk kept per interval would add 32 B x the ~1.5M extra intervals = ~45
# MiB; with too few extra intervals for that to reach twice the threshold the test
# says skip.
t=stress_offcpu_peak_memory_does_not_grow_with_intervals
short=$(cat "$SCRATCH/short.max" 2>/dev/null || echo 0)
long=$(cat "$SCRATCH/long.max" 2>/dev/null || echo 0)
extra=$(($(intervals long) - $(intervals short)))
if [ "$short" -le 0 ] || [ "$long" -le 0 ]; then
	fail $t "no peak RSS from wait4 (short '$short', long '$long' KiB)"
elif [ $((extra * 32 / 1024)) -lt $((2 * flat_kib)) ]; then
	skip $t "only $extra more intervals in the long run: a 32-byte leak each would add\
 $((extra * 32 / 1024)) KiB"
elif [ $((long - short)) -le $flat_kib ]; then
	ok $t
else
	fail $t "offcpu's peak RSS was $long KiB after 6 s of stress, $short KiB after 2 s:\
 $((long - short)) KiB more for $extra more intervals (limit $flat_kib KiB)"
fi
rm -rf "$SCRATCH"
