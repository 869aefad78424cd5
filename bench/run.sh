#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The benchmark suite: runs the benchmarks and writes BENCHMARKS.md.
#
#   bench/run.sh [--no-update | --rebuild] [BUILD [BENCHMARK...]]     (make bench)
#
# BENCHMARK is any of: overhead collectors startup postproc scaling unwind cfi-tables (default: all
# of these, or $BENCH), or soak (about 11 minutes), services (about 9), continuous
# (about 31) or hostwide (about 1), only when named. Each writes
# its section to BUILD/bench/results/NAME.md; the sections run this time then
# replace their own blocks in BENCHMARKS.md (bench/splice.sh: the text written by
# hand around them and the Targets list are kept), and the plots are copied to
# bench/plots/. --rebuild puts BENCHMARKS.md together from bench/BENCHMARKS.md.in
# and every section in BUILD/bench/results instead (what is not there, and all
# hand-written text, is lost). --no-update leaves BENCHMARKS.md and bench/plots alone.
#
# Environment: FLAMEGRAPH_PL (FlameGraph's flamegraph.pl, for the comparison),
# BENCH_REPS, BENCH_SECS (per benchmark; see each script). Never part of make check.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ALL="overhead collectors startup postproc scaling unwind cfi-tables"
# Known but not in the default set: too long for make bench's 15-minute budget.
EXTRA="soak services continuous hostwide"
update=1
case ${1:-} in
--no-update) update=0; shift ;;
--rebuild) update=2; shift ;;
-h | --help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
BUILD=${1:-build}
shift 2>/dev/null
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
want=${*:-${BENCH:-$ALL}}
RESULTS=$BUILD/bench/results
mkdir -p "$RESULTS"

for b in $want; do
	case " $ALL $EXTRA " in *" $b "*) ;; *)
		echo "bench: unknown benchmark '$b'; one of: $ALL $EXTRA" >&2
		exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || echo "bench: not root: the collector benchmarks will say so and" \
	"only post-processing is measured" >&2

# other_tracers: what else traces the machine as a benchmark starts (another job's
# collector slows every variant down and is worth knowing when reading a result).
other_tracers()
{
	local progs perfs

	progs=$(bpftool -j prog show 2>/dev/null | jq -r '[.[] | select(.type | test("tracing|tracepoint|perf_event|kprobe")) |
		.name // "?"] | unique | join(", ")' 2>/dev/null)
	perfs=$(pgrep -c -x perf 2>/dev/null)
	echo "tracing BPF programs of other processes: ${progs:-none}; perf processes: ${perfs:-0}"
}

title()
{
	case $1 in
	overhead) echo "Collector overhead on perf bench sched pipe" ;;
	collectors) echo "Collector overhead: futex ping-pong and a 64-thread lock convoy" ;;
	startup) echo "Start and stop latency" ;;
	postproc) echo "Post-processing: summarize, report, flame graph, pprof" ;;
	scaling) echo "Scaling with threads" ;;
	unwind) echo "User stack unwinding: pinned pipe ping-pong without frame pointers" ;;
	soak) echo "Load: a 256-thread stress and a long host-wide capture" ;;
	cfi-tables) echo "Unwind tables: build time and size" ;;
	services) echo "Real services: PostgreSQL (pgbench) and Redis (redis-benchmark)" ;;
	continuous) echo "Continuous mode: a long host-wide run in periods" ;;
	hostwide) echo "Unwind tables: a host-wide capture on a host that maps large libraries" ;;
	esac
}

# wrap SCRIPT OUTPUT TITLE: a section for a script that prints plain text: its
# header comment as the method, its output as it is.
wrap()
{
	echo "### $3"
	echo
	echo "Command: \`bench/$(basename "$1") $(basename "$BUILD")\`, as root. Its method, from the script:"
	echo
	echo '```'
	awk 'NR == 1 && /^#!/ { next } /^# SPDX/ { next }
		/^#/ { sub(/^# ?/, ""); if ($0 != "" || n) { print; n++ } next } { exit }' "$1"
	echo '```'
	echo
	echo "Its output:"
	echo
	echo '```'
	cat "$2"
	echo '```'
}

t_suite=$(date +%s)
: >"$RESULTS/.times"
for b in $want; do
	script=$ROOT/bench/$b.sh
	[ "$b" = overhead ] && script=$ROOT/bench/overhead.sh
	echo "== $b" >&2
	t0=$(date +%s)
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	others=$(other_tracers)
	if [ ! -x "$script" ]; then
		{
			echo "### $(title $b)"
			echo
			echo "Pending: bench/overhead.sh (written with the built-in collector) is not in this build."
		} >"$RESULTS/$b.md"
		echo "$b skipped" >>"$RESULTS/.times"
		continue
	fi
	if "$script" "$BUILD" >"$RESULTS/$b.md.tmp" 2> >(tee "$RESULTS/$b.log" >&2); then
		if head -n 1 "$RESULTS/$b.md.tmp" | grep -q '^#'; then
			mv "$RESULTS/$b.md.tmp" "$RESULTS/$b.md"
		else
			wrap "$script" "$RESULTS/$b.md.tmp" "$(title $b)" >"$RESULTS/$b.md"
			rm -f "$RESULTS/$b.md.tmp"
		fi
		status=ok
	else
		{
			echo "### $(title $b)"
			echo
			echo "Failed: \`bench/$(basename "$script") $(basename "$BUILD")\` exited with an error:"
			echo
			echo '```'
			tail -n 5 "$RESULTS/$b.log"
			echo '```'
		} >"$RESULTS/$b.md"
		rm -f "$RESULTS/$b.md.tmp"
		status=failed
	fi
	secs=$(($(date +%s) - t0))
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), ${secs} s; at the start: load average $load," \
		"$others" >"$RESULTS/$b.when"
	echo "$b $status $secs" >>"$RESULTS/.times"
