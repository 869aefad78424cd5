#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# One reason engine: every output that names reasons agrees on the per-reason
# totals of one capture (report --json, diff --json, the reason flame graph's
# legend, pprof's reason labels read back by `go tool pprof`, and the stack
# lines of report and diff: their blocked time summed by their reason, their
# run-queue time as runqueue), on a fixture with
# stacks of every kind of reason (tests/data/reasons/outputs) and on a real
# native capture of the demo workload. Also: the contradictions issue #11 found
# (synchronize_rcu, user-only pthread_mutex_lock) and --reasons FILE.
. "$(dirname "$0")/lib.sh"

FIX="$DATA/reasons/outputs"

# totals_* DIR OUT: "reason ns" lines, sorted, reasons with no time left out.
totals_report() {
	"$OFFCPU_BIN" report --json "$@" | jq -r '.reasons[] | select(.ns > 0) | "\(.reason) \(.ns)"' | sort
}
totals_diff() {
	"$OFFCPU_BIN" diff --json "$@" "${@: -1}" |
		jq -r '.reasons[] | select(.off.new > 0) | "\(.reason) \(.off.new)"' | sort
}
totals_flamegraph() {
	"$OFFCPU_BIN" flamegraph --color reason -o - "$@" |
		sed -n 's/.*data-reason="\([a-z_]*\)" data-ns="\([0-9]*\)".*/\1 \2/p' | sort
}
# The stack lines' split, by the lines' reasons: "reason ns" as the tables.
by_stack_reason() {
	jq -r '[.[] | {r: .reason, b: .blocked, q: .runq}] |
		(group_by(.r) | map({r: .[0].r, n: (map(.b) | add)})) +
		[{r: "runqueue", n: (map(.q) | add)}] |
		group_by(.r) | map({r: .[0].r, n: (map(.n) | add)}) |
		.[] | select(.n > 0) | "\(.r) \(.n)"' | sort
}
totals_report_stacks() {
	"$OFFCPU_BIN" report --json --top 100000 "$@" |
		jq '[.top_stacks[] | {reason, blocked: .blocked_ns, runq: .runq_ns}]' | by_stack_reason
}
totals_diff_stacks() {
	"$OFFCPU_BIN" diff --json "$@" "${@: -1}" |
		jq '[.stacks[] | {reason, blocked: .blocked.new, runq: .runq.new}]' | by_stack_reason
}
# pprof -raw: a sample line "  COUNT  NS: locations", then its labels.
totals_pprof() {
	"$OFFCPU_BIN" export -f pprof -o "$SCRATCH/p.pb.gz" "$@" &&
		go tool pprof -raw "$SCRATCH/p.pb.gz" 2>/dev/null | awk '
		/^ +[0-9]+ +[0-9]+:/ { ns = $2 + 0 }
		/reason:\[/ { match($0, /reason:\[[a-z_]*\]/); r = substr($0, RSTART + 8, RLENGTH - 9)
			sum[r] += ns }
		END { for (r in sum) if (sum[r] > 0) printf "%s %.0f\n", r, sum[r] }' | sort
}

# compare NAME ARGS...: the four outputs' totals are equal, and not empty.
compare() {
	local t=$1 o why=
	shift
	totals_report "$@" >"$SCRATCH/report" 2>"$SCRATCH/err" || why="report failed: $(head -n 1 "$SCRATCH/err")"
	for o in diff flamegraph pprof report_stacks diff_stacks; do
		[ "$o" = pprof ] && ! command -v go >/dev/null 2>&1 && continue
		"totals_$o" "$@" >"$SCRATCH/$o" 2>"$SCRATCH/err" || why="$o failed: $(head -n 1 "$SCRATCH/err")"
		cmp -s "$SCRATCH/report" "$SCRATCH/$o" ||
			why="${why:+$why; }$o says $(tr '\n' ',' <"$SCRATCH/$o") where report says $(tr '\n' ',' <"$SCRATCH/report")"
	done
	[ "$(wc -l <"$SCRATCH/report")" -ge "${MIN_REASONS:-1}" ] || why="${why:+$why; }too few reasons: $(tr '\n' , <"$SCRATCH/report")"
	if [ -n "$why" ]; then fail "$t" "$why"; else ok "$t"; fi
}

MIN_REASONS=7 compare reasons_all_outputs_agree_on_the_fixture "$FIX"

# The fixture's reasons, with details from the shipped rules.
t=reasons_fixture_has_the_rule_details
got=$("$OFFCPU_BIN" report --json "$FIX" | jq -r '.reasons[] | .reason as $r | .details[] | "\($r):\(.detail)"' | sort | tr '\n' ' ')
want="idle:client idle:events lock:heavyweight lock:mutex lock:semaphore "
if [ "$got" = "$want" ]; then ok $t; else fail $t "details '$got', want '$want'"; fi

# The details too: the report's and pprof's reason_detail labels.
t=reasons_details_agree_in_report_and_pprof
if ! command -v go >/dev/null 2>&1; then
	skip $t "go is not installed (Debian: golang-go)"
else
	"$OFFCPU_BIN" report --json "$FIX" |
		jq -r '.reasons[] | .reason as $r | .details[] | "\($r):\(.detail) \(.ns)"' | sort >"$SCRATCH/rd"
	"$OFFCPU_BIN" export -f pprof -o "$SCRATCH/d.pb.gz" "$FIX"
	go tool pprof -raw "$SCRATCH/d.pb.gz" 2>/dev/null | awk '
		/^ +[0-9]+ +[0-9]+:/ { ns = $2 + 0 }
		/reason_detail:\[/ { match($0, /reason:\[[a-z_]*\]/); r = substr($0, RSTART + 8, RLENGTH - 9)
			match($0, /reason_detail:\[[^]]*\]/); d = substr($0, RSTART + 15, RLENGTH - 16)
			sum[r ":" d] += ns }
		END { for (k in sum) printf "%s %.0f\n", k, sum[k] }' | sort >"$SCRATCH/pd"
	if [ -s "$SCRATCH/rd" ] && cmp -s "$SCRATCH/rd" "$SCRATCH/pd"; then
		ok $t
	else
		fail $t "pprof: $(tr '\n' , <"$SCRATCH/pd") report: $(tr '\n' , <"$SCRATCH/rd")"
	fi
fi

# synchronize_rcu -> wait_for_completion was "child" in the flame graph
# (strstr do_wait) and "other" in the report; a user-only pthread_mutex_lock
# was "lock" in the report and "other" in the graph.
t=reasons_flamegraph_agrees_with_report_on_contradictions
svg=$("$OFFCPU_BIN" flamegraph --color reason -o - "$FIX")
why=
grep -q '^synchronize_rcu$' <<<"$(sed -n 's/<g data-v="[0-9]*"><title>//p' <<<"$svg")" || why="no synchronize_rcu frame"
grep -A1 '<title>synchronize_rcu$' <<<"$svg" | grep -q 'reason: other<' || why="synchronize_rcu is not other"
grep -A1 '<title>pthread_mutex_lock$' <<<"$svg" | grep -qE 'reason: lock(: mutex)?<' || why="${why:+$why; }user-only pthread_mutex_lock is not lock"
grep -qE 'reason: (net|disk|preempt)<' <<<"$svg" && why="${why:+$why; }the graph still has its own vocabulary"
if [ -n "$why" ]; then fail $t "$why"; else ok $t; fi

# --reasons FILE: a user's rule comes before the shipped ones, in every output.
t=reasons_file_applies_to_every_output
printf '# mine\nsleep:redis  aeProcessEvents\n' >"$SCRATCH/my.rules"
MIN_REASONS=7 compare $t --reasons "$SCRATCH/my.rules" "$FIX"
t=reasons_file_moves_time_to_the_users_reason
got=$("$OFFCPU_BIN" report --json --reasons "$SCRATCH/my.rules" "$FIX" | jq -r '.reasons[] | select(.reason == "sleep") | .details[0].detail + " " + (.ns | tostring)')
want="redis 3495500000" # the sleep's 999.5 ms + redis's 2.496 s, blocked
if [ "$got" = "$want" ]; then ok $t; else fail $t "sleep is '$got', want '$want'"; fi

t=reasons_bad_rules_file_is_a_usage_error_with_file_and_line
printf 'lock:lwlock  LWLockAcquire\nlocks  foo\n' >"$SCRATCH/bad.rules"
why=
for cmd in report flamegraph export diff; do
	case $cmd in
	export) args=(-f pprof -o "$SCRATCH/x.pb.gz" "$FIX") ;;
	diff) args=("$FIX" "$FIX") ;;
	flamegraph) args=(-o "$SCRATCH/x.svg" "$FIX") ;;
	*) args=("$FIX") ;;
	esac
	out=$("$OFFCPU_BIN" "$cmd" --reasons "$SCRATCH/bad.rules" "${args[@]}" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 2 ] || [ "$(wc -l <<<"$out")" -ne 1 ] || ! grep -q "bad.rules:2: unknown reason 'locks'" <<<"$out"; then
		why="$cmd: exit $rc, '$out'"
		break
	fi
