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

# The statistics load in every mode: a timeline's sched_waking program, whose
# global function made the verifier write (and drop) more than a small log
# holds, was refused with ENOSPC under them. Its waker walk stays small.
t=startup_verifier_stats_with_a_timeline
d=$SCRATCH/vstats_tl
if ! OFFCPU_VERIFIER_STATS=1 "$OFFCPU_BIN" record -q --timeline -o "$d" -- true 2>/dev/null; then
	fail $t "record failed"
elif grep -qE 'the kernel refused|falling back' "$d/offcpu.diagnostics.txt"; then
	fail $t "$(grep -m1 -E 'the kernel refused|falling back' "$d/offcpu.diagnostics.txt")"
else
	processed=$(sed -nE 's/.*verifier: wkg_(btf|raw): [0-9]+ insns, ([0-9]+) processed.*/\2/p' "$d/offcpu.diagnostics.txt")
	if [ -z "$processed" ]; then
		fail $t "no verifier line for sched_waking"
	elif [ "$processed" -gt 2000 ]; then
		fail $t "sched_waking: $processed instructions processed (want at most 2000)"
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

# The kernel's names come from the ksym program (bpf_kallsyms_lookup_name
# and %pB, asked per symbol): a record of a command never reads
# /proc/kallsyms, whose read makes the kernel format 100,000+ symbols (tens
# of milliseconds), and its kernel frames still carry the names kallsyms has.
# Kernels without the helper (before 5.16) read it once, in a thread.
t=startup_names_kernel_frames_without_reading_kallsyms
if ! command -v strace >/dev/null; then
	skip $t "strace is not installed"
else
	d=$SCRATCH/once
	strace -f -qq -e trace=open,openat -o "$SCRATCH/once.strace" \
		"$OFFCPU_BIN" record -q -o "$d" -- "$W/nanosleep" >/dev/null 2>&1
	n=$(grep -c '/proc/kallsyms' "$SCRATCH/once.strace")
	want=0
	grep -q 'the ksym program could not answer' "$d/offcpu.diagnostics.txt" && want=1
	frames=$(grep -c '__schedule' "$d/offcpu.time.txt" 2>/dev/null)
	# Every kernel frame (after the ";-;" between user and kernel) is a kallsyms name.
	awk '{ print $3 }' /proc/kallsyms | sort -u >"$SCRATCH/knames"
	sed -nE 's/^.*;-;(.*) [0-9]+$/\1/p' "$d/offcpu.time.txt" | tr ';' '\n' |
		sort -u >"$SCRATCH/kframes"
	unknown=$(comm -23 "$SCRATCH/kframes" "$SCRATCH/knames" | head -5 | tr '\n' ' ')
	if [ "$n" != "$want" ]; then
		fail $t "/proc/kallsyms opened $n times (want $want)"
	elif [ "${frames:-0}" -eq 0 ]; then
		fail $t "no symbolized kernel frames in $d/offcpu.time.txt"
	elif [ ! -s "$SCRATCH/kframes" ] || [ -n "$unknown" ]; then
		fail $t "kernel frames not in /proc/kallsyms: ${unknown:-none found}"
	else
		ok $t
	fi
fi

# A timeline needs the interrupt entry code's ranges (found by name prefix):
# kallsyms is read then, once, in a thread while the programs load.
t=startup_timeline_reads_kallsyms_once
if ! command -v strace >/dev/null; then
	skip $t "strace is not installed"
else
	d=$SCRATCH/tl
	strace -f -qq -e trace=open,openat -o "$SCRATCH/tl.strace" \
		"$OFFCPU_BIN" record -q --timeline -o "$d" -- "$W/nanosleep" >/dev/null 2>&1
	n=$(grep -c '/proc/kallsyms' "$SCRATCH/tl.strace")
	if [ "$n" != 1 ]; then
		fail $t "/proc/kallsyms opened $n times with --timeline"
	elif grep -q 'interrupt entry code not found' "$d/offcpu.diagnostics.txt"; then
		fail $t "no interrupt entry ranges: $(grep 'interrupt entry' "$d/offcpu.diagnostics.txt")"
	else
		ok $t
	fi
fi

# The kernel's BTF (5 MB) is mapped, not read: sysfs hands it out a page per
# read(), 1,300 calls a parse, and record parses it for libbpf's CO-RE and
# walks it for its own feature checks. Kernels before 6.16 cannot map it.
t=startup_maps_the_kernel_btf
if ! command -v strace >/dev/null; then
	skip $t "strace is not installed"
elif ! python3 -c 'import mmap, os; f = os.open("/sys/kernel/btf/vmlinux", os.O_RDONLY); mmap.mmap(f, os.fstat(f).st_size, prot=mmap.PROT_READ, flags=mmap.MAP_PRIVATE)' 2>/dev/null; then
	skip $t "this kernel cannot map /sys/kernel/btf/vmlinux"
