#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Real services: what each collector costs PostgreSQL and Redis, and what the
# collector itself uses while it traces them.
#
#   bench/services.sh [BUILD]    (root; env BENCH_REPS=3, BENCH_SECS=5, BENCH_REDIS_N=100000)
#
# BENCH_OFFCPU_BASE=PATH adds a variant: that offcpu binary with -p (an earlier build,
# to measure a change before and after in the same run).
# BENCH_PG_MODES / BENCH_REDIS_MODES (space-separated, from the lists below) run only
# those variants, e.g. "bare offcpu bcc-a" when only the recorder's own cost is wanted.
# BENCH_SERVICES ("pg redis redis1") runs only the workloads named, e.g. "redis" with
# many repetitions when one verdict needs more pairs; redis1 is redis-server and
# redis-benchmark pinned together to CPU 0.
#
# A private PostgreSQL cluster (initdb in a temporary directory, 127.0.0.1 on a free
# port) under pgbench TPC-B and select-only, and a private redis-server under
# redis-benchmark (once with the two free to use every CPU, once pinned together
# to one CPU, where the rate is set by the work a request costs that CPU, switches
# and collector included, as on the pinned pipe benchmark: the run-to-run spread
# is a few percent instead of tens), all started and stopped here by pid. Every run is bare or under
# one recorder, started (and attached: it holds its BPF link or perf events) before
# the clients connect and stopped after they are done.
. "$(dirname "$0")/lib.sh"
bench_init "${1:-build}"
REPS=${BENCH_REPS:-3}
SECS=${BENCH_SECS:-5}
REDIS_N=${BENCH_REDIS_N:-100000}
BT=$ROOT/share/offcpu.bt
PGBIN=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)

is_root || die "the service benchmarks need root (BPF, perf, the postgres user)"

# Variants per service. PostgreSQL forks a backend for each client after the
# recorder started: offcpu -p and the bpftrace script follow forks from the
# postmaster; offcputime -p and perf -p cannot, so they trace the host, and
# offcpu -a is there to compare with them like for like.
PG_MODES=${BENCH_PG_MODES:-"bare offcpu offcpu-a bcc-a bpftrace perf-a"}
REDIS_MODES=${BENCH_REDIS_MODES:-"bare offcpu bcc bpftrace perf"}
BASE=${BENCH_OFFCPU_BASE:-}
if [ -n "$BASE" ]; then
	[ -x "$BASE" ] || die "BENCH_OFFCPU_BASE=$BASE is not an executable"
	# Once, even when the mode lists name it too.
	case " $PG_MODES " in *" offcpu-base "*) ;; *) PG_MODES="$PG_MODES offcpu-base" ;; esac
	case " $REDIS_MODES " in *" offcpu-base "*) ;; *) REDIS_MODES="$REDIS_MODES offcpu-base" ;; esac
fi

STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled)
PGDIR=
services_cleanup()
{
	[ -n "${RPID:-}" ] && kill "$RPID" 2>/dev/null
	if [ -n "${PM:-}" ]; then
		kill -INT "$PM" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$PM" 2>/dev/null || break; sleep 0.1; done
	fi
	[ -n "$PGDIR" ] && rm -rf "$PGDIR"
	echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
	bench_cleanup
}
trap services_cleanup EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled

free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ctxt: context switches of the whole host so far.
ctxt()
{
	awk '$1 == "ctxt" { print $2 }' /proc/stat
}

