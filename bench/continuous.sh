#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Continuous mode over a long host-wide run (record -a --every, issue #14), on a
# machine kept busy: a pipe ping-pong pinned to CPU 1 (perf bench sched pipe),
# three loops each starting a process every 50 ms (/bin/sleep 0.05: new
# images, pids and stacks all the time; pids wrap every few minutes) and tests/workloads/hung ticker. For CONT_SECS
# (default 1800) two recorders run side by side:
#
#   periods   offcpu record -a --every CONT_EVERY (60s) --keep CONT_KEEP (10m)
#   long      offcpu record -a -d CONT_SECS, one capture of the same window
#
# While they run, each new period's off-CPU time is summed from its folded
# capture as it appears (retention removes it later), leaving out the two
# recorders' own processes (comm offcpu), and both recorders' RSS is sampled
# every 10 s. Then:
#   - no gap: the periods' sum against the long capture's, same exclusion,
#     each with the time it counted as lost outside its rows (map_full_agg:
#     intervals dropped when the aggregation map filled between two drains,
#     known time, no stack): target within 1% (the two windows start and end
#     a few ms apart). The time in the rows alone is compared too;
#   - flat memory: the periods recorder's median RSS over its last 5 minutes
#     against its median over minutes 5 to 10 (target: under 4 MiB more;
#     the highest sample is given too: it follows what the host runs);
#   - retention: the periods left are those younger than CONT_KEEP, plus the
#     newest, and every period the run wrote was seen;
#   - cost: each recorder's CPU-seconds and peak RSS (GNU time).
#
#   bench/continuous.sh [BUILD]   (root; env CONT_SECS, CONT_EVERY, CONT_KEEP, and
#                                  CONT_LOAD="pipe churn hung": the load's parts)
#
# Not in make bench's default set: bench/run.sh BUILD continuous runs it.
. "$(dirname "$0")/lib.sh"
bench_init "${1:-build}"
SECS=${CONT_SECS:-1800}
EVERY=${CONT_EVERY:-60s}
KEEP=${CONT_KEEP:-10m}
HUNG=$BUILD/tests/workloads/hung

is_root || die "the continuous run needs root (BPF)"
[ -x "$HUNG" ] || die "$HUNG is missing; run 'make tests-build'"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian package time)"
command -v perf >/dev/null || die "perf is missing (Debian package linux-perf)"
native_ready || die "the built-in collector does not capture on this host (offcpu doctor says why)"

LOAD=${CONT_LOAD:-pipe churn hung}

# The load.
case " $LOAD " in *" pipe "*)
	taskset -c 1 perf bench sched pipe -l 2000000000 >/dev/null 2>&1 &
	BG_PIDS="$BG_PIDS $!" ;;
esac
case " $LOAD " in *" churn "*)
	for _ in 1 2 3; do
		(while :; do /bin/sleep 0.05; done) &
		BG_PIDS="$BG_PIDS $!"
	done ;;
esac
case " $LOAD " in *" hung "*)
	"$HUNG" ticker >/dev/null &
	BG_PIDS="$BG_PIDS $!" ;;
esac
sleep 2

# off_us DIR: the folded capture's microseconds, the recorders' own left out.
off_us() { awk '!/^offcpu;/ { s += $NF } END { printf "%.0f\n", s }' "$1/offcpu.time.txt"; }

# by_proc DIR: "process microseconds" per first frame (the process name).
by_proc() { awk '{ n = index($0, ";"); s[substr($0, 1, n - 1)] += $NF } END { for (k in s) printf "%s %.0f\n", k, s[k] }' "$1/offcpu.time.txt"; }
# losses DIR: "name count ns" per loss counter that is not zero.
losses() {
	python3 -c 'import json, sys
for k, v in json.load(open(sys.argv[1]))["capture_integrity"]["losses"].items():
	if v["count"]:
		print(k, v["count"], v["affected_ns"])' "$1/offcpu.summary.json"
}
# window DIR: "start_ns end_ns" of the capture (Unix time).
window() {
	python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))["workload"]
print(w["started_unix_ns"], w["started_unix_ns"] + w["wall_ns"])' "$1/offcpu.summary.json"
}
: >"$TMP/periods.window"
: >"$TMP/periods.byproc"
: >"$TMP/periods.losses"

say "recording the host for $SECS s: periods of $EVERY (kept $KEEP) beside one long capture"
/usr/bin/time -f "%e %U %S %M" -o "$TMP/periods.time" \
	"$OFFCPU" record -q -a --every "$EVERY" --keep "$KEEP" -d "$SECS" -o "$TMP/periods" \
	2>"$TMP/periods.err" &
ptime=$!
/usr/bin/time -f "%e %U %S %M" -o "$TMP/long.time" \
	"$OFFCPU" record -q -a -d "$SECS" -o "$TMP/long" 2>"$TMP/long.err" &
ltime=$!

