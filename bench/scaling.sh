#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Collector overhead and memory against the number of threads.
#
#   bench/scaling.sh [BUILD]   (root; env BENCH_REPS=2, BENCH_SECS=2,
#                               BENCH_THREADS="2 8 32 128 512")
#
# The workload is tests/workloads/stress (make tests-build): THREADS threads in
# pairs ping-pong through pipes and futexes, every thread reporting its own waits.
# Memory against unique stacks is in bench/postproc.sh (it is the post-processing
# that holds every stack).
. "$(dirname "$0")/lib.sh"
bench_init "${1:-build}"
REPS=${BENCH_REPS:-2}
SECS=${BENCH_SECS:-2}
THREADS=${BENCH_THREADS:-2 8 32 128 512}
STRESS=$BUILD/tests/workloads/stress
PLOTS=$BB/plots
MODES="bare offcpu bcc bpftrace"
mkdir -p "$PLOTS"

is_root || die "collector scaling needs root (BPF)"
[ -x "$STRESS" ] || die "$STRESS is missing; run 'make tests-build'"

avail=
for m in $MODES; do
	if why=$(mode_available $m); then
		avail="$avail $m"
	else
		echo "$m $why" >>"$TMP/skipped"
	fi
done

# The open file limit bounds stress's pipes (two per pipe pair).
ulimit -n 65536 2>/dev/null

: >"$TMP/results"
for rep in $(seq 1 "$REPS"); do
	for t in $THREADS; do
		order=$(echo $avail | awk -v r=$((rep - 1)) \
			'{ for (i = 0; i < NF; i++) printf "%s ", $((i + r) % NF + 1) }')
		for m in $order; do
			say "scaling: rep $rep/$REPS $t threads $m"
			rm -f "$TMP/truth.jsonl"
			export OFFCPU_TRUTH=$TMP/truth.jsonl
			if run_under $m "$STRESS" "$t" "$SECS"; then
				# waits per second, summed over threads (each over its own window)
				rate=$(jq -s '[.[] | select(.workload == "stress") |
					.waits / (.wall_ns / 1e9)] | add // 0' "$TMP/truth.jsonl" 2>/dev/null)
				echo "$t $m $rep ${rate:-0} ${RUN_RSS_KB:-0} ${RUN_BPF_BYTES:-0}" \
					>>"$TMP/results"
			fi
			unset OFFCPU_TRUTH
		done
	done
done

med()
{
	awk -v t=$1 -v m=$2 -v c=$3 '$1 == t && $2 == m { print $c }' "$TMP/results" | median
}

cat <<EOF
### Scaling with threads

Command: \`bench/scaling.sh $(basename "$BUILD")\` (BENCH_REPS=$REPS, BENCH_SECS=$SECS,
BENCH_THREADS="$THREADS"), as root.

Method. tests/workloads/stress runs THREADS threads in pairs that ping-pong
through pipes (half the pairs) and futexes (the other half) for $SECS s; each
thread reports how many times it waited and over how long, and the rate is the
sum over threads of waits per second. It runs bare and under each collector (as
in the overhead benchmark, alternating, order rotating), $REPS repetitions,
medians. *Added cost per wait* is 1/rate(collector) - 1/rate(bare). *User memory*
is the largest RSS in the collector's process tree (/usr/bin/time; for
\`offcpu record\` the workload's own RSS is in the same tree, see the bare
column); *BPF maps* is the memlock the collector's maps were charged at their
largest (summed from /proc/PID/fdinfo every 0.2 s by a real-time sampler). The smallest count is 2
threads: stress needs pairs.

EOF
if [ -s "$TMP/skipped" ]; then
	while read -r m why; do
		echo "- $m: not measured ($why)"
	done <"$TMP/skipped"
	echo
fi

printf "| threads | bare waits/s |"
for m in $MODES; do [ $m = bare ] || printf " %s added ns/wait |" $m; done
printf " offcpu vs bcc |\n|---:|---:|"
for m in $MODES; do [ $m = bare ] || printf -- "---:|"; done
printf -- "---:|\n"
: >"$TMP/plot.cost"
for t in $THREADS; do
	bare=$(med $t bare 4)
	printf "| %s | %s |" $t "$(fmt "$bare" 0)"
	for m in $MODES; do
		[ $m = bare ] && continue
		r=$(med $t $m 4)
		add=$(awk -v r="$r" -v b="$bare" 'BEGIN {
			if (r == "nan" || b == "nan" || r <= 0 || b <= 0) print "nan"
			else print 1e9 / r - 1e9 / b }')
		eval "add_$m=\$add"
		printf " %s |" "$(fmt "$add" 0)"
		echo "$m $t $add" >>"$TMP/plot.cost"
	done
	awk -v a="${add_offcpu:-nan}" -v b="${add_bcc:-nan}" 'BEGIN {
		if (a == "nan" || b == "nan" || b <= 0) print " n/a |"; else printf " %.2f |\n", a / b }'
done
echo

printf "| threads | bare RSS (MiB) |"
for m in $MODES; do [ $m = bare ] || printf " %s RSS / BPF maps (MiB) |" $m; done
printf "\n|---:|---:|"
for m in $MODES; do [ $m = bare ] || printf -- "---:|"; done
echo
: >"$TMP/plot.mem"
for t in $THREADS; do
	printf "| %s | %s |" $t "$(fmt "$(awk -v k="$(med $t bare 5)" 'BEGIN { print k / 1024 }')" 1)"
	for m in $MODES; do
		[ $m = bare ] && continue
		rss=$(med $t $m 5)
		bpf=$(med $t $m 6)
		if [ "$rss" = nan ]; then
			printf " n/a |"
			continue
		fi
		awk -v r="$rss" -v b="$bpf" 'BEGIN { printf " %.1f / %.1f |", r / 1024, b / 1048576 }'
		awk -v m=$m -v t=$t -v r="$rss" -v b="$bpf" \
			'BEGIN { printf "%s %d %.2f\n", m, t, (r * 1024 + b) / 1048576 }' >>"$TMP/plot.mem"
	done
	echo
done
echo

awk '$3 != "nan"' "$TMP/plot.cost" | awk -f "$ROOT/bench/plot.awk" \
	-v title="Added cost per wait against threads (stress)" -v xlabel="threads" \
	-v ylabel="added ns per wait" -v logx=1 >"$PLOTS/scaling-cost.svg"
awk -f "$ROOT/bench/plot.awk" -v title="Collector memory (user RSS + BPF maps) against threads" \
	-v xlabel="threads" -v ylabel="MiB" -v logx=1 "$TMP/plot.mem" >"$PLOTS/scaling-memory.svg"
echo "![Added cost per wait against threads](bench/plots/scaling-cost.svg)"
echo "![Collector memory against threads](bench/plots/scaling-memory.svg)"
echo
echo "Raw runs (threads, variant, repetition, waits/s, max RSS KiB, BPF map bytes):"
echo
echo '```'
cat "$TMP/results"
echo '```'