done
if [ -n "$why" ]; then fail $t "$why"; else ok $t; fi

# A real capture: the demo service (nanosleep, pipe, condvar, mutex, fdatasync, join).
t=reasons_all_outputs_agree_on_a_native_capture
if ! need_root; then
	skip $t "needs root for the native collector"
else
	mount_tracefs
	if ! SCALE=0.5 "$OFFCPU_BIN" record -q -o "$SCRATCH/demo" -- "$W/demo" >/dev/null 2>"$SCRATCH/rec.err"; then
		fail $t "record failed: $(head -n 2 "$SCRATCH/rec.err" | tr '\n' ' ')"
	else
		MIN_REASONS=4 compare $t "$SCRATCH/demo"
	fi
fi

# The same capture: main() joins its threads; glibc's pthread_join jumps to
# __pthread_clockjoin_ex, so only that is on the stack, and it is a join.
t=reasons_demo_main_thread_join_is_lock_join
if [ ! -s "$SCRATCH/demo/offcpu.summary.json" ]; then
	skip $t "no demo capture (see reasons_all_outputs_agree_on_a_native_capture)"
else
	got=$("$OFFCPU_BIN" report --json --top 100000 "$SCRATCH/demo" | jq -r '[.top_stacks[] |
		select(.key_frames.user | index("__pthread_clockjoin_ex")) |
		"\(.reason):\(.detail)"] | unique | join(" ")')
	if [ "$got" = "lock:join" ]; then ok $t; else fail $t "the join's stacks are '$got', want lock:join"; fi
fi
