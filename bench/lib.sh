# SPDX-License-Identifier: GPL-2.0-only
# Shared by the benchmark scripts (sourced, not run). Every script prints its method
# and its tables as Markdown on stdout and its progress on stderr, so that
# bench/run.sh can put stdout into BENCHMARKS.md as it is.

# bench_init BUILD: sets ROOT, BUILD (absolute), OFFCPU, BB (the bench build dir with
# the programs and the generated data) and TMP (removed on exit).
bench_init()
{
	ROOT=$(cd "$(dirname "$0")/.." && pwd)
	BUILD=${1:-build}
	case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
	OFFCPU=$BUILD/offcpu
	BB=$BUILD/bench
	REPS=${BENCH_REPS:-5}
	mkdir -p "$BB"
	TMP=$(mktemp -d "$BB/tmp.XXXXXX")
	trap 'bench_cleanup' EXIT
	trap 'exit 130' INT TERM
	for p in genfolded futex_pingpong lock_contend beacon; do
		[ -x "$BB/$p" ] || die "$BB/$p is missing; run 'make bench-build' (or make bench)"
	done
	[ -x "$OFFCPU" ] || die "$OFFCPU is missing; run make first"
}

# Processes a script starts in the background are stopped by pid on the way out.
BG_PIDS=
bench_cleanup()
{
	for p in $BG_PIDS; do
		kill "$p" 2>/dev/null
	done
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
}

die()
{
	echo "bench: $*" >&2
	exit 1
}

say()
{
	echo "  [$(date +%T)] $*" >&2
}

is_root()
{
	[ "$(id -u)" = 0 ]
}

# median: the median of the numbers on stdin (one a line), "nan" for none.
median()
{
	sort -g | awk '{ a[NR] = $1 } END {
		if (!NR) { print "nan"; exit }
		print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# fmt N [DECIMALS]: a number for a table; "n/a" stays as it is.
fmt()
{
	awk -v x="$1" -v d="${2:-1}" 'BEGIN {
		if (x == "" || x == "nan" || x !~ /^-?[0-9.e+-]+$/) { print "n/a"; exit }
		printf "%.*f\n", d, x }'
}

# offcpu_has CMD: whether this build of offcpu has the subcommand CMD.
offcpu_has()
{
	"$OFFCPU" "$1" --help >/dev/null 2>&1
}

# native_ready: whether `offcpu record --tool native` captures on this host (it is
# the default collector once it lands; before that it reports tool_unavailable).
native_ready()
{
	if [ ! -f "$TMP/native.probe" ]; then
		if is_root && "$OFFCPU" record -q --json --tool native -o "$TMP/native-probe" -- sleep 0.05 \
			2>/dev/null | grep -q '"state":"summary_written"'; then
			echo yes > "$TMP/native.probe"
		else
			echo no > "$TMP/native.probe"
		fi
	fi
	[ "$(cat "$TMP/native.probe")" = yes ]
}

# wait_bpf_link PID [TIMEOUT_S]: waits until process PID holds a BPF link (its
# programs are attached), for collectors that do not say when they are ready.
wait_bpf_link()
{
	local pid=$1 n=0 max=$((${2:-30} * 100))

	while [ $n -lt $max ]; do
		if ls -l "/proc/$pid/fd" 2>/dev/null | grep -q 'bpf[-_]link'; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.01
		n=$((n + 1))
	done
	return 1
}

# child_of PID: the (first) child process of PID, e.g. the tool under /usr/bin/time.
child_of()
{
	local n=0

	while [ $n -lt 500 ]; do
		c=$(cat "/proc/$1/task/$1/children" 2>/dev/null | awk '{ print $1 }')
		if [ -n "$c" ]; then
			echo "$c"
			return 0
		fi
		sleep 0.01
		n=$((n + 1))
	done
	return 1
}

# kv KEY FILE: the value of KEY=VALUE in the last line of FILE that has it.
kv()
{
	sed -n "s/.*[ ^]$1=\([^ ]*\).*/\1/p" "$2" | tail -n 1
}

# bpf_map_ids: ids of the BPF maps that exist now, one a line.
bpf_map_ids()
{
	bpftool -j map show 2>/dev/null | jq -r '.[].id' 2>/dev/null
}

# bpf_map_bytes_since IDS_FILE: memlock bytes of the maps created since IDS_FILE was
# written (the running collector's maps).
bpf_map_bytes_since()
{
	bpftool -j map show 2>/dev/null | jq -r '.[] | "\(.id) \(.bytes_memlock // 0)"' |
		awk 'NR == FNR { old[$1] = 1; next } !($1 in old) { s += $2 } END { print s + 0 }' \
			"$1" -
}

# tree PID: PID and all its descendants, one a line.
tree()
{
	local c

	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		tree "$c"
	done
}

# bpf_mem_sampler PID OUT: every 0.2 s until PID is gone, adds up the memlock of the
# BPF maps the process tree under PID holds (from /proc fdinfo: cheap, no bpftool)
# and keeps the largest sum in OUT, in bytes. It runs as a real-time task: with
# hundreds of runnable workload threads it would otherwise hardly ever run (it
# sleeps 0.2 s between samples, so it takes little from the workload).
bpf_mem_sampler()
{
	local max=0 sum p fd

	chrt -f -p 10 $BASHPID >/dev/null 2>&1 || renice -n -15 -p $BASHPID >/dev/null 2>&1

	while kill -0 "$1" 2>/dev/null; do
		sum=$(for p in $(tree "$1"); do
			for fd in /proc/"$p"/fd/*; do
				case $(readlink "$fd" 2>/dev/null) in
				*bpf-map*) cat /proc/"$p"/fdinfo/"${fd##*/}" 2>/dev/null ;;
				esac
			done
		done | awk '$1 == "memlock:" { m = $2 } $1 == "map_id:" && !seen[$2]++ { s += m }
			END { print s + 0 }')
		[ "$sum" -gt "$max" ] && max=$sum && echo "$max" >"$2"
		sleep 0.2
	done
}

