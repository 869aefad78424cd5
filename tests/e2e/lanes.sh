#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The external collector lanes, end to end, with the real binary and the real
# tools of this machine: bpftrace works, offcputime-bpfcc fails for lack of
# kernel headers (a real failure to classify), a missing tool, a real
# permission failure, argv passed intact, exit status kept.
. "$(dirname "$0")/lib.sh"
mount_tracefs
SCHEMA="$OFFCPU_ROOT/docs/summary.schema.json"
summaries=()

schema_ok() { # NAME SUMMARY
	local out
	if out=$("$OFFCPU_ROOT/tests/e2e/check_schema.py" "$SCHEMA" "$2" 2>&1); then
		return 0
	fi
	fail "$1" "summary does not match docs/summary.schema.json: $(echo "$out" | head -1)"
	return 1
}

t=bpftrace_lane_measures_a_known_sleep
if ! need_root || ! command -v bpftrace >/dev/null; then
	skip $t "needs root and bpftrace"
else
	d=$SCRATCH/bt
	"$OFFCPU_BIN" record --tool bpftrace --mode stacks -o "$d" -q -- sleep 0.3
	rc=$?
	s=$d/offcpu.summary.json
	state=$(json "$s" .state)
	status=$(json "$s" .capture_integrity.status)
	top=$(json "$s" '.top_stacks[0].off_ns')
	frames=$(json "$s" '[.top_stacks[0].frames[].name] | join(";")')
	if [ $rc -ne 0 ]; then
		fail $t "offcpu exited $rc"
	elif [ "$state" != summary_written ] || [ "$status" != complete ]; then
		fail $t "state=$state integrity=$status: $(json "$s" .caveat.message)"
	elif [[ $frames != *nanosleep* ]]; then
		fail $t "top stack is not the nanosleep path: $frames"
	elif ! within "$top" 300000000 5 0; then
		fail $t "top stack holds $top ns, expected 300 ms +-5%"
	elif schema_ok $t "$s"; then
		ok $t
	fi
fi

t=bcc_without_kernel_headers_is_classified
if ! need_root || ! command -v offcputime-bpfcc >/dev/null; then
	skip $t "needs root and offcputime-bpfcc"
elif [ -d "/lib/modules/$(uname -r)/build" ] || [ -e /sys/kernel/kheaders.tar.xz ]; then
	skip $t "this host has kernel headers; BCC would work here"
else
	d=$SCRATCH/bcc
	"$OFFCPU_BIN" record --tool offcputime-bpfcc --mode time -o "$d" -q -- sh -c 'sleep 0.05; exit 3'
	rc=$?
	s=$d/offcpu.summary.json
	if [ $rc -ne 3 ]; then
		fail $t "offcpu exited $rc, expected the workload's 3"
	elif [ "$(json "$s" .state)" != tool_failed ] ||
		[ "$(json "$s" .caveat.kind)" != kernel_headers_missing ]; then
		fail $t "got $(json "$s" .state)/$(json "$s" .caveat.kind): $(json "$s" .caveat.message)"
	elif ! grep -q "lib/modules" "$d/offcpu.diagnostics.txt"; then
		fail $t "the collector's stderr is not in the diagnostics file"
	elif schema_ok $t "$s"; then
		ok $t
	fi
fi

t=missing_tool_still_runs_the_workload
d=$SCRATCH/missing
"$OFFCPU_BIN" record --tool /nonexistent/offcputime -o "$d" -q -- sh -c "touch $d/ran; exit 5"
rc=$?
s=$d/offcpu.summary.json
if [ $rc -ne 5 ]; then
	fail $t "offcpu exited $rc, expected the workload's 5"
elif [ ! -e "$d/ran" ]; then
	fail $t "the workload did not run"
elif [ "$(json "$s" .state)/$(json "$s" .caveat.kind)" != tool_missing/tool_unavailable ]; then
	fail $t "got $(json "$s" .state)/$(json "$s" .caveat.kind)"
elif schema_ok $t "$s"; then
	ok $t
fi

t=unprivileged_collector_is_permission_denied
if ! need_root || ! command -v bpftrace >/dev/null || ! id nobody >/dev/null 2>&1; then
	skip $t "needs root, bpftrace and user nobody"
else
	# The test's own scratch space is private; nobody needs a directory it can reach.
	d=$(mktemp -d /tmp/offcpu-perm.XXXXXX) && chmod 0777 "$d"
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$OFFCPU_BIN" record --tool bpftrace --mode stacks -o "$d/out" -q -- true
	rc=$?
	s=$d/out/offcpu.summary.json
	if [ $rc -ne 0 ]; then
		fail $t "offcpu exited $rc"
	elif [ "$(json "$s" .state)/$(json "$s" .caveat.kind)" != tool_failed/permission_denied ]; then
		fail $t "got $(json "$s" .state)/$(json "$s" .caveat.kind): $(json "$s" .caveat.message)"
	elif schema_ok $t "$s"; then
		ok $t
	fi
	rm -rf "$d"
fi

t=workload_argv_arrives_intact
d=$SCRATCH/argv
mkdir -p "$d"
"$OFFCPU_BIN" record --tool /nonexistent/x -o "$d" -q -- \
	/bin/sh -c 'printf "%s\n" "$@" > "$0"' "$d/args" "a b" "'q'" '"dq"' '$(id)' '*' ''
got=$(cat "$d/args" 2>/dev/null)
want=$(printf '%s\n' "a b" "'q'" '"dq"' '$(id)' '*' '')
if [ "$got" = "$want" ] && [ "$(json "$d/offcpu.summary.json" '.workload.argv[7]')" = '$(id)' ]; then
	ok $t
else
	fail $t "argv changed on the way: $(echo "$got" | tr '\n' '|')"
fi

t=workload_signal_becomes_128_plus_n
d=$SCRATCH/sig
"$OFFCPU_BIN" record --tool /nonexistent/x -o "$d" -q -- sh -c 'kill -SEGV $$'
rc=$?
s=$d/offcpu.summary.json
if [ $rc -ne 139 ]; then
	fail $t "offcpu exited $rc, expected 139"
elif [ "$(json "$s" .workload.signal_name)" != SEGV ] || [ "$(json "$s" .workload.exit_code)" != null ]; then
	fail $t "summary workload: $(jq -c .workload "$s")"
else
	ok $t
fi

t=workload_that_cannot_start
d=$SCRATCH/nostart
"$OFFCPU_BIN" record --tool /nonexistent/x -o "$d" -q -- /nonexistent/program
rc=$?
if [ $rc -ne 127 ]; then
	fail $t "offcpu exited $rc, expected 127"
elif [ "$(json "$d/offcpu.summary.json" .workload.started)" != false ]; then
	fail $t "summary says the workload started"
else
	ok $t
fi

rm -rf "$SCRATCH"
