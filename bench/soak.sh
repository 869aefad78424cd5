#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Load: offcpu's accuracy and its own memory under a 256-thread stress, and its
# memory over a long host-wide capture.
#
#   bench/soak.sh [BUILD]   (root; env SOAK_SECS=600, SOAK_THREADS=256,
#                            SOAK_STRESS_SECS=10, SOAK_SAMPLE=5)
#
# Takes SOAK_SECS plus about a minute; not in make bench's default set
# (bench/run.sh BUILD soak runs it). The workload is tests/workloads/stress
# (make tests-build).
. "$(dirname "$0")/lib.sh"
bench_init "${1:-build}"
SECS=${SOAK_SECS:-600}
THREADS=${SOAK_THREADS:-256}
SSECS=${SOAK_STRESS_SECS:-10}
PERIOD=${SOAK_SAMPLE:-5}
STRESS=$BUILD/tests/workloads/stress
PLOTS=$BB/plots
FLAT_KIB=4096	 # "flat": the stress's RSS grows less than this from its 2 s mark
ROW_BYTES=768	 # "bounded": RSS growth per row of the result (see the method)
mkdir -p "$PLOTS"

is_root || die "the soak needs root (BPF)"
[ -x "$STRESS" ] || die "$STRESS is missing; run 'make tests-build'"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian package time)"
native_ready || die "the built-in collector does not capture on this host (offcpu doctor says why)"
ulimit -n 65536 2>/dev/null

