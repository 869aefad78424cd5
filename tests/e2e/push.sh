#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Pushing to Grafana Pyroscope (docs/push.md), against tests/tools/pyroscope_rx.py:
# a receiver on 127.0.0.1 that implements the documented ingest request (no live
# Pyroscope server can be installed here). Bodies are read back with `go tool
# pprof`, the real consumer of pprof. A real capture of the nanosleep workload is
# the input; its copies, moved in time, stand for consecutive periods.
. "$(dirname "$0")/lib.sh"
mount_tracefs
trap rx_stop EXIT

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# received STORE: the number of accepted requests; froms STORE: their from, sorted, unique.
received() { if [ -f "$1/log" ]; then wc -l <"$1/log"; else echo 0; fi; }
froms() { [ -f "$1/log" ] && awk '{ print $2 }' "$1/log" | sort -u | tr '\n' ' '; }

# periods N: lanes p1..pN, copies of $LANE whose start is moved by i seconds; prints
# their expected from values, sorted.
periods() {
	local i
	for i in $(seq "$1"); do
		rm -rf "$SCRATCH/p$i"
		cp -r "$LANE" "$SCRATCH/p$i"
		python3 - "$SCRATCH/p$i/offcpu.summary.json" "$i" <<-'EOF'
			import json, sys
			p = sys.argv[1]
			s = json.load(open(p))
			s["workload"]["started_unix_ns"] += int(sys.argv[2]) * 1000000000
			json.dump(s, open(p, "w"))
			print(s["workload"]["started_unix_ns"] // 1000000000)
		EOF
	done | sort -u | tr '\n' ' '
}

if ! need_root; then
	skip push "needs root to record a capture with the native collector"
	exit 0
fi
LANE=$SCRATCH/lane
if ! "$OFFCPU_BIN" record -q -o "$LANE" -- "$W/nanosleep" >"$SCRATCH/rec.out" 2>&1; then
	fail push_record "record failed: $(tail -n 2 "$SCRATCH/rec.out" | tr '\n' ' ')"
	exit 0
fi
AUTH=$SCRATCH/auth
echo "Bearer s3cret" >"$AUTH"
chmod 600 "$AUTH"

t=push_real_capture_arrives_with_totals_and_labels
rx_start "$SCRATCH/rx1" --token s3cret
start=$(jq -r .workload.started_unix_ns "$LANE/offcpu.summary.json")
wall=$(jq -r .workload.wall_ns "$LANE/offcpu.summary.json")
want_from=$(python3 -c "print($start // 10**9)")
want_until=$(python3 -c "print(-(-($start + $wall) // 10**9))")
want_ns=$("$OFFCPU_BIN" report --json "$LANE" | jq .totals.off_ns)
"$OFFCPU_BIN" push --to "$url" --auth-file "$AUTH" --label env=test "$LANE" 2>"$SCRATCH/err"
rc=$?
body=$SCRATCH/rx1/1.pb.gz
if [ $rc -ne 0 ]; then
	fail $t "push exited $rc: $(tr '\n' ' ' <"$SCRATCH/err")"
elif [ "$(received "$SCRATCH/rx1")" != 1 ]; then
	fail $t "the receiver accepted $(received "$SCRATCH/rx1") requests, want 1"
elif ! command -v go >/dev/null 2>&1; then
	skip $t "go is not installed (Debian: golang-go)"
elif ! go tool pprof -raw "$body" >"$SCRATCH/raw" 2>&1; then
	fail $t "go tool pprof cannot read the body: $(head -n 2 "$SCRATCH/raw" | tr '\n' ' ')"
else
	read -r _ from until name <"$SCRATCH/rx1/log"
	got_ns=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ { sub(":", "", $2); t += $2 } END { printf "%.0f", t }' "$SCRATCH/raw")
	why=
	[ "$name" = "offcpu{host=$(hostname),env=test}" ] || why="series name $name"
	[ "$from" = "$want_from" ] && [ "$until" = "$want_until" ] ||
		why="from/until $from/$until, want $want_from/$want_until"
	grep -q '^events/count off_cpu/nanoseconds\[dflt\]' "$SCRATCH/raw" || why="sample types: $(grep -A1 '^Samples:' "$SCRATCH/raw" | tail -n 1)"
	[ "$got_ns" = "$want_ns" ] || why="off_cpu total $got_ns ns, report says $want_ns ns"
	for l in comm state reason process thread; do
		grep -q "$l:\[" "$SCRATCH/raw" || why="no $l label on the samples"
	done
	go tool pprof -traces "$body" 2>/dev/null | grep -q nanosleep || why="-traces shows no nanosleep stack"
	[ "$(jq -r '.sample_type_config.off_cpu["display-name"]' "$SCRATCH/rx1/1.json")" = wait ] ||
		why="sample_type_config: $(jq -c .sample_type_config "$SCRATCH/rx1/1.json")"
	if [ -n "$why" ]; then fail $t "$why"; else ok $t; fi
fi
rx_stop

t=push_server_failing_then_recovering_gets_each_period_once
want=$(periods 3)
rx_start "$SCRATCH/rx2" --mode fail:2
"$OFFCPU_BIN" push --to "$url" --timeout 40s "$SCRATCH"/p1 "$SCRATCH"/p2 "$SCRATCH"/p3 2>"$SCRATCH/err"
rc=$?
if [ $rc -ne 0 ]; then
	fail $t "push exited $rc: $(tr '\n' ' ' <"$SCRATCH/err")"
elif [ "$(received "$SCRATCH/rx2")" != 3 ] || [ "$(froms "$SCRATCH/rx2")" != "$want" ]; then
	fail $t "received $(received "$SCRATCH/rx2") with from '$(froms "$SCRATCH/rx2")', want 3: '$want'"
else
	ok $t
fi
rx_stop

t=push_server_down_at_first_then_started
want=$(periods 2)
port=$(free_port)
"$OFFCPU_BIN" push --to "http://127.0.0.1:$port" --timeout 40s "$SCRATCH"/p1 "$SCRATCH"/p2 \
	2>"$SCRATCH/err" &
push_pid=$!
sleep 2.5
rx_start "$SCRATCH/rx3" --port "$port"
wait $push_pid
rc=$?
if [ $rc -ne 0 ]; then
	fail $t "push exited $rc: $(tr '\n' ' ' <"$SCRATCH/err")"
elif [ "$(received "$SCRATCH/rx3")" != 2 ] || [ "$(froms "$SCRATCH/rx3")" != "$want" ]; then
	fail $t "received $(received "$SCRATCH/rx3") with from '$(froms "$SCRATCH/rx3")', want 2: '$want'"
else
	ok $t
fi
rx_stop

t=push_sigterm_mid_queue_then_rerun_loses_nothing_and_sends_nothing_twice
want=$(periods 4)
lanes="$SCRATCH/p1 $SCRATCH/p2 $SCRATCH/p3 $SCRATCH/p4"
rx_start "$SCRATCH/rx4" --mode hang-after:2
# shellcheck disable=SC2086
"$OFFCPU_BIN" push --to "$url" --spool "$SCRATCH/spool4" $lanes 2>"$SCRATCH/err" &
push_pid=$!
for _ in $(seq 200); do
	[ "$(received "$SCRATCH/rx4")" -ge 2 ] && break
	sleep 0.05
done
sleep 0.3
kill -TERM $push_pid
wait $push_pid
rc1=$?
left=$(find "$SCRATCH/spool4" -maxdepth 1 -name '*.push' | wc -l)
rx_stop
rx_start "$SCRATCH/rx4" # the same store: its log goes on
# shellcheck disable=SC2086
"$OFFCPU_BIN" push --to "$url" --spool "$SCRATCH/spool4" --timeout 30s $lanes 2>"$SCRATCH/err2"
rc2=$?
if [ $rc1 -ne 1 ] || [ "$left" != 2 ]; then
	fail $t "after SIGTERM: exit $rc1 (want 1), $left entries left in the spool (want 2): $(tr '\n' ' ' <"$SCRATCH/err")"
elif [ $rc2 -ne 0 ]; then
	fail $t "the rerun exited $rc2: $(tr '\n' ' ' <"$SCRATCH/err2")"
elif [ "$(received "$SCRATCH/rx4")" != 4 ] || [ "$(froms "$SCRATCH/rx4")" != "$want" ]; then
	fail $t "received $(received "$SCRATCH/rx4") with from '$(froms "$SCRATCH/rx4")', want 4: '$want'"
else
	ok $t
fi
rx_stop

t=push_slow_server_times_out_and_is_retried
rx_start "$SCRATCH/rx5" --mode slow:1 --slow-secs 4
"$OFFCPU_BIN" push --to "$url" --request-timeout 1s --timeout 30s "$LANE" 2>"$SCRATCH/err"
rc=$?
if [ $rc -ne 0 ]; then
	fail $t "push exited $rc: $(tr '\n' ' ' <"$SCRATCH/err")"
elif [ "$(received "$SCRATCH/rx5")" != 1 ]; then
	fail $t "received $(received "$SCRATCH/rx5"), want 1"
else
	ok $t
fi
rx_stop

t=push_auth_file_readable_by_others_is_refused
rx_start "$SCRATCH/rx6" --token s3cret
cp "$AUTH" "$SCRATCH/auth644"
chmod 644 "$SCRATCH/auth644"
"$OFFCPU_BIN" push --to "$url" --auth-file "$SCRATCH/auth644" "$LANE" 2>"$SCRATCH/err"
rc=$?
if [ $rc -ne 2 ]; then
	fail $t "exit $rc, want 2: $(tr '\n' ' ' <"$SCRATCH/err")"
elif ! grep -q 'chmod 600' "$SCRATCH/err" || [ "$(wc -l <"$SCRATCH/err")" != 1 ]; then
	fail $t "not one line saying chmod 600: $(tr '\n' ' ' <"$SCRATCH/err")"
elif [ "$(received "$SCRATCH/rx6")" != 0 ]; then
	fail $t "something was sent anyway"
else
	ok $t
fi

t=push_401_is_a_permanent_failure_with_the_servers_words
echo "Bearer wrong" >"$SCRATCH/badauth"
chmod 600 "$SCRATCH/badauth"
s=$(date +%s)
"$OFFCPU_BIN" push --to "$url" --auth-file "$SCRATCH/badauth" --timeout 30s "$LANE" 2>"$SCRATCH/err"
rc=$?
took=$(($(date +%s) - s))
if [ $rc -ne 1 ]; then
	fail $t "exit $rc, want 1: $(tr '\n' ' ' <"$SCRATCH/err")"
elif ! grep -q 'HTTP 401: invalid credentials: the token was not accepted' "$SCRATCH/err"; then
	fail $t "the server's words are missing: $(tr '\n' ' ' <"$SCRATCH/err")"
elif ! grep -q '1 refused' "$SCRATCH/err" || [ "$took" -gt 10 ]; then
	fail $t "not refused at once (${took}s): $(tr '\n' ' ' <"$SCRATCH/err")"
else
	ok $t
fi

t=push_bad_label_is_a_usage_error
"$OFFCPU_BIN" push --to "$url" --label 9lives=x "$LANE" 2>"$SCRATCH/err"
rc1=$?
"$OFFCPU_BIN" push --to "$url" --label env=a,b "$LANE" 2>>"$SCRATCH/err"
rc2=$?
if [ $rc1 -ne 2 ] || [ $rc2 -ne 2 ]; then
	fail $t "exits $rc1 and $rc2, want 2: $(tr '\n' ' ' <"$SCRATCH/err")"
elif ! grep -q "label name '9lives'" "$SCRATCH/err"; then
	fail $t "the message does not name the label: $(head -n 1 "$SCRATCH/err")"
else
	ok $t
fi

t=doctor_push_checks_the_target_and_the_credential
"$OFFCPU_BIN" doctor --push "$url" --auth-file "$AUTH" >"$SCRATCH/d1" 2>&1
rc1=$?
"$OFFCPU_BIN" doctor --push "$url" --auth-file "$SCRATCH/badauth" >"$SCRATCH/d2" 2>&1
rc2=$?
rx_stop
"$OFFCPU_BIN" doctor --push "$url" >"$SCRATCH/d3" 2>&1
rc3=$?
if [ $rc1 -ne 0 ] || ! grep -q '^ok   push-ready .*/ready: HTTP 200: ready' "$SCRATCH/d1" ||
	! grep -q '^info push-build server version rx-test' "$SCRATCH/d1"; then
	fail $t "a good target: exit $rc1: $(tr '\n' '|' <"$SCRATCH/d1")"
elif [ $rc2 -ne 1 ] || ! grep -q '^FAIL push-auth .*HTTP 401' "$SCRATCH/d2"; then
	fail $t "a refused credential: exit $rc2: $(tr '\n' '|' <"$SCRATCH/d2")"
elif [ $rc3 -ne 1 ] || ! grep -q '^FAIL push-ready .*no answer' "$SCRATCH/d3"; then
	fail $t "no server: exit $rc3: $(tr '\n' '|' <"$SCRATCH/d3")"
else
	ok $t
fi

rm -rf "$SCRATCH"