# Watch: each period once, as it appears; RSS of both recorders every 10 s.
declare -A seen
t0=$(date +%s)
next_rss=0
: >"$TMP/periods.sum"
: >"$TMP/rss"
while kill -0 $ptime 2>/dev/null || kill -0 $ltime 2>/dev/null; do
	for d in "$TMP"/periods/20*Z; do
		[ -d "$d" ] && [ -z "${seen[$d]:-}" ] || continue
		seen[$d]=1
		echo "$(basename "$d") $(off_us "$d")" >>"$TMP/periods.sum"
		by_proc "$d" >>"$TMP/periods.byproc"
		losses "$d" >>"$TMP/periods.losses"
		window "$d" >>"$TMP/periods.window"
	done
	now=$(date +%s)
	if [ $now -ge $next_rss ]; then
		pr=$(pgrep -P $ptime -x offcpu | head -n 1)
		lr=$(pgrep -P $ltime -x offcpu | head -n 1)
		echo "$((now - t0)) $(awk '$1 == "VmRSS:" { print $2 }' /proc/${pr:-0}/status 2>/dev/null || echo 0) $(awk '$1 == "VmRSS:" { print $2 }' /proc/${lr:-0}/status 2>/dev/null || echo 0)" >>"$TMP/rss"
		next_rss=$((now + 10))
	fi
	sleep 2
done
wait $ptime
wait $ltime
for d in "$TMP"/periods/20*Z; do
	[ -d "$d" ] && [ -z "${seen[$d]:-}" ] || continue
	echo "$(basename "$d") $(off_us "$d")" >>"$TMP/periods.sum"
	by_proc "$d" >>"$TMP/periods.byproc"
	losses "$d" >>"$TMP/periods.losses"
	window "$d" >>"$TMP/periods.window"
done
by_proc "$TMP/long" >"$TMP/long.byproc"
losses "$TMP/long" >"$TMP/long.losses"

read -r pwall puser psys pmax <"$TMP/periods.time"
read -r lwall luser lsys lmax <"$TMP/long.time"
psum=$(awk '{ s += $2 } END { printf "%.0f\n", s }' "$TMP/periods.sum")
lsum=$(off_us "$TMP/long")
# Time counted lost outside the rows, in microseconds.
plost=$(awk '$1 == "map_full_agg" { s += $3 } END { printf "%.0f\n", s / 1000 }' "$TMP/periods.losses")
llost=$(awk '$1 == "map_full_agg" { s += $3 } END { printf "%.0f\n", s / 1000 }' "$TMP/long.losses")
nper=$(wc -l <"$TMP/periods.sum")
left=$(ls -d "$TMP"/periods/20*Z 2>/dev/null | wc -l)
# Retention: the oldest period left started at most KEEP + one period ago.
keep_s=$(echo "$KEEP" | awk '/m$/ { print $1 * 60; next } /h$/ { print $1 * 3600; next } { print $1 + 0 }')
every_s=$(echo "$EVERY" | awk '/m$/ { print $1 * 60; next } { print $1 + 0 }')
oldest=$(ls -d "$TMP"/periods/20*Z 2>/dev/null | head -n 1 | xargs -r basename)
age=$(($(date -u +%s) - $(date -u -d "$(echo "$oldest" | sed 's/T/ /; s/Z$//')" +%s)))
# The periods recorder's RSS: median over minutes 5 to 10, over the last 5
# minutes, and the highest sample after 5 minutes.
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
last_t=$(awk 'END { print $1 + 0 }' "$TMP/rss")
rss5=$(awk '$1 >= 300 && $1 < 600 && $2 > 0 { print $2 }' "$TMP/rss" | median)
rssend=$(awk -v t="$last_t" '$1 > t - 300 && $2 > 0 { print $2 }' "$TMP/rss" | median)
rssmax=$(awk '$1 >= 300 && $2 > max { max = $2 } END { print max + 0 }' "$TMP/rss")
diff_pct=$(awk -v a="$psum" -v b="$lsum" -v pl="$plost" -v ll="$llost" \
	'BEGIN { printf "%.3f", b + ll ? (a + pl - b - ll) * 100 / (b + ll) : 0 }')
# How far apart the two windows start and end, in ms (periods minus long).
read -r wstart wend <<<"$(window "$TMP/long" | awk -v f="$TMP/periods.window" '
	BEGIN { while ((getline l < f) > 0) { split(l, a, " "); if (!s || a[1] < s) s = a[1]; if (a[2] > e) e = a[2] } }
	{ printf "%.1f %.1f\n", (s - $1) / 1e6, (e - $2) / 1e6 }')"
rows_pct=$(awk -v a="$psum" -v b="$lsum" 'BEGIN { printf "%.3f", b ? (a - b) * 100 / b : 0 }')

