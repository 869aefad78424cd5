#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Post-processing speed and memory on generated folded input.
#
#   bench/postproc.sh [BUILD]
#     env: BENCH_REPS (3 here: repetitions on the 1M-line input), FLAMEGRAPH_PL
#     (path to Brendan Gregg's flamegraph.pl; the comparison is skipped without it),
#     BENCH_DATA (where the inputs go, default BUILD/bench/data; about 8 GB)
#
# Times offcpu summarize, report, flamegraph and export --format pprof on 1M and
# 10M lines, their peak memory, and how peak memory follows unique stacks and not
# lines. Needs no root.
. "$(dirname "$0")/lib.sh"
bench_init "${1:-build}"
REPS=${BENCH_REPS:-3}
DATA=${BENCH_DATA:-$BB/data}
PLOTS=$BB/plots
MIB=1048576
TARGET_MBS=500
TARGET_FG=20
mkdir -p "$DATA" "$PLOTS"

# The inputs are kept between runs and made again when the generator or the
# vocabulary changes.
"$ROOT/bench/vocab.sh" "$ROOT/tests/data" "$TMP/vocab" 2>/dev/null ||
	die "cannot build the frame vocabulary from tests/data"
stamp=$(cat "$BB/genfolded" "$TMP/vocab"/*.txt | md5sum | cut -d' ' -f1)
if [ "$(cat "$DATA/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -f "$DATA"/*.folded
	rm -rf "$DATA/vocab"
	cp -r "$TMP/vocab" "$DATA/vocab"
	echo "$stamp" >"$DATA/stamp"
fi

# input LINES UNIQUE: the path of that input, generated if needed.
input()
{
	local f=$DATA/$1_$2.folded

	if [ ! -s "$f" ]; then
		say "postproc: generating $1 lines, $2 unique stacks"
		"$BB/genfolded" -l "$1" -u "$2" -s 1 "$DATA/vocab" >"$f.tmp" && mv "$f.tmp" "$f" ||
			die "genfolded failed"
	fi
	echo "$f"
}

# lane FILE: a capture directory whose offcpu.time.txt is FILE.
lane()
{
	local d=$TMP/lane.$(basename "$1" .folded)

	if [ ! -d "$d" ]; then
		mkdir -p "$d"
		ln -s "$1" "$d/offcpu.time.txt"
	fi
	echo "$d"
}

CMDS="summarize report flamegraph pprof"
cmd_available()
{
	case $1 in
	pprof) offcpu_has export ;;
	*) offcpu_has "$1" ;;
	esac
}

# run_cmd CMD DIR: runs one post-processing command on DIR under /usr/bin/time;
# prints "WALL_S MAXRSS_KB CPU_S" (CPU: user + system), or nothing when it failed.
# CPU time is reported beside wall time because on a shared machine the wall time
# also counts the time other jobs held the CPU.
run_cmd()
{
	local argv

	case $1 in
	summarize) argv=("$OFFCPU" summarize "$2") ;;
	report) argv=("$OFFCPU" report "$2") ;;
	flamegraph) argv=("$OFFCPU" flamegraph "$2" -o "$2/offcpu.flamegraph.svg") ;;
	pprof) argv=("$OFFCPU" export --format pprof -o "$2/offcpu.pb.gz" "$2") ;;
	esac
	if /usr/bin/time -f '%e %M %U %S' -o "$TMP/time" "${argv[@]}" >/dev/null 2>"$TMP/cmd.err"; then
		awk '{ print $1, $2, $3 + $4 }' "$TMP/time"
	else
		say "postproc: $1 failed: $(head -c 300 "$TMP/cmd.err")"
	fi
}

avail=
for c in $CMDS; do
	if cmd_available $c; then avail="$avail $c"; else echo "$c" >>"$TMP/missing"; fi
done

# Throughput: 1M and 10M lines, 100k unique stacks. summarize runs first on each
# input (the others read the summary it writes, as after a record). On 10M lines only
# the commands with a target run (summarize, flamegraph): the suite has 15 minutes.
: >"$TMP/tput"
for spec in "1000000 100000 $REPS" "10000000 100000 1"; do
	set -- $spec
	cmds=$avail
	[ "$1" = 10000000 ] && cmds=$(echo "$avail" | tr ' ' '\n' | grep -x 'summarize\|flamegraph')
	f=$(input "$1" "$2")
	[ -s "$f" ] || die "no input for $1 lines, $2 unique stacks"
	d=$(lane "$f")
	bytes=$(stat -L -c %s "$f")
	cat "$f" >/dev/null # in the page cache: the benchmark is the CPU work
	for rep in $(seq 1 "$3"); do
		for c in $cmds; do
			say "postproc: $c on $1 lines ($rep/$3)"
			r=$(run_cmd $c "$d")
			[ -n "$r" ] && echo "$1 $2 $bytes $c $r" >>"$TMP/tput"
		done
	done
done

# Memory against unique stacks (1M lines) and against lines (100k unique).
: >"$TMP/mem"
: >"$TMP/seen"
mem_cmds=
for c in summarize flamegraph; do
	case " $avail " in *" $c "*) mem_cmds="$mem_cmds $c" ;; esac
done
for spec in "1000000 10" "1000000 100" "1000000 1000" "1000000 10000" "1000000 100000" \
	"1000000 1000000" "100000 100000" "300000 100000" "3000000 100000" "10000000 100000"; do
	set -- $spec
	f=$(input "$1" "$2")
	[ -s "$f" ] || die "no input for $1 lines, $2 unique stacks"
	d=$(lane "$f")
	bytes=$(stat -L -c %s "$f")
	for c in $mem_cmds; do
		r=$(awk -v l="$1" -v u="$2" -v c=$c '$1 == l && $2 == u && $4 == c { print $5, $6, $7; exit }' \
			"$TMP/tput")
		if [ -z "$r" ]; then
			say "postproc: memory: $c on $1 lines, $2 unique"
			r=$(run_cmd $c "$d")
		fi
		[ -n "$r" ] && echo "$1 $2 $bytes $c $r" >>"$TMP/mem"
	done
	# The generator promises exactly UNIQUE stacks; summarize counts them.
	echo "$1 $2 $(jq -r '.totals.stacks // "?"' "$d/offcpu.summary.json" 2>/dev/null)" \
		>>"$TMP/seen"
done

# FlameGraph's flamegraph.pl on the 1M-line input, once (it is slow).
fg_note=
if [ -z "${FLAMEGRAPH_PL:-}" ]; then
	fg_note="skipped: FLAMEGRAPH_PL is not set (point it at FlameGraph's flamegraph.pl)"
elif [ ! -r "$FLAMEGRAPH_PL" ]; then
	fg_note="skipped: FLAMEGRAPH_PL=$FLAMEGRAPH_PL cannot be read"
elif ! echo "$avail" | grep -qw flamegraph; then
	fg_note="skipped: offcpu flamegraph is not available yet in this build"
else
	# Side by side: offcpu flamegraph, flamegraph.pl, offcpu flamegraph twice more.
	f=$(input 1000000 100000)
	d=$(lane "$f")
	: >"$TMP/fgcmp"
	for k in ours pl ours ours; do
		say "postproc: $([ $k = pl ] && echo flamegraph.pl || echo offcpu flamegraph) on 1000000 lines"
		if [ $k = ours ]; then
			r=$(run_cmd flamegraph "$d")
		elif /usr/bin/time -f '%e %M %U %S' -o "$TMP/time" perl "$FLAMEGRAPH_PL" "$f" \
			>"$TMP/fg.svg" 2>"$TMP/fg.err"; then
			r=$(awk '{ print $1, $2, $3 + $4 }' "$TMP/time")
		else
			fg_note="skipped: flamegraph.pl failed: $(head -c 200 "$TMP/fg.err")"
			break
		fi
		[ -n "$r" ] && echo "$k $r" >>"$TMP/fgcmp"
	done
	pl_total=$(sed -n 's/.*<title>all (\([0-9,]*\) samples.*/\1/p' "$TMP/fg.svg" | head -n 1 |
		tr -d ,)
	our_total=$(grep -o '<g data-v="[0-9]*"><title>all' "$d/offcpu.flamegraph.svg" |
		head -n 1 | sed 's/[^0-9]//g')
	for k in ours pl; do
		for i in 2 3 4; do
			v=$(awk -v k=$k -v i=$i '$1 == k { print $i }' "$TMP/fgcmp" | median)
			eval "${k}_$i=\$v"
		done
	done
