#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Overhead of the native collector against bcc's offcputime (libbpf-tools), on
# the context-switch-heaviest workload there is: two processes pinned to CPU 0
# ping-ponging over pipes (perf bench sched pipe; every op is two sleeps and two
# wakeups). Side by side in one run, alternating, medians:
#
#   bare      no tracer
#   bcc       /usr/sbin/offcputime -u (host-wide, user threads: walks both
#             stacks at every switch-out)
#   native    offcpu's collector, host-wide (-a: user threads), call-site cache on
#   nocache   the same with every stack walked (--no-cache)
#   timeline  native keeping a timeline of every interval (record --timeline=0:
#             one ring-buffer record per switch, and sched_waking traced)
#   floor     an empty BPF program on sched_switch (bench/empty_switch.c): what
#             any tracer of the switch adds before its first instruction runs
#
# Prints us/op per mode, the cost each tracer adds over bare, and native's added
# cost as a fraction of bcc's, also above the floor. Tracers' user space runs on
# CPU 1 so it does not compete with the benchmark; their BPF programs run where
# the switches happen.
#
# Then, once more per tracer with kernel.bpf_stats_enabled=1, the run time of
# each tracer's own BPF programs (found through its file descriptors) per op:
# a measure that the scheduling noise of a shared machine does not blur. It
# includes bpf_stats' own two clock reads per program run, for both tracers.
#
# usage: bench/overhead.sh [BUILD] [REPS] [LOOPS]    (root; defaults: build 7 200000)
# env:   MODES="bare bcc native nocache timeline floor" to choose, BCC=/path/to/offcputime,
#        SETTLE=seconds to wait after stopping a tracer (2)
set -u

BUILD=${1:-build}
REPS=${2:-7}
LOOPS=${3:-200000}
MODES=${MODES:-bare bcc native nocache timeline floor}
BCC=${BCC:-/usr/sbin/offcputime}
ATTACH=$BUILD/bench/native-attach
EMPTY=$BUILD/bench/empty-switch
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

die() { echo "overhead.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (it attaches BPF programs)"
command -v perf >/dev/null || die "needs perf (perf bench sched pipe)"
if [ ! -x "$ATTACH" ] || [ "$ATTACH" -ot "$BUILD/liboffcpu.a" ] || [ ! -x "$EMPTY" ]; then
	make -s BUILD="$BUILD" "$ATTACH" "$EMPTY" >&2 ||
		die "cannot build $ATTACH and $EMPTY"
fi

# Let a stopped tracer's teardown (freeing its maps, RCU callbacks, kworkers
# on every CPU) finish before the next measurement.
settle() {
	sleep "${SETTLE:-2}"
}

# One measurement: us/op of the pinned pipe benchmark.
bench() {
	taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>/dev/null |
		awk '/usecs\/op/ { print $1 }'
}

# Nanoseconds the BPF programs held open by process $1 ran, summed (needs bpf_stats).
prog_ns() {
	local id sum=0 v
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u); do
		v=$(bpftool -j prog show id "$id" 2>/dev/null | jq -r '.run_time_ns // 0')
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# With STATS set, print the tracer's BPF time per op instead of the benchmark's us/op.
measure() { # tracer pid
	if [ -n "${STATS:-}" ]; then
		local before after
		before=$(prog_ns "$1")
		bench >/dev/null
		after=$(prog_ns "$1")
		echo "$before $after $LOOPS" | awk '{ printf "%.3f\n", ($2 - $1) / $3 / 1000 }'
	else
		bench
	fi
}

# Start a tracer (native-attach or empty-switch, and its options) on CPU 1,
# wait until it is attached, run the benchmark, stop it.
run_ready() {
	local bin=$1 pid i
	shift
	rm -f "$TMP/ready"
	taskset -c 1 "$bin" --ready "$TMP/ready" "$@" 2>"$TMP/native$*.err" &
	pid=$!
	for i in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
	[ -e "$TMP/ready" ] || { kill $pid; die "$bin did not attach: $(tail -3 "$TMP/native$*.err")"; }
	measure $pid
	kill -INT $pid
	wait $pid
	settle
}

run_native() {
	run_ready "$ATTACH" -a "$@"
}

run_bcc() {
	[ -x "$BCC" ] || die "no $BCC (Debian: libbpf-tools)"
	taskset -c 1 "$BCC" -u >/dev/null 2>"$TMP/bcc.err" &
	local pid=$! i
	# offcputime says nothing when attached: wait for its sched_switch program.
	for i in $(seq 100); do
		bpftool -j prog show 2>/dev/null | grep -q '"name":"sched_switch"' && break
		sleep 0.1
	done
	sleep 0.5
	measure $pid
	# Background jobs of a script ignore SIGINT: TERM (offcputime prints nothing then).
	kill -TERM $pid
	wait $pid 2>/dev/null
	settle
}

for rep in $(seq "$REPS"); do
	for mode in $MODES; do
		case $mode in
		bare) v=$(bench) ;;
		bcc) v=$(run_bcc) ;;
		native) v=$(run_native) ;;
		nocache) v=$(run_native --no-cache) ;;
		timeline) v=$(run_native --timeline 0) ;;
		floor) v=$(run_ready "$EMPTY") ;;
		*) die "unknown mode $mode" ;;
		esac
		echo "$mode $v" >>"$TMP/results"
		echo "rep $rep $mode $v us/op" >&2
	done
