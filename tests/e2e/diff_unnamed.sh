# SPDX-License-Identifier: GPL-2.0-only
# offcpu diff matches stacks by names, never by the addresses of frames that
# have none: ASLR moves those on every run, so two runs of one program must
# show no stack as both "gone" and "new".
#
# 1. Fixtures (tests/data/diff/junk-a, junk-b): the same five stacks, whose
#    unnamed frames differ in address, spelling and number: no stack is on one
#    side only.
# 2. Real captures: tests/workloads/forkexec recorded twice with the built-in
#    collector. Its processes exit before the end of the capture, and where
#    their frames cannot be named they are addresses that differ from run to
#    run. No stack the diff calls gone may equal one it calls new once frames
#    without a name are left out, and no raw address is shown as a frame.
. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$SCRATCH"' EXIT

# Frame names of one-sided stacks, unnamed frames left out: "gone|new KEY" lines.
one_sided() {
	jq -r '.stacks[] | select(.only_base or .only_new) |
		(if .only_base then "gone" else "new" end) + " " +
		([.frames[].name | select(test("^(0x[0-9a-fA-F]+|\\[unknown\\]|\\[unsymbolized.*\\])$") | not)]
		 | join(";"))' "$1"
}

# both_ways FILE: keys that are both gone and new (nothing when there is none).
both_ways() {
	one_sided "$1" | sort -u | awk '{ k = substr($0, index($0, " ") + 1); n[k]++ } n[k] == 2 { print k }'
}

t=diff_unnamed_frames_fixture
if ! "$OFFCPU_BIN" diff "$DATA/diff/junk-a" "$DATA/diff/junk-b" --json >"$SCRATCH/fix.json" 2>"$SCRATCH/fix.err"; then
	fail $t "diff failed: $(head -c 300 "$SCRATCH/fix.err")"
elif [ "$(jq '[.stacks[] | select(.only_base or .only_new)] | length' "$SCRATCH/fix.json")" != 0 ]; then
	fail $t "stacks on one side only: $(one_sided "$SCRATCH/fix.json" | head -4 | cut -c1-200)"
elif [ "$(jq '.stacks | length' "$SCRATCH/fix.json")" != 5 ]; then
	fail $t "expected the fixtures' 5 stacks, got $(jq '.stacks | length' "$SCRATCH/fix.json")"
else
	ok $t
fi

mount_tracefs
if ! need_root; then
	skip diff_unnamed_frames_real_captures "needs root to load BPF programs"
	exit 0
fi
t=diff_unnamed_frames_real_captures
for run in a b; do
	"$OFFCPU_BIN" record -o "$SCRATCH/$run" -q -- "$W/forkexec" >/dev/null 2>"$SCRATCH/$run.err"
	if [ "$(json "$SCRATCH/$run/offcpu.summary.json" .state 2>/dev/null)" != summary_written ]; then
		skip $t "the built-in collector did not capture: $(head -c 300 "$SCRATCH/$run.err")"
		exit 0
	fi
done
"$OFFCPU_BIN" diff "$SCRATCH/a" "$SCRATCH/b" --json >"$SCRATCH/real.json" 2>"$SCRATCH/real.err"
raw=$(jq -r '[.stacks[].frames[].name | select(test("^0x[0-9a-fA-F]+$"))] | length' "$SCRATCH/real.json" 2>/dev/null)
both=$(both_ways "$SCRATCH/real.json")
unnamed=$(grep -cE '^frame [0-9]+ [uk] (0x[0-9a-f]+|\[unsymbolized)' "$SCRATCH/a/offcpu.profile.txt")
echo "# frames without a name in run a: $unnamed; one-sided stacks: $(one_sided "$SCRATCH/real.json" | wc -l)"
if [ -z "$raw" ]; then
	fail $t "diff failed: $(head -c 300 "$SCRATCH/real.err")"
elif [ -n "$both" ]; then
	fail $t "stacks both gone and new: $(echo "$both" | head -3 | cut -c1-200)"
elif [ "$raw" != 0 ]; then
	fail $t "$raw raw addresses shown as frames"
else
	ok $t
fi
