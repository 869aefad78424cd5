#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Start and stop latency of the collectors.
#
#   bench/startup.sh [BUILD]      (root; env BENCH_REPS=5)
#
# End to end: hyperfine on `offcpu record -- true` (and the same through the
# bpftrace lane, and bpftrace running share/offcpu.bt with -c true). Start to first
# traced event and stop: bench/beacon.c, the same measurement for every collector.
. "$(dirname "$0")/lib.sh"
bench_init "${1:-build}"
BCC=${BCC_OFFCPUTIME:-/usr/sbin/offcputime}
BT_SCRIPT=$ROOT/share/offcpu.bt
HF_RUNS=${BENCH_HYPERFINE_RUNS:-10}
TARGET_MS=50

is_root || die "start/stop latency needs root (BPF)"
command -v hyperfine >/dev/null || die "hyperfine is not installed (apt-get install hyperfine)"

# traced_ns KIND FILE PID: the off-CPU time the collector's output gives thread PID.
traced_ns()
{
	case $1 in
	bcc) # "    -                comm (PID)" then "        MICROSECONDS"
		awk -v pid="($3)" '$1 == "-" && $NF == pid { getline; s += $1 }
			END { printf "%.0f\n", s * 1000 }' "$2" ;;
	bpftrace) # "..., comm, TGID, TID]: NANOSECONDS"
		awk -v tail=", $3, $3]:" 'index($0, tail) { s += $NF } END { printf "%.0f\n", s }' "$2" ;;
	esac
}

# first_event OUT TRACED_NS: when the first traced sleep of the beacon began, in ms
# after the launch: walk the sleeps back from the end until they add up to what
# the collector saw.
first_event_ms()
{
	awk -v traced="$2" '
		$1 == "launch" { launch = $2 }
		$1 == "sleep" { n++; b[n] = $2; a[n] = $3 }
		END {
			if (traced <= 0) { print "never"; exit }
			for (i = n; i >= 1; i--) {
				s += a[i] - b[i]
				if (s >= traced)
					break
			}
			if (i < 1) i = 1
			printf "%.1f\n", (b[i] - launch) / 1e6
		}' "$1"
}

field_ms()
{
	awk -v from="$2" -v to="$3" '$1 == from { f = $2 } $1 == to { t = $2 }
		END { printf "%.1f\n", (t - f) / 1e6 }' "$1"
}

tools="bcc bpftrace"
if native_ready; then
	lanes="native bpftrace"
else
	lanes="bpftrace"
fi
[ -x "$BCC" ] || { tools=${tools/bcc/}; echo "bcc $BCC is not installed" >>"$TMP/skipped"; }

: >"$TMP/results"
for rep in $(seq 1 "$REPS"); do
	for lane in $lanes; do
		say "startup: rep $rep/$REPS offcpu record --tool $lane"
		rm -rf "$TMP/lane" "$TMP/mark"
		"$BB/beacon" launch --wait "$TMP/beacon.out" -- "$OFFCPU" record -q --tool $lane \
			-o "$TMP/lane" -- "$BB/beacon" mark "$TMP/mark" 2>>"$TMP/err"
		if [ -s "$TMP/mark" ]; then
			cat "$TMP/mark" >>"$TMP/beacon.out"
			echo "record-$lane $rep $(field_ms "$TMP/beacon.out" launch mark)" \
				"$(field_ms "$TMP/beacon.out" mark exit)" \
				"$(field_ms "$TMP/beacon.out" launch exit)" >>"$TMP/results"
		fi
	done
	for t in $tools; do
		say "startup: rep $rep/$REPS $t"
		case $t in
		bcc)
			"$BB/beacon" launch --ms 2500 "$TMP/beacon.out" -- "$BCC" -p {} \
				>"$TMP/tool.out" 2>>"$TMP/err" ;;
		bpftrace)
			BPFTRACE_MAP_KEYS_MAX=65536 "$BB/beacon" launch --ms 6000 "$TMP/beacon.out" -- \
				bpftrace "$BT_SCRIPT" {} >"$TMP/tool.out" 2>>"$TMP/err" ;;
		esac
		# The beacon is the parent of the tool: its pid is the tool's -p argument,
		# which the tool's output names; take it from there.
		case $t in
		bcc) pid=$(awk '$1 == "-" { gsub(/[()]/, "", $NF); print $NF; exit }' "$TMP/tool.out") ;;
		bpftrace) pid=$(sed -n 's/.*, beacon, \([0-9]*\), [0-9]*\]:.*/\1/p' "$TMP/tool.out" |
			head -n 1) ;;
		esac
		traced=0
		[ -n "$pid" ] && traced=$(traced_ns $t "$TMP/tool.out" "$pid")
		first=$(first_event_ms "$TMP/beacon.out" "$traced")
		stop=$(field_ms "$TMP/beacon.out" sigint exit)
		echo "$t $rep $first $stop n/a" >>"$TMP/results"
	done
done

