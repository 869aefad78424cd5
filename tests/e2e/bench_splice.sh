#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/splice.sh, which bench/run.sh uses to put fresh sections into
# BENCHMARKS.md: the sections run replace their own blocks, and the text
# written by hand around them, the other sections and the Targets list stay.
. "$(dirname "$0")/lib.sh"
SPLICE="$OFFCPU_ROOT/bench/splice.sh"
R=$SCRATCH/results
mkdir -p "$R"

# A file like BENCHMARKS.md: a Targets list, a section with its _Taken line
# and hand-written rounds after it, a section without one, a last section.
cat >"$SCRATCH/B.md" <<'EOF'
# Benchmarks

## Targets

- Target: x under 50 ms: met (round 4), NOT met on round 6's machine.

## Start

### Start and stop latency

| collector | ms |
|---|---:|
| offcpu | 403 |

Target: x under 50 ms: NOT met (403 ms).

_Taken 2026-12-02 19:05 UTC, 79 s._

**Round 6** (hand-written): kept across runs.

### Scaling with threads

old scaling table

### Real services

Round 9, hand-written, inside no block.
EOF
cp "$SCRATCH/B.md" "$SCRATCH/orig.md"
printf '### Start and stop latency\n\n| collector | ms |\n|---|---:|\n| offcpu | 90 |\n\nTarget: x under 50 ms: NOT met (90 ms).\n' >"$R/startup.md"
echo "2026-12-05 23:40 UTC, 77 s" >"$R/startup.when"
printf '### Scaling with threads\n\nnew scaling table\n' >"$R/scaling.md"
printf '### Unwind tables: a host-wide capture\n\nnew section\n' >"$R/hostwide.md"

t=bench_splice_replaces_a_section_up_to_its_taken_line
if "$SPLICE" "$SCRATCH/B.md" "$R" startup 2>"$SCRATCH/err" &&
	grep -q '^| offcpu | 90 |$' "$SCRATCH/B.md" && ! grep -q '| 403 |' "$SCRATCH/B.md" &&
	grep -q '^_Taken 2026-12-05 23:40 UTC, 77 s._$' "$SCRATCH/B.md" &&
	[ "$(grep -c '^_Taken' "$SCRATCH/B.md")" = 1 ]; then
	ok $t
else
	fail $t "$(tr '\n' ' ' <"$SCRATCH/B.md" | head -c 400)"
fi

t=bench_splice_keeps_hand_written_text_and_the_targets_list
if grep -q '^\*\*Round 6\*\* (hand-written): kept across runs.$' "$SCRATCH/B.md" &&
	grep -q "^- Target: x under 50 ms: met (round 4), NOT met on round 6's machine.$" "$SCRATCH/B.md" &&
	grep -q '^Round 9, hand-written, inside no block.$' "$SCRATCH/B.md" &&
	grep -q '^old scaling table$' "$SCRATCH/B.md" &&
	[ "$(diff "$SCRATCH/orig.md" "$SCRATCH/B.md" | grep -c '^[<>]')" -le 12 ]; then
	ok $t
else
	fail $t "$(diff "$SCRATCH/orig.md" "$SCRATCH/B.md" | head -n 12 | tr '\n' ' ')"
fi

# A section without a _Taken line ends at the next heading.
t=bench_splice_ends_a_block_at_the_next_heading
"$SPLICE" "$SCRATCH/B.md" "$R" scaling 2>/dev/null
if grep -q '^new scaling table$' "$SCRATCH/B.md" && ! grep -q 'old scaling' "$SCRATCH/B.md" &&
	grep -q '^### Real services$' "$SCRATCH/B.md" &&
	grep -q '^Round 9, hand-written, inside no block.$' "$SCRATCH/B.md"; then
	ok $t
else
	fail $t "$(tr '\n' ' ' <"$SCRATCH/B.md" | tail -c 300)"
fi

t=bench_splice_appends_a_new_section_and_says_so
"$SPLICE" "$SCRATCH/B.md" "$R" hostwide 2>"$SCRATCH/err"
if [ "$(tail -n 1 "$SCRATCH/B.md")" = "new section" ] &&
	grep -q 'hostwide: its heading is not in the file yet' "$SCRATCH/err"; then
	ok $t
else
	fail $t "tail: $(tail -n 2 "$SCRATCH/B.md" | tr '\n' ' '); stderr: $(cat "$SCRATCH/err")"
fi

# Bad input: a one-line error, the file untouched.
t=bench_splice_refuses_a_section_without_a_heading
printf 'no heading\n' >"$R/bad.md"
cp "$SCRATCH/B.md" "$SCRATCH/before.md"
if ! "$SPLICE" "$SCRATCH/B.md" "$R" bad 2>"$SCRATCH/err" &&
	[ "$(wc -l <"$SCRATCH/err")" = 1 ] && grep -q "bad.md:1:" "$SCRATCH/err" &&
	cmp -s "$SCRATCH/before.md" "$SCRATCH/B.md" && ! ls "$SCRATCH"/B.md.* >/dev/null 2>&1; then
	ok $t
else
	fail $t "stderr: $(cat "$SCRATCH/err")"
fi
rm -rf "$SCRATCH"
