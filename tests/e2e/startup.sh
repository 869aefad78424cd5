#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What offcpu record does before the workload's first instruction: the
# verifier's work on the programs (OFFCPU_VERIFIER_STATS=1 reports it per
# program) and the reads of /proc/kallsyms. Counts, never times: start-up
# latency itself is measured in bench/startup.sh and bench/verifier.sh.
. "$(dirname "$0")/lib.sh"

if ! need_root; then
	skip startup "needs root to load BPF programs"
	exit 0
fi

# The sched_switch program is the one the verifier works on: once its loops
# were walked in line (stack hash, kernel frame scan, cache ways), it took
# 300k+ instructions processed and most of a second. bpf_loop steps and
# global functions keep it to tens of thousands; the bound leaves room for
# kernels that prune less.
t=startup_verifier_work_per_program_is_reported_and_bounded
d=$SCRATCH/vstats
if ! OFFCPU_VERIFIER_STATS=1 "$OFFCPU_BIN" record -q -o "$d" -- true 2>"$SCRATCH/vstats.err"; then
	fail $t "record failed: $(head -c 300 "$SCRATCH/vstats.err")"
else
	line=$(grep -E 'verifier: sw_(btf|raw): ' "$d/offcpu.diagnostics.txt")
	processed=$(sed -nE 's/.*insns, ([0-9]+) processed.*/\1/p' <<<"$line")
	others=$(grep -cE 'verifier: (fork|exec|exit)_(btf|raw): ' "$d/offcpu.diagnostics.txt")
	if [ -z "$processed" ] || [ "$others" != 3 ]; then
		fail $t "no verifier lines for every program: $(grep verifier "$d/offcpu.diagnostics.txt")"
	elif [ "$processed" -gt 100000 ]; then
		fail $t "sched_switch: $processed instructions processed (want at most 100000): $line"
	else
		ok $t
	fi
fi

# Without the variable the diagnostics carry no verifier lines.
t=startup_verifier_stats_only_when_asked
d=$SCRATCH/plain
if ! "$OFFCPU_BIN" record -q -o "$d" -- true 2>/dev/null; then
	fail $t "record failed"
elif grep -q 'verifier:' "$d/offcpu.diagnostics.txt"; then
	fail $t "verifier lines without OFFCPU_VERIFIER_STATS"
else
	ok $t
fi

# kallsyms is read once, at start (in a thread while the programs load): the
# symbolizer answers the core kernel's frames from it at stop.
t=startup_reads_kallsyms_once
if ! command -v strace >/dev/null; then
	skip $t "strace is not installed"
else
	d=$SCRATCH/once
	strace -f -qq -e trace=open,openat -o "$SCRATCH/once.strace" \
		"$OFFCPU_BIN" record -q -o "$d" -- "$W/nanosleep" >/dev/null 2>&1
	n=$(grep -c '/proc/kallsyms' "$SCRATCH/once.strace")
	frames=$(grep -c '__schedule' "$d/offcpu.time.txt" 2>/dev/null)
	if [ "$n" != 1 ]; then
		fail $t "/proc/kallsyms opened $n times"
	elif [ "${frames:-0}" -eq 0 ]; then
		fail $t "no symbolized kernel frames in $d/offcpu.time.txt"
	else
		ok $t
	fi
fi
