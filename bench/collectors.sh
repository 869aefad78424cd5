#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Collector overhead: what tracing costs a workload that leaves the CPU very often.
#
#   bench/collectors.sh [BUILD]      (root; env BENCH_REPS=5, BENCH_SECS=2)
#
# Two workloads (bench/futex_pingpong.c, bench/lock_contend.c) run bare and under
# each collector, alternating within every repetition (the order rotates), and each
# reports its own operations per second over its own run, so a collector's start
# and stop are never counted: only the cost while it traces.
. "$(dirname "$0")/lib.sh"
bench_init "${1:-build}"
SECS=${BENCH_SECS:-2}
MODES="bare offcpu bcc bpftrace perf"

is_root || die "collector overhead needs root (BPF and perf tracepoints)"

# lock (glibc's default mutex) is left out by default: its unlocker takes the lock
# straight back, so 64 contenders make about 0.003 switches per operation and any
# collector's cost is lost in the run-to-run spread. BENCH_WORKLOADS can add it.
workloads=${BENCH_WORKLOADS:-futex lockpi}
argv_of()
{
	case $1 in
	futex) echo "$BB/futex_pingpong $SECS" ;;
	lock) echo "$BB/lock_contend --threads 64 $SECS" ;;
	lockpi) echo "$BB/lock_contend --threads 64 --pi $SECS" ;;
	esac
}

avail=
for m in $MODES; do
	if why=$(mode_available $m); then
		avail="$avail $m"
	else
		echo "$m $why" >>"$TMP/skipped"
	fi
done

: >"$TMP/results"
for rep in $(seq 1 "$REPS"); do
	# Rotate the order each repetition so that no collector always runs first.
	order=$(echo $avail | awk -v r=$((rep - 1)) \
		'{ for (i = 0; i < NF; i++) printf "%s ", $((i + r) % NF + 1) }')
	for w in $workloads; do
		for m in $order; do
			say "collectors: rep $rep/$REPS $w $m"
			if run_under $m $(argv_of $w); then
				ops=$(kv ops_per_sec "$TMP/out")
				n=$(kv ops "$TMP/out")
				csw=$(kv csw "$TMP/out")
				[ -n "$ops" ] && echo "$w $m $rep $ops $(awk -v c="$csw" -v n="$n" \
					'BEGIN { print n ? c / n : 0 }')" >>"$TMP/results"
			fi
		done
	done
done

cat <<EOF
### Collector overhead: futex ping-pong and a 64-thread lock convoy

Command: \`bench/collectors.sh $(basename "$BUILD")\` (BENCH_REPS=$REPS, BENCH_SECS=$SECS), as root.

Method. Each workload measures its own operations per second over its own
$SECS s run, so a collector's start-up and shut-down are outside the window: what
is left is the cost of tracing every context switch. \`futex_pingpong\`: two
threads pinned to one CPU hand a turn back and forth through a futex (every
operation is a wake and a sleep). \`lock_contend --pi\`: 64 threads, not
pinned, take one priority-inheritance pthread mutex (about 250 ns of work inside,
50 ns outside); the kernel hands such a mutex to the first waiter at every
contended unlock, so this is a lock convoy with about one switch per operation.
(With glibc's default mutex the unlocker takes the lock straight back: 64
contenders then make about 0.003 switches per operation here and every
collector's cost is lost in the run-to-run spread; \`BENCH_WORKLOADS="futex lock
lockpi"\` adds that case.) Each repetition runs every variant once, in an order that rotates
between repetitions; the table shows medians over $REPS repetitions. Variants:
bare; \`offcpu record\` (built-in collector); BCC's C \`offcputime -p PID\`
(Debian libbpf-tools; the workload waits for SIGUSR1 until the tool holds its BPF
link); the project's bpftrace script share/offcpu.bt through
\`offcpu record --tool bpftrace\`; \`perf record -e sched:sched_switch -g\`.
*Added cost per operation* is 1/rate(variant) - 1/rate(bare); *per switch*
divides it by the bare run's context switches per operation (getrusage);
*vs bcc* is the added cost over BCC's added cost (lower is better; 1.00 = as
costly as BCC).

EOF

if [ -s "$TMP/skipped" ]; then
	while read -r m why; do
		echo "- $m: not measured ($why)"
	done <"$TMP/skipped"
	echo
fi

for w in $workloads; do
	case $w in
	futex) echo "futex_pingpong (2 threads pinned to CPU $(($(nproc) - 1))):" ;;
	lock) echo "lock_contend (64 threads, one glibc mutex):" ;;
	lockpi) echo "lock_contend --pi (64 threads, one priority-inheritance mutex: a convoy):" ;;
	esac
	echo
	echo "| variant | ops/s | vs bare | added ns/op | switches/op | added us/switch | vs bcc |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for m in $MODES; do
		awk -v w=$w -v m=$m '$1 == w && $2 == m { print $4 }' "$TMP/results" | median \
			>"$TMP/med.$w.$m"
		awk -v w=$w -v m=$m '$1 == w && $2 == m { print $5 }' "$TMP/results" | median \
			>"$TMP/csw.$w.$m"
	done
	# Half the spread of the bare runs: a difference smaller than that is noise.
	spread=$(awk -v w=$w '$1 == w && $2 == "bare" { v[++n] = $4 }
		END { if (n < 2) { print 0; exit }
			lo = hi = v[1]; for (i = 2; i <= n; i++) { if (v[i] < lo) lo = v[i]; if (v[i] > hi) hi = v[i] }
			print (hi - lo) / (hi + lo) }' "$TMP/results")
	for m in $MODES; do
		awk -v m=$m -v ops="$(cat "$TMP/med.$w.$m")" -v bare="$(cat "$TMP/med.$w.bare")" \
			-v spread="$spread" \
			-v bcc="$(cat "$TMP/med.$w.bcc")" -v csw="$(cat "$TMP/csw.$w.$m")" \
			-v cswb="$(cat "$TMP/csw.$w.bare")" '
		function num(x) { return x != "nan" && x != "" }
		BEGIN {
			if (!num(ops)) { printf "| %s | not measured | | | | | |\n", m; exit }
			add = num(bare) ? 1e9 / ops - 1e9 / bare : "nan"
			addb = num(bcc) && num(bare) ? 1e9 / bcc - 1e9 / bare : "nan"
			noise = m != "bare" && num(bare) && (bare / ops - 1 < spread && ops / bare - 1 < spread)
			printf "| %s | %.0f | %s | %s | %.3f | %s | %s |\n", m, ops,
				num(bare) ? sprintf("%.2fx%s", bare / ops, noise ? " (noise)" : "") : "n/a",
				m == "bare" ? "0" : (num(add) ? sprintf("%.0f", add) : "n/a"), csw,
				m == "bare" ? "0" : (num(add) && cswb > 0 ? sprintf("%.2f", add / cswb / 1000) : "n/a"),
				m == "bare" ? "" : (num(add) && num(addb) && addb > 0 ? sprintf("%.2f", add / addb) : "n/a")
		}'
	done
	echo
	awk -v s="$spread" 'BEGIN { printf "Bare runs spread: +-%.0f%% around their middle; a slowdown within that is marked (noise).\n", s * 100 }'
	echo
done
echo "Raw runs (workload, variant, repetition, ops/s, switches/op):"
echo
echo '```'
cat "$TMP/results"
echo '```'