say "startup: hyperfine"
hf_cmds=()
hf_names=()
if native_ready; then
	hf_names+=("offcpu record -- true")
	hf_cmds+=("$OFFCPU record -q -o $TMP/hf -- true")
fi
hf_names+=("offcpu record --tool bpftrace -- true")
hf_cmds+=("$OFFCPU record -q --tool bpftrace -o $TMP/hf -- true")
hf_names+=("bpftrace -c true share/offcpu.bt 0")
hf_cmds+=("bpftrace -c /bin/true $BT_SCRIPT 0")
hf_args=()
for i in "${!hf_cmds[@]}"; do
	hf_args+=(-n "${hf_names[$i]}" "${hf_cmds[$i]}")
done
hyperfine -N --style none --warmup 1 --runs "$HF_RUNS" --export-json "$TMP/hf.json" \
	"${hf_args[@]}" >/dev/null 2>>"$TMP/err" ||
	hyperfine --style none --warmup 1 --runs "$HF_RUNS" --export-json "$TMP/hf.json" \
		"${hf_args[@]}" >/dev/null 2>>"$TMP/err"

cat <<EOF
### Start and stop latency

Commands: \`bench/startup.sh $(basename "$BUILD")\` (BENCH_REPS=$REPS,
BENCH_HYPERFINE_RUNS=$HF_RUNS), as root.

Method. *End to end*: hyperfine (\`--warmup 1 --runs $HF_RUNS\`) on a record of
\`true\`: start the collector, attach, run the command, stop, write and summarize
the capture. *Start to first event* and *stop*, the same way for every collector,
with bench/beacon.c and one clock (CLOCK_MONOTONIC): for \`offcpu record\` the
beacon launches it with a workload that only writes the time it starts (offcpu
record holds the workload until the collector is attached, so that is the first
instruction traced), and stop is from then until offcpu record has exited. For
a tool that attaches to a PID (BCC's \`offcputime -p\`, \`bpftrace
share/offcpu.bt PID\`), the beacon launches it on itself and then sleeps in 1 ms
steps, recording each sleep; once the tool has stopped, the sleeps are walked
back from the end until they add up to the off-CPU time the tool reports for the
beacon: where that happens is the first sleep the tool saw (to about one sleep,
and a few microseconds of on-CPU time per sleep make it a little late). Stop is
from SIGINT to the tool's exit, its final print included. Medians over $REPS
repetitions.

EOF
if [ -s "$TMP/skipped" ]; then
	sed 's/^/- not measured: /' "$TMP/skipped"
	echo
fi
if ! native_ready; then
	echo "- \`offcpu record\` with the built-in collector: pending (not in this build yet)."
	echo
fi

echo "| collector | start to first traced event (ms) | stop (ms) | end to end, hyperfine mean +- sd (ms) |"
echo "|---|---:|---:|---:|"
for k in record-native record-bpftrace bcc bpftrace; do
	rows=$(awk -v k=$k '$1 == k' "$TMP/results")
	[ -n "$rows" ] || continue
	first=$(awk -v k=$k '$1 == k && $3 != "never" { print $3 }' "$TMP/results" | median)
	never=$(awk -v k=$k '$1 == k && $3 == "never"' "$TMP/results" | wc -l)
	stop=$(awk -v k=$k '$1 == k { print $4 }' "$TMP/results" | median)
	case $k in
	record-native) name="offcpu record (built-in)"; hf="offcpu record -- true" ;;
	record-bpftrace) name="offcpu record --tool bpftrace"; hf="offcpu record --tool bpftrace -- true" ;;
	bcc) name="BCC offcputime -p (libbpf-tools)"; hf= ;;
	bpftrace) name="bpftrace share/offcpu.bt PID"; hf="bpftrace -c true share/offcpu.bt 0" ;;
	esac
	e2e="n/a (no -c option)"
	if [ -n "$hf" ] && [ -s "$TMP/hf.json" ]; then
		e2e=$(jq -r --arg n "$hf" '.results[] | select(.command == $n) |
			"\(.mean * 1000 | floor) +- \(.stddev * 1000 | floor)"' "$TMP/hf.json")
	fi
	[ "$never" -gt 0 ] && first="$first ($never runs saw nothing)"
	echo "| $name | $(fmt "$first") | $(fmt "$stop") | ${e2e:-n/a} |"
done
echo
if native_ready && [ -s "$TMP/hf.json" ]; then
	mean=$(jq -r '.results[] | select(.command == "offcpu record -- true") | .mean * 1000' \
		"$TMP/hf.json")
	awk -v m="$mean" -v t=$TARGET_MS 'BEGIN { printf "Target: offcpu record -- true under %d ms end to end: %s (%.1f ms).\n\n", t, (m < t ? "met" : "NOT met"), m }'
else
	echo "Target: \`offcpu record -- true\` under $TARGET_MS ms end to end: pending (built-in collector)."
	echo
fi
echo "Raw runs (collector, repetition, first event ms, stop ms, end to end ms):"
echo
echo '```'
cat "$TMP/results"
echo '```'
