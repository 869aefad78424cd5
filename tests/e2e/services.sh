#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Complete user stacks on the software people run (issue #9): Debian's own
# python3, redis-server and postgres, none built with frame pointers all the way
# down, each started here as a private instance on 127.0.0.1 (temporary
# directories, free ports), put under load for a few seconds, recorded, and
# stopped by pid. For each capture:
#
#   - no user frame outside an executable mapping in any output: no raw
#     `0x...` frame in offcpu.profile.txt, the folded offcpu.time.txt, nor the
#     pprof and speedscope exports;
#   - at least 95% of the off-CPU time of rows with a user stack lies in
#     complete stacks (no `[unwind: ...]` marker, starting at _start,
#     clone/clone3 or start_thread; tests/e2e/stacks.py);
#   - the waits a user looks for have their callers: python's lock waits reach
#     the interpreter and the thread or Py_BytesMain; postgres's LWLock waits
#     show LWLockAcquire (through PGSemaphoreLock) and its client waits
#     WaitEventSetWait and secure_read (perf on this machine shows epoll_wait
#     right under secure_read: perf's own unwinding skips WaitEventSetWait,
#     whose call to epoll_wait is at 0x44e139 of postgres 15.18's binary).
#
# A missing service binary is a skip, never a pass. About a minute in all.
. "$(dirname "$0")/lib.sh"
mount_tracefs
PY=/usr/bin/python3
STACKS="$OFFCPU_ROOT/tests/e2e/stacks.py"
PGBIN=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
PGTMP=
KILL_PIDS=

if ! need_root; then
	skip services "needs root to load BPF programs"
	exit 0
fi

cleanup() {
	local p
	for p in $KILL_PIDS; do
		kill "$p" 2>/dev/null
	done
	[ -n "$PGTMP" ] && rm -rf "$PGTMP"
}
trap cleanup EXIT

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# checks PREFIX DIR: the checks every capture gets.
checks() {
	if [ ! -s "$2/offcpu.profile.txt" ]; then
		fail "$1_capture" "no profile in $2: $(tail -n 2 "$2.err" 2>/dev/null | tr '\n' ' ')"
		return 1
	fi
	"$OFFCPU_BIN" export -f pprof "$2" -o "$2/offcpu.pb.gz" 2>/dev/null ||
		fail "$1_pprof_export" "offcpu export -f pprof failed"
	"$OFFCPU_BIN" export -f speedscope "$2" -o "$2/offcpu.speedscope.json" 2>/dev/null ||
		fail "$1_speedscope_export" "offcpu export -f speedscope failed"
	"$PY" "$STACKS" check "$1" "$2"
}

# path TEST DIR COMM_REGEX NAME...: some stack holds NAME... leaf to root.
path() {
	local t=$1 d=$2
	shift 2
	if "$PY" "$STACKS" has "$t" "$d/offcpu.profile.txt" "$@"; then
		ok "$t"
	else
		fail "$t" "no stack of ${1} threads holds ${*:2} (leaf to root)"
	fi
}

# (a) python3: threads, a lock, sleeps; the interpreter's own frames.
if [ ! -x /usr/bin/python3 ]; then
	skip services_python "no /usr/bin/python3"
else
	d=$SCRATCH/python
	"$OFFCPU_BIN" record -q -o "$d" -- /usr/bin/python3 "$OFFCPU_ROOT/tests/workloads/pylock.py" \
		>"$d.out" 2>"$d.err"
	if checks services_python "$d"; then
		path services_python_lock_wait_reaches_thread "$d" . \
			PyThread_acquire_lock_timed _PyEval_EvalFrameDefault start_thread
		path services_python_join_reaches_main "$d" . \
			PyThread_acquire_lock_timed _PyEval_EvalFrameDefault Py_BytesMain
		# The waiters' threading.Lock and main's joins are Python's locks, not
		# the glibc semaphore under them: at least 0.5 s of the ~2 s run.
		t=services_python_threading_waits_are_lock_python
		got=$("$OFFCPU_BIN" report --json "$d" | jq -r '[.reasons[] | select(.reason == "lock") |
			.details[] | select(.detail == "python" or .detail == "semaphore") |
			"\(.detail)=\(.ns)"] | join(" ")')
		case " $got " in
		*" semaphore="*) fail $t "lock time still named semaphore: $got" ;;
		*" python="*) ns=${got##*python=}; ns=${ns%% *}
			if [ "$ns" -ge 500000000 ]; then ok $t; else fail $t "lock: python only $ns ns"; fi ;;
		*) fail $t "no lock: python detail: '$got'" ;;
		esac
	fi
	# subprocess's parent waits in glibc's __vfork, whose return address is
	# in rdi: before, its stacks ended there ("unsupported CFI in libc.so.6",
	# 12% of a subprocess-heavy python's off-CPU time). Not the 95% check:
	# once the new program is mapped, a child's wait in execve has no user
	# stack to unwind, a few percent of this short run (the vfork children's
	# own waits before: tests/e2e/unwind.sh).
	d=$SCRATCH/pyspawn
	if ! "$OFFCPU_BIN" record -q -o "$d" -- /usr/bin/python3 \
		"$OFFCPU_ROOT/tests/workloads/pyspawn.py" >"$d.out" 2>"$d.err"; then
		fail services_python_vfork_wait_reaches_main "record failed: $(tail -n 2 "$d.err")"
	else
		path services_python_vfork_wait_reaches_main "$d" . \
			__vfork do_fork_exec _PyEval_EvalFrameDefault Py_BytesMain
	fi