# sampler TIME_PID OUT PERIOD [FIFO]: until TIME_PID (/usr/bin/time running offcpu)
# is gone, every PERIOD s a line "MS RSS_KIB FORKS COMM": offcpu's VmRSS, the
# host's threads created since boot (/proc/stat "processes"), and the comm of
# offcpu's child (the workload). With FIFO, the workload waits on it until
# offcpu's RSS has held still for five samples (its start-up is done). A real-time
# task, or 256 runnable threads would leave it hardly any samples.
sampler()
{
	local t0 rec= c comm r ms d released=0 stable=0 last=0 forks

	chrt -f -p 10 $BASHPID >/dev/null 2>&1 || renice -n -15 -p $BASHPID >/dev/null 2>&1
	t0=$(date +%s%N)
	while kill -0 "$1" 2>/dev/null; do
		[ -n "$rec" ] || rec=$(cat /proc/"$1"/task/"$1"/children 2>/dev/null)
		rec=${rec%% *}
		c=$(cat /proc/"${rec:-0}"/task/"${rec:-0}"/children 2>/dev/null)
		comm=$(cat /proc/"${c%% *}"/comm 2>/dev/null)
		r=$(awk '$1 == "VmRSS:" { print $2 }' /proc/"${rec:-0}"/status 2>/dev/null)
		forks=$(awk '$1 == "processes" { print $2 }' /proc/stat)
		ms=$((($(date +%s%N) - t0) / 1000000))
		[ -n "$r" ] && echo "$ms $r $forks ${comm:-none}"
		if [ -n "${4:-}" ] && [ $released = 0 ]; then
			if [ "$comm" = sh ]; then
				d=$((${r:-0} - last))
				[ ${d#-} -le 256 ] && stable=$((stable + 1)) || stable=0
				last=${r:-0}
			fi
			if [ $stable -ge 5 ] || [ $ms -ge 20000 ]; then
				timeout 5 sh -c "echo >'$4'"
				released=1
			fi
		fi
		sleep "$3"
	done >"$2"
}

# diag WORD FILE: the number before WORD in offcpu's diagnostics ("N drains").
diag()
{
	grep -o "[0-9]* $1" "$2" | head -n 1 | awk '{ print $1 }'
}

# ---- 1: the stress --------------------------------------------------------------

# stress_run NAME: cold runs the stress at once; warm has it wait until offcpu's
# start-up is done. Leaves NAME/ (the lane), NAME.rss, NAME.truth, NAME.max.
stress_run()
{
	local d=$TMP/$1 pid sampler fifo=
	local -a cmd=("$STRESS" "$THREADS" "$SSECS")

	if [ "$1" = warm ]; then
		fifo=$TMP/warm.go
		mkfifo "$fifo"
		cmd=(sh -c "read _ <'$fifo'; exec '$STRESS' $THREADS $SSECS")
	fi
	say "soak: $1 stress, $THREADS threads for $SSECS s"
	OFFCPU_TRUTH=$d.truth /usr/bin/time -f %M -o "$d.max" "$OFFCPU" record -q -o "$d" -- \
		"${cmd[@]}" >/dev/null 2>>"$TMP/err" &
	pid=$!
	BG_PIDS=$pid
	sampler $pid "$d.rss" 0.25 $fifo &
	sampler=$!
	BG_PIDS="$pid $sampler"
	wait $pid
	wait $sampler
	BG_PIDS=
	[ -s "$d/offcpu.summary.json" ] || die "the $1 stress run left no summary: $(tail -n 3 "$TMP/err")"
}

# stress_row NAME: one line of numbers for the tables (see the header below).
stress_row()
{
	local d=$TMP/$1 s=$TMP/$1/offcpu.summary.json measured lost want

	measured=$(jq '[.threads[] | select(.comm | startswith("stress-")) | .off_ns] | add // 0' "$s")
	lost=$(jq '[.capture_integrity.losses[] | .affected_ns] | add // 0' "$s")
	want=$(jq -s '[.[] | select(.comm | startswith("stress-")) | .offcpu_ns] | add // 0' "$d.truth")
	# Times are from the first sample that sees the stress running.
	awk -v name="$1" -v secs="$SSECS" -v m="$measured" -v l="$lost" -v w="$want" \
		-v sw="$(diag switch-outs "$d/offcpu.diagnostics.txt")" \
		-v iv="$(diag intervals "$d/offcpu.diagnostics.txt")" \
		-v dr="$(diag drains "$d/offcpu.diagnostics.txt")" \
		-v lt="$(jq '.capture_integrity.lost_total' "$s")" \
		-v st="$(jq -r '.capture_integrity.status' "$s")" -v max="$(tail -n 1 "$d.max")" '
		$4 == "stress" { if (n == 0) t0 = $1; t[n] = ($1 - t0) / 1000; r[n++] = $2 }
		END {
			for (i = 0; i < n; i++) {
				if (r1 == "" && t[i] >= 1) r1 = r[i]
				if (r2 == "" && t[i] >= 2) { r2 = r[i]; i2 = i }
				if (r[i] > pk) pk = r[i]
			}
			g = 0
			for (i = i2; i < n; i++) if (r[i] - r2 > g) g = r[i] - r2
			# settled: from the first sample after which RSS stays within 1 MiB of the end
			set = 0
			for (i = n - 1; i >= 0; i--)
				if (r[i] < r[n - 1] - 1024 || r[i] > r[n - 1] + 1024) { set = t[i + 1]; break }
			printf "%s %.0f %s %.3f %s %s %s %s %s %s %s %s %.1f %s\n", name, sw / secs, iv,
				(w > 0 ? (m + l - w) * 100 / w : 0), lt, st, dr, r1, r2, r[n - 1], pk, max, set, g
		}' "$d.rss"
}

stress_run cold
stress_run warm
{
	stress_row cold
	stress_row warm
} >"$TMP/stress.rows"

# ---- 2: the host-wide capture ---------------------------------------------------

# The load: stress bursts (64 new threads each, 4 s in every 10), and in every other
# minute a stream of short-lived processes: shells, ls, cat, date, and 2-thread
# stresses, so that new processes, threads and stacks keep coming; in the minutes
# without it the plot shows what the RSS does when few new threads come.
load_bursts()
{
	while :; do
		"$STRESS" 64 4 >/dev/null 2>&1
		sleep 6
	done
}
load_churn()
{
	local n=0 end

	while :; do
		end=$((SECONDS + 60))
		while [ $SECONDS -lt $end ]; do
			case $((n % 5)) in
			0) sh -c true ;;
			1) ls /proc >/dev/null ;;
			2) cat /proc/loadavg >/dev/null ;;
			3) date >/dev/null ;;
			4) "$STRESS" 2 0.05 >/dev/null 2>&1 ;;
			esac
			n=$((n + 1))
			sleep 0.02
		done
		sleep 60
	done
}