done

for f in "$TMP"/native*.err; do
	[ -e "$f" ] && grep -h "call-site cache\|stack walks\|user words" "$f" | sed "s|^offcpu native: |last $(basename "$f" .err): |" >&2
done

# BPF program time per op, one run per tracer.
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for mode in $MODES; do
	case $mode in
	bcc) v=$(STATS=1 run_bcc) ;;
	native) v=$(STATS=1 run_native) ;;
	nocache) v=$(STATS=1 run_native --no-cache) ;;
	timeline) v=$(STATS=1 run_native --timeline 0) ;;
	floor) v=$(STATS=1 run_ready "$EMPTY") ;;
	*) continue ;;
	esac
	echo "$mode $v" >>"$TMP/progtime"
done
echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled

awk -v modes="$MODES" '
function median(mode,   n, i, j, t, a) {
	n = 0
	for (i = 1; i <= cnt; i++) if (m[i] == mode) a[++n] = v[i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	if (n == 0) return -1
	lo[mode] = a[1]
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
FNR == NR { m[++cnt] = $1; v[cnt] = $2; next }
{ prog[$1] = $2 }
END {
	split(modes, ms, " ")
	for (k in ms) med[ms[k]] = median(ms[k])
	printf "%-8s %12s %12s %14s %16s\n", "mode", "median us/op", "min us/op", "added us/op", "BPF us/op"
	for (k = 1; k in ms; k++) {
		mo = ms[k]
		added = (mo != "bare" && ("bare" in med)) ? sprintf("%14.3f", med[mo] - med["bare"]) : sprintf("%14s", "")
		pt = (mo in prog) ? sprintf("%16.3f", prog[mo]) : sprintf("%16s", "")
		printf "%-8s %12.3f %12.3f %s %s\n", mo, med[mo], lo[mo], added, pt
	}
	if (("bcc" in med) && ("bare" in med) && med["bcc"] > med["bare"]) {
		b = med["bcc"] - med["bare"]
		for (k = 1; k in ms; k++) {
			mo = ms[k]
			if (mo == "native" || mo == "nocache" || mo == "timeline" || mo == "floor")
				printf "%s added cost = %.1f%% of bcc offcputime added cost (medians)\n", mo, 100 * (med[mo] - med["bare"]) / b
		}
		if (("floor" in med) && ("native" in med) && med["bcc"] > med["floor"])
			printf "native added cost above the floor = %.1f%% of bcc offcputime'"'"'s above the floor\n", 100 * (med["native"] - med["floor"]) / (med["bcc"] - med["floor"])
	}
	if (("bcc" in prog) && prog["bcc"] > 0)
		for (k = 1; k in ms; k++) {
			mo = ms[k]
			if ((mo == "native" || mo == "nocache" || mo == "timeline") && (mo in prog))
				printf "%s BPF time = %.1f%% of bcc offcputime BPF time\n", mo, 100 * prog[mo] / prog["bcc"]
		}
}' "$TMP/results" "$TMP/progtime"
