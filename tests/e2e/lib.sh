# SPDX-License-Identifier: GPL-2.0-only
# Helpers for end-to-end tests: source it, then call ok/fail/skip per test.
# Each test prints exactly one "ok NAME" / "FAIL NAME: why" / "skip NAME: why".
set -u
: "${OFFCPU_BIN:?run through tests/run.sh}"
W="$OFFCPU_BUILD/tests/workloads"
FAKES="$OFFCPU_BUILD/tests/fakes"
DATA="$OFFCPU_ROOT/tests/data"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/e2e.XXXXXX")

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "skip $1: $2"; }

need_root() { [ "$(id -u)" -eq 0 ]; }

# json FILE FILTER: one jq value, raw.
json() { jq -r "$2" "$1"; }

# within A B PCT ABS_NS: |A - B| <= max(B * PCT / 100, ABS_NS)
within() {
	awk -v a="$1" -v b="$2" -v p="$3" -v m="$4" 'BEGIN {
		d = a - b; if (d < 0) d = -d; t = b * p / 100; if (t < m) t = m; exit !(d <= t) }'
}

mount_tracefs() {
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
}

# The loopback stand-in for a Pyroscope server (tests/tools/pyroscope_rx.py).
RX="$OFFCPU_ROOT/tests/tools/pyroscope_rx.py"
rx_pid=

# rx_start STORE ARGS...: start the receiver; sets $port and $url.
rx_start() {
	local store=$1 pf=$SCRATCH/rx.port
	shift
	rm -f "$pf"
	python3 "$RX" --store "$store" --port-file "$pf" "$@" 2>>"$SCRATCH/rx.err" &
	rx_pid=$!
	for _ in $(seq 200); do
		[ -s "$pf" ] && break
		sleep 0.05
	done
	port=$(cat "$pf" 2>/dev/null)
	url=http://127.0.0.1:$port
}
rx_stop() {
	if [ -n "$rx_pid" ]; then
		kill "$rx_pid" 2>/dev/null
		wait "$rx_pid" 2>/dev/null
	fi
	rx_pid=
}