fi

mb()
{
	awk -v b="$1" 'BEGIN { printf "%.0f\n", b / 1e6 }'
}

cat <<EOF
### Post-processing: summarize, report, flame graph, pprof

Command: \`bench/postproc.sh $(basename "$BUILD")\` (BENCH_REPS=$REPS${FLAMEGRAPH_PL:+,
FLAMEGRAPH_PL=flamegraph.pl from github.com/brendangregg/FlameGraph}).

Method. bench/genfolded.c writes folded input as BCC's \`offcputime -f\` does
(\`comm;frames root first VALUE\`, microseconds), from the frame names in
tests/data/ (48 real kernel paths, the fixtures' comms and user frames) plus the
C library's exported function names as user frames (\`nm -D\`), so that a large
profile has thousands of distinct frames as a real one does. Stacks are paths in
a call tree (shared prefixes as in a real program), 10 to 60 frames deep (most
15 to 30), about one user frame in eight \`[unknown]\`; stack popularity and
values follow a Zipf law (exponent 1). An input of L lines and U unique stacks
has each stack once, then L-U more lines drawn by popularity (as unaggregated
or concatenated captures are). Each command runs on a capture directory whose
offcpu.time.txt is that input, with the input in the page cache (this measures
CPU work, not the disk), under \`/usr/bin/time\` (wall time, max RSS); MB are
10^6 bytes of input. summarize runs first on each input (the others read the
summary it writes, as after a record). Medians over $REPS runs on 1M lines, one
run on 10M.

EOF
if [ -s "$TMP/missing" ]; then
	while read -r c; do
		case $c in
		pprof) echo "- \`offcpu export --format pprof\`: not available yet in this build." ;;
		*) echo "- \`offcpu $c\`: not available yet in this build." ;;
		esac
	done <"$TMP/missing"
	echo
fi

echo "| input | command | wall (s) | CPU (s) | MB/s (wall) | MB/s (CPU) | max RSS (MiB) |"
echo "|---|---|---:|---:|---:|---:|---:|"
for l in 1000000 10000000; do
	for c in $avail; do
		rows=$(awk -v l=$l -v c=$c '$1 == l && $4 == c' "$TMP/tput")
		[ -n "$rows" ] || continue
		bytes=$(echo "$rows" | awk '{ print $3; exit }')
		wall=$(echo "$rows" | awk '{ print $5 }' | median)
		rss=$(echo "$rows" | awk '{ print $6 }' | median)
		cpu=$(echo "$rows" | awk '{ print $7 }' | median)
		awk -v l=$l -v c=$c -v b=$bytes -v w=$wall -v r=$rss -v u=$cpu -v M=$MIB 'BEGIN {
			printf "| %dM lines, 100k unique, %.0f MB | %s | %.2f | %.2f | %.0f | %.0f | %.0f |\n",
				l / 1e6, b / 1e6, c, w, u, (w > 0 ? b / 1e6 / w : 0),
				(u > 0 ? b / 1e6 / u : 0), r * 1024 / M }'
	done
done
echo
for l in 1000000 10000000; do
	w=$(awk -v l=$l '$1 == l && $4 == "summarize" { print $5 }' "$TMP/tput" | median)
	u=$(awk -v l=$l '$1 == l && $4 == "summarize" { print $7 }' "$TMP/tput" | median)
	b=$(awk -v l=$l '$1 == l && $4 == "summarize" { print $3; exit }' "$TMP/tput")
	[ -n "$b" ] && awk -v w="$w" -v u="$u" -v b="$b" -v l=$l -v t=$TARGET_MBS 'BEGIN {
		s = b / 1e6 / w
		c = b / 1e6 / u
		printf "Target: summarize at %d MB/s or more on %dM lines: %s (%.0f MB/s wall, %.0f MB/s CPU).\n\n",
			t, l / 1e6, (s >= t ? "met" : c >= t ? "met in CPU time, NOT in wall time" : "NOT met"), s, c }'
done

echo "Against FlameGraph's flamegraph.pl (1M lines, 100k unique stacks, $(mb "$(stat -L -c %s \
	"$(input 1000000 100000)")") MB):"
echo
if [ -n "$fg_note" ]; then
	echo "- $fg_note."
else
	awk -v pw="$pl_2" -v pr="$pl_3" -v pc="$pl_4" -v ow="$ours_2" -v or="$ours_3" \
		-v oc="$ours_4" -v pt="$pl_total" -v ot="$our_total" -v M=$MIB -v t=$TARGET_FG 'BEGIN {
		print "| tool | wall (s) | CPU (s) | max RSS (MiB) | root \"all\" total |"
		print "|---|---:|---:|---:|---:|"
		printf "| flamegraph.pl | %.2f | %.2f | %.0f | %s samples (us) |\n", pw, pc,
			pr * 1024 / M, pt
		printf "| offcpu flamegraph (median of 3) | %.2f | %.2f | %.0f | %s ns |\n", ow, oc,
			or * 1024 / M, ot
		print ""
		same = (pt != "" && ot != "" && ot == pt * 1000)
		fw = ow > 0 ? pw / ow : 0
		fc = oc > 0 ? pc / oc : 0
		printf "offcpu flamegraph is %.1fx faster in wall time, %.1fx in CPU time; totals %s.\n",
			fw, fc, (same ? "equal (the same microseconds)" : "DIFFER")
		print ""
		printf "Target: %dx faster than flamegraph.pl with the same totals: %s (%.1fx wall, %.1fx CPU).\n",
			t, ((fw >= t && same) ? "met" : (fc >= t && same) ? "met in CPU time, NOT in wall time" : "NOT met"),
			fw, fc
	}'
fi
echo

echo "Peak memory follows unique stacks, not lines (one run each):"
echo
echo "| lines | unique stacks | input MB | command | wall (s) | CPU (s) | max RSS (MiB) |"
echo "|---:|---:|---:|---|---:|---:|---:|"
awk -v M=$MIB '{ printf "| %d | %d | %.0f | %s | %.2f | %.2f | %.0f |\n", $1, $2, $3 / 1e6, $4, $5,
	$7, $6 * 1024 / M }' "$TMP/mem"
echo
awk '$3 != $2 { bad = bad sprintf(" %d lines/%d unique: %s;", $1, $2, $3) }
	END { if (bad == "") print "Every input had exactly the unique stacks asked for (totals.stacks of summarize).\n"
		else print "Inputs whose unique stacks (totals.stacks of summarize) differ from what was asked:" bad "\n" }' \
	"$TMP/seen"
for c in $mem_cmds; do
	awk -v c=$c '$4 != c { next }
		$1 == 1000000 && $2 == 100000 { u1 = $6 } $1 == 1000000 && $2 == 1000000 { u2 = $6 }
		$1 == 100000 && $2 == 100000 { l1 = $6 } $1 == 10000000 && $2 == 100000 { l2 = $6 }
		END {
			if (u1 && u2)
				printf "%s: %.0f bytes of peak memory per unique stack (100k to 1M unique, 1M lines); ",
					c, (u2 - u1) * 1024 / 900000
			if (l1 && l2)
				printf "%.1f bytes per line (100k to 10M lines, 100k unique).\n",
					int((l2 - l1) * 1024 / 9900000 * 10) / 10 + 0
		}' "$TMP/mem"
done
echo
: >"$TMP/plot"
awk '$1 == 1000000 { print $4 "_vs_unique_stacks_(1M_lines)", $2, $6 / 1024 }' "$TMP/mem" |
	sort -s -k1,1 -k2,2n >>"$TMP/plot"
awk '$2 == 100000 { print $4 "_vs_lines_(100k_unique)", $1, $6 / 1024 }' "$TMP/mem" |
	sort -s -k1,1 -k2,2n >>"$TMP/plot"
awk -f "$ROOT/bench/plot.awk" -v title="Post-processing peak memory" \
	-v xlabel="unique stacks, or lines" -v ylabel="max RSS (MiB)" -v logx=1 -v logy=1 "$TMP/plot" \
	>"$PLOTS/postproc-memory.svg"
echo "![Peak memory against unique stacks and against lines](bench/plots/postproc-memory.svg)"
echo
echo "Raw runs (lines, unique, bytes, command, wall s, max RSS KiB, CPU s):"
echo
echo '```'
cat "$TMP/tput" "$TMP/mem"
echo '```'
