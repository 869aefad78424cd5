#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What it costs to get complete user stacks from a program without frame pointers.
# The workload is bench/pipe_fpless (built -O2 -fomit-frame-pointer): two threads
# pinned to CPU 0 pass a byte over two pipes, every hand-off a read that sleeps,
# so every operation is two context switches, each with a user stack three
# functions deep below the thread in a binary that only .eh_frame describes.
# Side by side in one run, REPS alternating repetitions, medians:
#
#   bare      no tracer
#   native    offcpu record -- WORKLOAD (the built-in collector, call-site cache on)
#   nocache   the same with --no-stack-cache: every stack walked, the worst case
#   bcc       BCC's C offcputime -p PID (libbpf-tools): kernel and user stacks,
#             walked by frame pointers only (so it gets nothing past libc here)
#   perf      perf record -e sched:sched_switch --call-graph dwarf,16384 -- WORKLOAD,
#             written to a pipe into /dev/null (16 KiB of stack copied a switch;
#             unwinding happens later, in perf report, and is not counted)
#
# Tracers' user space runs on CPU 1. The cost a tracer adds is its median us/op
# minus bare's; per switch, that divided by the switches per operation the
# workload counted (getrusage). The target (issue #9): native's added cost at
# most 50% of offcputime's. Then one more native run, untimed, for the memlock
# of offcpu's BPF maps (largest seen) and how much of the blocked time has the
# workload's whole stack (xfer_leaf <- xfer_mid [<- xfer_top], down to
# start_thread or main).
#
# usage: bench/unwind.sh [BUILD]   (root; env BENCH_REPS=5, UNWIND_OPS=50000,
#        MODES="bare native nocache bcc perf", SETTLE=seconds after a tracer (1))
set -u
. "$(dirname "$0")/lib.sh"
bench_init "${1:-build}"
OPS=${UNWIND_OPS:-50000}
MODES=${MODES:-bare native nocache bcc perf}
PIPE=$BB/pipe_fpless
is_root || die "unwind.sh needs root (it loads BPF programs)"
if [ ! -x "$PIPE" ] || [ "$PIPE" -ot "$ROOT/bench/pipe_fpless.c" ]; then
	make -s -C "$ROOT" BUILD="$BUILD" "$PIPE" >&2 || die "cannot build $PIPE"
fi

# one MODE: one run; prints "us_per_op csw" (empty when the tracer failed).
one() {
	local out=$TMP/out pid tp n=0
	: >"$out"
	rm -rf "$TMP/lane"
	case $1 in
	bare) taskset -c 0 "$PIPE" "$OPS" >"$out" ;;
	native | nocache)
		local flag=
		[ "$1" = nocache ] && flag=--no-stack-cache
		taskset -c 1 "$OFFCPU" record -q $flag -o "$TMP/lane" -- \
			taskset -c 0 "$PIPE" "$OPS" >"$out" 2>>"$TMP/err" ;;
	bcc)
		taskset -c 0 "$PIPE" --wait-start "$OPS" >"$out" 2>"$TMP/wl.err" &
		pid=$!
		while ! grep -q 'waiting for SIGUSR1' "$TMP/wl.err" && [ $n -lt 1000 ]; do
			sleep 0.01
			n=$((n + 1))
		done
		taskset -c 1 "$BCC" -p $pid >"$TMP/bcc.txt" 2>>"$TMP/err" &
		tp=$!
		BG_PIDS="$pid $tp"
		if ! wait_bpf_link $tp 30; then
			kill $pid $tp 2>/dev/null
			wait $pid $tp 2>/dev/null
			BG_PIDS=
			say "bcc: $BCC did not attach"
			return
		fi
		kill -USR1 $pid
		wait $pid
		kill -INT $tp
		wait $tp
		BG_PIDS= ;;
	perf)
		# The workload's line goes to a file: perf's stdout carries its data.
		taskset -c 1 perf record -q -e sched:sched_switch --call-graph dwarf,16384 -o - -- \
			sh -c 'exec taskset -c 0 "$0" "$1" >"$2"' "$PIPE" "$OPS" "$out" \
			>/dev/null 2>>"$TMP/err" ;;
	esac
	[ "$1" = bare ] || sleep "${SETTLE:-1}"
	awk '/^pipe_fpless / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print v["us_per_op"], v["csw"] / v["ops"] }' "$out"
}

for m in $MODES; do
	case $m in
	bare) ;;
	native | nocache) native_ready || die "offcpu record --tool native does not capture here" ;;
	bcc) [ -x "$BCC" ] || die "no $BCC (Debian: libbpf-tools)" ;;
	perf) command -v perf >/dev/null || die "no perf (Debian: linux-perf)" ;;
	*) die "unknown mode $m" ;;
	esac