say "soak: host-wide capture for $SECS s under load (samples every $PERIOD s)"
load_bursts &
b=$!
load_churn &
c=$!
d=$TMP/host
/usr/bin/time -f %M -o "$d.max" "$OFFCPU" record -q -a -d "$SECS" -o "$d" >/dev/null 2>>"$TMP/err" &
pid=$!
BG_PIDS="$b $c $pid"
sampler $pid "$d.rss" "$PERIOD" &
s=$!
BG_PIDS="$b $c $pid $s"
wait $pid
kill $b $c 2>/dev/null
wait $s
wait $b $c 2>/dev/null
BG_PIDS=
hs=$d/offcpu.summary.json
[ -s "$hs" ] || die "the host-wide capture left no summary: $(tail -n 3 "$TMP/err")"

# RSS while recording, after the start-up (from 10 s to SECS: offcpu stops at about
# SECS + its start-up, then builds the profile), the first minute's median (the
# baseline), the last minute's, and the threads created on the host meanwhile.
read -r h_min h_med h_max h_first h_last h_forks <<<"$(awk -v T="$SECS" '
	function med(a, n,   i, j, x) {
		for (i = 1; i < n; i++)
			for (j = i; j > 0 && a[j - 1] > a[j]; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
		return n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2
	}
	{ t = $1 / 1000 }
	t > T { next }
	t >= 10 { all[na++] = $2; if (mn == "" || $2 < mn) mn = $2; if ($2 > mx) mx = $2
		if (f0 == "") f0 = $3; f1 = $3 }
	t >= 10 && t < 60 { first[nf++] = $2 }
	t >= T - 60 { last[nl++] = $2 }
	END { printf "%d %d %d %d %d %d\n", mn, med(all, na), mx, med(first, nf), med(last, nl), f1 - f0 }
	' "$d.rss")"
h_sw=$(diag switch-outs "$d/offcpu.diagnostics.txt")
h_iv=$(diag intervals "$d/offcpu.diagnostics.txt")
h_dr=$(diag drains "$d/offcpu.diagnostics.txt")
h_procs=$(diag "processes tracked" "$d/offcpu.diagnostics.txt")
h_exits=$(diag "threads exited" "$d/offcpu.diagnostics.txt")
h_state=$(jq -r '"\(.state), integrity \(.capture_integrity.status)"' "$hs")
h_lost=$(jq '.capture_integrity.lost_total' "$hs")
h_losses=$(jq -r '[.capture_integrity.losses | to_entries[] | select(.value.count > 0) |
	"\(.key) \(.value.count)"] | join(", ")' "$hs")
h_tot=$(jq -r '.totals | "\(.rows) rows, \(.stacks) stacks, \(.threads) threads"' "$hs")
h_maxrss=$(tail -n 1 "$d.max")
h_size=$(du -sk "$d" | awk '{ print $1 }')
h_rows=$(jq '.totals.rows' "$hs")
h_full=$(jq '.capture_integrity.losses.map_full_agg.count // 0' "$hs")
per_row=$(awk -v g=$((h_max - h_first)) -v r="$h_rows" \
	'BEGIN { printf "%.0f", (r > 0 ? g * 1024 / r : 0) }')

# ---- report ---------------------------------------------------------------------

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
{
	read -r _ c_sw c_iv c_pct c_lt c_st c_dr c_r1 c_r2 c_end c_pk c_max c_set c_g
	read -r _ w_sw w_iv w_pct w_lt w_st w_dr w_r1 w_r2 w_end w_pk w_max w_set w_g
} <"$TMP/stress.rows"
pct_ok=$(awk -v a="$c_pct" -v b="$w_pct" \
	'BEGIN { print (a <= 1 && a >= -1 && b <= 1 && b >= -1) ? "met" : "NOT met" }')
flat=$([ "$w_g" -lt $FLAT_KIB ] && echo flat || echo "NOT flat")
bounded=$([ "$h_full" = 0 ] && [ "$per_row" -le $ROW_BYTES ] && echo bounded || echo "NOT bounded")

cat <<EOF
### Load: a 256-thread stress and a ${SECS}-second host-wide capture

Command: \`bench/soak.sh $(basename "$BUILD")\` (SOAK_SECS=$SECS, SOAK_THREADS=$THREADS,
SOAK_STRESS_SECS=$SSECS), as root. Other jobs were running on the machine, which a
host-wide capture records too.

Method. **Stress**: \`offcpu record -- stress $THREADS $SSECS\` ($THREADS threads in
pairs ping-ponging through pipes and futexes, each reporting its kernel schedstat
as ground truth). *cold* starts the stress at once; *warm* has it wait on a FIFO
until offcpu's RSS has held still for 1.25 s, because offcpu's start-up (loading the
C library's symbols, about 24 MiB) gets little CPU next to 256 busy threads and
would otherwise still be under way seconds into the stress. A real-time sampler
reads offcpu's VmRSS every 0.25 s; times are from the first sample that sees the
stress running. *drains*: of the aggregation map while recording, one a second
when offcpu gets the CPU. *accounted + lost vs truth* is (the stress threads' off-CPU time
plus every counted loss's time - their schedstat off-CPU time) / schedstat.
*Settled at*: the first sample after which RSS stays within 1 MiB of its value at
the end. **Flat**: RSS grows by less than $((FLAT_KIB / 1024)) MiB from the stress's 2 s
mark to its end. *Peak with stop*: /usr/bin/time's maximum RSS, which includes
building the profile and writing the results.

| run | switches/s | intervals | accounted + lost vs truth | lost (integrity) | drains |
|---|---:|---:|---:|---:|---|
| cold | $c_sw | $c_iv | $c_pct% | $c_lt ($c_st) | $c_dr |
| warm | $w_sw | $w_iv | $w_pct% | $w_lt ($w_st) | $w_dr |

| run | RSS at 1 s | at 2 s | at the end | peak while recording | peak with stop | settled at | growth 2 s to end | verdict |
|---|---:|---:|---:|---:|---:|---:|---:|---|
| cold | $(mib $c_r1) MiB | $(mib $c_r2) MiB | $(mib $c_end) MiB | $(mib $c_pk) MiB | $(mib $c_max) MiB | $c_set s | $(mib $c_g) MiB | (start-up under way) |
| warm | $(mib $w_r1) MiB | $(mib $w_r2) MiB | $(mib $w_end) MiB | $(mib $w_pk) MiB | $(mib $w_max) MiB | $w_set s | $(mib $w_g) MiB | $flat |

Target: $THREADS threads for $SSECS s, accounted plus counted-lost time within 1% of schedstat: $pct_ok (cold $c_pct%, warm $w_pct%).
Target: offcpu's own memory flat under the stress once started (growth from 2 s to the end < $((FLAT_KIB / 1024)) MiB): $([ "$flat" = flat ] && echo met || echo "NOT met") ($(mib $w_g) MiB).

![offcpu's RSS during the stress](bench/plots/soak-stress.svg)

**Host-wide**: \`offcpu record -a -d $SECS\` while a load runs: a \`stress 64 4\`
burst every 10 s and, every other minute, a stream of short-lived processes (\`sh -c
true\`, \`ls\`, \`cat\`, \`date\`, \`stress 2 0.05\`, one every ~20 ms). The sampler reads
offcpu's VmRSS and the host's count of threads created (/proc/stat \`processes\`)
every $PERIOD s. RSS statistics are over the samples from 10 s (before: start-up,
loading the programs and the kernel's and processes' symbols) to $SECS s (after:
stopping and building the profile, in *peak with stop*); *first minute* is
the median of the samples from 10 to 60 s, the baseline; *last minute* the median of
the last 60 s. What offcpu must hold while it records grows with the rows of the
result (a thread, a stack and a state each: the aggregated weights, and with them
the threads' exit records, the processes' maps and the stacks' frames): a row's
entry is 56 bytes in a hash table kept at least a quarter full, so under 230 bytes,
and what comes with new threads and stacks adds about as much again. The BPF maps
are fixed in size and drained every second.
**Bounded**: the aggregation map never filled (no \`map_full_agg\` loss) and the
largest RSS while recording exceeds the baseline by at most $ROW_BYTES bytes per row
of the result: memory follows the profile, not the length of the capture or the
number of switches. The RSS rises in steps: the tables double as rows come.

| | |
|---|---|
| summary | $h_state; $h_lost lost$([ -n "$h_losses" ] && echo " ($h_losses)") |
| captured | $h_sw switch-outs, $h_iv intervals; $h_tot; $h_procs processes tracked, $h_exits threads exited |
| drains while running | $h_dr in $SECS s |
| RSS min / median / max | $(mib $h_min) / $(mib $h_med) / $(mib $h_max) MiB |
| RSS first minute / last minute | $(mib $h_first) / $(mib $h_last) MiB |
| threads created on the host (10 s to $SECS s) | $h_forks |
| growth over the baseline, per row of the result | $(mib $((h_max - h_first))) MiB, $per_row bytes a row |
| peak with stop (/usr/bin/time) | $(mib $h_maxrss) MiB |
| results written | $(mib $h_size) MiB |
| verdict | $bounded |

Target: a ${SECS}-second host-wide capture keeps memory bounded (no aggregation-map loss, growth <= $ROW_BYTES bytes per row): $([ "$bounded" = bounded ] && echo met || echo "NOT met") ($per_row bytes a row, $h_dr drains).

![offcpu's RSS during the host-wide capture](bench/plots/soak-host.svg)
EOF

# The samples, for a closer look (not part of the report).
mkdir -p "$BB/soak"
cp "$TMP"/cold.rss "$TMP"/warm.rss "$TMP"/host.rss "$BB/soak/"
echo
echo "The samples (\"ms RSS_KiB threads_created comm\") are kept in" \
	"$(basename "$BUILD")/bench/soak/."

# Plots: the stress runs against seconds since the stress began; the host-wide run
# against minutes, with the threads created on the host (thousands) beside it.
for n in cold warm; do
	awk -v n=$n '$4 == "stress" { if (t0 == "") t0 = $1
		printf "%s %.2f %.2f\n", n, ($1 - t0) / 1000, $2 / 1024 }' "$TMP/$n.rss"
done | awk -f "$ROOT/bench/plot.awk" -v title="offcpu's RSS during a $THREADS-thread stress" \
	-v xlabel="seconds since the stress began" -v ylabel="MiB" >"$PLOTS/soak-stress.svg"
awk 'NR == 1 { f0 = $3 } { m = $1 / 60000
	printf "offcpu_RSS_(MiB) %.2f %.2f\n", m, $2 / 1024
	printf "threads_created_(thousands) %.2f %.2f\n", m, ($3 - f0) / 1000 }' "$TMP/host.rss" |
	sort -s -k1,1 | awk -f "$ROOT/bench/plot.awk" \
	-v title="offcpu's RSS over a host-wide capture" -v xlabel="minutes" -v ylabel="MiB / thousands" \
	>"$PLOTS/soak-host.svg"