echo "Host-wide, $SECS s, periods of $EVERY kept $KEEP; load: $LOAD (pipe: a ping-pong"
echo "on CPU 1; churn: three loops starting a process every 50 ms each; hung: hung ticker);"
echo "$(nproc) CPUs, pid_max $(cat /proc/sys/kernel/pid_max)."
echo
echo "| | periods (--every $EVERY) | one long capture |"
echo "|---|---:|---:|"
echo "| off-CPU time in the rows, recorders left out | $(awk -v v=$psum 'BEGIN { printf "%.1f s", v / 1e6 }') in $nper periods | $(awk -v v=$lsum 'BEGIN { printf "%.1f s", v / 1e6 }') |"
echo "| ... plus time counted lost (map_full_agg) | $(awk -v v=$psum -v l=$plost 'BEGIN { printf "%.1f s", (v + l) / 1e6 }') | $(awk -v v=$lsum -v l=$llost 'BEGIN { printf "%.1f s", (v + l) / 1e6 }') |"
echo "| recorder CPU-seconds (user + sys) | $(awk -v u=$puser -v s=$psys 'BEGIN { printf "%.1f", u + s }') | $(awk -v u=$luser -v s=$lsys 'BEGIN { printf "%.1f", u + s }') |"
echo "| recorder CPU, % of one core | $(awk -v u=$puser -v s=$psys -v w=$pwall 'BEGIN { printf "%.2f%%", (u + s) * 100 / w }') | $(awk -v u=$luser -v s=$lsys -v w=$lwall 'BEGIN { printf "%.2f%%", (u + s) * 100 / w }') |"
echo "| recorder peak RSS | $((pmax / 1024)) MiB | $((lmax / 1024)) MiB |"
echo "| RSS median over minutes 5-10, over the last 5 minutes; highest after 5 min | $((rss5 / 1024)) / $((rssend / 1024)); $((rssmax / 1024)) MiB | |"
echo
gap_ok=$(awk -v d="$diff_pct" 'BEGIN { print (d < 1 && d > -1) ? "met" : "NOT met" }')
flat_ok=$([ $((rssend - rss5)) -lt 4096 ] && echo met || echo "NOT met")
ret_ok=$([ "$age" -le $((keep_s + every_s + 5)) ] && [ "$left" -ge 1 ] && echo met || echo "NOT met")
echo "The periods' window starts $wstart ms and ends $wend ms after the long capture's (the"
echo "start-ups differ; a second of either is about $(awk -v v=$lsum -v w=$lwall 'BEGIN { printf "%.2f%%", 100 / w }') of the total)."
echo
echo "Target: no gap between periods (periods' sum within 1% of one long capture, each with its time counted lost): $gap_ok ($diff_pct%; the rows alone: $rows_pct%)."
echo "Target: flat memory (median RSS of the last 5 minutes at most 4 MiB above minutes 5-10): $flat_ok ($((rssend - rss5)) KiB; highest sample $(((rssmax - rss5))) KiB above)."
echo "Target: retention obeyed (--keep $KEEP): $ret_ok ($left periods left of $nper written; the oldest started $age s before the end)."
echo
echo "Where the two differ, by process name (the first frame; a process that calls"
echo "exec is named by its new name in the capture that saw the exec and by its old"
echo "one in a period that ended before it, so such pairs cancel), seconds:"
echo
echo "| process | periods | long capture | periods - long |"
echo "|---|---:|---:|---:|"
awk '{ s[$1] += $2 } END { for (k in s) printf "%s %.0f\n", k, s[k] }' "$TMP/periods.byproc" | sort >"$TMP/p.by"
sort "$TMP/long.byproc" >"$TMP/l.by"
join -a1 -a2 -e0 -o 0,1.2,2.2 "$TMP/p.by" "$TMP/l.by" |
	awk '$1 != "offcpu" { d = $2 - $3; print (d < 0 ? -d : d), $0 }' | sort -rn | head -n 8 |
	awk '{ printf "| %s | %.1f | %.1f | %+.1f |\n", $2, $3 / 1e6, $4 / 1e6, ($3 - $4) / 1e6 }'
echo
echo "Counted losses and edges (count, seconds), summed over the periods and in the long capture:"
echo
echo "| counter | periods | long capture |"
echo "|---|---:|---:|"
awk '{ c[$1] += $2; n[$1] += $3 } END { for (k in c) printf "%s %d %.0f\n", k, c[k], n[k] }' "$TMP/periods.losses" | sort >"$TMP/p.loss"
sort "$TMP/long.losses" >"$TMP/l.loss"
join -a1 -a2 -e0 -o 0,1.2,1.3,2.2,2.3 "$TMP/p.loss" "$TMP/l.loss" |
	awk '{ printf "| %s | %d, %.1f s | %d, %.1f s |\n", $1, $2, $3 / 1e9, $4, $5 / 1e9 }'
echo
echo "RSS samples (s, periods KiB, long KiB), every 10 s:"
echo
echo '```'
awk 'NR % 6 == 1' "$TMP/rss"
echo '```'
