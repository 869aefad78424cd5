#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Bad input gets the same answer from every subcommand that reads a capture
# (report, flamegraph, export, diff, summarize): one line naming FILE:LINE and
# the same exit status (3: an input cannot be used; docs/reliability.md); a
# cut profile is never read as a shorter one; summarize never replaces a good
# summary with a worse reading. Record's targets are checked before anything
# is written: a bad -p or -d is a usage error (2), a target that is not there
# a failed start (125). The built-in collector's empty profile is an answer.
. "$(dirname "$0")/lib.sh"
mount_tracefs

# every NAME WANT_RC GREP DIR: each reader exits WANT_RC and says GREP (a regex) on stderr.
# READERS (default: all five) lists the subcommands to run.
every() {
	local t=$1 want=$2 re=$3 dir=$4 cmd rc out bad=""

	for cmd in ${READERS:-report flamegraph export diff summarize}; do
		case $cmd in
		flamegraph) out=$("$OFFCPU_BIN" flamegraph -o "$SCRATCH/o.svg" "$dir" 2>&1 >/dev/null) ;;
		export) out=$("$OFFCPU_BIN" export -f pprof -o "$SCRATCH/o.pb.gz" "$dir" 2>&1 >/dev/null) ;;
		diff) out=$("$OFFCPU_BIN" diff "$dir" "$dir" 2>&1 >/dev/null) ;;
		*) out=$("$OFFCPU_BIN" "$cmd" "$dir" 2>&1 >/dev/null) ;;
		esac
		rc=$?
		if [ "$rc" -ne "$want" ]; then
			bad="$bad $cmd: exit $rc, want $want;"
		elif ! echo "$out" | grep -Eq "^offcpu $cmd: $re"; then
			bad="$bad $cmd said: $(echo "$out" | head -n 2 | tr '\n' ' ');"
		fi
	done
	[ -z "$bad" ] && ok "$t" || fail "$t" "$bad"
}

# A capture that needs no collector: folded stacks as BCC writes them.
lane() { # DIR TEXT
	rm -rf "$1"
	mkdir -p "$1"
	printf '%b' "$2" >"$1/offcpu.time.txt"
}

d=$SCRATCH/overflow
lane "$d" 'a;b 1\na;c 18446744073709551615\na;d 18446744073709551615\n'
every bad_input_overflow_names_file_and_line_everywhere 3 "$d/offcpu.time.txt:2: .*64 bits" "$d"

d=$SCRATCH/negative
lane "$d" 'a;b 10\na;c -5\na;d 1.5\n'
every bad_input_negative_and_fractional_counts_warn_everywhere 0 \
	"$d/offcpu.time.txt:2: 2 malformed line\\(s\\) skipped" "$d"

d=$SCRATCH/notprofile
lane "$d" 'a;b 10\n'
printf 'a;b 10\n' >"$d/offcpu.profile.txt"
every bad_input_not_a_profile_names_file_and_line_everywhere 3 \
	"$d/offcpu.profile.txt:1: not an offcpu profile" "$d"

# A profile that is there but cannot be opened is an error, never a silent
# fall back to the poorer folded capture beside it.
d=$SCRATCH/unreadable
lane "$d" 'a;b 10\n'
ln -s offcpu.profile.txt "$d/offcpu.profile.txt" # a loop: ELOOP for root too
every bad_input_unopenable_profile_is_an_error_not_a_fallback 3 \
	"$d/offcpu.profile.txt: Too many levels of symbolic links" "$d"

d=$SCRATCH/schema99
lane "$d" 'a;b 10\n'
printf '{"schema_version": 99, "kind": "offcpu_time", "tool": "native", "totals": {"off_ns": 10, "count": 1}}\n' \
	>"$d/offcpu.summary.json"
every bad_input_unknown_summary_schema_is_refused_everywhere 3 "$d/offcpu.summary.json: schema_version 99" "$d"

t=bad_input_diff_refuses_a_summary_file_of_an_unknown_schema
cp "$d/offcpu.summary.json" "$SCRATCH/s99.json"
out=$("$OFFCPU_BIN" diff "$DATA/diff/base.summary.json" "$SCRATCH/s99.json" 2>&1 >/dev/null)
rc=$?
if [ $rc -eq 3 ] && echo "$out" | grep -q "s99.json: .*schema_version"; then
	ok $t
else
	fail $t "exit $rc: $out"
fi

d=$SCRATCH/empty
rm -rf "$d"
mkdir -p "$d"
# summarize writes a tool_failed summary for an empty lane (the seed's rule for
# a harness whose collector left nothing); the readers refuse it.
READERS="report flamegraph export diff" \
	every bad_input_no_capture_is_the_same_error_everywhere 3 "$d holds no capture" "$d"
every bad_input_missing_directory_is_the_same_error_everywhere 3 "$SCRATCH/nope: No such file" "$SCRATCH/nope"

t=bad_input_usage_errors_exit_2_one_line
bad=""
for args in "record -p 0 -d 1" "record -p 1,,2 -d 1" "record -p 1, -d 1" "record -d nan -a" "record -d 1e3 -a" \
	"record -d inf -a" "summarize --exit-code x $SCRATCH" "report"; do
	# shellcheck disable=SC2086 # a bound, so that an accepted -d nan cannot hang the test
	out=$(cd "$SCRATCH" && timeout -s INT 5 "$OFFCPU_BIN" $args 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 2 ] || [ "$(echo "$out" | wc -l)" -ne 1 ] || [ -z "$out" ]; then
		bad="$bad [$args] exit $rc: $out;"
	fi
done
[ -z "$bad" ] && ok $t || fail $t "$bad"

if ! need_root; then
	skip bad_input_record_targets "needs root to run the native collector"
	exit 0
fi

