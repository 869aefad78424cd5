# SPDX-License-Identifier: GPL-2.0-only
# User-stack completeness and honest frames, end to end (docs/stacks.md):
#   - `offcpu report` of a hand-written capture with "[unwind: ...]" markers
#     (tests/data/completeness/markers) warns under 90% naming the binary and
#     the reason of each loss, and its JSON carries the summary's user_stacks;
#   - a BCC capture (tests/data/bcc/system.folded) summarized: its "[unknown]"
#     frames are "[unsymbolized]" everywhere, their time counted, and the
#     completeness of its frame-pointer stacks is unknown (null), never 1;
#   - a real native capture: user_stacks splits totals.off_ns exactly into
#     its classes, with a complete share, and matches the schema;
#   - a real bpftrace capture: completeness unknown, no raw address as a frame.
. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$SCRATCH"' EXIT
SCHEMA="$OFFCPU_ROOT/docs/summary.schema.json"

schema_ok() { "$OFFCPU_ROOT/tests/e2e/check_schema.py" "$SCHEMA" "$1" 2>&1 | head -1; }

t=completeness_report_warns_naming_binaries
out=$("$OFFCPU_BIN" report --width 100 "$DATA/completeness/markers" 2>/dev/null)
share=$("$OFFCPU_BIN" report --json "$DATA/completeness/markers" 2>/dev/null | jq .user_stacks.complete_share)
if [[ $out != *"user stacks: 71.0% of off-CPU time in complete stacks; incomplete:"* ]]; then
	fail $t "no warning line: $(echo "$out" | head -6 | tr '\n' '|')"
elif ! echo "$out" | grep -qx '   22.0%  no CFI in libfoo.so.1' ||
	! echo "$out" | grep -qx '    7.0%  stack not readable'; then
	fail $t "losses not named: $(echo "$out" | grep -A3 'user stacks' | tr '\n' '|')"
elif [ "$share" != 0.71 ]; then
	fail $t "report --json user_stacks.complete_share is $share, not 0.71"
else
	ok $t
fi

t=completeness_bcc_lane_is_unknown_and_unnamed_frames_marked
d=$SCRATCH/bcc
mkdir -p "$d" && cp "$DATA/bcc/system.folded" "$d/offcpu.time.txt"
"$OFFCPU_BIN" summarize --tool offcputime-bpfcc "$d" >/dev/null 2>"$SCRATCH/bcc.err"
s=$d/offcpu.summary.json
bad=$(schema_ok "$s")
us=$(jq -c '.user_stacks | [.unwinder, .known, .complete_share, .complete_ns, (.unsymbolized_ns > 0)]' "$s" 2>/dev/null)
unknown=$(jq '[.top_stacks[].frames[].name | select(. == "[unknown]")] | length' "$s" 2>/dev/null)
marked=$(jq '[.top_stacks[].frames[] | select(.name == "[unsymbolized]" and .kind == "user")] | length' "$s" 2>/dev/null)
if [ "$us" != '["frame pointers (bcc)",false,null,null,true]' ]; then
	fail $t "user_stacks: ${us:-none} $(head -c 200 "$SCRATCH/bcc.err")"
elif [ -n "$bad" ]; then
	fail $t "$bad"
elif [ "$unknown" != 0 ] || [ "${marked:-0}" = 0 ]; then
	fail $t "top stacks hold $unknown [unknown] and $marked [unsymbolized] user frames"
else
	ok $t
fi

mount_tracefs
if ! need_root; then
	skip completeness_native_capture "needs root to load BPF programs"
	skip completeness_bpftrace_capture "needs root to load BPF programs"
	exit 0
fi

t=completeness_native_capture
d=$SCRATCH/native
"$OFFCPU_BIN" record -o "$d" -q -- "$W/mutex" --wait-pipe >/dev/null 2>"$SCRATCH/native.err"
s=$d/offcpu.summary.json
if [ "$(json "$s" .state 2>/dev/null)" != summary_written ]; then
	skip $t "the built-in collector did not capture: $(head -c 300 "$SCRATCH/native.err")"
else
	bad=$(schema_ok "$s")
	split=$(jq '.user_stacks | .with_user_stack_ns + .stack_missing_ns + .no_user_stack_ns' "$s")
	total=$(jq .totals.off_ns "$s")
	us=$(jq -c '.user_stacks | [.unwinder, .known, (.complete_share | type),
		(.complete_ns + .incomplete_ns == .with_user_stack_ns), (.with_user_stack_ns > 0)]' "$s")
	if [ -n "$bad" ]; then
		fail $t "$bad"
	elif [ "$split" != "$total" ]; then
		fail $t "user_stacks classes add up to $split ns, totals.off_ns is $total"
	elif [ "$us" != '["dwarf",true,"number",true,true]' ]; then
		fail $t "user_stacks: $us"
	else
		ok $t
	fi
fi

t=completeness_bpftrace_capture
if ! command -v bpftrace >/dev/null; then
	skip $t "bpftrace is not installed"
	exit 0
fi
d=$SCRATCH/bt
"$OFFCPU_BIN" record --tool bpftrace --mode stacks -o "$d" -q -- "$W/mutex" --wait-pipe \
	>/dev/null 2>"$SCRATCH/bt.err"
s=$d/offcpu.summary.json
if [ "$(json "$s" .state 2>/dev/null)" != summary_written ]; then
	skip $t "bpftrace did not capture: $(json "$s" .caveat.message 2>/dev/null | head -c 300)"
else
	bad=$(schema_ok "$s")
	raw=$(jq '[.top_stacks[].frames[].name | select(test("^0x[0-9a-fA-F]+$"))] | length' "$s")
	us=$(jq -c '.user_stacks | [.unwinder, .known, .complete_share]' "$s")
	if [ -n "$bad" ]; then
		fail $t "$bad"
	elif [ "$us" != '["frame pointers (bpftrace)",false,null]' ]; then
		fail $t "user_stacks: $us"
	elif [ "$raw" != 0 ]; then
		fail $t "$raw raw addresses shown as frames in the top stacks"
	else
		ok $t
	fi
fi