done
total=$(($(date +%s) - t_suite))
echo "== suite: $total s" >&2
[ "$want" = "$ALL" ] && [ $total -ge 900 ] &&
	echo "bench: the suite took $total s, over its 15-minute budget" >&2
sed 's/^/   /' "$RESULTS/.times" >&2

[ $update = 0 ] && exit 0

# The sections of this run into the existing file, the rest kept (bench/splice.sh).
if [ $update = 1 ] && [ -f "$ROOT/BENCHMARKS.md" ]; then
	ran=
	for b in $want; do
		[ -s "$RESULTS/$b.md" ] && ran="$ran $b"
	done
	# shellcheck disable=SC2086 # the names, one word each
	[ -z "$ran" ] || "$ROOT/bench/splice.sh" "$ROOT/BENCHMARKS.md" "$RESULTS" $ran || exit 1
	for b in $ran; do
		grep -h '^Target' "$RESULTS/$b.md" | sed "s/^/bench: $b: /"
	done | sed '1i bench: the Targets list at the top of BENCHMARKS.md is kept as it was; this run says:' >&2
	mkdir -p "$ROOT/bench/plots"
	cp "$BUILD"/bench/plots/*.svg "$ROOT/bench/plots/" 2>/dev/null
	echo "bench: updated$ran in $ROOT/BENCHMARKS.md" >&2
	exit 0
fi

# Put BENCHMARKS.md together: @MACHINE@, @COMMAND@, @TARGETS@, @PENDING@ and
# @SECTION:NAME@.
. "$ROOT/bench/lib.sh"
OFFCPU=$BUILD/offcpu
machine >"$RESULTS/.machine"
{
	envs=
	for v in FLAMEGRAPH_PL BENCH_REPS BENCH_SECS BENCH_THREADS BENCH_HYPERFINE_RUNS SOAK_SECS \
		SOAK_THREADS SOAK_STRESS_SECS SOAK_SAMPLE; do
		[ -n "${!v:-}" ] && envs="$envs$v=${!v} "
	done
	[ -n "${FLAMEGRAPH_PL:-}" ] && envs=${envs/FLAMEGRAPH_PL=$FLAMEGRAPH_PL/FLAMEGRAPH_PL=\/path\/to\/flamegraph.pl}
	if [ "$want" = "$ALL" ]; then
		echo "\`${envs}bench/run.sh $(basename "$BUILD")\` (what \`make bench\` runs), as root;" \
			"the whole suite took $total s."
	else
		echo "\`${envs}bench/run.sh $(basename "$BUILD") $want\`, as root, took $total s;" \
			"sections not in that list are from earlier runs (see the date under each)."
	fi
} >"$RESULTS/.command"
for b in $ALL $EXTRA; do
	[ -f "$RESULTS/$b.md" ] && grep -h '^Target' "$RESULTS/$b.md" | sed 's/^/- /'
done >"$RESULTS/.targets"
if [ "$want" = "$ALL" ]; then
	echo "$total" >"$RESULTS/.suite_secs"
fi
[ -s "$RESULTS/.suite_secs" ] && awk '{ printf "- Target: the whole suite (make bench) under 15 minutes: %s (%d s).\n",
	($1 < 900 ? "met" : "NOT met"), $1 }' "$RESULTS/.suite_secs" >>"$RESULTS/.targets"
[ -s "$RESULTS/.targets" ] || echo "- no targets measured yet" >"$RESULTS/.targets"
for b in $ALL $EXTRA; do
	[ -f "$RESULTS/$b.md" ] && grep -h -i 'pending\|not available yet\|not measured (' "$RESULTS/$b.md" |
		grep -v '^|\|^Target' | sed -e 's/^- //' -e "s/^/- $b: /"
done | awk '!seen[$0]++' >"$RESULTS/.pending"
[ -s "$RESULTS/.pending" ] || echo "- nothing" >"$RESULTS/.pending"

awk -v R="$RESULTS" '
	function cat(f,   l) { while ((getline l < f) > 0) print l; close(f) }
	/^@MACHINE@$/ { cat(R "/.machine"); next }
	/^@COMMAND@$/ { cat(R "/.command"); next }
	/^@TARGETS@$/ { cat(R "/.targets"); next }
	/^@PENDING@$/ { cat(R "/.pending"); next }
	/^@SECTION:[a-z-]+@$/ {
		name = $0; gsub(/^@SECTION:|@$/, "", name)
		if ((getline l < (R "/" name ".md")) <= 0) {
			print "### " name; print ""; print "Not run yet: `bench/run.sh BUILD " name "`."
			next
		}
		close(R "/" name ".md")
		cat(R "/" name ".md")
		if ((getline w < (R "/" name ".when")) > 0) { print ""; print "_Taken " w "._" }
		close(R "/" name ".when")
		next
	}
	{ print }' "$ROOT/bench/BENCHMARKS.md.in" >"$ROOT/BENCHMARKS.md.tmp" &&
	mv "$ROOT/BENCHMARKS.md.tmp" "$ROOT/BENCHMARKS.md"
mkdir -p "$ROOT/bench/plots"
cp "$BUILD"/bench/plots/*.svg "$ROOT/bench/plots/" 2>/dev/null
echo "bench: wrote $ROOT/BENCHMARKS.md" >&2
