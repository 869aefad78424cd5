#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs the unit test programs and the end-to-end scripts; counts their
# "ok NAME" / "FAIL NAME: why" / "skip NAME: why" lines and ends with the plain
# line "N passed, N failed, N skipped". Exit status 1 when anything failed.
# TESTS_EXCLUDE=SUBSTRING leaves out unit programs whose name contains it.
#
#   tests/run.sh --unit|--e2e|--all BUILD_DIR [FILTER]
#   tests/run.sh --one BUILD_DIR PROGRAM     one unit program's lines, no count
#   tests/run.sh --logs LOG...               count lines --one wrote earlier
#
# `make unit` runs each unit program through --one into a log of its own, in
# parallel under make -j, then counts the logs with --logs; `make check` hands
# those logs to --all in UNIT_LOGS (space-separated) instead of running the
# programs again.
#
# End-to-end scripts (tests/e2e/*.sh) speak the same protocol; they get
# OFFCPU_BIN, OFFCPU_BUILD and OFFCPU_ROOT in the environment, and a scratch
# directory in TMPDIR that is removed afterwards.
set -u
what=${1:---all}
pass=0 fail=0 skip=0

# Print the lines read on stdin and count the protocol ones.
tally() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok "*) pass=$((pass + 1)) ;;
		"FAIL "*) fail=$((fail + 1)) ;;
		"skip "*) skip=$((skip + 1)) ;;
		esac
		echo "$line"
	done
}

summary() {
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
}

if [ "$what" = --logs ]; then
	shift
	for l in "$@"; do
		if [ -r "$l" ]; then
			tally <"$l"
		else
			tally <<<"FAIL $(basename "$l" .log): no log $l"
		fi
	done
	summary
	exit
fi

build=${2:-build}
filter=${3:-${TESTS:-}}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$root" && cd "$build" && pwd)
export OFFCPU_BIN="$build/offcpu" OFFCPU_BUILD="$build" OFFCPU_ROOT="$root"
log=$(mktemp -d /tmp/offcpu-tests.XXXXXX)

# Run one program; print its lines, a FAIL line when it ended badly without
# saying so, and the end of its stderr when it exited non-zero.
run_one() { # name, command...
	local name=$1 rc
	shift
	mkdir -p "$log/$name.tmp"
	(cd "$root" && TMPDIR="$log/$name.tmp" "$@") >"$log/$name.out" 2>"$log/$name.err"
	rc=$?
	cat "$log/$name.out"
	if ! grep -qE '^(ok|FAIL|skip) ' "$log/$name.out" ||
		{ [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$log/$name.out"; }; then
		echo "FAIL $name: exited $rc without reporting a failure"
	fi
	if [ $rc -ne 0 ]; then
		sed 's/^/    stderr: /' "$log/$name.err" | tail -n 30
	fi
}

run_prog() { # name, command...
	tally < <(run_one "$@")
}

if [ "$what" = --one ]; then
	run_one "$(basename "$3")" "$3"
	rm -rf "$log"
	exit 0
fi

if [ -n "${UNIT_LOGS:-}" ] && [ "$what" = --all ]; then
	for l in $UNIT_LOGS; do
		name=$(basename "$l" .log)
		[ -n "$filter" ] && [[ $name != *$filter* ]] && continue
		if [ -r "$l" ]; then
			tally <"$l"
		else
			tally <<<"FAIL $name: no log $l"
		fi
	done
elif [ "$what" = --unit ] || [ "$what" = --all ]; then
	for t in "$build"/tests/test_*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		[ -n "$filter" ] && [[ $name != *$filter* ]] && continue
		[ -n "${TESTS_EXCLUDE:-}" ] && [[ $name == *$TESTS_EXCLUDE* ]] && continue
		run_prog "$name" "$t"
	done
fi
if [ "$what" = --e2e ] || [ "$what" = --all ]; then
	for t in "$root"/tests/e2e/*.sh; do
		[ -f "$t" ] || continue
		case $(basename "$t") in lib.sh) continue ;; esac
		name=e2e_$(basename "$t" .sh)
		[ -n "$filter" ] && [[ $name != *$filter* ]] && continue
		run_prog "$name" bash "$t"
	done
fi
rm -rf "$log"
summary
