#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The native collector under faults and load: offcpu killed with SIGKILL
# leaves nothing attached, and a stress workload's accounted plus counted-lost
# time matches the kernel's own per-thread accounting.
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
rm -rf "$SCRATCH"