# start_fails NAME ARGS...: exit 125, one line on stderr, no lane directory made.
start_fails() {
	local t=$1 out rc
	shift
	rm -rf "$SCRATCH/never"
	out=$("$OFFCPU_BIN" record -o "$SCRATCH/never" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 125 ]; then
		fail "$t" "exit $rc, want 125: $out"
	elif [ "$(echo "$out" | wc -l)" -ne 1 ] || [ -z "$out" ]; then
		fail "$t" "want one line on stderr, got: $out"
	elif [ -e "$SCRATCH/never" ]; then
		fail "$t" "the lane directory was made anyway"
	else
		ok "$t"
	fi
}

sleep 30 &
dead=$!
kill $dead
wait $dead 2>/dev/null
start_fails bad_input_record_dead_pid_is_a_failed_start -p "$dead" -d 1
start_fails bad_input_record_missing_cgroup_is_a_failed_start --cgroup "$SCRATCH/no-cgroup" -d 1
start_fails bad_input_record_file_as_cgroup_is_a_failed_start --cgroup /etc/hostname -d 1

t=bad_input_record_cgroup_v1_says_v2_is_needed_and_where
v1=$(awk '$9 == "cgroup" { print $5; exit }' /proc/self/mountinfo)
v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
if [ -z "$v1" ]; then
	skip $t "no cgroup v1 hierarchy mounted here"
else
	out=$("$OFFCPU_BIN" record -o "$SCRATCH/never" --cgroup "$v1" -d 1 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 125 ] || ! echo "$out" | grep -q "cgroup v2"; then
		fail $t "exit $rc: $out"
	elif [ -n "$v2" ] && ! echo "$out" | grep -qF "mounted at $v2"; then
		fail $t "does not say where cgroup v2 is ($v2): $out"
	else
		ok $t
	fi
fi

t=bad_input_record_of_a_workload_that_never_blocks_is_zero_not_a_failure
# `true` can still be preempted on a busy machine: then it has rows, and the
# run must be an ordinary summary. Some run out of five sees nothing at all.
d=$SCRATCH/true
s=$d/offcpu.summary.json
res=""
for i in 1 2 3 4 5; do
	rm -rf "$d"
	"$OFFCPU_BIN" record -q -o "$d" -- true
	rc=$?
	if [ $rc -ne 0 ] || [ "$(json "$s" .state)" != summary_written ]; then
		res="exit $rc: $(jq -c '[.state, .caveat, .totals.off_ns]' "$s")"
		break
	fi
	if [ "$(json "$s" .totals.rows)" = 0 ]; then
		if [ "$(json "$s" .caveat.kind)" != no_off_cpu_time ] || [ "$(json "$s" .totals.off_ns)" != 0 ]; then
			res="$(jq -c '[.state, .caveat, .totals.off_ns]' "$s")"
		elif ! python3 "$OFFCPU_ROOT/tests/e2e/check_schema.py" "$OFFCPU_ROOT/docs/summary.schema.json" \
			"$s" >/dev/null 2>&1; then
			res="the summary does not match docs/summary.schema.json"
		else
			res=ok
		fi
		break
	fi
done
case $res in
ok) ok $t ;;
"") skip $t "true was off the CPU in each of 5 runs (a busy machine)" ;;
*) fail $t "$res" ;;
esac

# A real native lane, then its profile cut short.
d=$SCRATCH/cut
"$OFFCPU_BIN" record -q -o "$d" -- "$OFFCPU_BUILD/tests/workloads/nanosleep" 2>/dev/null ||
	"$OFFCPU_BIN" record -q -o "$d" -- sleep 0.2
cp "$d/offcpu.summary.json" "$SCRATCH/good.json"
p=$d/offcpu.profile.txt
lines=$(wc -l <"$p")
head -n $((lines - 1)) "$p" >"$SCRATCH/cut.txt"
cat "$SCRATCH/cut.txt" >"$p"
every bad_input_cut_profile_is_refused_with_file_and_line_everywhere 3 \
	"$p:$((lines - 1)): truncated" "$d"

t=bad_input_summarize_keeps_the_good_summary_of_a_cut_profile
if cmp -s "$SCRATCH/good.json" "$d/offcpu.summary.json"; then
	ok $t
else
	fail $t "the summary changed: $(jq -c '[.state, .caveat.kind]' "$d/offcpu.summary.json")"
fi

t=bad_input_summarize_never_replaces_a_good_summary_with_a_worse_reading
d=$SCRATCH/worse
"$OFFCPU_BIN" record -q -o "$d" --tool "$FAKES/fake_collector" -- true 2>/dev/null
OFFCPU_FAKE_STDOUT=$DATA/bcc/nanosleep.folded OFFCPU_FAKE_STDERR=/dev/null \
	"$OFFCPU_BIN" record --tool "$FAKES/fake_collector" -o "$d" -q -- true
cp "$d/offcpu.summary.json" "$SCRATCH/good2.json"
: >"$d/offcpu.time.txt"
out=$("$OFFCPU_BIN" summarize "$d" 2>&1 >/dev/null)
rc=$?
if [ "$(jq -r .state "$SCRATCH/good2.json")" != summary_written ]; then
	fail $t "the first record was not good: $(jq -c '[.state, .caveat.kind]' "$SCRATCH/good2.json")"
elif [ $rc -ne 3 ] || ! cmp -s "$SCRATCH/good2.json" "$d/offcpu.summary.json"; then
	fail $t "exit $rc, summary now $(jq -c '[.state, .caveat.kind]' "$d/offcpu.summary.json"): $out"
elif ! echo "$out" | grep -q "offcpu.time.txt gives tool_failed (empty_capture); left it unchanged"; then
	fail $t "message: $out"
else
	ok $t
fi

rm -rf "$SCRATCH"
