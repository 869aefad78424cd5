# SPDX-License-Identifier: GPL-2.0-only
# offcpu diff on real captures: `offcpu record` runs tests/workloads/mutex three
# times, the second time with the lock held twice as long (--hold-ms 100 instead
# of 50, five rounds: the waiter blocks about 250 ms more on the futex). The
# gate 'stack:futex>+20%' must fail on that pair (exit 1), with the growth the
# workload's design gives and the waiter's futex stack named first among the
# futex stacks; on the pair with equal holds it must pass (exit 0).
#
# mutex runs with --wait-pipe, so that its main thread does not spend the run
# in a futex wait of its own (pthread_join), which would grow just as much.
# The workload's ground truth (OFFCPU_TRUTH) says how long the waiter really
# blocked: a run it says was disturbed (the waiter blocked more than 10% off
# ROUNDS x hold, which happens when the machine is busy) is recorded again, and
# the growth offcpu measures is compared with the truth's.
. "$(dirname "$0")/lib.sh"
mount_tracefs
trap 'rm -rf "$SCRATCH"' EXIT
HOLD=50
LONGER=100
ROUNDS=5
GATE='stack:futex>+20%'

if ! need_root; then
	skip diff_real_captures "needs root to load BPF programs"
	exit 0
fi

COLLECTOR=()
# capture NAME HOLD_MS: a complete capture of mutex in $SCRATCH/NAME, or non-zero.
capture() {
	local d=$SCRATCH/$1
	rm -rf "$d" "$d.truth"
	OFFCPU_TRUTH=$d.truth "$OFFCPU_BIN" record -o "$d" -q "${COLLECTOR[@]}" -- "$W/mutex" \
		--wait-pipe --hold-ms "$2" >/dev/null 2>"$d.err"
	[ "$(json "$d/offcpu.summary.json" .state 2>/dev/null)" = summary_written ]
}

# waiter_blocked NAME: the waiter's blocked time in ns, as the workload measured it.
waiter_blocked() {
	jq -r 'select(.comm == "waiter") | .blocked_ns' "$SCRATCH/$1.truth" 2>/dev/null
}

# record NAME HOLD_MS: capture, again (3 tries) while the truth says the run was disturbed.
record() {
	local blocked want=$(($2 * ROUNDS * 1000000))
	for _ in 1 2 3; do
		capture "$1" "$2" || return 1
		blocked=$(waiter_blocked "$1")
		within "${blocked:-0}" $want 10 0 && return 0
		echo "# $1: the waiter blocked ${blocked:-?} ns, not about $want ns; recording again"
	done
	echo "disturbed" >"$SCRATCH/$1.err"
	return 1
}

# why NAME: what went wrong with a capture, in one line.
why() {
	if grep -qx disturbed "$SCRATCH/$1.err" 2>/dev/null; then
		echo "the machine disturbed the workload 3 times running (see its truth)"
		return
	fi
	json "$SCRATCH/$1/offcpu.summary.json" '.caveat.message // .state' 2>/dev/null ||
		head -c 300 "$SCRATCH/$1.err"
}

# The built-in collector; bpftrace where the built-in one cannot capture here.
if ! capture probe $HOLD; then
	skip diff_native_collector "the built-in collector did not capture: $(why probe | head -c 300); using --tool bpftrace --mode stacks"
	COLLECTOR=(--tool bpftrace --mode stacks)
fi
for run in base:$HOLD grown:$LONGER same:$HOLD; do
	if ! record "${run%:*}" "${run#*:}"; then
		fail diff_captures "the '${run%:*}' capture: $(why "${run%:*}")"
		exit 1
	fi
done
ok diff_captures

B=$SCRATCH/base G=$SCRATCH/grown S=$SCRATCH/same
"$OFFCPU_BIN" diff "$B" "$G" --fail-on "$GATE" >"$SCRATCH/grown.txt" 2>"$SCRATCH/grown.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "FAIL  *$GATE" "$SCRATCH/grown.txt"; then
	ok diff_gate_fails_on_longer_hold
else
	fail diff_gate_fails_on_longer_hold "exit $rc (expected 1): $(grep -A1 '^Gates' "$SCRATCH/grown.txt" | tail -1)$(head -c 200 "$SCRATCH/grown.err")"
fi

"$OFFCPU_BIN" diff "$B" "$G" --fail-on "$GATE" --json >"$SCRATCH/grown.json" 2>/dev/null
# The futex stacks grew by the waiter's extra wait, as the truth has it, within 10% or 10 ms.
growth=$(jq '.gates[0] | .new - .base' "$SCRATCH/grown.json")
want=$(($(waiter_blocked grown) - $(waiter_blocked base)))
echo "# futex stacks: $(jq -c ".gates[0] | [.base, .new]" "$SCRATCH/grown.json") ns, truth +$want ns"
if within "$growth" "$want" 10 10000000; then
	ok diff_futex_growth_matches_the_hold
else
	fail diff_futex_growth_matches_the_hold "futex stacks grew $growth ns, the workload's truth says $want ns"
fi

# The first futex stack in the diff (largest change first) is one the waiter blocked in.
first=$(jq -r '[.stacks[] | [.frames[].name] | join(";") | select(test("futex"))][0] // ""' \
	"$SCRATCH/grown.json")
jq -r '.top_stacks[] | select(.top_thread.comm == "waiter") | [.frames[].name] | join(";")' \
	"$G/offcpu.summary.json" >"$SCRATCH/waiter.stacks"
if [ -n "$first" ] && grep -qxF "$first" "$SCRATCH/waiter.stacks"; then
	ok diff_names_waiter_futex_stack_first
else
	fail diff_names_waiter_futex_stack_first "first futex stack '${first:0:300}' is none of the waiter's: $(head -c 300 "$SCRATCH/waiter.stacks")"
fi

"$OFFCPU_BIN" diff "$B" "$S" --fail-on "$GATE" >"$SCRATCH/same.txt" 2>"$SCRATCH/same.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "ok  *$GATE" "$SCRATCH/same.txt"; then
	ok diff_gate_passes_on_equal_hold
else
	fail diff_gate_passes_on_equal_hold "exit $rc (expected 0): $(grep -A1 '^Gates' "$SCRATCH/same.txt" | tail -1)$(head -c 200 "$SCRATCH/same.err")"
fi

# The differential flame graph of the real pair: NEW's total at the root, BASE's in its tooltip.
"$OFFCPU_BIN" diff "$B" "$G" --flamegraph "$SCRATCH/diff.svg" >/dev/null 2>&1
new_total=$(jq '.totals.off.new' "$SCRATCH/grown.json")
base_total=$(jq '.totals.off.base' "$SCRATCH/grown.json")
root=$(sed -n 's/^<g data-v="\([0-9]*\)"><title>all$/\1/p' "$SCRATCH/diff.svg" 2>/dev/null)
if [ "$root" = "$new_total" ] && grep -q '^all threads, .*; base .*, new .*, delta +' "$SCRATCH/diff.svg" &&
	{ ! command -v xmllint >/dev/null || xmllint --noout "$SCRATCH/diff.svg" 2>/dev/null; }; then
	ok diff_flamegraph_of_real_captures
else
	fail diff_flamegraph_of_real_captures "root '$root', new total $new_total (base $base_total)"
fi