done

for rep in $(seq "$REPS"); do
	for m in $MODES; do
		v=$(one "$m")
		say "rep $rep $m: ${v:-failed} (us/op, switches/op)"
		[ -n "$v" ] && echo "$m $v" >>"$TMP/results"
	done
done

# The untimed native run: memlock of the BPF maps, and the stacks it got.
bpf_mem=n/a share=n/a
if [[ " $MODES " == *" native "* ]]; then
	taskset -c 1 "$OFFCPU" record -q -o "$TMP/lane" -- taskset -c 0 "$PIPE" "$OPS" \
		>/dev/null 2>>"$TMP/err" &
	pid=$!
	bpf_mem_sampler $pid "$TMP/bpfmem" &
	sampler=$!
	BG_PIDS="$pid $sampler"
	wait $pid
	wait $sampler
	BG_PIDS=
	bpf_mem=$(awk '{ printf "%.1f MiB", $1 / 1048576 }' "$TMP/bpfmem" 2>/dev/null)
	# Blocked time of the workload's rows whose user stack holds its
	# functions and reaches start_thread (the ponger) or main (gcc folds
	# xfer_top into main there, so it is not asked for).
	share=$(awk '
		$1 == "frame" { name[$2] = $4 }
		$1 == "stack" { s = ""; for (i = 3; i <= NF; i++) s = s ";" name[$i] ";"
			whole[$2] = s ~ /;xfer_mid;/ && s ~ /;xfer_leaf;/ &&
				(s ~ /;start_thread;/ || s ~ /;main;/) }
		$1 == "row" && $4 == "S" { tot += $6; if (whole[$3]) ok += $6 }
		END { if (tot) printf "%.1f%%", 100 * ok / tot; else print "n/a" }' \
		"$TMP/lane/offcpu.profile.txt" 2>/dev/null)
	us=$(jq -c '.user_stacks // empty' "$TMP/lane/offcpu.summary.json" 2>/dev/null)
fi

echo "### User stack unwinding: pinned pipe ping-pong without frame pointers"
echo
echo "Command: \`bench/unwind.sh $(basename "$BUILD")\`, as root; $REPS alternating repetitions" \
	"of $OPS operations, medians. Method: the header of bench/unwind.sh."
echo
echo "| mode | median us/op | min us/op | added us/op | added us/switch | added vs offcputime |"
echo "|---|---:|---:|---:|---:|---:|"
for m in $MODES; do
	med=$(awk -v m="$m" '$1 == m { print $2 }' "$TMP/results" | median)
	lo=$(awk -v m="$m" '$1 == m { print $2 }' "$TMP/results" | sort -g | head -n 1)
	csw=$(awk -v m="$m" '$1 == m { print $3 }' "$TMP/results" | median)
	echo "$m $med ${lo:-nan} $csw" >>"$TMP/medians"
done
awk '{ med[$1] = $2; lo[$1] = $3; csw[$1] = $4; order[NR] = $1 }
END {
	b = ("bare" in med) ? med["bare"] : "nan"
	bcc = ("bcc" in med && b != "nan") ? med["bcc"] - b : "nan"
	for (i = 1; i <= NR; i++) {
		m = order[i]
		if (med[m] == "nan") {
			printf "| %s | failed | | | | |\n", m
			continue
		}
		if (m == "bare" || b == "nan") {
			printf "| %s | %.3f | %.3f | | | |\n", m, med[m], lo[m]
			continue
		}
		a = med[m] - b
		r = (bcc != "nan" && bcc > 0) ? sprintf("%.0f%%", 100 * a / bcc) : "n/a"
		printf "| %s | %.3f | %.3f | %.3f | %.3f | %s |\n", m, med[m], lo[m], a,
			(csw[m] > 0 ? a / csw[m] : 0), r
	}
	if ("native" in med && bcc != "nan" && bcc > 0) {
		r = 100 * (med["native"] - b) / bcc
		printf "\nTarget: offcpu'"'"'s added cost at most 50%% of offcputime'"'"'s on the FP-less pipe benchmark: %s (%.0f%%).\n",
			r <= 50 ? "met" : "NOT met", r
	}
}' "$TMP/medians"
echo
echo "offcpu record (native, untimed run): BPF maps memlock at most ${bpf_mem:-n/a};" \
	"${share:-n/a} of the workload's blocked time in stacks with its" \
	"functions down to start_thread or main (complete user stacks)."
[ -n "${us:-}" ] && echo "The summary's user_stacks: \`$us\`."
echo
grep -h "offcpu native:.*\(cache\|walk\|unwind\)" "$TMP/err" 2>/dev/null | tail -n 2 |
	sed 's/^/    /'
exit 0
