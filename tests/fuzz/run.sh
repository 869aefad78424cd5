#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs each libFuzzer harness built in FUZZ_BUILD: first once over its saved
# regression inputs (tests/fuzz/regressions/NAME/), then fuzzing for SECONDS
# from its seed corpus (tests/fuzz/corpus/NAME/) plus what earlier runs found
# (FUZZ_BUILD/corpus/NAME/). Speaks tests/run.sh's protocol: one
# "ok NAME: ..." / "FAIL NAME: why" / "skip NAME: why" line per harness, then
# "N passed, N failed, N skipped". Exit status 1 when anything failed.
#
#   tests/fuzz/run.sh FUZZ_BUILD [SECONDS [FILTER]]
#
# A crashing input is kept as FUZZ_BUILD/artifacts/NAME-crash-*; the FAIL line
# names it. Reproduce with: FUZZ_BUILD/fuzz_NAME FILE
set -u
build=${1:-build-fuzz}
secs=${2:-60}
filter=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$root" && cd "$build" && pwd)
pass=0 fail=0 skip=0

# Options for every run: a slow input (10 s) or a big allocation is a finding.
common=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=16384)

report_failure() { # name, log
	local why
	why=$(grep -m1 -E 'invariant failed|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|==[0-9]+== ?ERROR' "$2" |
		sed -e 's/^==[0-9]*==//' -e 's/^ *//')
	[ -n "$why" ] || why=$(grep -m1 -v '^INFO\|^#' "$2")
	local art
	art=$(sed -n 's/.*Test unit written to //p' "$2" | tail -n 1)
	echo "FAIL $1: ${why:-exited without a report}${art:+ (input: $art)}"
	sed 's/^/    /' "$2" | grep -v '^    #[0-9]' | tail -n 25
	fail=$((fail + 1))
}

cd "$root" || exit 1
mkdir -p "$build/artifacts" "$build/logs"
for bin in "$build"/fuzz_*; do
	[ -x "$bin" ] && [ -f "$bin" ] || continue
	case $bin in *.d) continue ;; esac
	name=$(basename "$bin")
	short=${name#fuzz_}
	[ -n "$filter" ] && [[ $name != *$filter* ]] && continue
	log="$build/logs/$name.log"

	regs=(tests/fuzz/regressions/"$short"/*)
	if [ -e "${regs[0]}" ]; then
		if "$bin" "${common[@]}" "${regs[@]}" >"$log" 2>&1; then
			echo "ok ${name}_regressions: ${#regs[@]} saved inputs"
			pass=$((pass + 1))
		else
			report_failure "${name}_regressions" "$log"
		fi
	fi

	work="$build/corpus/$short"
	seeds="tests/fuzz/corpus/$short"
	dict="tests/fuzz/dict/$short.dict"
	mkdir -p "$work"
	args=("${common[@]}" -max_total_time="$secs" -print_final_stats=1
		-artifact_prefix="$build/artifacts/$name-")
	[ -f "$dict" ] && args+=(-dict="$dict")
	start=$(date +%s)
	if "$bin" "${args[@]}" "$work" "$seeds" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
		cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
		echo "ok $name: ${runs:-?} runs in $(($(date +%s) - start)) s (${rate:-?}/s), coverage ${cov:-?} edges, corpus $(ls "$work" | wc -l) inputs"
		pass=$((pass + 1))
	else
		report_failure "$name" "$log"
	fi
done
if [ -f "$build/skipped" ]; then
	while IFS= read -r name; do
		[ -n "$name" ] || continue
		[ -n "$filter" ] && [[ $name != *$filter* ]] && continue
		need=$(sed -n 's/.*fuzz-needs: *//p' "tests/fuzz/$name.c")
		echo "skip $name: needs $need, not in this tree yet"
		skip=$((skip + 1))
	done <"$build/skipped"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