fi

# (b) redis-server under redis-benchmark, attached by pid.
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
	skip services_redis "no redis-server or redis-benchmark (Debian: redis-server, redis-tools)"
else
	d=$SCRATCH/redis
	mkdir -p "$d.dir"
	port=$(free_port)
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$d.dir" --daemonize no --logfile "$d.dir/log" &
	rpid=$!
	KILL_PIDS="$KILL_PIDS $rpid"
	for _ in $(seq 100); do
		redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG && break
		sleep 0.05
	done
	timeout 15 redis-benchmark -h 127.0.0.1 -p "$port" -q -c 20 -n 10000000 \
		-t set,get,lpush,lpop,incr >/dev/null 2>&1 &
	bpid=$!
	KILL_PIDS="$KILL_PIDS $bpid"
	sleep 0.5
	"$OFFCPU_BIN" record -q -o "$d" -p "$rpid" -d 4s >"$d.out" 2>"$d.err"
	kill "$bpid" 2>/dev/null
	wait "$bpid" 2>/dev/null
	redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$rpid"
	wait "$rpid" 2>/dev/null
	if checks services_redis "$d"; then
		# jemalloc's background thread sleeps between purges: idle, not a
		# lock (it was "lock: condvar", a fifth of redis-server's time).
		t=services_redis_jemalloc_background_thread_is_idle
		share=$("$OFFCPU_BIN" report --json --comm jemalloc_bg_thd "$d" 2>/dev/null |
			"$PY" -c 'import json, sys
r = {x["reason"]: x["share"] for x in json.load(sys.stdin)["reasons"]}
print("%.3f" % r.get("idle", 0))' 2>/dev/null)
		if [ -z "$share" ]; then
			skip $t "no jemalloc_bg_thd thread (redis-server not linked with jemalloc)"
		elif awk -v s="$share" 'BEGIN { exit !(s >= 0.95) }'; then
			ok $t
		else
			fail $t "jemalloc_bg_thd idle for a share of $share of its off-CPU time"
		fi
	fi
fi

# (c) postgres under pgbench, every postgres process attached by pid. root may
# not run postgres: the cluster belongs to user postgres, in a directory of its own.
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/postgres" ] || [ ! -x "$PGBIN/pgbench" ] ||
	! id postgres >/dev/null 2>&1; then
	skip services_postgres "no postgres, pgbench or user postgres (Debian: postgresql)"
else
	d=$SCRATCH/postgres
	PGTMP=$(mktemp -d /tmp/offcpu-pg.XXXXXX)
	chown postgres: "$PGTMP"
	port=$(free_port)
	pg() { runuser -u postgres -- "$@"; }
	pgc=(-h 127.0.0.1 -p "$port" -U postgres)
	if ! pg "$PGBIN/initdb" -D "$PGTMP/data" -A trust -U postgres --no-sync >"$d.init" 2>&1; then
		fail services_postgres_capture "initdb: $(tail -n 2 "$d.init" | tr '\n' ' ')"
	else
		pg "$PGBIN/postgres" -D "$PGTMP/data" -k "$PGTMP" -p "$port" \
			-c listen_addresses=127.0.0.1 -c shared_buffers=16MB >"$d.log" 2>&1 &
		KILL_PIDS="$KILL_PIDS $!"
		for _ in $(seq 100); do
			"$PGBIN/pg_isready" -q "${pgc[@]}" && break
			sleep 0.1
		done
		pm=$(head -n 1 "$PGTMP/data/postmaster.pid" 2>/dev/null)
		KILL_PIDS="$KILL_PIDS $pm"
		"$PGBIN/pgbench" "${pgc[@]}" -i -s 1 -q postgres >"$d.pgbench-init" 2>&1
		# Eight clients on one branch row: lock waits, LWLock waits, client reads.
		"$PGBIN/pgbench" "${pgc[@]}" -c 8 -j 2 -T 8 postgres >"$d.pgbench" 2>&1 &
		bpid=$!
		KILL_PIDS="$KILL_PIDS $bpid"
		sleep 1.5
		pids=$({ echo "$pm"; cat /proc/"$pm"/task/*/children 2>/dev/null; } | tr -s ' \n' ',')
		pids=${pids%,}
		"$OFFCPU_BIN" record -q -o "$d" -p "$pids" -d 5s >"$d.out" 2>"$d.err"
		wait "$bpid"
		kill -INT "$pm" 2>/dev/null # fast shutdown
		for _ in $(seq 100); do kill -0 "$pm" 2>/dev/null || break; sleep 0.1; done
		if checks services_postgres "$d"; then
			path services_postgres_lwlock_wait "$d" '^postgres' \
				futex_abstimed_wait_common PGSemaphoreLock LWLockAcquire PostgresMain
			path services_postgres_client_wait "$d" '^postgres' \
				epoll_wait WaitEventSetWait secure_read PostgresMain
		fi
	fi
fi
