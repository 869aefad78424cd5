#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Inlined functions in a real capture: `offcpu record` expands them from the
# debug info by default (libc6-dbg for libc, where glibc inlines the condition
# variable's wait into pthread_cond_wait), and every output marks them:
# profile.txt kind "i", folded "_[i]", the report and speedscope " (inlined)"
# (the pprof and flame graph marks have unit tests). --no-inline
# leaves them out. Needs root (BPF) and libc6-dbg.
. "$(dirname "$0")/lib.sh"
mount_tracefs
trap 'rm -rf "$SCRATCH"' EXIT

if ! need_root; then
	skip inline_record "needs root to load BPF programs"
	exit 0
fi
if ! dpkg-query -W -f='${Status}' libc6-dbg 2>/dev/null | grep -q "ok installed"; then
	skip inline_record "libc's debug info is not installed (Debian: libc6-dbg)"
	exit 0
fi

d=$SCRATCH/inline
if ! "$OFFCPU_BIN" record -q -o "$d" -- "$W/condvar" >"$SCRATCH/out" 2>&1; then
	fail inline_record "record failed: $(head -c 300 "$SCRATCH/out")"
	exit 0
fi
# The waiter's innermost user frame is in libc's futex wait, an inlined function.
inl=$(awk '$1 == "frame" && $3 == "i" { print $4 }' "$d/offcpu.profile.txt")
if [ -z "$inl" ]; then
	fail inline_record "no inlined frame in offcpu.profile.txt"
elif ! grep -qx '__futex_abstimed_wait_common64' <<<"$inl"; then
	fail inline_record "libc's __futex_abstimed_wait_common64 not among the inlined frames: $(echo $inl)"
else
	ok inline_record
fi

# Each output marks them.
if grep -q ';__futex_abstimed_wait_common64_\[i\]' "$d/offcpu.time.txt"; then
	ok inline_folded_marks_them
else
	fail inline_folded_marks_them "no __futex_abstimed_wait_common64_[i] in offcpu.time.txt"
fi
if "$OFFCPU_BIN" export -f speedscope -o "$SCRATCH/s.json" "$d" 2>"$SCRATCH/err" &&
	[ "$(jq '[.shared.frames[].name | select(. == "__futex_abstimed_wait_common64 (inlined)")] | length' "$SCRATCH/s.json")" = 1 ]; then
	ok inline_speedscope_marks_them
else
	fail inline_speedscope_marks_them "no \"__futex_abstimed_wait_common64 (inlined)\" frame: $(head -c 200 "$SCRATCH/err")"
fi
# The report's user frames start at the one that named the reason: for the
# waiter's condvar, glibc's inlined __pthread_cond_wait_common.
if "$OFFCPU_BIN" report --width 200 "$d" >"$SCRATCH/report" 2>&1 &&
	grep -q '__pthread_cond_wait_common (inlined)' "$SCRATCH/report"; then
	ok inline_report_marks_them
else
	fail inline_report_marks_them "no \"(inlined)\" in the report: $(grep user: "$SCRATCH/report" | head -3)"
fi

d=$SCRATCH/flat
if ! "$OFFCPU_BIN" record -q --no-inline -o "$d" -- "$W/condvar" >"$SCRATCH/out" 2>&1; then
	fail inline_record_no_inline "record --no-inline failed: $(head -c 300 "$SCRATCH/out")"
elif awk '$1 == "frame" && $3 == "i" { found = 1 } END { exit !found }' "$d/offcpu.profile.txt"; then
	fail inline_record_no_inline "inlined frames despite --no-inline"
elif ! grep -q '^frame [0-9]* u __futex_abstimed_wait_common$' "$d/offcpu.profile.txt"; then
	fail inline_record_no_inline "no user frame __futex_abstimed_wait_common: the check saw nothing"
else
	ok inline_record_no_inline
fi