# run_under MODE ARGV...: runs the workload ARGV once, bare or under a collector:
#   bare      the workload alone
#   offcpu    offcpu record (the built-in collector)
#   bpftrace  offcpu record --tool bpftrace (share/offcpu.bt)
#   bcc       BCC's C offcputime -p PID (libbpf-tools); the workload must take
#             --wait-start (it is released once the tool holds its BPF link)
#   perf      perf record -e sched:sched_switch -g
# The workload's stdout goes to $TMP/out. Sets RUN_RSS_KB (max RSS of the collector's
# process tree, or of the workload when bare) and RUN_BPF_BYTES (memlock of the
# collector's BPF maps at their largest). Returns non-zero, saying why on stderr,
# when the collector captured nothing.
BCC=${BCC_OFFCPUTIME:-/usr/sbin/offcputime}
run_under()
{
	local mode=$1 pid tp tool=native n=0 sampler
	shift
	rm -rf "$TMP/lane" "$TMP/perf.data" "$TMP/bcc.txt" "$TMP/rss" "$TMP/bpfmem"
	: >"$TMP/out"
	RUN_RSS_KB=0
	RUN_BPF_BYTES=0
	case $mode in
	bare | offcpu | bpftrace | perf)
		case $mode in
		bare) set -- "$@" ;;
		offcpu | bpftrace)
			[ "$mode" = bpftrace ] && tool=bpftrace
			set -- "$OFFCPU" record -q --json --tool $tool -o "$TMP/lane" -- "$@" ;;
		perf) set -- perf record -q -e sched:sched_switch -g -o "$TMP/perf.data" -- "$@" ;;
		esac
		/usr/bin/time -f %M -o "$TMP/rss" "$@" >"$TMP/out" 2>>"$TMP/err" &
		pid=$!
		bpf_mem_sampler $pid "$TMP/bpfmem" &
		sampler=$!
		BG_PIDS="$pid $sampler"
		wait $pid
		wait $sampler
		BG_PIDS=
		;;
	bcc)
		# The workload says on stderr when it waits for SIGUSR1.
		"$1" --wait-start "${@:2}" >"$TMP/out" 2>"$TMP/wl.err" &
		pid=$!
		while ! grep -q 'waiting for SIGUSR1' "$TMP/wl.err" && [ $n -lt 1000 ]; do
			sleep 0.01
			n=$((n + 1))
		done
		/usr/bin/time -f %M -o "$TMP/rss" "$BCC" -p $pid >"$TMP/bcc.txt" 2>>"$TMP/err" &
		tp=$!
		bpf_mem_sampler $tp "$TMP/bpfmem" &
		sampler=$!
		BG_PIDS="$pid $tp $sampler"
		if ! wait_bpf_link "$(child_of $tp)" 30; then
			kill $pid "$(child_of $tp)" 2>/dev/null
			wait $tp $pid $sampler 2>/dev/null
			BG_PIDS=
			say "bcc: $BCC did not attach"
			return 1
		fi
		kill -USR1 $pid
		wait $pid
		kill -INT "$(child_of $tp)"
		wait $tp
		wait $sampler
		BG_PIDS=
		;;
	esac
	RUN_RSS_KB=$(tail -n 1 "$TMP/rss" 2>/dev/null)
	RUN_BPF_BYTES=$(cat "$TMP/bpfmem" 2>/dev/null || echo 0)
	case $mode in
	offcpu | bpftrace)
		grep -q '"state":"summary_written"' "$TMP/out" ||
			{ say "$mode: no capture: $(grep '"state"' "$TMP/out" | head -c 300)"; return 1; } ;;
	perf)
		[ -s "$TMP/perf.data" ] || { say "perf: no perf.data"; return 1; } ;;
	bcc)
		grep -q "^ *- .* ($pid)\$" "$TMP/bcc.txt" || { say "bcc: no stacks captured"; return 1; } ;;
	esac
	return 0
}

# mode_available MODE: succeeds, or prints why MODE cannot be measured here.
mode_available()
{
	case $1 in
	bare) ;;
	offcpu) native_ready || { echo "pending: the built-in collector is not in this build yet"; return 1; } ;;
	bcc) [ -x "$BCC" ] || { echo "$BCC is not installed (Debian libbpf-tools)"; return 1; } ;;
	bpftrace) command -v bpftrace >/dev/null || { echo "bpftrace is not installed"; return 1; } ;;
	perf) command -v perf >/dev/null || { echo "perf is not installed (linux-perf)"; return 1; } ;;
	esac
}

# The machine, for the record.
machine()
{
	local cpu mem

	cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	echo "- CPU: $(nproc) x ${cpu:-unknown}$(grep -q '^flags.* hypervisor' /proc/cpuinfo &&
		echo ' (virtual machine)')"
	echo "- Memory: $mem"
	echo "- Kernel: $(uname -r) ($(uname -m))"
	echo "- OS: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
	echo "- Tools: $(bpftrace --version 2>/dev/null | head -n 1), perf $(perf version 2>/dev/null |
		awk '{ print $3 }'), $(hyperfine --version 2>/dev/null), libbpf-tools offcputime" \
		"$(dpkg-query -W -f '${Version}' libbpf-tools 2>/dev/null)"
	echo "- offcpu: $("$OFFCPU" --version 2>/dev/null) ($(git -C "$ROOT" rev-parse --short HEAD \
		2>/dev/null)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ', modified'))"
}
