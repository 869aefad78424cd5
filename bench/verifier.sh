#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The verifier's work per BPF program, and where offcpu record's start-up goes.
#
#   bench/verifier.sh [BUILD]      (root; env BENCH_REPS=5)
#
# OFFCPU_VERIFIER_STATS=1 makes record load every program with the verifier's
# statistics (log level 4) and write, per program, its instructions, the
# instructions the verifier processed (bpf_prog_info.verified_insns), its
# states and the verification time, and the start-up phases in order, into
# the capture's diagnostics. This runs `record -- true` that way in each mode
# that loads different code (the sched_switch program's rodata prunes what a
# mode does not use), then BENCH_REPS times in the default mode for the
# phases' medians. Times are wall-clock: on a busy machine they stretch, the
# instruction counts do not.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OFFCPU=$BUILD/offcpu
REPS=${BENCH_REPS:-5}
[ -x "$OFFCPU" ] || die "$OFFCPU is missing; run make first"

is_root || die "loading BPF programs needs root"
native_ready || die "the native collector cannot run here (offcpu doctor says why)"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# run NAME OPTIONS...: one record -- true with the statistics; its diagnostics in $TMP/NAME.
run() {
	local name=$1
	shift
	OFFCPU_VERIFIER_STATS=1 "$OFFCPU" record -q "$@" -o "$TMP/$name.d" -- true \
		>/dev/null 2>&1 || die "record $* failed"
	cp "$TMP/$name.d/offcpu.diagnostics.txt" "$TMP/$name"
}

echo "## Verifier work per program (record -- true, kernel $(uname -r))"
echo
echo "| mode | program | insns | processed | states (peak) | verification ms |"
echo "|---|---|---:|---:|---:|---:|"
# A process to attach to (-p loads the snapshot program too).
sleep 30 >/dev/null 2>&1 &
pid=$!
for mode in default raw_tp fp_unwind no_stack_cache attach_pid timeline; do
	case $mode in
	default) run $mode ;;
	raw_tp) run $mode --raw-tp ;;
	fp_unwind) run $mode --unwind fp ;;
	no_stack_cache) run $mode --no-stack-cache ;;
	attach_pid) OFFCPU_VERIFIER_STATS=1 "$OFFCPU" record -q -p "$pid" -d 0.1 -o "$TMP/$mode.d" \
		>/dev/null 2>&1 && cp "$TMP/$mode.d/offcpu.diagnostics.txt" "$TMP/$mode" ;;
	timeline) run $mode --timeline ;;
	esac
	sed -nE 's/^offcpu native: verifier: ([a-z_]+): ([0-9]+) insns, ([0-9]+) processed, ([-0-9]+) states \(peak ([-0-9]+)\), ([-0-9.]+) ms$/\1 \2 \3 \4 \5 \6/p' \
		"$TMP/$mode" | while read -r prog insns proc st peak ms; do
		echo "| $mode | $prog | $insns | $proc | $st ($peak) | $ms |"
	done
done
kill "$pid" 2>/dev/null

echo
echo "## Start-up phases, in order (default mode, medians of $REPS, ms)"
echo
for i in $(seq "$REPS"); do
	run rep$i
	awk '
		/start-up: load / { gsub(/,/, ""); load = $5; maps = $10; attach = $13 }
		/start-up: kernel BTF/ {
			match($0, /kernel BTF [0-9.]+/); btf = substr($0, RSTART + 11, RLENGTH - 11)
			match($0, /thread [a-z ]+ in [0-9.]+/); kt = substr($0, RSTART, RLENGTH)
			sub(/.* in /, "", kt)
		}
		/verifier: sw_/ { v = $(NF - 1) }
		END { print kt, btf, v, load - v, maps, attach }' "$TMP/rep$i"
done >"$TMP/phases"
median_col() { sort -n -k"$1" "$TMP/phases" | awk -v c="$1" '{ a[NR] = $c } END { print a[int((NR + 1) / 2)] }'; }
echo "| phase | ms |"
echo "|---|---:|"
echo "| kernel BTF walked for the feature checks and the CO-RE target (collect/corebtf.h) | $(median_col 2) |"
echo "| kallsyms thread started (only for a timeline, or without bpf_kallsyms_lookup_name; its read overlaps the phases below) | $(median_col 1) |"
echo "| sched_switch program verified | $(median_col 3) |"
echo "| rest of the load (libbpf: vmlinux BTF, CO-RE against the small target, maps, other programs; kernel text ranges asked of the ksym program, or the kallsyms thread joined) | $(median_col 4) |"
echo "| pid maps and unwinder set-up | $(median_col 5) |"
echo "| attach | $(median_col 6) |"