# bpf_snapshot PID: "ID NAME RUN_TIME_NS RUN_CNT" for each BPF program the process
# tree under PID holds (through program or link descriptors).
bpf_snapshot()
{
	local ids p

	ids=$(for p in $(tree "$1"); do
		grep -h '^prog_id:' /proc/"$p"/fdinfo/* 2>/dev/null
	done | awk '{ print $2 }' | sort -u | paste -sd, -)
	[ -n "$ids" ] || return 0
	bpftool -j prog show 2>/dev/null | jq -r --arg ids "$ids" \
		'($ids | split(",") | map(tonumber)) as $w |
		.[] | select(.id as $i | $w | index($i)) |
		"\(.id) \(.name // "?") \(.run_time_ns // 0) \(.run_cnt // 0)"'
}

# attached PID: whether the tree under PID holds a BPF link or perf events.
attached()
{
	local p

	for p in $(tree "$1"); do
		ls -l /proc/"$p"/fd 2>/dev/null | grep -q 'bpf[-_]link\|perf_event' && return 0
	done
	return 1
}

# start_recorder MODE TARGET_PID: starts the recorder under /usr/bin/time, waits
# until it is attached; sets REC (the time process).
start_recorder()
{
	local mode=$1 pid=$2 n=0
	local -a argv

	rm -rf "$TMP/rec" "$TMP/rec.out" "$TMP/time"
	case $mode in
	offcpu) argv=("$OFFCPU" record -q --json -o "$TMP/rec" -p "$pid") ;;
	offcpu-a) argv=("$OFFCPU" record -q --json -o "$TMP/rec" -a) ;;
	offcpu-base) argv=("$BASE" record -q --json -o "$TMP/rec" -p "$pid") ;;
	bcc) argv=("$BCC" -p "$pid") ;;
	bcc-a) argv=("$BCC") ;;
	bpftrace) argv=(env BPFTRACE_MAP_KEYS_MAX=65536 bpftrace -o "$TMP/rec.bt" "$BT" "$pid") ;;
	perf) argv=(perf record -q -e sched:sched_switch -g -o "$TMP/perf.data" -p "$pid") ;;
	perf-a) argv=(perf record -q -e sched:sched_switch -g -o "$TMP/perf.data" -a) ;;
	esac
	/usr/bin/time -f '%U %S %M' -o "$TMP/time" "${argv[@]}" >"$TMP/rec.out" 2>"$TMP/rec.err" &
	REC=$!
	BG_PIDS="$REC"
	while ! attached $REC; do
		n=$((n + 1))
		if [ $n -gt 3000 ] || ! kill -0 $REC 2>/dev/null; then
			say "$mode did not attach: $(tail -n 2 "$TMP/rec.err" | tr '\n' ' ')"
			return 1
		fi
		sleep 0.01
	done
	# bpftrace attaches its probes one after another; let every recorder finish.
	sleep 0.3
}

# stop_recorder: interrupts the recorder, waits for it; sets REC_CPU, REC_RSS.
stop_recorder()
{
	kill -INT "$(child_of $REC)" 2>/dev/null
	wait $REC
	BG_PIDS=
	read -r u s m <"$TMP/time" 2>/dev/null || { u=nan s=0 m=nan; }
	# /usr/bin/time prints "Command exited with non-zero status" first when it does.
	if [ "$(wc -l <"$TMP/time")" -gt 1 ]; then
		read -r u s m < <(tail -n 1 "$TMP/time")
	fi
	REC_CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
	REC_RSS=$m
}

# client WORKLOAD: runs the clients once; prints their throughput.
client()
{
	case $1 in
	tpcb) "$PGBIN/pgbench" "${PGC[@]}" -c 8 -j 2 -T "$SECS" postgres 2>&1 |
		awk '/^tps = / { print $3; exit }' ;;
	select) "$PGBIN/pgbench" "${PGC[@]}" -S -c 8 -j 2 -T "$SECS" postgres 2>&1 |
		awk '/^tps = / { print $3; exit }' ;;
	redis | redis1)
		# redis1: the clients on the server's CPU (redis_pin()).
		# Its progress lines ("GET: rps=..." every 250 ms) kept for states().
		${PIN1:+taskset -c 0} redis-benchmark -h 127.0.0.1 -p "$RPORT" -q -c 50 -n "$REDIS_N" \
			-t get,set 2>/dev/null | tr '\r' '\n' | tee "$TMP/progress" |
			awk '/requests per second/ { s += $2; n++ } END { if (n) print s / n }' ;;
	esac
}

# redis_pin WORKLOAD: every thread of redis-server on CPU 0 for redis1, on every
# CPU otherwise; sets PIN1 for client(). The recorders are never pinned.
redis_pin()
{
	local cpus=0-$(($(nproc) - 1))

	PIN1=
	if [ "$1" = redis1 ]; then
		PIN1=1
		cpus=0
	fi
	taskset -a -p -c "$cpus" "$RPID" >/dev/null || die "taskset: cannot set redis-server's CPUs"
}

# measure WORKLOAD: runs the clients once; sets RATE (their throughput), SW (the
# host's context switches meanwhile) and RUN_SECS (their run time).
measure()
{
	local c0 t0

	c0=$(ctxt) t0=$(date +%s.%N)
	RATE=$(client "$1")
	SW=$(($(ctxt) - c0))
	RUN_SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
}

# samples WORKLOAD MODE REP: appends an unpinned Redis run's 250-ms rates
# (redis-benchmark's progress, each test's first one left out: it spans the
# test's start) to $TMP/samples as "WORKLOAD MODE REP RATE...", for states().
samples()
{
	[ "$1" = redis ] || return 0
	awk -v p="$1 $2 $3" '
		match($0, /^[A-Z]+: rps=[0-9.]+/) {
			split(substr($0, RSTART, RLENGTH), f, /: rps=/)
			if (f[2] + 0 > 0 && seen[f[1]]++) s = s " " f[2]
		}
		END { if (s != "") print p s }' "$TMP/progress" >>"$TMP/samples"
}

# one WORKLOAD MODE REP: one run; appends a line to $TMP/results.
one()
{
	local w=$1 mode=$2 rep=$3 target bpf

	case $w in redis*) target=$RPID; redis_pin "$w" ;; *) target=$PM ;; esac
	say "services: rep $rep/$REPS $w $mode"
	REC_CPU=nan REC_RSS=nan
	if [ "$mode" = bare ]; then
		measure "$w"
		samples "$w" "$mode" "$rep"
		echo "$w $mode $rep ${RATE:-nan} $SW nan nan nan nan $RUN_SECS" >>"$TMP/results"
		return
	fi
	start_recorder "$mode" "$target" || return 0
	bpf_snapshot $REC >"$TMP/b0"
	measure "$w"
	bpf_snapshot $REC >"$TMP/b1"
	stop_recorder
	samples "$w" "$mode" "$rep"
	# Per program: what it ran between attached and the clients' end.
	awk -v p="$w $mode $rep" -v sw=$SW 'NR == FNR { t[$1] = $3; c[$1] = $4; next }
		{ print p, $2, $3 - t[$1], $4 - c[$1], sw }' "$TMP/b0" "$TMP/b1" >>"$TMP/progs"
	bpf=$(awk -v p="$w $mode $rep" '$1 " " $2 " " $3 == p { t += $5; c += $6 }
		END { print t + 0, c + 0 }' "$TMP/progs")
	echo "$w $mode $rep ${RATE:-nan} $SW $bpf $REC_CPU $REC_RSS $RUN_SECS" >>"$TMP/results"
}

# --- the services ---
avail_pg=yes
avail_redis=yes
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/pgbench" ] || ! id postgres >/dev/null 2>&1; then
	avail_pg="no postgres, pgbench or user postgres (Debian: postgresql)"
fi
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
	avail_redis="no redis-server or redis-benchmark (Debian: redis-server, redis-tools)"
SERVICES=${BENCH_SERVICES:-pg redis redis1}
case " $SERVICES " in *" pg "*) ;; *) [ "$avail_pg" = yes ] && avail_pg="not asked for: BENCH_SERVICES=$SERVICES" ;; esac
case " $SERVICES " in *" redis "* | *" redis1 "*) ;; *) [ "$avail_redis" = yes ] && avail_redis="not asked for: BENCH_SERVICES=$SERVICES" ;; esac

if [ "$avail_pg" = yes ]; then
	PGDIR=$(mktemp -d /tmp/offcpu-bench-pg.XXXXXX)
	chown postgres: "$PGDIR"
	PGPORT=$(free_port)
	PGC=(-h 127.0.0.1 -p "$PGPORT" -U postgres)
	runuser -u postgres -- "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres --no-sync \
		>"$TMP/initdb" 2>&1 || die "initdb: $(tail -n 2 "$TMP/initdb")"
	runuser -u postgres -- "$PGBIN/postgres" -D "$PGDIR/data" -k "$PGDIR" -p "$PGPORT" \
		-c listen_addresses=127.0.0.1 -c shared_buffers=64MB -c fsync=off \
		-c synchronous_commit=off >"$TMP/pg.log" 2>&1 &
	for _ in $(seq 100); do
		"$PGBIN/pg_isready" -q "${PGC[@]}" && break
		sleep 0.1
	done
	PM=$(head -n 1 "$PGDIR/data/postmaster.pid" 2>/dev/null)
	[ -n "$PM" ] || die "postgres did not start: $(tail -n 3 "$TMP/pg.log")"
	"$PGBIN/pgbench" "${PGC[@]}" -i -s 8 -q postgres >"$TMP/pg.init" 2>&1 ||
		die "pgbench -i: $(tail -n 2 "$TMP/pg.init")"
	PGVER=$("$PGBIN/postgres" --version | awk '{ print $NF }')
fi
if [ "$avail_redis" = yes ]; then
	RPORT=$(free_port)
	mkdir -p "$TMP/redis"
	redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$TMP/redis" --daemonize no --logfile "$TMP/redis/log" &
	RPID=$!
	for _ in $(seq 100); do
		redis-cli -h 127.0.0.1 -p "$RPORT" ping 2>/dev/null | grep -q PONG && break
		sleep 0.05
	done
	RVER=$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')
fi

# Recorders this host lacks are left out and said.
for m in offcpu bcc bpftrace perf; do
	why=$(mode_available $m) || echo "$m $why" >>"$TMP/skipped"
done
usable()
{
	! grep -q "^${1%-a} " "$TMP/skipped" 2>/dev/null
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$TMP/results"
: >"$TMP/progs"
: >"$TMP/samples"
: >"$TMP/state"
for rep in $(seq 1 "$REPS"); do
	for w in tpcb select redis redis1; do
		case $w in
		redis*) [ "$avail_redis" = yes ] || continue; modes=$REDIS_MODES ;;
		*) [ "$avail_pg" = yes ] || continue; modes=$PG_MODES ;;
		esac
		case $w in tpcb | select) svc=pg ;; *) svc=$w ;; esac
		case " $SERVICES " in *" $svc "*) ;; *) continue ;; esac
		m2=
		for m in $modes; do usable $m && m2="$m2 $m"; done
		# Rotate the order each repetition so that no variant always runs first.
		order=$(echo $m2 | awk -v r=$((rep - 1)) \
			'{ for (i = 0; i < NF; i++) printf "%s ", $((i + r) % NF + 1) }')
		for m in $order; do
			one $w $m $rep
		done
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

cat <<EOF
### Real services: PostgreSQL (pgbench) and Redis (redis-benchmark)

Command: \`${BASE:+BENCH_OFFCPU_BASE=$BASE }${BENCH_PG_MODES:+BENCH_PG_MODES='$BENCH_PG_MODES' }${BENCH_REDIS_MODES:+BENCH_REDIS_MODES='$BENCH_REDIS_MODES' }${BENCH_SERVICES:+BENCH_SERVICES='$BENCH_SERVICES' }bench/services.sh $(basename "$BUILD")\` (BENCH_REPS=$REPS, BENCH_SECS=$SECS, BENCH_REDIS_N=$REDIS_N), as root.
Load average at the start: $load0; at the end: $load1 (the machine is shared).

Method. A private PostgreSQL ${PGVER:-} cluster (initdb in a temporary directory,
127.0.0.1, fsync off, scale 8) runs \`pgbench -c 8 -j 2 -T $SECS\` (TPC-B) and
\`pgbench -S -c 8 -j 2 -T $SECS\` (select-only); a private redis-server ${RVER:-}
(no persistence) runs \`redis-benchmark -c 50 -n $REDIS_N -t get,set\` twice: as
*redis*, neither pinned (the clients and the server share the machine's $(nproc) CPUs:
the clients use one whole CPU, and how the server's replies batch up moves the rate
by tens of percent from run to run), and as *redis1*, the server's threads and the
clients pinned together to CPU 0 (\`taskset\`; the recorders are not pinned), where
the rate is what a request costs that one CPU, its context switches and the
collector's work at each included, as on the pinned pipe benchmark. Both are
started and stopped by the script, by pid. Each run is bare or under one recorder,
started before the clients connect and attached (its BPF link or perf events are
in place) before they start, stopped (SIGINT) after they end. Each repetition runs
every variant once, in an order that rotates; tables show medians over $REPS
repetitions. PostgreSQL forks a backend per client after the recorder started:
\`offcpu record -p POSTMASTER\` and the project's bpftrace script share/offcpu.bt
(run as \`bpftrace share/offcpu.bt POSTMASTER\`) follow forks; BCC's
\`offcputime\` (libbpf-tools) takes one pid and does not follow children, and
\`perf record -p\` does not either, so for PostgreSQL they trace the whole host
(\`offcputime\`, \`perf record -a\`), and \`offcpu record -a\` is measured too, to
compare with them like for like. For Redis every recorder gets redis-server's pid.
Columns: *rate* is the clients' own throughput (pgbench's tps, redis-benchmark's
requests/s averaged over GET and SET); *loss* is 1 - rate/bare (the targets' verdict
on it is a sign test over the repetitions, each pairing offcpu's and offcputime's
runs of one repetition: with this machine's spread, medians of a few runs cannot
order two recorders a few percent apart); *switches/s* is the host's context
switches (/proc/stat ctxt) over the clients' run time; *BPF ns/switch* is
the run time of the recorder's own BPF programs (\`kernel.bpf_stats_enabled=1\`,
run_time_ns of the programs its processes hold, from attached to the clients' end)
over the host's context switches in that window (/proc/stat ctxt, counted the same
way for every variant; bpf_stats' own clock reads included); *BPF runs/switch* is
their run_cnt over the same switches; *CPU-s* is the recorder's own user+system
time from start to exit (its process tree, through \`/usr/bin/time\`; the
workload is not in it) and *RSS* its peak resident set (the largest process of
its tree). perf has no BPF programs: its cost is in the kernel's perf buffer
writes, seen in the rate only.

*redis by state*: unpinned, the clients and the server fall into one of two
states for seconds at a time, bare too (a slow one with fewer server switches per
request), so a run's rate depends on its share of each. This table splits
redis-benchmark's 250-ms rates (its progress lines; each test's first left out)
where two means of bare's settle, and gives per variant the share of windows in
the fast state, the median rate within each state and its loss against bare's
there, and the host's context switches per request.

EOF
if [ -s "$TMP/skipped" ]; then
	while read -r m why; do echo "- $m: not measured ($why)"; done <"$TMP/skipped"
	echo
fi
[ "$avail_pg" = yes ] || echo "- PostgreSQL: not measured ($avail_pg)"
[ "$avail_redis" = yes ] || echo "- Redis: not measured ($avail_redis)"

# states W MODES: unpinned Redis's rate over 250-ms windows. The clients and the
# server settle into one of two states for seconds at a time (bare too, with
# nothing else running; measured 2026-12-07: about 91,000 and 77,000 requests/s,
# the slow one with a third fewer server switches), so a run's rate is a mix
# whose share of each state is chance. Per variant: the share of windows in the
# fast state and the median rate within each, against bare's. The states split
# where two means of bare's windows settle, the machine's own states ("one
# state" when they are within 5% of each other).
states()
{
	grep -q "^$1 " "$TMP/samples" || return 0
	local m names=

	for m in $2; do names="$names$m=$(name_of $m $1);"; done
	awk -v w="$1" -v modes="$2" -v names="$names" -v n="$REDIS_N" -v out="$TMP/state" '
		function med(a, k,    i, j, t) {
			for (i = 2; i <= k; i++) {
				t = a[i]
				for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
				a[j + 1] = t
			}
			return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		}
		function pct(x, b) { return b > 0 ? sprintf("%.1f%%", 100 * (1 - x / b)) : "n/a" }
		FILENAME ~ /samples$/ && $1 == w {
			for (i = 4; i <= NF; i++) { v[++nv] = $i + 0; vm[nv] = $2 }
			next
		}
		FILENAME ~ /results$/ && $1 == w && $5 > 0 { spr[$2] = spr[$2] " " $5 / (2 * n) }
		END {
			for (i = 1; i <= nv; i++)
				if (vm[i] == "bare") { t += v[i]; nb++ }
			if (!nb) exit
			t /= nb
			for (it = 0; it < 50; it++) {
				lo = hi = nlo = nhi = 0
				for (i = 1; i <= nv; i++)
					if (vm[i] != "bare") continue
					else if (v[i] > t) { hi += v[i]; nhi++ } else { lo += v[i]; nlo++ }
				if (!nlo || !nhi) break
				t2 = (lo / nlo + hi / nhi) / 2
				if (t2 == t) break
				t = t2
			}
			if (!nlo || !nhi || hi / nhi < 1.05 * lo / nlo) {
				printf "%s: one state (bare'"'"'s 250-ms rates do not split in two)\n\n", w
				exit
			}
			printf "%s by state (a 250-ms window is fast above %.0f requests/s; the two states average %.0f and %.0f):\n\n", w, t, hi / nhi, lo / nlo
			print "| variant | windows | fast share | fast rate | loss | slow rate | loss | host switches/request |"
			print "|---|---:|---:|---:|---:|---:|---:|---:|"
			k = split(names, M, ";")
			for (j = 1; j < k; j++) {
				split(M[j], NM, "="); NAME[NM[1]] = NM[2]
			}
			k = split(modes, M, " ")
			for (j = 1; j <= k; j++) {
				m = M[j]; nf = ns = 0
				for (i = 1; i <= nv; i++)
					if (vm[i] == m) { if (v[i] > t) F[++nf] = v[i]; else S[++ns] = v[i] }
				if (!nf && !ns) continue
				mf[m] = nf ? med(F, nf) : 0; ms[m] = ns ? med(S, ns) : 0
				c = split(substr(spr[m], 2), X, " ")
				printf "| %s | %d | %.0f%% | %s | %s | %s | %s | %s |\n", NAME[m] ? NAME[m] : m,
					nf + ns, 100 * nf / (nf + ns),
					nf ? sprintf("%.0f", mf[m]) : "n/a", m == "bare" || !nf ? "" : pct(mf[m], mf["bare"]),
					ns ? sprintf("%.0f", ms[m]) : "n/a", m == "bare" || !ns ? "" : pct(ms[m], ms["bare"]),
					c ? sprintf("%.2f", med(X, c)) : "n/a"
				if (m != "bare")
					print w, m, nf && mf["bare"] ? pct(mf[m], mf["bare"]) : "n/a",
						ns && ms["bare"] ? pct(ms[m], ms["bare"]) : "n/a" >out
			}
			print ""
		}' "$TMP/samples" "$TMP/results"
}

# col W M N: the median of column N of workload W's runs under variant M.
col()
{
	awk -v w="$1" -v m="$2" -v n="$3" '$1 == w && $2 == m && $n != "nan" { print $n }' \
		"$TMP/results" | median
}

name_of()
{
	case $1 in
	offcpu) case $2 in redis*) echo "offcpu -p redis" ;; *) echo "offcpu -p postmaster" ;; esac ;;
	offcpu-a) echo "offcpu -a" ;;
	offcpu-base) echo "offcpu -p (base build)" ;;
	bcc) echo "offcputime -p redis" ;;
	bcc-a) echo "offcputime (host)" ;;
	bpftrace) echo "bpftrace offcpu.bt" ;;
	perf) echo "perf -p redis" ;;
	perf-a) echo "perf -a" ;;
	*) echo "$1" ;;
	esac
}

: >"$TMP/med"
for w in tpcb select redis redis1; do
	grep -q "^$w " "$TMP/results" || continue
	case $w in
	tpcb) echo "pgbench TPC-B (8 clients, tps):"; modes=$PG_MODES ;;
	select) echo "pgbench select-only (8 clients, tps):"; modes=$PG_MODES ;;
	redis) echo "redis-benchmark GET/SET (50 clients, requests/s):"; modes=$REDIS_MODES ;;
	redis1) echo "redis-benchmark GET/SET, server and clients on CPU 0 (50 clients, requests/s):"
		modes=$REDIS_MODES ;;
	esac
	echo
	echo "| variant | rate | loss | switches/s | BPF ns/switch | BPF runs/switch | CPU-s | peak RSS MB |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	bare=$(col $w bare 4)
	for m in $modes; do
		grep -q "^$w $m " "$TMP/results" || continue
		# Per-run ratios first, then their median: one slow run does not skew a column.
		ns=$(awk -v w=$w -v m=$m '$1 == w && $2 == m && $6 != "nan" && $5 > 0 { print $6 / $5 }' \
			"$TMP/results" | median)
		runs=$(awk -v w=$w -v m=$m '$1 == w && $2 == m && $7 != "nan" && $5 > 0 { print $7 / $5 }' \
			"$TMP/results" | median)
		rate=$(col $w $m 4)
		sw=$(awk -v w=$w -v m=$m '$1 == w && $2 == m && $10 > 0 { print $5 / $10 }' \
			"$TMP/results" | median)
		cpu=$(col $w $m 8)
		rss=$(col $w $m 9)
		loss=$(awk -v r="$rate" -v b="$bare" 'BEGIN { if (b > 0 && r != "nan") printf "%.1f%%", 100 * (1 - r / b); else print "n/a" }')
		echo "$w $m $rate $loss $ns $cpu $rss" >>"$TMP/med"
		case $m in perf*) ns=nan runs=nan ;; esac
		if [ "$m" = bare ]; then
			echo "| bare | $(fmt "$rate" 0) | | $(fmt "$sw" 0) | | | | |"
		else
			echo "| $(name_of $m $w) | $(fmt "$rate" 0) | $loss | $(fmt "$sw" 0) |" \
				"$(fmt "$ns" 0) | $(fmt "$runs" 2) | $(fmt "$cpu" 2) |" \
				"$(awk -v k="$rss" 'BEGIN { if (k ~ /^[0-9]+$/) printf "%.0f", k / 1024; else print "n/a" }') |"
		fi
	done
	echo
	if [ $w = redis ]; then states $w "$modes"; fi
done

# paired W O B: whether O's throughput is at most B's loss, from the repetitions
# where both ran (one repetition runs its variants back to back, so the pair
# shares the machine's state of the moment). Rates of the same variant vary by
# more than the few percent that separate two recorders on this kind of machine
# (bare's own spread is printed), so the verdict is a sign test: "met" when O's
# rate beats B's in so many pairs that a coin would do it with probability at
# most 5%, "NOT met" when B's beats O's that often, else "not resolved".
paired()
{
	awk -v w="$1" -v o="$2" -v b="$3" '
		function tail(n, k,    p, i, j, c) { # P(X >= k), X ~ Binomial(n, 1/2)
			p = 0
			for (i = k; i <= n; i++) {
				c = 1
				for (j = 1; j <= i; j++) c = c * (n - j + 1) / j
				p += c
			}
			return p / 2 ^ n
		}
		$1 == w && $4 != "nan" { r[$2, $3] = $4; reps[$3] = 1 }
		$1 == w && $2 == "bare" && $4 != "nan" {
			if (!nb || $4 < lo) lo = $4
			if (!nb || $4 > hi) hi = $4
			nb++
		}
		END {
			n = k = 0
			for (i in reps)
				if ((o, i) in r && (b, i) in r) {
					n++
					if (r[o, i] >= r[b, i]) k++
				}
			if (!n) { print w, "n/a (no repetition ran both)"; exit }
			v = tail(n, k) <= 0.05 ? "met" : tail(n, n - k) <= 0.05 ? "NOT met" : "not resolved"
			printf "%s %s (paired: offcpu'"'"'s rate at least offcputime'"'"'s in %d of %d repetitions", w, v, k, n
			if (nb > 1)
				printf "; bare itself ranged %.0f-%.0f, %.0f%%", lo, hi, 100 * (hi - lo) / lo
			print ")"
		}' "$TMP/results"
}
: >"$TMP/paired"
paired tpcb offcpu-a bcc-a >>"$TMP/paired"
paired select offcpu-a bcc-a >>"$TMP/paired"
paired redis offcpu bcc >>"$TMP/paired"
paired redis1 offcpu bcc >>"$TMP/paired"

# Targets of issue #12: offcpu against offcputime on the same footing (redis: both
# -p; PostgreSQL: both host-wide), and offcpu -p postmaster against host-wide
# offcputime as the setup a user would pick.
awk '
	function num(x) { return x != "" && x != "nan" }
	FILENAME ~ /paired$/ { w = $1; $1 = ""; paired[w] = substr($0, 2); next }
	FILENAME ~ /state$/ { fast[$1, $2] = $3; slow[$1, $2] = $4; next }
	{ rate[$1, $2] = $3; loss[$1, $2] = $4; ns[$1, $2] = $5; cpu[$1, $2] = $6; rss[$1, $2] = $7 }
	END {
		split("tpcb select redis redis1", W, " ")
		for (i = 1; i <= 4; i++) {
			w = W[i]; o = (w ~ /^redis/) ? "offcpu" : "offcpu-a"; b = (w ~ /^redis/) ? "bcc" : "bcc-a"
			if (!num(rate[w, o]) || !num(rate[w, b]))
				continue
			printf "Target (%s, %s vs %s): BPF ns/switch at most bcc'"'"'s: %s (%.0f vs %.0f); loss at most bcc'"'"'s: %s (%s vs %s by medians); CPU-s at most 2x: %s (%.2f vs %.2f); peak RSS at most 2x: %s (%.0f vs %.0f MB).\n",
				w, o, b, ns[w, o] <= ns[w, b] ? "met" : "NOT met", ns[w, o], ns[w, b],
				paired[w], loss[w, o], loss[w, b],
				cpu[w, o] <= 2 * cpu[w, b] ? "met" : "NOT met", cpu[w, o], cpu[w, b],
				rss[w, o] <= 2 * rss[w, b] ? "met" : "NOT met", rss[w, o] / 1024, rss[w, b] / 1024
			if ((w, o) in fast && (w, b) in fast)
				printf "By state (loss against bare within it): fast %s vs %s, slow %s vs %s.\n",
					fast[w, o], fast[w, b], slow[w, o], slow[w, b]
			print ""
		}
	}' "$TMP/paired" "$TMP/state" "$TMP/med"

echo "BPF time per switch by program (medians; only programs that ran):"
echo
echo "| workload | variant | program | ns/switch | runs/switch |"
echo "|---|---|---|---:|---:|"
for w in tpcb select redis redis1; do
	for m in $PG_MODES $REDIS_MODES; do
		awk -v w=$w -v m=$m '$1 == w && $2 == m && $7 > 0 && $6 > 0 { print $4 }' "$TMP/progs" |
			sort -u | while read -r prog; do
			a=$(awk -v w=$w -v m=$m -v g="$prog" '$1 == w && $2 == m && $4 == g { print $5 / $7 }' \
				"$TMP/progs" | median)
			r=$(awk -v w=$w -v m=$m -v g="$prog" '$1 == w && $2 == m && $4 == g { print $6 / $7 }' \
				"$TMP/progs" | median)
			echo "| $w | $(name_of $m $w) | $prog | $(fmt "$a" 0) | $(fmt "$r" 3) |"
		done
	done
done | awk '!seen[$0]++'
echo

echo "Raw runs (workload, variant, repetition, rate, host switches, BPF run_time_ns, BPF run_cnt, CPU-s, max RSS KB, the clients' seconds):"
echo
echo '```'
cat "$TMP/results"
echo '```'
