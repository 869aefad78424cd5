#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The shipped reason rules on a real PostgreSQL: a private instance (initdb in a
# temporary directory, as user postgres, on 127.0.0.1 and a free port, its
# socket in that directory), pgbench with 8 clients on scale 1 (one branch row:
# updates queue on its row lock), recorded with `record -p` for 4 s. Kernel
# frames alone call row-lock waits and client waits both "poll" (epoll_wait);
# the report must separate lock waits (heavyweight), client waits (idle:
# client) and disk waits (WAL).
. "$(dirname "$0")/lib.sh"

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
t=postgres_reasons_separate_lock_client_and_disk_waits
t2=postgres_lock_waits_have_their_detail
if ! need_root; then
	skip $t "needs root"
	skip $t2 "needs root"
	exit 0
fi
if [ -z "$PGBIN" ] || ! command -v pgbench >/dev/null || ! id postgres >/dev/null 2>&1; then
	skip $t "PostgreSQL is not installed (Debian: postgresql)"
	skip $t2 "PostgreSQL is not installed (Debian: postgresql)"
	exit 0
fi
mount_tracefs

# The instance's directory must be the postgres user's; $SCRATCH is root's only.
PGDIR=$(mktemp -d /tmp/offcpu-pg.XXXXXX)
chown postgres: "$PGDIR"
postmaster=
bench=
cleanup() {
	[ -n "$bench" ] && kill "$bench" 2>/dev/null
	if [ -n "$postmaster" ] && kill -INT "$postmaster" 2>/dev/null; then
		for _ in $(seq 100); do kill -0 "$postmaster" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$postmaster" 2>/dev/null
	fi
	rm -rf "$PGDIR" "$SCRATCH"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pg() { runuser -u postgres -- "$@"; }

if ! pg "$PGBIN/initdb" -A trust -U postgres -D "$PGDIR/data" >"$SCRATCH/initdb.log" 2>&1; then
	fail $t "initdb failed: $(tail -n 2 "$SCRATCH/initdb.log" | tr '\n' ' ')"
	skip $t2 "no instance"
	exit 0
fi
if ! pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/pg.log" -w -t 30 \
	-o "-p $port -k $PGDIR -c listen_addresses=127.0.0.1 -c fsync=on" start >/dev/null 2>&1; then
	fail $t "postgres did not start: $(tail -n 2 "$PGDIR/pg.log" | tr '\n' ' ')"
	skip $t2 "no instance"
	exit 0
fi
postmaster=$(head -n 1 "$PGDIR/data/postmaster.pid")
bench_cmd() { pgbench -h 127.0.0.1 -p "$port" -U postgres "$@" postgres; }
if ! bench_cmd -i -s 1 >"$SCRATCH/init.log" 2>&1; then
	fail $t "pgbench -i failed: $(tail -n 2 "$SCRATCH/init.log" | tr '\n' ' ')"
	skip $t2 "no instance"
	exit 0
fi
bench_cmd -c 8 -j 2 -T 9 >"$SCRATCH/bench.log" 2>&1 &
bench=$!
sleep 2 # the 8 backends are up
pids=$(pgrep -d, -f "postgres.*$PGDIR"),$(pgrep -d, -P "$postmaster")
if ! "$OFFCPU_BIN" record -q -p "${pids%,}" -d 4s -o "$SCRATCH/cap" >/dev/null 2>"$SCRATCH/rec.err"; then
	fail $t "record failed: $(head -n 2 "$SCRATCH/rec.err" | tr '\n' ' ')"
	skip $t2 "no capture"
	exit 0
fi
wait "$bench"
bench=
"$OFFCPU_BIN" report --json --top 100000 "$SCRATCH/cap" >"$SCRATCH/r.json" 2>/dev/null
"$OFFCPU_BIN" report --width 120 "$SCRATCH/cap" >"$SCRATCH/r.txt" 2>&1

# ns REASON [DETAIL]: the report's time for it.
ns() {
	if [ $# -eq 1 ]; then
		jq -r --arg r "$1" '[.reasons[] | select(.reason == $r) | .ns] | add // 0' "$SCRATCH/r.json"
	else
		jq -r --arg r "$1" --arg d "$2" \
			'[.reasons[] | select(.reason == $r) | .details[] | select(.detail == $d) | .ns] | add // 0' \
			"$SCRATCH/r.json"
	fi
}
off=$(jq -r '.totals.off_ns' "$SCRATCH/r.json")
hw=$(ns lock heavyweight) client=$(ns idle client) disk=$(ns disk_io) poll=$(ns poll)
why=
[ "$hw" -gt 0 ] || why="no lock: heavyweight time (row locks in ProcSleep)"
[ "$client" -gt 0 ] || why="${why:+$why; }no idle: client time (secure_read)"
[ "$disk" -gt 0 ] || why="${why:+$why; }no disk_io time (WAL flushes)"
# Before the rules, ProcSleep and secure_read were both poll, the main reason.
awk -v p="$poll" -v o="$off" 'BEGIN { exit !(p < 0.05 * o) }' ||
	why="${why:+$why; }poll is still $poll of $off ns"
if [ -n "$why" ]; then
	fail $t "$why; reasons: $(sed -n '/^Off-CPU time by reason/,/^$/p' "$SCRATCH/r.txt" | tr -s ' \n' ' ')"
else
	ok $t
fi

# LWLock waits sleep in sem_wait -> futex: with the whole user stack, the rules
# call them lock: lwlock. Libc built without frame pointers ends the walk at
# its leaf (__futex_abstimed_wait_common) until the .eh_frame unwinder lands.
lock=$(ns lock)
undetailed=$(jq -r '[.top_stacks[] | select(.reason == "lock" and .detail == null) | .blocked_ns] | add // 0' "$SCRATCH/r.json")
truncated=$(jq -r '[.top_stacks[] | select(.reason == "lock" and .detail == null and
	(.key_frames.user | length) <= 1) | .blocked_ns] | add // 0' "$SCRATCH/r.json")
if awk -v u="$undetailed" -v l="$lock" 'BEGIN { exit !(u <= 0.05 * l) }'; then
	ok $t2
elif awk -v u="$undetailed" -v t="$truncated" 'BEGIN { exit !(u - t <= 0.05 * u) }'; then
	skip $t2 "lock waits without a detail ($undetailed of $lock ns) end at a libc leaf: needs the .eh_frame unwinder"
else
	fail $t2 "$undetailed of $lock ns of lock waits have no detail, with more than a libc leaf in their user stacks"
fi