else
	d=$SCRATCH/btf
	strace -f -qq -e trace=read -o "$SCRATCH/btf.strace" \
		"$OFFCPU_BIN" record -q -o "$d" -- true >/dev/null 2>&1
	# libbpf asks for the rest of the file each time: reads of a megabyte or more
	n=$(grep -cE 'read\([0-9]+, .*, [0-9]{7,}\)' "$SCRATCH/btf.strace")
	if [ ! -s "$d/offcpu.summary.json" ]; then
		fail $t "record failed"
	elif [ "$n" != 0 ]; then
		fail $t "$n reads of a megabyte or more (the kernel's BTF read a page at a time)"
	else
		ok $t
	fi
fi

# libcurl (and the 25 libraries it needs) is opened when a push starts, not
# linked: the dynamic loader spent 7 ms of CPU and 12 of wall time on it in
# every run. The push tests (push.sh) show the opened library at work.
t=startup_does_not_link_libcurl
if ! command -v ldd >/dev/null; then
	skip $t "ldd is not installed"
elif ldd "$OFFCPU_BIN" | grep -q libcurl; then
	fail $t "$OFFCPU_BIN links $(ldd "$OFFCPU_BIN" | grep -o 'libcurl[^ ]*' | head -1)"
else
	ok $t
fi

# The preallocated maps and the ring buffer are made in a thread while the
# kernel's BTF is parsed, and handed to libbpf before the load: they are the
# maps the programs use, with the sizes asked for (odd ones here, to find
# this capture's maps among any others the kernel holds).
t=startup_maps_made_ahead_are_the_maps_loaded
if ! command -v bpftool >/dev/null || ! command -v jq >/dev/null; then
	skip $t "needs bpftool and jq"
else
	d=$SCRATCH/ahead
	OFFCPU_VERIFIER_STATS=1 "$OFFCPU_BIN" record -q --thread-entries 1000 --agg-entries 3000 \
		--stack-entries 5000 -o "$d" -- sleep 1 >/dev/null 2>&1 &
	rec=$!
	sizes=""
	for _ in $(seq 40); do
		sizes=$(bpftool -j map show 2>/dev/null | jq -r '[.[] |
			select((.name == "threads" and .max_entries == 1000) or
			       (.name == "procs" and .max_entries == 1000) or
			       ((.name == "agg0" or .name == "agg1") and .max_entries == 3000) or
			       (.name == "stacks" and .max_entries == 5000)) | .name] | sort | join(" ")')
		[ "$sizes" = "agg0 agg1 procs stacks threads" ] && break
		sleep 0.05
	done
	wait $rec
	ahead=$(sed -nE 's/.*start-up: .*; ([0-9]+) maps made ahead of the load.*/\1/p' \
		"$d/offcpu.diagnostics.txt")
	if [ ! -s "$d/offcpu.summary.json" ]; then
		fail $t "record failed"
	elif [ "$sizes" != "agg0 agg1 procs stacks threads" ]; then
		fail $t "maps of the asked sizes while recording: '${sizes}'"
	elif [ "$ahead" != 6 ]; then
		fail $t "${ahead:-no} maps made ahead of the load (want 6)"
	elif ! grep -qE '^sleep(;[^ ]*)? [0-9]+$' "$d/offcpu.time.txt"; then
		fail $t "no sleep stack in the capture"
	else
		ok $t
	fi
fi

# core_verdict TEST DIR PATTERN: a capture of nanosleep in DIR whose start-up
# line names its CO-RE target as PATTERN (an extended regex) says.
core_verdict()
{
	if [ ! -s "$2/offcpu.summary.json" ]; then
		fail "$1" "record failed"
	elif ! grep -qE "CO-RE against $3" "$2/offcpu.diagnostics.txt"; then
		fail "$1" "CO-RE target: $(grep -o 'CO-RE against[^)]*' "$2/offcpu.diagnostics.txt")"
	elif ! grep -q 'do_nanosleep' "$2/offcpu.time.txt"; then
		fail "$1" "no nanosleep stack in the capture"
	else
		ok "$1"
	fi
}

# libbpf's CO-RE walks the BTF it is given once per relocated type: given a
# BTF of the candidates alone (collect/corebtf.h), a few hundred types (two
# to four digits), not the kernel's 100,000 or more; the capture is a real
# one all the same.
d=$SCRATCH/core
OFFCPU_VERIFIER_STATS=1 "$OFFCPU_BIN" record -q -o "$d" -- "$W/nanosleep" >/dev/null 2>&1
core_verdict startup_core_against_the_candidates_alone "$d" '[0-9]{2,4} of its types\)'

# libbpf opens that BTF by path (/proc/self/fd/N of a memfd). Where this
# process cannot reopen its own fds there, the object takes the kernel's BTF
# as before: slower, the same capture. Here /proc/PID/fd of the shell that
# then becomes offcpu (exec keeps the pid) is an empty directory.
t=startup_core_without_proc_fds_takes_the_kernels_btf
if ! command -v unshare >/dev/null; then
	skip $t "unshare is not installed"
else
	d=$SCRATCH/core_nofd
	mkdir -p "$SCRATCH/emptyfd"
	unshare -m bash -c 'mount --bind "$1" /proc/$$/fd && shift &&
		OFFCPU_VERIFIER_STATS=1 exec "$@"' sh "$SCRATCH/emptyfd" \
		"$OFFCPU_BIN" record -q -o "$d" -- "$W/nanosleep" >/dev/null 2>&1
	core_verdict $t "$d" 'all of its types'
fi
